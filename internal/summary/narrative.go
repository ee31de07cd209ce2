package summary

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/workload"

	"github.com/llm-perf-opt/deepprof/internal/kernels"
	"github.com/llm-perf-opt/deepprof/internal/model"
)

// MaxFindings is the most findings the summary opens with.
const MaxFindings = 5

// busyLow is the share of a phase's wall time under which the GPU is
// said to wait on the host.
const busyLow = 0.5

// maxNcuAdvice is the most of ncu's rules the recommendations list, each
// once with every top kernel it fired on (all of them are in Top Kernels
// and kernels.json).
const maxNcuAdvice = 5

// recommendationOrder is Narrative.Order; recommendationOrderNoLadder
// where the run has no what-if ladder.
const (
	recommendationOrder         = "Phases first, by the time the what-if ladder says each can save per instance (while the GPU waits on the host, faster kernels do not shorten a phase), then top kernels grouped by what bounds them, by their share of kernel time, then ncu's rules by the kernel time they are estimated to save."
	recommendationOrderNoLadder = "Top kernels grouped by what bounds them, by their share of kernel time, then ncu's rules by the kernel time they are estimated to save."
)

// BandwidthBoundMBU is the MBU from which decode is said to be bound by
// memory bandwidth: below it, the bytes it must read do not explain its
// time.
const BandwidthBoundMBU = 0.5

// decodeBound says what bounds decode, after its low MFU: bandwidth only
// where its MBU supports it; otherwise what does (the host, for a
// launch-bound decode), with the figure.
func decodeBound(s *building, launchBound []facts.PhaseRow) string {
	mbu := s.Serving.MBU
	switch {
	case mbu != nil && *mbu >= BandwidthBoundMBU:
		return fmt.Sprintf(": decode reads every weight for each token's little arithmetic, and its MBU of %.1f%% says memory bandwidth, not FLOPs, limits it", 100**mbu)
	case mbu != nil && slices.ContainsFunc(launchBound, func(r facts.PhaseRow) bool { return r.Phase != "" && phaseKind(s, r.Phase) == model.Decode }):
		return fmt.Sprintf(": with an MBU of only %.2g%%, neither FLOPs nor memory bandwidth limit decode: it is launch-bound, the host sets its pace", 100**mbu)
	case mbu != nil:
		return fmt.Sprintf(": with an MBU of %.2g%%, decode is far from both its FLOP and its bandwidth peak", 100**mbu)
	}
	return ""
}

// phaseKind is "prefill" or "decode" for the outermost range a phase path
// starts with, as phases.* name them; "" for neither.
func phaseKind(s *building, path string) string {
	first, _, _ := strings.Cut(path, "/")
	return s.names.Of(first, "")
}

// ladderAdvice is one recommendation per launch-bound phase (and decode
// step) of the what-if ladder, by the time it can save per instance: what
// it takes now, what the GPU-busy floor would save and the lever, with
// its launches and the host time each costs.
func ladderAdvice(s *building, launchBound []facts.PhaseRow) []facts.Recommendation {
	type item struct {
		save float64
		rec  facts.Recommendation
	}
	var items []item
	scopes := map[[2]int64]bool{}
	for _, r := range s.WhatIf.Rows {
		scopes[[2]int64{r.ProcessID, int64(r.Device)}] = true
	}
	for _, w := range s.WhatIf.Rows {
		if !w.LaunchBound || len(w.Rungs) == 0 || w.Kind == facts.KindDecodeStep {
			continue // a step is in its decode phase's advice
		}
		busy := w.Rungs[slices.IndexFunc(w.Rungs, func(r facts.Rung) bool { return r.Floor == facts.FloorBusy })]
		name := w.Phase
		if len(scopes) > 1 {
			name += " (" + facts.Whose(w.Rank, w.ProcessID, w.Device) + ")"
		}
		text := fmt.Sprintf("%s is launch-bound: %.3f ms an instance now in the CUPTI timeline (steady state, %d %s), its own kernels keep the GPU busy %.3f ms of that (busy %.0f%%). %s could save up to %.3f ms (%.0f%%) an instance",
			name, w.NowMS, w.Instances, plural(w.Instances, "instance", "instances"), w.GPUBusyMS, 100*w.GPUBusyMS/w.NowMS, capital(busy.Lever), busy.SavesMS, 100*busy.SavesMS/w.NowMS)
		text += fmt.Sprintf(": it makes %.0f launches an instance", w.LaunchesPerInstance)
		switch {
		case w.LaunchCallUS == nil:
		case *w.LaunchCallsPerInstance == w.LaunchesPerInstance:
			text += fmt.Sprintf("; its launch calls take %.1f µs of host time each (their CUPTI API records), %.3f ms an instance", *w.LaunchCallUS, *w.LaunchCallMSPerInstance)
		default:
			text += fmt.Sprintf(" in %.0f launch calls (one launch of a CUDA graph starts several kernels), which take %.1f µs of host time each (their CUPTI API records), %.3f ms an instance",
				*w.LaunchCallsPerInstance, *w.LaunchCallUS, *w.LaunchCallMSPerInstance)
		}
		text += fmt.Sprintf(". Faster kernels can only save the busy %.3f ms", w.GPUBusyMS)
		switch w.BindingFloor {
		case facts.FloorBandwidth:
			text += fmt.Sprintf(", down to the bandwidth floor of %.3f ms", *w.BandwidthFloorMS)
		case facts.FloorCompute:
			text += fmt.Sprintf(", down to the compute floor of %.3f ms", *w.ComputeFloorMS)
		}
		text += "."
		items = append(items, item{busy.SavesMS, facts.Recommendation{Kind: "phase", Text: text, SavesMS: &busy.SavesMS}})
	}
	slices.SortStableFunc(items, func(a, b item) int { return cmp.Compare(b.save, a.save) })
	var out []facts.Recommendation
	for _, it := range items {
		out = append(out, it.rec)
	}
	if len(out) == 0 {
		// a launch-bound whole run with no phase: the rule's words, no
		// ladder to read a saving from
		var names, idle []string
		for _, r := range launchBound {
			names = append(names, r.Label())
			idle = append(idle, fmt.Sprintf("%.0f%%", 100*r.Idle))
		}
		if launchBound[0].Phase == "" { // the whole run, at the sentence's start
			names[0] = "The whole run"
		}
		out = append(out, facts.Recommendation{Kind: "phase", Text: fmt.Sprintf(
			"%s %s launch-bound (GPU idle %s): try %s; faster kernels can only save the busy part.", join(names), isAre(len(names)), join(idle), leversOf(s.Environment.Program).busy)})
	}
	return out
}

