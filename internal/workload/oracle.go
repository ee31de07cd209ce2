// The oracle: torch.profiler's figures for a run, and the check of a
// timeline against them (see the package documentation).

package workload

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/llm-perf-opt/deepprof/internal/input"
	"github.com/llm-perf-opt/deepprof/internal/model"
)

// Figures is what the oracle saw, summed over the repeats it ran.
type Figures struct {
	Tool       string         `json:"tool"`
	Torch      string         `json:"torch"`
	Activities []string       `json:"activities"`
	Repeats    int            `json:"repeats"`
	Domain     string         `json:"domain"` // the NVTX domain of the phases' ranges; "" the default domain
	Device     string         `json:"device"`
	Phases     []OraclePhase  `json:"phases"`
	Kernels    []OracleKernel `json:"kernels"`
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
	Device model.DeviceID `json:"device"`
	// CollectiveMS and CollectiveLaunches are the rank's communication
	// kernels (package kernels' "communication" category) inside the
	// phases.
	CollectiveMS       float64        `json:"collective_ms"`
	CollectiveLaunches int64          `json:"collective_launches"`
	Phases             []OraclePhase  `json:"phases"`
	Kernels            []OracleKernel `json:"kernels"`
	// CollectiveCallsMS is, per phase (its range), each communication
	// kernel's duration in start order, every repeat's one after another:
	// the per-call comparison across ranks (see Check). Absent in figures
	// written before it was.
	CollectiveCallsMS map[string][]float64 `json:"collective_calls_ms,omitempty"`
}

// Overhead is whole generates timed in the oracle's process, alternating
// between inside a profiler session and plain: the reference that the
// CUPTI library's overhead, measured the same way, is read against.
type Overhead struct {
	Method     string    `json:"method"`
	ProfiledMS []float64 `json:"profiled_ms"`
	PlainMS    []float64 `json:"plain_ms"`
}

// OraclePhase is one top-level NVTX range's kernels.
type OraclePhase struct {
	Range    string  `json:"range"`
	KernelMS float64 `json:"kernel_ms"`
	Launches int64   `json:"launches"`
}

// OracleKernel is one kernel name's total over every phase.
type OracleKernel struct {
	Name    string  `json:"name"`
	TotalMS float64 `json:"total_ms"`
	Calls   int64   `json:"calls"`
}

// ReadFigures reads the oracle JSON from r whole (at most input.MaxBytes)
// and parses it (Read), naming it file.
func ReadFigures(r io.Reader, file string) (*Figures, error) {
	data, err := input.ReadAll(r, file)
	if err != nil {
		return nil, err
	}
	return Read(data, file)
}

