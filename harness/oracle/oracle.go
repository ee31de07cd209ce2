// Package oracle holds an independent source's figures for a run's kernel
// times, and the rule by which a timeline is checked against them.
//
// The source is torch.profiler (PyTorch's CUPTI client, kineto), run by the
// default workload in a separate plain run with DEEPPROF_PHASE=oracle: its
// prefill and its decode loop each inside a profiler session of their own,
// CUDA activity only (scripts/workloads/hf_causal_lm.py, oracle()). The
// workload writes the figures to timeline/oracle-torch-profiler.json, so the
// check is redone offline, from the run directory alone.
//
// It reads and compares; it does not run anything, and it renders nothing.
package oracle

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/llm-perf-opt/deepprof/harness/internal/jsonpos"
)

// Figures is what the oracle saw, summed over the repeats it ran.
type Figures struct {
	Tool       string   `json:"tool"`
	Torch      string   `json:"torch"`
	Activities []string `json:"activities"`
	Repeats    int      `json:"repeats"`
	Domain     string   `json:"domain"` // the NVTX domain of the phases' ranges; "" the default domain
	Device     string   `json:"device"`
	Phases     []Phase  `json:"phases"`
	Kernels    []Kernel `json:"kernels"`
	// Overhead is torch.profiler's own cost on the machine, when the
	// workload measured it (deepprof's default one does).
	Overhead *Overhead `json:"overhead,omitempty"`
}

// Overhead is whole generates timed in the oracle's process, alternating
// between inside a profiler session and plain: the reference that the
// CUPTI library's overhead, measured the same way, is read against.
type Overhead struct {
	Method     string    `json:"method"`
	ProfiledMS []float64 `json:"profiled_ms"`
	PlainMS    []float64 `json:"plain_ms"`
}

// Phase is one top-level NVTX range's kernels.
type Phase struct {
	Range    string  `json:"range"`
	KernelMS float64 `json:"kernel_ms"`
	Launches int64   `json:"launches"`
}

// Kernel is one kernel name's total over every phase.
type Kernel struct {
	Name    string  `json:"name"`
	TotalMS float64 `json:"total_ms"`
	Calls   int64   `json:"calls"`
}

// Read parses the oracle JSON; errors are "file:line: what".
func Read(data []byte, file string) (*Figures, error) {
	var f Figures
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		if off, ok := jsonpos.Offset(err); ok {
			return nil, fmt.Errorf("%s:%d: %v", file, jsonpos.Line(data, off), err)
		}
		return nil, fmt.Errorf("%s:1: %v", file, err)
	}
	if len(f.Phases) == 0 {
		return nil, fmt.Errorf("%s:1: no phases: the oracle saw no NVTX phase", file)
	}
	for _, p := range f.Phases {
		if p.Range == "" || !finite(p.KernelMS) || p.KernelMS < 0 || p.Launches < 0 {
			return nil, fmt.Errorf("%s:%d: phase %q: want a range name, a finite kernel_ms >= 0 and launches >= 0", file, line(data, p.Range), p.Range)
		}
	}
	if o := f.Overhead; o != nil {
		for _, x := range append(append([]float64{}, o.ProfiledMS...), o.PlainMS...) {
			if !finite(x) || x <= 0 {
				return nil, fmt.Errorf("%s:%d: overhead: want finite times > 0 in profiled_ms and plain_ms, got %v", file, line(data, "overhead"), x)
			}
		}
	}
	for _, k := range f.Kernels {
		if k.Name == "" || !finite(k.TotalMS) || k.TotalMS < 0 || k.Calls < 1 {
			return nil, fmt.Errorf("%s:%d: kernel %q: want a name, a finite total_ms >= 0 and calls >= 1", file, line(data, k.Name), k.Name)
		}
	}
	return &f, nil
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// line is the line where a quoted string first appears (1 when it does not).
func line(data []byte, s string) int {
	q, _ := json.Marshal(s)
	if i := bytes.Index(data, q); i >= 0 {
		return jsonpos.Line(data, int64(i))
	}
	return 1
}

// Tolerances of the check (issue 13): kernel time per phase within 3 %,
// each of the top 5 kernels within 5 %, launch counts equal.
const (
	PhaseTolerance  = 0.03
	KernelTolerance = 0.05
	TopKernels      = 5
)

// Measured is the timeline's side of the check.
type Measured struct {
	// Phases by the oracle's range name: the timeline's region total and
	// launches of that top-level range.
	Phases map[string]Phase
	// Kernels by name: totals over the same phases.
	Kernels map[string]Kernel
}

// Row is one compared figure.
type Row struct {
	What     string  `json:"what"` // "phase prefill", "kernel NAME"
	OracleMS float64 `json:"oracle_ms"`
	TimedMS  float64 `json:"timeline_ms"`
	// Diff is (timeline - oracle) / oracle; 0 when both are 0.
	Diff           float64 `json:"diff"`
	OracleLaunches int64   `json:"oracle_launches"`
	TimedLaunches  int64   `json:"timeline_launches"`
	Tolerance      float64 `json:"tolerance"`
	OK             bool    `json:"ok"`
	Why            string  `json:"why,omitempty"`
}

// Check compares a timeline with the oracle: every phase, then the
// oracle's top kernels. The rows come in that order; the check passes when
// every row is OK.
func Check(f *Figures, m Measured) []Row {
	var rows []Row
	for _, p := range f.Phases {
		got, ok := m.Phases[p.Range]
		rows = append(rows, row("phase "+p.Range, p, got, ok, PhaseTolerance))
	}
	ks := slices.Clone(f.Kernels)
	slices.SortStableFunc(ks, func(a, b Kernel) int {
		if a.TotalMS != b.TotalMS {
			if a.TotalMS > b.TotalMS {
				return -1
			}
			return 1
		}
		return 0
	})
	for i, k := range ks {
		if i == TopKernels {
			break
		}
		got, ok := m.Kernels[k.Name]
		rows = append(rows, row("kernel "+k.Name, Phase{KernelMS: k.TotalMS, Launches: k.Calls}, Phase{KernelMS: got.TotalMS, Launches: got.Calls}, ok, KernelTolerance))
	}
	return rows
}

func row(what string, want, got Phase, found bool, tol float64) Row {
	r := Row{What: what, OracleMS: want.KernelMS, TimedMS: got.KernelMS, OracleLaunches: want.Launches,
		TimedLaunches: got.Launches, Tolerance: tol}
	switch {
	case want.KernelMS > 0:
		r.Diff = (got.KernelMS - want.KernelMS) / want.KernelMS
	case got.KernelMS > 0:
		r.Diff = math.Inf(1)
	}
	switch {
	case !found:
		r.Why = "not in the timeline"
	case want.Launches != got.Launches:
		r.Why = fmt.Sprintf("launches differ: oracle %d, timeline %d", want.Launches, got.Launches)
	case math.Abs(r.Diff) > tol:
		r.Why = fmt.Sprintf("time differs by %+.1f %% (tolerance %.0f %%)", 100*r.Diff, 100*tol)
	default:
		r.OK = true
	}
	if math.IsInf(r.Diff, 0) {
		r.Diff = 0 // JSON has no infinity; Why says what happened
	}
	return r
}

// Passed reports whether every row is OK.
func Passed(rows []Row) bool {
	for _, r := range rows {
		if !r.OK {
			return false
		}
	}
	return len(rows) > 0
}