// narration is a Narrative being written from one summary: its lines,
// claims and recommendations in the order they are made.
type narration struct {
	s  *building
	lv levers
	n  facts.Narrative
}

// say adds a finding line.
func (w *narration) say(format string, args ...any) {
	w.n.Lines = append(w.n.Lines, fmt.Sprintf(format, args...))
}

// claim adds a claim, the rule and figures behind a finding.
func (w *narration) claim(c facts.Claim) { w.n.Claims = append(w.n.Claims, c) }

// advise adds a recommendation.
func (w *narration) advise(r facts.Recommendation) {
	w.n.Recommendations = append(w.n.Recommendations, r)
}

// narrate writes the findings (at most MaxFindings lines) in this order:
// the session's state, the dominant stage, host or GPU, a host ahead, the
// warm-up, communication, kernel categories, the top kernel and MFU; then
// the recommendations: the ladder's or host-bound phases', kernels by
// bound, fusion, ncu's rules.
func narrate(s *building) facts.Narrative {
	w := &narration{s: s, lv: leversOf(s.Environment.Program), n: facts.Narrative{Claims: []facts.Claim{}}}
	w.sayStatus()
	w.sayDominantStage()
	w.sayHostOrGPU()
	w.sayHostAhead()
	w.sayWarmup()
	w.sayCommunication()
	w.sayCategories()
	w.sayTopKernel()
	w.sayMFU()
	if len(w.n.Lines) > MaxFindings {
		w.n.Lines = w.n.Lines[:MaxFindings]
	}
	w.adviseByBound()
	w.adviseFusion()
	w.adviseNcuRules()
	w.adviseNoneAndOrder()
	return w.n
}

// sayStatus opens with what makes the figures incomplete: a session that
// did not finish (what failed; the figures cover only what ran before),
// then a recording with anomalies.
func (w *narration) sayStatus() {
	s := w.s
	if s.Partial != "" {
		w.say("The session did not finish: %s. The figures below cover only what the program ran and recorded before that.", strings.TrimSuffix(oneLine(s.Partial), "."))
	}
	// A recording whose numbers are not whole says so next.
	if k := len(s.Anomalies); k > 0 {
		what := fmt.Sprintf("%d anomalies", k)
		if k == 1 {
			what = "1 anomaly"
		}
		w.say("The recording holds %s that change the numbers below (records dropped, repeated or with impossible times, ranges that do not pair up, record files missing): see Anomalies; the run is partial.", what)
	}
}

// sayDominantStage says where the wall time goes: the top-level stage
// with the largest mean, as a share of the top-level stages' total (a
// sub-stage is inside its parent; the whole program's start-to-exit time
// is not one of its stages). It sets DominantPhase and DominantShare.
func (w *narration) sayDominantStage() {
	s := w.s
	var total float64
	var top *facts.Stage
	listed := map[string]bool{}
	for _, r := range s.Stages.Rows {
		listed[r.Name] = true
	}
	for i, r := range s.Stages.Rows {
		// A sub-stage is inside its parent's time (a parent that is not
		// listed, a range that never closed, leaves it top-level). The
		// whole program's start-to-exit time (a program that wrote no
		// report, timed in stage 1) is not one of its stages: the share is
		// of the stages its ranges mark.
		if listed[r.Parent] || (r.Name == workload.WholeProgram && len(s.Stages.Rows) > 1) {
			continue
		}
		total += r.MeanMS
		if top == nil || r.MeanMS > top.MeanMS {
			top = &s.Stages.Rows[i]
		}
	}
	if top != nil && total > 0 {
		w.n.DominantPhase, w.n.DominantShare = top.Name, top.MeanMS/total
		over := fmt.Sprintf("mean of %d repeats", top.N)
		if top.N == 1 {
			over = "one repeat"
		}
		if top.WarmupMS != nil {
			over += ", warm-up dropped"
		}
		of := "the generate's wall time"
		if s.Stages.FromRanges {
			of = "the stages' wall time"
		}
		if top.Recorded != nil {
			of += ", the program alone"
		}
		if w.n.DominantShare < 1 {
			w.say("%s takes %.1f%% of %s: %.2f of %.2f ms (%s).", top.Name, 100*w.n.DominantShare, of, top.MeanMS, total, over)
		} else {
			w.say("%s takes %.2f ms of wall time (%s).", top.Name, top.MeanMS, over)
		}
	}
}

