package harness

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/llm-perf-opt/deepprof/internal/config"
	"github.com/llm-perf-opt/deepprof/internal/regions"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
)

// ReportOptions are what `deepprof report MAIN` may change.
type ReportOptions struct {
	// TopN, when set, is the number of kernels kernels.md shows (0: all)
	// instead of the run's report.top_n.
	TopN *int
	// Warn gets a line when the run's config.yaml cannot be read and the
	// default settings are used (nil: io.Discard).
	Warn io.Writer
	// Now stamps the manifest (nil: time.Now).
	Now func() time.Time
}

// Report rebuilds every derived file of the run directory dir from the raw
// tool outputs in it, with no GPU: `deepprof report MAIN`. A directory
// that is not a run directory is refused (*rundir.NotRunDirError) with
// nothing written. The run is returned whenever it opened, with
// ReportRun's error.
func Report(dir string, o ReportOptions) (*rundir.Run, error) {
	run, err := rundir.Open(dir)
	if err != nil {
		return nil, err
	}
	return run, ReportRun(run, o)
}

// ManifestError is ReportRun's error when the manifest could not be
// written after the rebuild: the run's files do not say what became of
// them.
type ManifestError struct{ Err error }

func (e *ManifestError) Error() string { return e.Err.Error() }
func (e *ManifestError) Unwrap() error { return e.Err }

// ReportRun rebuilds run's derived files with the run's own settings
// (config.yaml; the defaults, said on o.Warn and in the manifest, when it
// cannot be read), then writes its manifest once. A run rebuilt in part
// says why in its report.md; the error says what failed.
func ReportRun(run *rundir.Run, o ReportOptions) error {
	if o.Warn == nil {
		o.Warn = io.Discard
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	cfg := reportConfig(run, o.Warn)
	if o.TopN != nil {
		cfg.TopN = *o.TopN
	}
	rerr := Rebuild(run, cfg)
	if err := run.WriteRebuiltManifest(o.Now()); err != nil {
		return &ManifestError{errors.Join(rerr, err)}
	}
	return rerr
}

// reportConfig is the run's own settings for its derived files (the report
// and regions sections of MAIN/config.yaml). A run without a readable
// config.yaml is rebuilt with the defaults, and says so on warn and in its
// manifest, so that nothing changes silently.
func reportConfig(run *rundir.Run, warn io.Writer) Config {
	def, _ := ConfigFor(config.Default())
	def.Regions = regions.DefaultConfig()
	p := run.Path(rundir.ConfigYAML)
	if _, err := os.Stat(p); err != nil {
		return def
	}
	cfg, err := config.Parse(p)
	if err == nil {
		var dc Config
		if dc, err = ConfigFor(cfg); err == nil {
			return dc
		}
	}
	fmt.Fprintf(warn, "deepprof: warning: %v; the derived files use the default report settings\n", err)
	run.Note("derived files made with the default report settings: %s could not be read (%v)", rundir.ConfigYAML, err)
	return def
}
