package harness

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/llm-perf-opt/deepprof/internal/config"
	"github.com/llm-perf-opt/deepprof/internal/rebuild"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
	"github.com/llm-perf-opt/deepprof/internal/timeline"
)

// ReportOptions are what `deepprof report MAIN` may change.
type ReportOptions struct {
	// TopN, when set, is the number of kernels kernels.md shows (0: all)
	// instead of the run's report.top_n.
	TopN *int
	// Now stamps the manifest (nil: time.Now).
	Now func() time.Time
}

// Report rebuilds every derived file of the run directory dir from the raw
// tool outputs in it, with no GPU: `deepprof report MAIN`. A directory
// that is not a run directory is refused (an InputError) with nothing
// written. The run is returned whenever it opened, with the rebuild's
// error: a ManifestError or NotRebuiltError when the run's files do not
// say what became of them, else what the rebuild could not make (the run's
// report.md says it too).
func Report(dir string, o ReportOptions) (*Run, error) {
	run, err := rundir.Open(dir)
	if ne := (*rundir.NotRunDirError)(nil); errors.As(err, &ne) {
		return nil, &InputError{err}
	}
	if err != nil {
		return nil, err
	}
	return &Run{run}, reportRun(run, o)
}

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

// reportRun rebuilds run as o says (rebuild.Report), its errors the
// facade's own.
func reportRun(run *rundir.Run, o ReportOptions) error {
	err := rebuild.Report(run, rebuild.Options{TopN: o.TopN, Now: o.Now})
	switch e := err.(type) {
	case *rebuild.NotRebuiltError:
		return &NotRebuiltError{e.Err}
	case *rebuild.ManifestError:
		return &ManifestError{e.Err}
	}
	return err
}

// GCPercent is the garbage collector's target deepprof sets
// (debug.SetGCPercent; the environment's GOGC, where set, wins): the heap
// grows to 1.4 times what is live before a collection. A rebuild's memory
// then grows with its records, at 0.25 KiB a launch, and its time grows
// linearly with them; the environment's GOMEMLIMIT bounds it where memory
// is short (BenchmarkLongRun, docs/measurements.md).
const GCPercent = 40

// Merged is a run directory merged of the nodes' runs: the files copied
// and the ranks whose deep passes it holds.
type Merged struct {
	Run   *Run
	Files int
	Ranks []string
}

// Merge merges the run directories dirs, one node's run each, into the new
// run directory out, and rebuilds it (o as Report's): two nodes' processes
// of one process id told apart by the machine their record files name.
// Runs that are not nodes of one multi-GPU run are refused: a run
// without a launcher, one of another program, model or configuration
// than the first; a directory that is not a run, or an out that exists,
// as an InputError. The merged run is returned once it is made, with
// the rebuild's error.
func Merge(out string, dirs []string, o ReportOptions) (*Merged, error) {
	if _, err := os.Lstat(out); err == nil {
		return nil, &InputError{fmt.Errorf("merge: %s exists: give a new directory", out)}
	}
	plan, err := mergePlan(dirs)
	if ne := (*rundir.NotRunDirError)(nil); errors.As(err, &ne) {
		return nil, &InputError{err}
	}
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(out)
	if err != nil {
		return nil, err
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	run, err := rundir.Create(filepath.Dir(abs), filepath.Base(abs), o.Now())
	if err != nil {
		return nil, err
	}
	if err := plan.Write(run); err != nil {
		// The run directory says it stopped, and where.
		return nil, errors.Join(err, run.WriteManifest(o.Now()))
	}
	m := &Merged{Run: &Run{run}, Files: len(plan.Files), Ranks: plan.Ranks()}
	return m, reportRun(run, o)
}

// mergePlan plans the merge of dirs, each a node's run of one run.
func mergePlan(dirs []string) (*rundir.Plan, error) {
	if err := sameRun(dirs); err != nil {
		return nil, err
	}
	return rundir.Make(dirs, timeline.FileMachine)
}

// sameRun checks that the runs dirs ran one program under a launcher, as
// the nodes of one multi-GPU run do; a directory without a config.yaml is
// left to rundir.Make to refuse.
func sameRun(dirs []string) error {
	var first *config.Config
	firstDir := ""
	for _, d := range dirs {
		if _, err := rundir.Open(d); err != nil {
			return err // not a run directory: refused as such
		}
		path := filepath.Join(d, rundir.ConfigYAML)
		if _, err := os.Lstat(path); err != nil {
			return fmt.Errorf("merge: %s has no %s: a node's run directory says how it was profiled there, and a merge joins only nodes that show they ran one configuration", d, rundir.ConfigYAML)
		}
		cfg, err := config.Parse(path)
		if err != nil {
			return fmt.Errorf("merge: %w", err)
		}
		if !cfg.Workload.Launcher.Multi() {
			return fmt.Errorf("merge: %s is not a node of a multi-GPU run (its %s has no workload.launcher): merge joins the run directories of one run's nodes", d, rundir.ConfigYAML)
		}
		if first == nil {
			first, firstDir = cfg, d
			continue
		}
		// The program's argv, not the interpreter's path, which nodes'
		// environments may place apart.
		if a, b := first.Workload.Argv, cfg.Workload.Argv; !slices.Equal(a, b) || first.Model.Name != cfg.Model.Name {
			return fmt.Errorf("merge: %s ran %q (model %q), %s ran %q (model %q): the nodes of one run run one program", firstDir, strings.Join(a, " "), first.Model.Name, d, strings.Join(b, " "), cfg.Model.Name)
		}
		// What decides the numbers: the ranges profiled, ncu's sections,
		// the model's facts.
		for _, c := range []struct {
			key  string
			a, b any
		}{
			{"nvtx.include", first.NVTX.Include, cfg.NVTX.Include},
			{"nvtx.domain", first.NVTX.Domain, cfg.NVTX.Domain},
			{"ncu.set", first.NCU.Set, cfg.NCU.Set},
			{"model", first.Model, cfg.Model},
		} {
			if !reflect.DeepEqual(c.a, c.b) {
				return fmt.Errorf("merge: %s and %s were profiled with different %s (%v against %v): the nodes of one run run one configuration", firstDir, d, c.key, c.a, c.b)
			}
		}
	}
	return nil
}