// sayHostOrGPU says whether the host or the GPU sets the pace: the CUPTI
// timeline's launch-bound rule where there is a timeline, else kernel time
// over wall time. It sets LaunchBound and GPUBusy.
func (w *narration) sayHostOrGPU() {
	w.n.LaunchBound = launchBound(w.s.Phases)
	w.n.GPUBusy = gpuBusy(w.s)
	if len(w.n.LaunchBound) > 0 {
		w.sayLaunchBound()
	} else if w.s.Phases.Missing != "" {
		w.sayHostBound()
	}
}

// sayLaunchBound claims each launch-bound phase (GPU idle past the
// threshold, mostly in the gaps between its own kernels), says so in one
// line, and advises from the what-if ladder.
func (w *narration) sayLaunchBound() {
	s := w.s
	var names, idle []string
	scopes := map[[2]int64]bool{}
	for _, r := range w.n.LaunchBound {
		scopes[[2]int64{r.ProcessID, int64(r.Device)}] = true
	}
	for _, r := range w.n.LaunchBound {
		c := facts.Claim{Kind: ClaimLaunchBound, Subject: r.Label(), Figures: map[string]float64{"idle_share": r.Idle, "threshold": s.Phases.LaunchBoundIdleShare,
			"gap_ms": r.GapMS, "idle_ms": r.IdleMS, "kernels": float64(r.Kernels)},
			Rule: "the GPU idle for more than the threshold's share of the phase's wall time, the gaps between the phase's own kernels making at least half of the idle time"}
		if r.LaunchCallUS != nil {
			c.Figures["launch_call_us"] = *r.LaunchCallUS
		}
		w.claim(c)
		if len(scopes) > 1 {
			// Ranks (or processes) name the same phases: say whose.
			names = append(names, fmt.Sprintf("%s (%s)", r.Label(), facts.Whose(r.Rank, r.ProcessID, r.Device)))
		} else {
			names = append(names, r.Label())
		}
		idle = append(idle, fmt.Sprintf("%.0f%%", 100*r.Idle))
	}
	if r := w.n.LaunchBound[0]; len(w.n.LaunchBound) == 1 {
		label := r.Label()
		if r.Phase == "" {
			label = "The whole run" // a phrase, not a name: it opens the line
		}
		line := fmt.Sprintf("%s is launch-bound: in the CUPTI timeline the GPU sits idle %.0f%% of its %.3f ms, %d gaps between kernels summing %.3f ms",
			label, 100*r.Idle, r.WallMS, r.Gaps, r.GapMS)
		if r.LaunchLatencyMedianUS != nil {
			line += fmt.Sprintf(", median launch latency %.1f µs", *r.LaunchLatencyMedianUS)
		}
		if r.LaunchCallUS != nil {
			line += fmt.Sprintf(", each launch call %.1f µs of host time", *r.LaunchCallUS)
		}
		w.say("%s: the CPU side (%s) sets the pace, not the kernels.", line, w.lv.host)
	} else {
		w.say("%s are launch-bound: in the CUPTI timeline the GPU sits idle %s of their wall time: the CPU side (%s) sets the pace, not the kernels.",
			join(names), join(idle), w.lv.host)
	}
	for _, r := range ladderAdvice(s, w.n.LaunchBound) {
		w.advise(r)
	}
}

// sayHostBound, where there is no CUPTI timeline, claims each phase whose
// kernels run under busyLow of its wall time as host-bound, says so with
// each figure, and advises graphs or larger batches before kernels.
func (w *narration) sayHostBound() {
	var names, busy, details []string
	for _, g := range w.n.GPUBusy {
		if g.Busy < busyLow {
			w.claim(facts.Claim{Kind: ClaimHostBound, Subject: g.Phase, Figures: map[string]float64{"gpu_busy_share": g.Busy, "threshold": busyLow},
				Rule: "kernel time under the threshold's share of the phase's wall time"})
			names = append(names, g.Phase)
			busy = append(busy, fmt.Sprintf("%.0f%%", 100*g.Busy))
			details = append(details, fmt.Sprintf("%.2f ms of kernels in %.2f ms", g.GPUMS, g.WallMS))
		}
	}
	if len(names) > 0 {
		// Each number the line names, for each phase it names.
		w.say("In %s the GPU runs kernels for only %s of the wall time (%s): the rest is the host (%s).", join(names), join(busy), join(details), w.lv.host)
		w.advise(facts.Recommendation{Kind: "phase", Text: fmt.Sprintf(
			"%s %s host-bound (GPU busy %s): try %s, or batch more requests per step, before tuning kernels.",
			join(names), isAre(len(names)), join(busy), w.lv.graphs)})
	}
}

