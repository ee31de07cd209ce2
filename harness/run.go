// A run directory as the facade hands it out.

package harness

import (
	"errors"

	"github.com/llm-perf-opt/deepprof/internal/rundir"
)

// ReportMD is the file of a run directory that lists every file, its
// source and status, and says why a run is partial.
const ReportMD = rundir.ReportMD

// Run is a run directory that a session made or a rebuild remade: where it
// is, how it ended, and what a person reads first.
type Run struct{ run *rundir.Run }

// Dir is the run directory.
func (r *Run) Dir() string { return r.run.Dir }

// Path is the path of a file of the run, given relative to it.
func (r *Run) Path(rel string) string { return r.run.Path(rel) }

// Status is how the run ended, as its manifest says: "complete",
// "partial" or "failed", and why when it is not complete.
func (r *Run) Status() (status, reason string) {
	m := r.run.Manifest()
	return string(m.Status), m.Reason
}

// Complete reports whether the run is complete.
func (r *Run) Complete() bool { return r.run.Manifest().Status == rundir.StatusComplete }

// Partial is why the run is not complete, as its session or its last
// rebuild said (a killed program, a cut record file, a step that failed):
// its derived files are made of what it holds, which is not all of it.
func (r *Run) Partial() (why string, ok bool) {
	m := r.run.Manifest()
	if m.Status == rundir.StatusComplete {
		return "", false
	}
	if why, ok := m.RebuildMarked(); ok {
		return why, true
	}
	return m.Reason, true
}

// File is a file of a run worth reading first, and what it is.
type File struct{ What, Path string }

// ReadFirst are the files a person reads first, those the run has: the
// stakeholder summary, then the HTML report.
func (r *Run) ReadFirst() []File {
	var out []File
	for _, f := range []File{{"summary", rundir.StakeholderSummary}, {"report", rundir.ReportHTML}} {
		if r.run.Exists(f.Path) {
			out = append(out, File{f.What, r.run.Path(f.Path)})
		}
	}
	return out
}

// OpenRun opens the run directory dir as it is, rebuilding nothing; a
// directory that is not a run directory is an InputError.
func OpenRun(dir string) (*Run, error) {
	run, err := rundir.Open(dir)
	if ne := (*rundir.NotRunDirError)(nil); errors.As(err, &ne) {
		return nil, &InputError{err}
	}
	if err != nil {
		return nil, err
	}
	return &Run{run}, nil
}
