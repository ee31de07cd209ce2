// A run against its baseline, for tests (package deepproftest).

package harness

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/compare"
	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/render"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
	"github.com/llm-perf-opt/deepprof/internal/summary"
)

// Tolerances are how far a run may move from its baseline, in percent of
// the baseline, per part; a zero field takes the default
// (DefaultTolerances). Thresholds says what is wrong with one.
type Tolerances struct {
	StagePct  float64 `json:"stage_pct"`
	KernelPct float64 `json:"kernel_pct"`
	RegionPct float64 `json:"region_pct"`
	MFUPct    float64 `json:"mfu_pct"`
	// FloorPct is the absolute floor of a kernel's or region's change, in
	// percent of the run's kernel time; 0 takes the default, 1%.
	FloorPct float64 `json:"floor_pct,omitempty"`
	// Gate names what fails besides the GPU work (ParseGate): "gpu" fails
	// on the GPU work and the walls of GPU-bound stages, "host" also on a
	// wall that moved with the host alone; "" takes the baseline file's
	// gate, else "gpu". Given, it wins over the file's.
	Gate string `json:"gate,omitempty"`
}

// Thresholds are the tolerances as fractions of the baseline, defaults
// filled in. A negative or non-finite tolerance, or an unknown gate, is an
// error naming its key.
func (t Tolerances) Thresholds() (facts.Thresholds, error) {
	return model.Tolerances(t).Thresholds()
}

// DefaultTolerances is 10% for every part.
func DefaultTolerances() Tolerances { return Tolerances(model.DefaultTolerances()) }

// ParseGate reads a gate's name ("gpu", the default, or "host"): whether a
// wall the host alone moved fails.
func ParseGate(g string) (host bool, err error) { return model.ParseGate(g) }

// Moved is a run compared with its baseline: whether it moved beyond the
// tolerances (regressed, or a part could not be compared) or improved,
// whether the host alone moved a stage (reported, not beyond), and the
// table of what moved, in Markdown.
type Moved struct {
	Beyond, Improved, Host bool
	Table                  string
}

// CompareBaseline compares the top kernels (top; 0: all) and the rest of
// the run directory runDir with the baseline file path (written by
// Baseline or WriteBaseline), within tol.
func CompareBaseline(path, runDir string, top int, tol Tolerances) (Moved, error) {
	run, err := compare.FromRunTop(runDir, top)
	if err != nil {
		return Moved{}, err
	}
	f, err := os.Open(path)
	if err != nil {
		return Moved{}, err
	}
	defer f.Close()
	base, err := compare.Read(f, path)
	if err != nil {
		return Moved{}, err
	}
	res, err := compare.CompareBaseline(base, run, model.Tolerances(tol))
	if err != nil {
		return Moved{}, err
	}
	return Moved{Beyond: res.Regression || res.Incomplete, Improved: len(res.Improvements) > 0, Host: len(res.HostMoves) > 0,
		Table: render.MovedMarkdown(res)}, nil
}

// WriteBaseline writes the baseline of the run directory runDir (its top
// kernels; 0: all) to the file path, whole or not at all.
func WriteBaseline(path, runDir string, top int) error {
	run, err := compare.FromRunTop(runDir, top)
	if err != nil {
		return err
	}
	return WriteFileAtomic(path, func(w io.Writer) error { return run.Write(w) })
}

// WriteFileAtomic writes the file path with what write writes: whole or
// not at all (a temporary file beside it, renamed over it).
func WriteFileAtomic(path string, write func(io.Writer) error) error {
	return rundir.WriteAtomic(path, write)
}

// KernelLaunches is each kernel's launches in the run directory dir's
// kernels.json (every launch of its scope, the warm-up's included: the
// summary's rows are the steady state's), summed over its devices; nil
// when the run has no kernels.json.
func KernelLaunches(dir string) (map[string]int64, error) {
	if _, err := OpenRun(dir); err != nil {
		return nil, err
	}
	name := filepath.Join(dir, rundir.KernelsJSON)
	b, err := rundir.ReadFileIn(dir, name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	rows, err := compare.ReadKernelRows(b, name)
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, k := range rows {
		out[k.Name] += k.Calls
	}
	return out, nil
}

// ReadSummary reads summary.json of the run directory dir: a folder that
// is not a run (rundir.Open) is an InputError, and none of its files is
// read.
func ReadSummary(dir string) (facts.Summary, error) {
	var s facts.Summary
	if _, err := OpenRun(dir); err != nil {
		return s, err
	}
	b, err := rundir.ReadFileIn(dir, filepath.Join(dir, rundir.SummaryJSON))
	if err != nil {
		return s, fmt.Errorf("%s: the run has no summary (deepprof report DIR makes one from the run's records): %w", dir, err)
	}
	return summary.Read(b, filepath.Join(dir, rundir.SummaryJSON))
}