// sayHostAhead says, for each phase idle with its kernels queued behind
// earlier work, that the host is ahead and the GPU sets the pace.
func (w *narration) sayHostAhead() {
	s := w.s
	for _, r := range hostAhead(s.Phases) {
		w.claim(facts.Claim{Kind: ClaimHostAhead, Subject: r.Label(), Figures: map[string]float64{"idle_share": r.Idle, "gap_ms": r.GapMS, "idle_ms": r.IdleMS,
			"launch_latency_median_us": *r.LaunchLatencyMedianUS, "threshold": s.Phases.LaunchBoundIdleShare},
			Rule: "idle past the threshold with gaps between its kernels under half of the idle time, and a median launch latency long enough for a queue"})
		label := r.Label()
		if r.Phase == "" {
			label = "The whole run"
		}
		w.say("%s: the host is ahead, the GPU sets the pace: idle %.0f%% of its %.3f ms, but the gaps between its kernels sum only %.3f ms, and a launch waits %.1f µs (median) for its kernel to start: the idle is its kernels queued behind earlier work, not the GPU waiting on launches.",
			label, 100*r.Idle, r.WallMS, r.GapMS, *r.LaunchLatencyMedianUS)
	}
}

// sayWarmup says, with its cost, that one-time setup slowed the warm-up,
// which every steady-state figure leaves out.
func (w *narration) sayWarmup() {
	s := w.s
	if line, c := warmupFinding(s); line != "" {
		w.say("%s", line)
		w.claim(c)
	}
}

// sayCommunication says, in a multi-rank run, how much of the decode
// phase's GPU time its most communicating rank spends in collectives, and
// the part spent waiting for a straggler.
func (w *narration) sayCommunication() {
	s := w.s
	if r := communicationFinding(s); r != nil {
		line := fmt.Sprintf("Communication takes %.1f%% of %s's GPU time on %s: %.3f ms of collectives, %.3f ms of them exposed (no compute beside them)",
			100*r.Share, r.Label(), facts.WhoseParen(r.Rank, r.ProcessID, r.Device), r.CommunicationMS, r.ExposedCommunicationMS)
		if b := balanceOf(s.Communication, r.Phase); b != nil && b.NetCommunicationMS != nil && b.Straggler != nil && b.ByWait {
			line += fmt.Sprintf("; the collectives themselves take %.3f ms, the rest is waiting for %s",
				*b.NetCommunicationMS, facts.WhoseParen(b.StragglerRank, b.Straggler.ProcessID, b.Straggler.Device))
		}
		w.say("%s.", line)
	}
}

// sayCategories says where the kernel time goes: its three largest
// categories.
func (w *narration) sayCategories() {
	s := w.s
	if cs := s.Kernels.ByCategory; len(cs) > 0 && s.Kernels.TotalMS > 0 {
		var parts []string
		for i, c := range cs {
			if i == 3 {
				break
			}
			parts = append(parts, fmt.Sprintf("%s %.1f%%", c.Category, 100*c.Share))
		}
		w.say("Kernel time by category: %s, of %.2f ms of GPU kernel time (%s) %s%s.", strings.Join(parts, ", "), s.Kernels.TotalMS, timerWords(s.Kernels.TimedBy), s.Kernels.ScopeText(), s.Kernels.WarmupText(2))
	}
}

// sayTopKernel says what bounds the top kernel (claimed only from ncu's
// Speed Of Light on a kernel measured enough) and ncu's best estimate of
// what it could save.
func (w *narration) sayTopKernel() {
	s := w.s
	if len(s.Kernels.Rows) > 0 {
		k := s.Kernels.Rows[0]
		line := fmt.Sprintf("The top kernel, #1 %s (%s), takes %.1f%% of kernel time and is %s", k.Shown(), k.Category, 100*k.Share, k.Bound.Class)
		if k.Bound.Class == kernels.Unknown && k.Category == kernels.Communication {
			line += " (a collective: the deep pass leaves collectives out, their time under ncu being waiting for the other ranks)"
		}
		switch {
		case k.PartlyMeasured:
			line = fmt.Sprintf("The top kernel, #1 %s (%s), takes %.1f%% of kernel time and is partly measured (%.1f%% of its time, %d of %d launch configurations): its bound is not claimed",
				k.Shown(), k.Category, 100*k.Share, 100*k.Sampled.Share, k.Sampled.Configs, k.Sampled.Of)
		case k.SMPct != nil && k.MemPct != nil:
			line += fmt.Sprintf(" (SM %.0f%%, memory %.0f%% of peak)", *k.SMPct, *k.MemPct)
			if k.Bound.Rule == kernels.RuleSOL {
				c := facts.Claim{Kind: string(k.Bound.Class), Subject: k.Shown(), Figures: map[string]float64{"sm_pct": *k.SMPct, "memory_pct": *k.MemPct, "threshold_pct": s.boundThreshold},
					Rule: "ncu's Speed Of Light: both throughputs under the threshold is latency-bound, else the larger one bounds it; made only where the measured launch configurations ran at least min_measured_share of the kernel's time"}
				if k.Sampled != nil {
					c.Figures["measured_share"], c.Figures["min_measured_share"] = k.Sampled.Share, MinMeasuredShare
				}
				w.claim(c)
			}
		}
		if r := bestRule(k); r != nil {
			if est, capped := estimate(*r); capped {
				line += fmt.Sprintf("; ncu estimates %.1f%% of its time could be saved (%s); at %.1f%% of peak at most %.1f%%", *r.SpeedupPct, r.Name, *k.SOLPct, est)
			} else {
				line += fmt.Sprintf("; ncu estimates up to %.1f%% of its time could be saved (%s)", est, r.Name)
			}
		}
		w.say("%s.", line)
	}
}

