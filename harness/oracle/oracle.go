// Package oracle holds an independent source's figures for a run's kernel
// times, and the rule by which a timeline is checked against them.
//
// The source is torch.profiler (PyTorch's CUPTI client, kineto), run by the
// default workload in a separate plain run with DEEPPROF_PHASE=oracle: its
// prefill and its decode loop each inside a profiler session of their own,
// CUDA activity only (scripts/workloads/hf_causal_lm.py, oracle()). The
// workload writes the figures to timeline/oracle-torch-profiler.json, so the
// check is redone offline, from the run directory alone. A tensor-parallel
// run (one process per GPU under torchrun) writes one file for all its
// ranks: phases and kernels summed over them, as the timeline's regions sum
// over its processes, and each rank's own figures, with its collective
// (NCCL) time, which is checked against the timeline's on the same device.
//
// It reads and compares; it does not run anything, and it renders nothing.
package oracle

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

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
	// Ranks holds each process's own figures when the workload ran as
	// several ranks (tensor parallel under torchrun, issue 17); Phases and
	// Kernels are then the sums over every rank, as the timeline's regions
	// sum over every process. Empty for a single process.
	Ranks []RankFigures `json:"ranks,omitempty"`
}

// RankFigures is one rank's share of the oracle's figures.
type RankFigures struct {
	Rank int `json:"rank"`
	// Device is the CUDA ordinal the rank's process ran on, as that process
	// sees it (torch.cuda.current_device()): the timeline's launches carry
	// the same.
	Device int `json:"device"`
	// CollectiveMS and CollectiveLaunches are the rank's communication
	// kernels (package classify's "communication" category) inside the
	// phases.
	CollectiveMS       float64  `json:"collective_ms"`
	CollectiveLaunches int64    `json:"collective_launches"`
	Phases             []Phase  `json:"phases"`
	Kernels            []Kernel `json:"kernels"`
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
	if err := readRanks(&f, data, file); err != nil {
		return nil, err
	}
	return &f, nil
}

// readRanks validates f.Ranks; an error names the line of the rank's object.
func readRanks(f *Figures, data []byte, file string) error {
	if len(f.Ranks) == 0 {
		return nil
	}
	lines := rankLines(data)
	at := func(i int) int {
		if i < len(lines) {
			return lines[i]
		}
		return line(data, "ranks")
	}
	seen := map[int]bool{}
	for i, r := range f.Ranks {
		switch {
		case r.Rank < 0 || r.Device < 0:
			return fmt.Errorf("%s:%d: ranks[%d]: want rank >= 0 and device >= 0, got rank %d, device %d", file, at(i), i, r.Rank, r.Device)
		case seen[r.Rank]:
			return fmt.Errorf("%s:%d: ranks[%d]: rank %d appears twice", file, at(i), i, r.Rank)
		case !finite(r.CollectiveMS) || r.CollectiveMS < 0 || r.CollectiveLaunches < 0:
			return fmt.Errorf("%s:%d: rank %d: want a finite collective_ms >= 0 and collective_launches >= 0, got %v ms, %d launches", file, at(i), r.Rank, r.CollectiveMS, r.CollectiveLaunches)
		}
		seen[r.Rank] = true
		for _, p := range r.Phases {
			if p.Range == "" || !finite(p.KernelMS) || p.KernelMS < 0 || p.Launches < 0 {
				return fmt.Errorf("%s:%d: rank %d: phase %q: want a range name, a finite kernel_ms >= 0 and launches >= 0", file, at(i), r.Rank, p.Range)
			}
		}
		for _, k := range r.Kernels {
			if k.Name == "" || !finite(k.TotalMS) || k.TotalMS < 0 || k.Calls < 1 {
				return fmt.Errorf("%s:%d: rank %d: kernel %q: want a name, a finite total_ms >= 0 and calls >= 1", file, at(i), r.Rank, k.Name)
			}
		}
	}
	return nil
}

// rankLines is the line where each element of the top-level "ranks" array
// opens, in order (nil when it cannot be walked: Read has decoded data, so
// only an odd layout gets here).
func rankLines(data []byte) []int {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil
		}
		if t != "ranks" {
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return nil
			}
			continue
		}
		if t, err := dec.Token(); err != nil || t != json.Delim('[') {
			return nil
		}
		var out []int
		for dec.More() {
			off := dec.InputOffset()
			for off < int64(len(data)) && strings.ContainsRune(" \t\r\n,", rune(data[off])) {
				off++
			}
			out = append(out, jsonpos.Line(data, off))
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return out
			}
		}
		return out
	}
	return nil
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
// each of the top 5 kernels within 5 %, launch counts equal; with several
// ranks (issue 17), each rank's collective (NCCL) time within 5 %.
const (
	PhaseTolerance      = 0.03
	KernelTolerance     = 0.05
	TopKernels          = 5
	CollectiveTolerance = 0.05
)

// Measured is the timeline's side of the check.
type Measured struct {
	// Phases by the oracle's range name: the timeline's region total and
	// launches of that top-level range.
	Phases map[string]Phase
	// Kernels by name: totals over the same phases.
	Kernels map[string]Kernel
	// Collectives by CUDA device ordinal: the communication kernels'
	// (package classify) total and launches over the same phases, for the
	// oracle's Ranks; nil when it has none.
	Collectives map[int]Phase
}

// Row is one compared figure.
type Row struct {
	What     string  `json:"what"` // "phase prefill", "kernel NAME", "collectives rank 1 (device 1)"
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
// oracle's top kernels, then each rank's collectives (when the oracle has
// ranks). The rows come in that order; the check passes when every row is
// OK.
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
	ranksOn := map[int][]int{}
	for _, r := range f.Ranks {
		ranksOn[r.Device] = append(ranksOn[r.Device], r.Rank)
	}
	for _, r := range f.Ranks {
		got, ok := m.Collectives[r.Device]
		want := Phase{KernelMS: r.CollectiveMS, Launches: r.CollectiveLaunches}
		x := row(fmt.Sprintf("collectives rank %d (device %d)", r.Rank, r.Device), want, got, ok || r.CollectiveLaunches == 0, CollectiveTolerance)
		if on := ranksOn[r.Device]; len(on) > 1 {
			// The timeline tells ranks apart by device only.
			x.OK, x.Why = false, fmt.Sprintf("ranks %v all ran on device %d: the timeline cannot tell them apart", on, r.Device)
		}
		rows = append(rows, x)
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
