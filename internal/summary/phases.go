package summary

import (
	"strings"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/model"
)

// PerInstance is v over the row's steady-state instances (0 with none).
func PerInstance(r facts.PhaseRow, v float64) float64 {
	if r.Instances == 0 {
		return 0
	}
	return v / float64(r.Instances)
}

// NoTimeline is the reason the section is empty when the run has no CUPTI
// timeline.
const NoTimeline = "the run has no CUPTI timeline: with timeline.tool=cupti the CUPTI run's own kernel times give each phase's GPU busy and idle time, idle gaps, launch latency and copies"

func phaseRows(in Inputs) facts.Phases {
	rep := in.Phases
	if rep == nil {
		return facts.Phases{Missing: orWhy(in.PhasesMissing, NoTimeline)}
	}
	out := facts.Phases{Depth: rep.Depth, LaunchBoundIdleShare: rep.LaunchBoundIdleShare, Rows: []facts.PhaseRow{}}
	for _, sc := range rep.Scopes {
		// Each range right after the range it is in, in tree order
		// (nvtx paths escape a "/" inside a name: the last one ends the
		// parent's path), its ranges found by their parent's path once.
		children := map[string][]int{}
		for j, n := range sc.Nested {
			if i := strings.LastIndex(n.Name, "/"); i >= 0 {
				children[n.Name[:i]] = append(children[n.Name[:i]], j)
			}
		}
		var inside func(parent string)
		inside = func(parent string) {
			for _, j := range children[parent] {
				r := phaseRow(sc, sc.Nested[j])
				r.Nested = true
				out.Rows = append(out.Rows, r)
				inside(sc.Nested[j].Name)
			}
		}
		for _, p := range sc.Phases {
			out.Rows = append(out.Rows, phaseRow(sc, p))
			inside(p.Name)
		}
		out.Rows = append(out.Rows, phaseRow(sc, sc.Run))
		for _, l := range []struct {
			sum    *facts.LeftOut
			nested bool
		}{{sc.PhasesLeftOut, false}, {sc.NestedLeftOut, true}} {
			if l.sum != nil {
				out.LeftOut = append(out.LeftOut, facts.PhasesLeftOut{ProcessID: sc.ProcessID, Device: sc.Device, Rank: sc.Rank, Nested: l.nested,
					Regions: l.sum.Regions, Kernels: l.sum.Kernels, KernelMS: float64(l.sum.KernelNS) / 1e6})
			}
		}
	}
	if len(out.Rows) == 0 {
		out.Missing = "the CUPTI timeline holds no kernel or copy"
	}
	return out
}

func phaseRow(sc facts.PhaseScope, p facts.Phase) facts.PhaseRow {
	ms := func(ns int64) float64 { return float64(ns) / 1e6 }
	r := facts.PhaseRow{ProcessID: sc.ProcessID, Device: sc.Device, Rank: sc.Rank, Phase: p.Name, Instances: p.Instances,
		WallMS: ms(p.SpanNS), Kernels: p.Kernels, KernelMS: ms(p.KernelNS), BusyMS: ms(p.BusyNS), IdleMS: ms(p.IdleNS),
		Idle: p.IdleShare, Gaps: p.Gaps.Count, GapMS: ms(p.Gaps.SumNS),
		Memcpys: p.Memcpy.Count, MemcpyMS: ms(p.Memcpy.NS), LaunchBound: p.LaunchBound, HostAhead: p.HostAhead}
	r.WallPerInstanceMS = PerInstance(r, r.WallMS)
	if p.SpanNS > 0 {
		r.Busy = float64(p.BusyNS) / float64(p.SpanNS)
	}
	if len(p.Gaps.Largest) > 0 {
		g := p.Gaps.Largest[0]
		r.LargestGap = &facts.PhaseGap{MS: ms(g.NS), Before: g.Before, After: g.After, Instance: g.Instance}
	}
	if p.Latency.Count > 0 {
		us := p.Latency.MedianNS / 1e3
		r.LaunchLatencyMedianUS = &us
	}
	r.LaunchCalls, r.LaunchCallMS = p.LaunchCalls.Count, ms(p.LaunchCalls.NS)
	if c := p.LaunchCalls; c.Count > 0 {
		us := float64(c.NS) / 1e3 / float64(c.Count)
		r.LaunchCallUS = &us
	}
	if m := p.Measured; m != nil {
		r.Measured = &facts.PhaseMeasured{Instances: m.Instances, WallMS: ms(m.SpanNS), KernelMS: ms(m.KernelNS)}
	}
	if w := p.Warmup; w != nil {
		r.Warmup = &facts.PhaseWarmup{Instances: w.Instances, WallMS: ms(w.SpanNS), KernelMS: ms(w.KernelNS), BusyMS: ms(w.BusyNS), GapMS: ms(w.Gaps.SumNS)}
		if w.LeadingSteps > 0 {
			r.Warmup.Steps, r.Warmup.SteadySteps = w.LeadingSteps, w.LeadingOf-w.LeadingSteps
		}
		if len(w.Gaps.Largest) > 0 {
			g := w.Gaps.Largest[0]
			r.Warmup.LargestGap = &facts.PhaseGap{MS: ms(g.NS), Before: g.Before, After: g.After, Instance: g.Instance}
			lg := r.Warmup.LargestGap
			r.Warmup.OneTimeSetup = lg.MS >= OneTimeSetupMinMS && (r.LargestGap == nil || lg.MS > OneTimeSetupFactor*r.LargestGap.MS)
		}
	}
	return r
}

// hostAhead is the rows the narrative names host-ahead, chosen as
// launchBound chooses its rows.
func hostAhead(p facts.Phases) []facts.PhaseRow {
	return judged(p, func(r facts.PhaseRow) bool { return r.HostAhead && r.LaunchLatencyMedianUS != nil })
}

// launchBound is the rows the narrative names launch-bound: every phase
// flagged so, and the whole run of a device only when it has no phase
// (its phases say it more precisely otherwise).
func launchBound(p facts.Phases) []facts.PhaseRow {
	return judged(p, func(r facts.PhaseRow) bool { return r.LaunchBound })
}

// judged is the rows flagged that the narrative names: every phase (not a
// nested range), and a device's whole run only when it has no phase.
func judged(p facts.Phases, flagged func(facts.PhaseRow) bool) []facts.PhaseRow {
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
	var out []facts.PhaseRow
	for _, r := range p.Rows {
		if flagged(r) && !r.Nested && (r.Phase != "" || !hasPhase[scope{r.ProcessID, r.Device}]) {
			out = append(out, r)
		}
	}
	return out
}