// sayMFU says the MFU of prefill and decode and, where decode's is under a
// tenth of prefill's, what bounds decode (claimed from its MBU).
func (w *narration) sayMFU() {
	s := w.s
	if m := s.MFU; m.Prefill != nil && m.Decode != nil {
		line := fmt.Sprintf("MFU is %.3g%% in prefill and %.3g%% in decode", 100**m.Prefill, 100**m.Decode)
		if *m.Decode < *m.Prefill/10 {
			line += decodeBound(s, w.n.LaunchBound)
			if mbu := s.Serving.MBU; mbu != nil {
				kind := ClaimNotBandwidthBound
				if *mbu >= BandwidthBoundMBU {
					kind = ClaimBandwidthBound
				}
				w.claim(facts.Claim{Kind: kind, Subject: "decode", Figures: map[string]float64{"mbu": *mbu, "threshold": BandwidthBoundMBU},
					Rule: "decode is bound by memory bandwidth where its MBU reaches the threshold"})
			}
		}
		w.say("%s.", line)
	}
}

// adviseByBound gives one piece of advice per group of the three top
// kernels sharing a category, bound and FP32 GEMM flag, by the group's
// share of kernel time; a partly measured kernel gives none.
func (w *narration) adviseByBound() {
	s := w.s
	type group struct {
		key   string
		ranks []int
		share float64
		rows  []facts.KernelRow
	}
	var groups []*group
	byKey := map[string]*group{}
	for i, k := range s.Kernels.Rows {
		if i == 3 {
			break
		}
		key := fmt.Sprintf("%s/%s/%t", k.Category, k.Bound.Class, k.FP32GEMM)
		if k.PartlyMeasured || boundAdvice(k, 1, w.lv) == "" {
			continue // a bound of a sliver of the kernel gives no advice
		}
		g := byKey[key]
		if g == nil {
			g = &group{key: key}
			byKey[key] = g
			groups = append(groups, g)
		}
		g.ranks = append(g.ranks, i+1)
		g.share += k.Share
		g.rows = append(g.rows, k)
	}
	slices.SortStableFunc(groups, func(a, b *group) int { return cmp.Compare(b.share, a.share) })
	for _, g := range groups {
		k := g.rows[0]
		var refs []string
		for j, r := range g.rows {
			refs = append(refs, fmt.Sprintf("#%d %s", g.ranks[j], r.Shown()))
		}
		w.advise(facts.Recommendation{Kind: "kernels", Kernels: g.ranks, Text: fmt.Sprintf("%s (%.1f%% of kernel time): %s",
			strings.Join(refs, ", "), 100*g.share, boundAdvice(k, len(g.rows), w.lv))})
	}
}

// adviseFusion advises fusing small kernels where elementwise, copy or
// normalization kernels take at least a fifth of kernel time.
func (w *narration) adviseFusion() {
	s := w.s
	var cats []string
	for _, c := range s.Kernels.ByCategory {
		if (c.Category == "elementwise" || c.Category == "copy" || c.Category == "normalization") && c.Share >= 0.2 {
			cats = append(cats, fmt.Sprintf("%s %.0f%%", c.Category, 100*c.Share))
		}
	}
	if len(cats) > 0 {
		w.advise(facts.Recommendation{Kind: "kernels", Text: fmt.Sprintf(
			"Small elementwise, copy and normalization kernels take a large share (%s of kernel time): fuse them (%s, fused norm/activation kernels).",
			strings.Join(cats, ", "), w.lv.fuse)})
	}
}

// adviseNcuRules gives ncu's actionable rules on the top kernels, one item
// per rule (its text said once, from the kernel it saves most on), by the
// kernel time they are estimated to save, at most maxNcuAdvice.
func (w *narration) adviseNcuRules() {
	s := w.s
	type fired struct {
		rank          int
		speedup, save float64
		capped        bool
		ncu, sol      float64 // ncu's own estimate and the SOL that capped it
	}
	type ruleGroup struct {
		rule     facts.Rule // the one with the largest saving: its text
		bestRank int        // the kernel it is about
		best     float64
		on       []fired
		total    float64
	}
	var rgs []*ruleGroup
	byRule := map[string]*ruleGroup{}
	for i, k := range s.Kernels.Rows {
		for _, r := range k.Rules {
			if !kernels.Actionable(r) {
				continue
			}
			g := byRule[r.Name]
			if g == nil {
				g = &ruleGroup{best: -1}
				byRule[r.Name] = g
				rgs = append(rgs, g)
			}
			est, capped := estimate(r)
			f := fired{rank: i + 1, speedup: est, save: k.Share * est, capped: capped, ncu: *r.SpeedupPct}
			if capped {
				f.sol = *k.SOLPct
			}
			save := f.save
			g.on = append(g.on, f)
			g.total += save
			if save > g.best {
				g.best, g.rule, g.bestRank = save, r, i+1
			}
		}
	}
	slices.SortStableFunc(rgs, func(a, b *ruleGroup) int { return cmp.Compare(b.total, a.total) })
	if len(rgs) > maxNcuAdvice {
		rgs = rgs[:maxNcuAdvice]
	}
	for _, g := range rgs {
		slices.SortStableFunc(g.on, func(a, b fired) int { return cmp.Compare(b.save, a.save) })
		var on []string
		var ranks []int
		for _, f := range g.on {
			if f.capped {
				on = append(on, fmt.Sprintf("#%d (ncu estimates %.1f%% of its time; at %.1f%% of peak at most %.1f%%)", f.rank, f.ncu, f.sol, f.speedup))
			} else {
				on = append(on, fmt.Sprintf("#%d (up to %.1f%% of its time)", f.rank, f.speedup))
			}
			ranks = append(ranks, f.rank)
		}
		total := g.total
		gain := ""
		if s.Kernels.TotalMS > 0 {
			gain = fmt.Sprintf(", about %.3f ms of the %.3f ms of kernel time %s%s; at most the phases' GPU-busy time", total/100*s.Kernels.TotalMS, s.Kernels.TotalMS, s.Kernels.ScopeText(), s.Kernels.WarmupText(3))
			if len(s.WhatIf.Rows) > 0 {
				gain += ", which the what-if ladder gives"
			}
		}
		w.advise(facts.Recommendation{Kind: "ncu", Kernels: ranks, EstSavingPct: &total, Text: fmt.Sprintf(
			"ncu's %s (%s) estimates it could save, on %s, %.2f%% of all kernel time in all%s (rules' estimates overlap: they do not add up). %s",
			g.rule.Name, g.rule.Severity, join(on), total, gain, ruleDetail(g.rule.Advice, g.bestRank, len(g.on)))})
	}
}

