package summary

import (
	"strings"

	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/phases"
)

// Phases is the section "GPU busy and idle per phase": what the run's CUPTI
// timeline tells of each NVTX phase (package timeline's PhaseReport at one
// depth), one row per phase and the whole run, per process and device.
type Phases struct {
	Depth int `json:"depth,omitempty"`
	// LaunchBoundIdleShare is the rule's threshold: a phase idle for more
	// than this share of its wall span is launch-bound.
	LaunchBoundIdleShare float64    `json:"launch_bound_idle_share,omitempty"`
	Rows                 []PhaseRow `json:"rows"`
	Missing              string     `json:"missing,omitempty"`
}

// PhaseRow is one phase (or the whole run) on one device of one process.
type PhaseRow struct {
	ProcessID int64          `json:"process_id"`
	Device    model.DeviceID `json:"device"`
	Rank      *int           `json:"rank,omitempty"` // as the launcher numbered it; nil when unknown
	// Phase is the NVTX region path; "" for the whole run.
	Phase string `json:"phase"`
	// Nested is true for a region inside a phase ("decode_all/
	// decode_step"): its time is part of its phase's row.
	Nested bool `json:"nested,omitempty"`
	// Instances are the steady-state instances the row's figures sum (the
	// warm-up ones are in Warmup).
	Instances int `json:"instances"`
	// WallMS sums the instances' spans on the GPU (from the earlier of
	// the range's start and its first kernel or copy to the later of its
	// end and its last).
	WallMS float64 `json:"wall_ms"`
	// WallPerInstanceMS is WallMS per steady-state instance (0 with none).
	WallPerInstanceMS float64 `json:"wall_per_instance_ms"`
	Kernels           int64   `json:"kernels"`
	KernelMS          float64 `json:"kernel_ms"` // the phase's own kernels' durations, summed
	BusyMS            float64 `json:"busy_ms"`   // time in the spans that the phase's own kernels run: at most KernelMS
	IdleMS            float64 `json:"idle_ms"`   // WallMS - BusyMS
	Busy              float64 `json:"busy"`      // BusyMS / WallMS
	Idle              float64 `json:"idle"`      // IdleMS / WallMS
	Gaps              int64   `json:"gaps"`      // idle holes between two kernels
	GapMS             float64 `json:"gap_ms"`
	// LargestGap is the longest hole, with the kernels on either side;
	// nil when there is none.
	LargestGap *PhaseGap `json:"largest_gap,omitempty"`
	// LaunchLatencyMedianUS is the median of launch call start to kernel
	// start; nil when no kernel's launch call is known.
	LaunchLatencyMedianUS *float64 `json:"launch_latency_median_us"`
	Memcpys               int64    `json:"memcpys"`
	MemcpyMS              float64  `json:"memcpy_ms"`
	LaunchBound           bool     `json:"launch_bound"`
	// Warmup is the phase's warm-up instances, left out of the figures
	// above (one warm-up decision: timeline.Steady); nil when none.
	Warmup *PhaseWarmup `json:"warmup,omitempty"`
}

// PhaseWarmup is what a phase's warm-up instances cost, shown apart.
type PhaseWarmup struct {
	Instances  int       `json:"instances"`
	WallMS     float64   `json:"wall_ms"`
	KernelMS   float64   `json:"kernel_ms"`
	BusyMS     float64   `json:"busy_ms"`
	GapMS      float64   `json:"gap_ms"`
	LargestGap *PhaseGap `json:"largest_gap,omitempty"`
	// OneTimeSetup says the largest gap is one-time setup: at least
	// OneTimeSetupMinMS, and OneTimeSetupFactor times the steady state's
	// largest (kernel plans chosen, autotuning, lazy module loading).
	OneTimeSetup bool `json:"one_time_setup,omitempty"`
}

// PerInstance is v over the row's steady-state instances (0 with none).
func (r PhaseRow) PerInstance(v float64) float64 {
	if r.Instances == 0 {
		return 0
	}
	return v / float64(r.Instances)
}

// PhaseGap is one idle gap between two kernels.
type PhaseGap struct {
	MS       float64 `json:"ms"`
	Before   string  `json:"before"` // the kernel whose end opens it
	After    string  `json:"after"`  // the kernel whose start closes it
	Instance int     `json:"instance"`
}

// Label is the row's phase for a sentence or a cell: its region, or "the
// whole run".
func (r PhaseRow) Label() string {
	if r.Phase == "" {
		return "the whole run"
	}
	return r.Phase
}

