package rebuild

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/llm-perf-opt/deepprof/internal/config"
	"github.com/llm-perf-opt/deepprof/internal/regions"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
	"github.com/llm-perf-opt/deepprof/internal/timeline"
)

// Options are what `deepprof report MAIN` may change.
type Options struct {
	// TopN, when set, is the number of kernels kernels.md shows (0: all)
	// instead of the run's report.top_n.
	TopN *int
	// Now stamps the manifest (nil: time.Now).
	Now func() time.Time
}

// Report rebuilds run's derived files with the run's own settings
// (config.yaml; the defaults when it has none), then writes its manifest
// once: `deepprof report MAIN`. A run rebuilt in part says why in its
// report.md; the error says what failed: a ManifestError or
// NotRebuiltError when the run's files do not say what became of them.
func Report(run *rundir.Run, o Options) error { return reportRun(run, o, nil, nil) }

// ManifestError is Report's error when the manifest could not be
// written after the rebuild: the run's files do not say what became of
// them.
type ManifestError struct{ Err error }

func (e *ManifestError) Error() string { return e.Err.Error() }
func (e *ManifestError) Unwrap() error { return e.Err }

// NotRebuiltError is Report's error when nothing was rebuilt (the run's
// settings cannot be read, or files deepprof did not write are where it
// writes derived files: a *rundir.DerivedConflictError): the run's files
// are as they were.
type NotRebuiltError struct{ Err error }

func (e *NotRebuiltError) Error() string { return e.Err.Error() }
func (e *NotRebuiltError) Unwrap() error { return e.Err }

// reportRun rebuilds run's derived files with the run's own settings
// (config.yaml; the defaults when it has none), the rebuild's commit
// writing its manifest once, given the CUPTI timeline already read of the
// run's record files (nil: none; settings.read) and what waits for the
// trace of it already begun (nil: none; settings.traced). A run rebuilt in part says why in
// its report.md; the error says what failed.
func reportRun(run *rundir.Run, o Options, read *timeline.Timeline, traced func() error) error {
	// One writer at a time (a second deepprof report, a session): two
	// rebuilds at once would remove each other's files. The settings are
	// read under the lock: a session writes config.yaml holding it.
	lock, err := rundir.LockRun(run.Dir)
	if err != nil {
		return &NotRebuiltError{errors.Join(err, wait(traced))}
	}
	defer lock.Unlock()
	if o.Now == nil {
		o.Now = time.Now
	}
	cfg, err := reportConfig(run)
	if err != nil {
		return &NotRebuiltError{errors.Join(err, wait(traced))}
	}
	if o.TopN != nil {
		cfg.TopN = *o.TopN
	}
	cfg.read, cfg.traced = read, traced
	cfg.started, cfg.now = run.WriteRebuildStarted, o.Now
	return rebuild(run, cfg)
}

// reportConfig is the run's own settings for its derived files (the report
// and regions sections of MAIN/config.yaml); a run without config.yaml is
// rebuilt with the defaults. A config.yaml that cannot be read is an error
// naming its line: the defaults would change the run's numbers.
func reportConfig(run *rundir.Run) (settings, error) {
	p := run.Path(rundir.ConfigYAML)
	if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
		def, err := settingsFor(config.Default())
		def.Regions = regions.DefaultConfig()
		return def, err
	}
	if _, err := rundir.StatIn(run.Dir, p); err != nil {
		// a config.yaml that is a link out of the run is not its own
		return settings{}, fmt.Errorf("%w (the run's settings)", err)
	}
	cfg, err := config.Parse(p)
	if err == nil {
		var dc settings
		if dc, err = settingsFor(cfg); err == nil {
			return dc, nil
		}
	}
	return settings{}, fmt.Errorf("%w (the run's settings: mend %s, or move it away to rebuild with the default settings)", err, rundir.ConfigYAML)
}