// adviseNoneAndOrder says no rule fired where there are findings and no
// recommendation, and names the recommendations' order where there are
// several.
func (w *narration) adviseNoneAndOrder() {
	s := w.s
	if len(w.n.Recommendations) == 0 && len(w.n.Lines) > 0 {
		w.advise(facts.Recommendation{Kind: "none", Text: "No rule fired on this run's numbers: read the kernel table and the regions below."})
	}
	if len(w.n.Recommendations) > 1 {
		w.n.Order = recommendationOrder
		if len(s.WhatIf.Rows) == 0 {
			w.n.Order = recommendationOrderNoLadder
		}
	}
}

// ruleDetail is a rule's advice as ncu wrote it for one kernel (#rank,
// the one it saves most on), said to be that kernel's when the rule fired
// on several: its numbers ("only 32 blocks") are that launch's.
func ruleDetail(advice string, rank, kernels int) string {
	if kernels < 2 {
		return advice
	}
	return fmt.Sprintf("On #%d, ncu says: %s", rank, advice)
}

// bestRule is the kernel's actionable ncu rule with the largest estimated
// speedup; nil when it has none.
func bestRule(k facts.KernelRow) *facts.Rule {
	for i, r := range k.Rules {
		if kernels.Actionable(r) {
			return &k.Rules[i]
		}
	}
	return nil
}