// Read parses the oracle JSON; errors are "file:line: what".
func Read(data []byte, file string) (*Figures, error) {
	var f Figures
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		if off, ok := input.Offset(err); ok {
			return nil, fmt.Errorf("%s:%d: %v", file, input.Line(data, off), err)
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
		for ph, calls := range r.CollectiveCallsMS {
			for j, x := range calls {
				if !finite(x) || x < 0 {
					return fmt.Errorf("%s:%d: rank %d: collective_calls_ms[%q][%d]: want a finite duration >= 0, got %v", file, at(i), r.Rank, ph, j, x)
				}
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
			out = append(out, input.Line(data, off))
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
		return input.Line(data, int64(i))
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
	Phases map[string]OraclePhase
	// Kernels by name: totals over the same phases.
	Kernels map[string]OracleKernel
	// Collectives by CUDA device ordinal: the communication kernels'
	// (package kernels) total and launches over the same phases, for the
	// oracle's Ranks; nil when it has none.
	Collectives map[model.DeviceID]OraclePhase
	// CollectiveCalls by device, then phase: each communication kernel's
	// duration in ms, in start order (as the oracle's CollectiveCallsMS).
	CollectiveCalls map[model.DeviceID]map[string][]float64
	// CollectiveNames are the communication kernels' names: with ranks,
	// they are compared per call, not among the top kernels.
	CollectiveNames map[string]bool
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
	// Net says the row compares the collectives net of waiting (netRow).
	Net bool `json:"net_of_waiting,omitempty"`
	// Informational rows are shown, not judged (Passed skips them): a
	// rank's collective time with its waits, which differ between the
	// oracle's run and the timeline's.
	Informational bool `json:"informational,omitempty"`
	// OracleRepeatsMS and TimedRepeatsMS are each generate's figure, for
	// a row whose figures are a median over the generates.
	OracleRepeatsMS []float64 `json:"oracle_repeats_ms,omitempty"`
	TimedRepeatsMS  []float64 `json:"timeline_repeats_ms,omitempty"`
}

// Check compares a timeline with the oracle: every phase, then the
// oracle's top kernels, then each rank's collectives (when the oracle has
// ranks). The rows come in that order; the check passes when every row is
// OK.
func Check(f *Figures, m Measured) []Row {
	var rows []Row
	perCall := len(f.Ranks) > 0 && hasCalls(f)
	for _, p := range f.Phases {
		got, ok := m.Phases[p.Range]
		if perCall {
			// A collective's duration holds its rank's wait for the
			// others, which differs between two runs: the phase's
			// compute is compared, the collectives per call below.
			p, got = withoutCollectives(p, oracleCalls(f, p.Range)), withoutCollectives(got, measuredCalls(m, p.Range))
			rows = append(rows, row("phase "+p.Range+" (collectives left out)", p, got, ok, PhaseTolerance))
			continue
		}
		rows = append(rows, row("phase "+p.Range, p, got, ok, PhaseTolerance))
	}
	ks := slices.Clone(f.Kernels)
	slices.SortStableFunc(ks, func(a, b OracleKernel) int {
		if a.TotalMS != b.TotalMS {
			if a.TotalMS > b.TotalMS {
				return -1
			}
			return 1
		}
		return 0
	})
	if perCall {
		ks = slices.DeleteFunc(ks, func(k OracleKernel) bool { return m.CollectiveNames[k.Name] })
	}
	for i, k := range ks {
		if i == TopKernels {
			break
		}
		got, ok := m.Kernels[k.Name]
		rows = append(rows, row("kernel "+k.Name, OraclePhase{KernelMS: k.TotalMS, Launches: k.Calls}, OraclePhase{KernelMS: got.TotalMS, Launches: got.Calls}, ok, KernelTolerance))
	}
	ranksOn := map[model.DeviceID][]int{}
	for _, r := range f.Ranks {
		ranksOn[r.Device] = append(ranksOn[r.Device], r.Rank)
	}
	for _, r := range f.Ranks {
		got, ok := m.Collectives[r.Device]
		want := OraclePhase{KernelMS: r.CollectiveMS, Launches: r.CollectiveLaunches}
		x := row(fmt.Sprintf("collectives rank %d (device %d)", r.Rank, r.Device), want, got, ok || r.CollectiveLaunches == 0, CollectiveTolerance)
		if on := ranksOn[r.Device]; len(on) > 1 {
			// The timeline tells ranks apart by device only.
			x.OK, x.Why = false, fmt.Sprintf("ranks %v all ran on device %d: the timeline cannot tell them apart", on, r.Device)
		} else if perCall {
			x.What += ", waits included"
			x.Informational = true
			if x.Why == "" {
				x.Why = "within tolerance"
			}
			x.Why += "; not judged: a rank's collective time holds its wait for the others, which differs between the oracle's run and the timeline's"
		}
		rows = append(rows, x)
	}
	if len(f.Ranks) > 0 {
		rows = append(rows, netRow(f, m, perCall))
	}
	return rows
}

// hasCalls reports whether every rank gave its collectives per call.
func hasCalls(f *Figures) bool {
	for _, r := range f.Ranks {
		if r.CollectiveCallsMS == nil {
			return false
		}
	}
	return true
}

// calls is one side's collectives of a phase: each device's (or rank's)
// durations in start order.
type calls [][]float64

func oracleCalls(f *Figures, phase string) calls {
	var out calls
	for _, r := range f.Ranks {
		out = append(out, r.CollectiveCallsMS[phase])
	}
	return out
}

func measuredCalls(m Measured, phase string) calls {
	devs := make([]model.DeviceID, 0, len(m.CollectiveCalls))
	for d := range m.CollectiveCalls {
		devs = append(devs, d)
	}
	slices.Sort(devs)
	var out calls
	for _, d := range devs {
		out = append(out, m.CollectiveCalls[d][phase])
	}
	return out
}

// total is every call's duration, every rank's, summed; n the calls.
func (c calls) total() (ms float64, n int64) {
	for _, r := range c {
		for _, x := range r {
			ms += x
		}
		n += int64(len(r))
	}
	return ms, n
}

// net is the collectives' time net of waiting: a collective's kernel runs
// on every rank until the last one joins it, so its shortest duration over
// the ranks is the collective itself, the rest on the others their wait.
// It is the sum over the i-th calls of each rank of their shortest; ok is
// false when the ranks made different numbers of calls.
func (c calls) net() (ms float64, n int64, ok bool) {
	if len(c) == 0 {
		return 0, 0, true
	}
	for _, r := range c[1:] {
		if len(r) != len(c[0]) {
			return 0, 0, false
		}
	}
	for i := range c[0] {
		least := c[0][i]
		for _, r := range c[1:] {
			least = min(least, r[i])
		}
		ms += least
	}
	return ms, int64(len(c[0])), true
}

// withoutCollectives is a phase's figures less its collectives'.
func withoutCollectives(p OraclePhase, c calls) OraclePhase {
	ms, n := c.total()
	p.KernelMS, p.Launches = max(p.KernelMS-ms, 0), p.Launches-n
	return p
}

// netRow compares the collectives net of waiting, over the oracle's
// phases. Each side's figure is per generate: the median, over the
// generates (repeats), of one generate's collectives net of waiting, so
// that one generate whose collectives all ran slow (a 105 us prefill
// all-reduce among 7 us ones, recorded on 2 H100s) does not move it. The
// tolerance is CollectiveTolerance, or more where the oracle's own
// generates spread wider: SpreadFactor times their median absolute
// deviation, relative to their median (the row says both).
func netRow(f *Figures, m Measured, perCall bool) Row {
	const what = "collectives net of waiting (each call's shortest duration over the ranks; a generate's, the median over the generates)"
	if !perCall {
		return Row{What: what, Net: true, Tolerance: CollectiveTolerance,
			Why: "the oracle's figures have no per-call collective durations (collective_calls_ms; written by the default workload since 2026-11-24): not compared"}
	}
	reps := max(f.Repeats, 1)
	want, got := make([]float64, reps), make([]float64, reps)
	var wantN, gotN int64
	for _, p := range f.Phases {
		w, wn, wok := oracleCalls(f, p.Range).perRepeat(reps)
		g, gn, gok := measuredCalls(m, p.Range).perRepeat(reps)
		if !wok || !gok {
			return Row{What: what, Net: true, Tolerance: CollectiveTolerance,
				Why: fmt.Sprintf("phase %s: the ranks made different numbers of collective calls, or not the same number in each of the %d generates (oracle: %v, timeline: %v)", p.Range, reps, wok, gok)}
		}
		for i := range reps {
			want[i] += w[i]
			got[i] += g[i]
		}
		wantN, gotN = wantN+wn, gotN+gn
	}
	wantMed, spread := medianSpread(want)
	gotMed, _ := medianSpread(got)
	tol := CollectiveTolerance
	if reps >= 3 { // with two, the median is the mean and the deviation half the range
		tol = max(tol, SpreadFactor*spread)
	}
	r := row(what, OraclePhase{KernelMS: wantMed, Launches: wantN}, OraclePhase{KernelMS: gotMed, Launches: gotN}, true, tol)
	r.OracleRepeatsMS, r.TimedRepeatsMS = want, got
	note := fmt.Sprintf("a generate's collectives net of waiting, the median of %d; the oracle's generates %s ms (median absolute deviation %.1f %% of their median; the tolerance is the larger of %.0f %% and %g times that)",
		reps, fixedList(want), 100*spread, 100*CollectiveTolerance, SpreadFactor)
	if r.Why == "" {
		r.Why = note
	} else {
		r.Why += "; " + note
	}
	r.Net = true
	return r
}

// SpreadFactor is how many of the oracle's own median absolute deviations
// (between its generates) a collective figure may differ by, when that is
// more than CollectiveTolerance: about two standard deviations of a normal
// spread.
const SpreadFactor = 3.0

// perRepeat is, for reps generates whose calls come one generate after
// another in each rank's list, each generate's collectives net of waiting
// (net) and the calls of one rank; ok is false when the ranks made
// different numbers of calls or a number that reps does not divide.
func (c calls) perRepeat(reps int) (nets []float64, n int64, ok bool) {
	nets = make([]float64, reps)
	if len(c) == 0 {
		return nets, 0, true
	}
	per := len(c[0]) / reps
	if per*reps != len(c[0]) {
		return nil, 0, false
	}
	for i := range reps {
		part := make(calls, len(c))
		for j, r := range c {
			if len(r) != len(c[0]) {
				return nil, 0, false
			}
			part[j] = r[i*per : (i+1)*per]
		}
		ms, _, ok := part.net()
		if !ok {
			return nil, 0, false
		}
		nets[i] = ms
	}
	return nets, int64(len(c[0])), true
}

// medianSpread is the median of xs and their median absolute deviation
// relative to it (0 when the median is 0).
func medianSpread(xs []float64) (med, spread float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	med = model.Median(xs)
	if med == 0 {
		return 0, 0
	}
	dev := make([]float64, len(xs))
	for i, x := range xs {
		dev[i] = math.Abs(x - med)
	}
	return med, model.Median(dev) / med
}

func fixedList(xs []float64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = model.Fixed(x, 4)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func row(what string, want, got OraclePhase, found bool, tol float64) Row {
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

// Passed reports whether every row that is judged is OK.
func Passed(rows []Row) bool {
	for _, r := range rows {
		if !r.OK && !r.Informational {
			return false
		}
	}
	return len(rows) > 0
}