// NoTimeline is the reason the section is empty when the run has no CUPTI
// timeline.
const NoTimeline = "the run has no CUPTI timeline: with timeline.tool=cupti the CUPTI run's own kernel times give each phase's GPU busy and idle time, idle gaps, launch latency and copies"

func phaseRows(in Inputs) Phases {
	rep := in.Phases
	if rep == nil {
		return Phases{Missing: orWhy(in.PhasesMissing, NoTimeline)}
	}
	out := Phases{Depth: rep.Depth, LaunchBoundIdleShare: rep.LaunchBoundIdleShare, Rows: []PhaseRow{}}
	for _, sc := range rep.Scopes {
		// Each range right after the range it is in, in tree order
		// (nvtx paths escape a "/" inside a name: the last one ends the
		// parent's path).
		var inside func(parent string)
		inside = func(parent string) {
			for _, n := range sc.Nested {
				if i := strings.LastIndex(n.Name, "/"); i >= 0 && n.Name[:i] == parent {
					r := phaseRow(sc, n)
					r.Nested = true
					out.Rows = append(out.Rows, r)
					inside(n.Name)
				}
			}
		}
		for _, p := range sc.Phases {
			out.Rows = append(out.Rows, phaseRow(sc, p))
			inside(p.Name)
		}
		out.Rows = append(out.Rows, phaseRow(sc, sc.Run))
	}
	if len(out.Rows) == 0 {
		out.Missing = "the CUPTI timeline holds no kernel or copy"
	}
	return out
}

func phaseRow(sc phases.PhaseScope, p phases.Phase) PhaseRow {
	ms := func(ns int64) float64 { return float64(ns) / 1e6 }
	r := PhaseRow{ProcessID: sc.ProcessID, Device: sc.Device, Rank: sc.Rank, Phase: p.Name, Instances: p.Instances,
		WallMS: ms(p.SpanNS), Kernels: p.Kernels, KernelMS: ms(p.KernelNS), BusyMS: ms(p.BusyNS), IdleMS: ms(p.IdleNS),
		Idle: p.IdleShare, Gaps: p.Gaps.Count, GapMS: ms(p.Gaps.SumNS),
		Memcpys: p.Memcpy.Count, MemcpyMS: ms(p.Memcpy.NS), LaunchBound: p.LaunchBound}
	r.WallPerInstanceMS = r.PerInstance(r.WallMS)
	if p.SpanNS > 0 {
		r.Busy = float64(p.BusyNS) / float64(p.SpanNS)
	}
	if len(p.Gaps.Largest) > 0 {
		g := p.Gaps.Largest[0]
		r.LargestGap = &PhaseGap{MS: ms(g.NS), Before: g.Before, After: g.After, Instance: g.Instance}
	}
	if p.Latency.Count > 0 {
		us := p.Latency.MedianNS / 1e3
		r.LaunchLatencyMedianUS = &us
	}
	if w := p.Warmup; w != nil {
		r.Warmup = &PhaseWarmup{Instances: w.Instances, WallMS: ms(w.SpanNS), KernelMS: ms(w.KernelNS), BusyMS: ms(w.BusyNS), GapMS: ms(w.Gaps.SumNS)}
		if len(w.Gaps.Largest) > 0 {
			g := w.Gaps.Largest[0]
			r.Warmup.LargestGap = &PhaseGap{MS: ms(g.NS), Before: g.Before, After: g.After, Instance: g.Instance}
			lg := r.Warmup.LargestGap
			r.Warmup.OneTimeSetup = lg.MS >= OneTimeSetupMinMS && (r.LargestGap == nil || lg.MS > OneTimeSetupFactor*r.LargestGap.MS)
		}
	}
	return r
}

// launchBound is the rows the narrative names launch-bound: every phase
// flagged so, and the whole run of a device only when it has no phase
// (its phases say it more precisely otherwise).
func launchBound(p Phases) []PhaseRow {
	type scope struct {
		pid int64
		dev model.DeviceID
	}
	hasPhase := map[scope]bool{}
	for _, r := range p.Rows {
		if r.Phase != "" {
			hasPhase[scope{r.ProcessID, r.Device}] = true
		}
	}
	var out []PhaseRow
	for _, r := range p.Rows {
		if r.LaunchBound && !r.Nested && (r.Phase != "" || !hasPhase[scope{r.ProcessID, r.Device}]) {
			out = append(out, r)
		}
	}
	return out
}