// timerWords names the tool that timed a kernel table for a sentence.
func timerWords(t facts.Timer) string {
	switch t {
	case facts.TimedByCUPTI:
		return "the CUPTI run"
	case facts.TimedByNsys:
		return "nsys"
	case facts.TimedByDeepPass:
		return "the deep pass's sample of launches, kernels serialized"
	case facts.TimedByNcu:
		return "ncu timing pass, kernels serialized"
	}
	return "the kernel table"
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

// join lists words as a sentence does: "a", "a and b", "a, b and c".
func join(ws []string) string {
	switch len(ws) {
	case 0:
		return ""
	case 1:
		return ws[0]
	}
	return strings.Join(ws[:len(ws)-1], ", ") + " and " + ws[len(ws)-1]
}

// boundAdvice is what follows from a kernel's category and bound (and,
// for a GEMM, its precision), for n kernels like k, in the words of the
// program's levers lv; "" when nothing does.
func boundAdvice(k facts.KernelRow, n int, lv levers) string {
	category, bound, fuse := k.Category, k.Bound.Class, lv.fuse
	it, its, launch := "it", "its", "its launch disappears"
	if n > 1 {
		it, its, launch = "them", "their", "their launches disappear"
	}
	if category == "gemm" && bound == "compute-bound" && k.FP32GEMM {
		runs := "it runs"
		if n > 1 {
			runs = "they run"
		}
		return fmt.Sprintf("compute-bound FP32 GEMM: %s on the FP32 FMA pipe, not the tensor cores. TF32 or BF16 tensor cores are the next step where accuracy allows (%s); FP8 after that.", runs, lv.tensorCores)
	}
	switch category + "/" + bound {
	case "gemm/memory-bound":
		streams := "it streams"
		if n > 1 {
			streams = "they stream"
		}
		return fmt.Sprintf("memory-bound GEMM/GEMV: %s weights for few tokens. Batch more sequences per step, or use lower-precision weights (FP8/INT8) to cut the bytes read.", streams)
	case "gemm/compute-bound":
		return "compute-bound GEMM: only less arithmetic helps, e.g. FP8 tensor cores where accuracy allows."
	case "gemm/latency-bound":
		return "latency-bound GEMM: too little work per launch to fill the GPU. Larger batches, or fuse the projections (QKV, gate/up) into one GEMM."
	case "attention/memory-bound", "attention/latency-bound":
		return fmt.Sprintf("%s attention: use a fused attention kernel for decode (FlashAttention/FlashInfer decode kernels, paged KV cache).", bound)
	case "attention/compute-bound":
		return "compute-bound attention: a newer FlashAttention version or FP8 attention is the lever."
	case "elementwise/memory-bound", "elementwise/latency-bound", "normalization/memory-bound", "normalization/latency-bound",
		"copy/memory-bound", "copy/latency-bound", "reduction/latency-bound", "reduction/memory-bound":
		return fmt.Sprintf("%s %s: fuse %s with %s neighbours (%s) so %s data stays on chip and %s.", bound, category, it, its, fuse, its, launch)
	case "communication/memory-bound", "communication/latency-bound", "communication/compute-bound":
		return "communication on the critical path: overlap it with compute or reduce the tensor-parallel degree."
	}
	return ""
}

// gpuBusy compares each phase's kernel time in the timeline pass (one run
// of the workload under the profiler: the kernels' own durations) with the
// stage's mean wall time in that run where the summary has it (a row's
// Recorded), else the row's (stage 1's, without a CUPTI run). Only with
// every launch counted: a sampled region total says nothing about the
// phase.
func gpuBusy(s *building) []facts.PhaseGPU {
	if s.Regions.Sampled || len(s.Regions.Rows) == 0 {
		return nil
	}
	names := phaseRegions(s)
	// A CUPTI timeline records every repeat of the workload: a phase's
	// kernel time is its steady-state instances' (the warm-up's is apart),
	// the region totals every instance's.
	timelineInstances, timelineKernelMS := map[string]int{}, map[string]float64{}
	for _, r := range s.Phases.Rows {
		timelineInstances[r.Phase] += r.Instances
		timelineKernelMS[r.Phase] += r.KernelMS
	}
	var out []facts.PhaseGPU
	for _, st := range s.Stages.Rows {
		// A workload report's phases were pushed as the ranges it names;
		// stages read from NVTX ranges are those ranges.
		reg, ok := names[st.Phase]
		instances := timelineInstances[reg]
		if s.Stages.FromRanges {
			reg, ok, instances = st.Name, st.Phase != "", len(st.MS)
		}
		// The wall time of the run the regions come from: the CUPTI run's
		// own repeats where the row's are the program alone's.
		wall := st.MeanMS
		if st.Recorded != nil {
			wall = st.Recorded.MeanMS
		}
		if !ok || wall <= 0 {
			continue
		}
		for _, r := range s.Regions.Rows {
			if r.Name == reg && r.TotalMS > 0 {
				g := facts.PhaseGPU{Phase: st.Name, Region: reg, GPUMS: r.TotalMS, WallMS: wall, Instances: instances}
				switch n := timelineInstances[reg]; {
				case n > 0:
					g.GPUMS, g.Instances = timelineKernelMS[reg]/float64(n), n
				case instances > 0:
					g.GPUMS = r.TotalMS / float64(instances)
				}
				g.Busy = g.GPUMS / g.WallMS
				out = append(out, g)
			}
		}
	}
	return out
}

// phaseRegions maps the workload's phases to the NVTX region names it
// pushed them as (its report's "ranges"; the defaults otherwise).
func phaseRegions(s *building) map[string]string {
	r := struct {
		Prefill string `json:"prefill"`
		Decode  string `json:"decode"`
		Domain  string `json:"domain"`
	}{Prefill: "prefill", Decode: "decode_all"}
	if s.workloadRanges != nil {
		_ = json.Unmarshal(s.workloadRanges, &r)
	}
	return map[string]string{
		"prefill": model.Path([]model.Range{{Domain: r.Domain, Name: r.Prefill}}),
		"decode":  model.Path([]model.Range{{Domain: r.Domain, Name: r.Decode}}),
	}
}

// balanceOf is the section's comparison of the ranks in phase ("" the
// whole run); nil when there is none.
func balanceOf(c *facts.Communication, phase string) *facts.BalanceRow {
	if c == nil {
		return nil
	}
	for i := range c.Balance {
		if c.Balance[i].Phase == phase {
			return &c.Balance[i]
		}
	}
	return nil
}

// communicationFinding is the communication row the findings name: in the
// decode phase's region (the whole run when the timeline has none with
// communication), the rank whose GPU time is most communication; nil
// without communication.
func communicationFinding(s *building) *facts.CommunicationRow {
	c := s.Communication
	if c == nil {
		return nil
	}
	pick := func(phase string) *facts.CommunicationRow {
		var best *facts.CommunicationRow
		for i, r := range c.Rows {
			if r.Phase == phase && r.CommunicationMS > 0 && (best == nil || r.Share > best.Share) {
				best = &c.Rows[i]
			}
		}
		return best
	}
	// The decode phase's region: the range the workload pushed it as, or,
	// for stages read from NVTX ranges, the range itself.
	if reg, ok := phaseRegions(s)[model.Decode]; ok {
		if r := pick(reg); r != nil {
			return r
		}
	}
	for _, st := range s.Stages.Rows {
		if st.Phase == model.Decode {
			if r := pick(st.Name); r != nil {
				return r
			}
		}
	}
	return pick("")
}

// capital is s with its first letter upper case.
func capital(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// plural is one when n is 1, else many.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// The kinds of claim besides a kernel's bound class (facts.Bound).
const (
	ClaimLaunchBound       = "launch-bound"
	ClaimHostBound         = "host-bound"
	ClaimBandwidthBound    = "bandwidth-bound"
	ClaimNotBandwidthBound = "not-bandwidth-bound"
	ClaimWarmup            = "warm-up"
	ClaimHostAhead         = "host-ahead"
)

// OneTimeSetupFactor is how much larger a warm-up instance's largest gap
// must be than the steady instances' for the warm-up to be named one-time
// setup (kernel plans, autotuning, lazy loading).
const OneTimeSetupFactor = 10

// OneTimeSetupMinMS is the least such a gap lasts to be named one-time
// setup at all.
const OneTimeSetupMinMS = 1.0

// warmupExcessMS is how much longer than a steady one each instance (or
// step) the warm-up rule dropped from r took; a phase whose dropped
// instances were no slower than its steady ones had no warm-up to name.
func warmupExcessMS(r facts.PhaseRow) float64 {
	w := r.Warmup
	switch {
	case w.Steps > 0:
		return w.WallMS/float64(w.Steps) - r.WallMS/float64(max(w.SteadySteps, 1))
	case w.Instances > 1:
		return w.WallMS/float64(w.Instances) - PerInstance(r, r.WallMS)
	default:
		return w.WallMS - PerInstance(r, r.WallMS)
	}
}

// warmupCostMS is what the warm-up of r cost over steady state in all: its
// excess an instance (or step) times the instances (or steps) dropped.
func warmupCostMS(r facts.PhaseRow) float64 {
	n := max(r.Warmup.Steps, r.Warmup.Instances, 1)
	return warmupExcessMS(r) * float64(n)
}

// warmupFinding names the top-level phase whose warm-up cost the most, as
// one-time setup where its largest gap dwarfs the steady ones: "" when no
// phase had a warm-up. The instances left out for one of the library's
// measurements are not warm-up (PhaseRow.Measured).
func warmupFinding(s *building) (string, facts.Claim) {
	var worst *facts.PhaseRow
	for i, r := range s.Phases.Rows {
		if r.Nested || r.Phase == "" || r.Warmup == nil || r.Instances == 0 || warmupExcessMS(r) <= 0 {
			continue
		}
		if worst == nil || warmupCostMS(r) > warmupCostMS(*worst) {
			worst = &s.Phases.Rows[i]
		}
	}
	if worst == nil {
		return "", facts.Claim{}
	}
	w := worst.Warmup
	c := facts.Claim{Kind: ClaimWarmup, Subject: worst.Phase,
		Figures: map[string]float64{"warmup_ms": w.WallMS, "steady_ms": PerInstance(*worst, worst.WallMS)},
		Rule:    "its first instance, dropped by the warm-up rule, took longer than a steady one"}
	name := worst.Phase
	scopes := map[[2]int64]bool{}
	for _, r := range s.Phases.Rows {
		scopes[[2]int64{r.ProcessID, int64(r.Device)}] = true
	}
	if len(scopes) > 1 {
		name += " (" + facts.Whose(worst.Rank, worst.ProcessID, worst.Device) + ")"
	}
	line := fmt.Sprintf("The first instance of %s is a warm-up: %.1f ms against %.1f ms an instance in steady state", name, w.WallMS, PerInstance(*worst, worst.WallMS))
	it := "it"
	if w.Steps > 0 {
		steady := worst.WallMS / float64(max(w.SteadySteps, 1))
		c.Rule = "the first steps of its one instance, dropped by the warm-up rule over its steps, took longer than the steady ones"
		c.Figures["steady_ms"] = steady
		line = fmt.Sprintf("The first step of %s (its one instance) is a warm-up: %.1f ms against %.1f ms a step in steady state", name, w.WallMS, steady)
		if w.Steps > 1 {
			line = fmt.Sprintf("The first %d steps of %s (its one instance) are warm-up: %.1f ms in all, %.1f ms a step, against %.1f ms a step in steady state",
				w.Steps, name, w.WallMS, w.WallMS/float64(w.Steps), steady)
			it = "them"
		}
	} else if w.Instances > 1 {
		c.Rule = fmt.Sprintf("its first %d instances, dropped by the warm-up rule, took longer than steady ones", w.Instances)
		line = fmt.Sprintf("The first %d instances of %s are warm-up: %.1f ms in all, %.1f ms an instance, against %.1f ms an instance in steady state",
			w.Instances, name, w.WallMS, w.WallMS/float64(w.Instances), PerInstance(*worst, worst.WallMS))
		it = "them"
	}
	if g := w.LargestGap; g != nil && w.OneTimeSetup {
		line += fmt.Sprintf(", with a %.1f ms gap before %s: one-time setup (kernel plans, autotuning, lazy loading)", g.MS, facts.Short(g.After))
	}
	leaves := "; every figure below leaves " + it + " out"
	if w := s.Kernels.Warmup; w != nil && !w.LeftOut {
		leaves = "; every figure below but the whole run's kernel time leaves " + it + " out"
	}
	return line + leaves + " (GPU busy and idle per phase shows " + it + " apart).", c
}

// oneLine is s on one line: a traceback's lines joined, the last kept
// whole (it names the error), at most maxReasonRunes in all.
func oneLine(s string) string {
	const maxReasonRunes = 600
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > maxReasonRunes {
		s = "…" + string(r[len(r)-maxReasonRunes:])
	}
	return s
}
