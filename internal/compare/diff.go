package compare

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/rundir"

	"github.com/llm-perf-opt/deepprof/internal/input"
	"github.com/llm-perf-opt/deepprof/internal/kernels"
)

// DefaultThreshold is deepprof diff's threshold: 5% of A.
const DefaultThreshold = 0.05

// Uniform is the same threshold for every part.
func Uniform(f float64) model.Thresholds {
	return model.Thresholds{Stage: f, Kernel: f, Region: f, MFU: f, Floor: model.DefaultFloor}
}

// The region totals a comparison reads: every launch of the timing pass
// when both runs' summary.json have them, else the deep pass's sample.
const (
	RegionsEveryLaunch = "summary.json: every launch of the timing pass"
	RegionsDeepSample  = "ncu/regions/report.json: the deep pass's sampled launches"
)

// Compare compares run b against run a. Rows whose part a run lacks are left
// out and the part is listed in Missing; MFU is optional and only noted.
func Compare(a, b *Summary, th model.Thresholds) *facts.DiffResult {
	r := &facts.DiffResult{
		A:          side(a),
		B:          side(b),
		Thresholds: th,
		NoiseTest:  "welch",
		Alpha:      model.Alpha,
		Rule:       Rule(th),
	}
	for _, s := range []struct {
		run string
		sum *Summary
	}{{"A", a}, {"B", b}} {
		for _, m := range s.sum.Missing {
			m.Run = s.run
			r.Missing = append(r.Missing, m)
		}
	}
	// Every way the two runs do not measure one thing (allowed by the
	// caller), so that no difference it makes goes unexplained.
	for _, d := range SetupDifferences(a, b) {
		r.Notes = append(r.Notes, "A and B do not measure one thing: "+d)
	}
	if br := a.BetweenRuns; br != nil {
		ids := make([]string, len(br.Runs))
		for i, id := range br.Runs {
			ids[i] = shown(id)
		}
		r.Notes = append(r.Notes, fmt.Sprintf("A is a baseline of %d runs of the program, each its own process (%s): "+
			"a stage's mean or a kernel's total counts as changed only beyond their spread, by more than the threshold "+
			"(and a kernel's floor) of its nearest edge; inside, it is noise", len(br.Runs), strings.Join(ids, ", ")))
	}
	if a.Has(facts.PartStages) && b.Has(facts.PartStages) {
		compareStages(r, a, b)
	}
	if a.Has(facts.PartKernels) && b.Has(facts.PartKernels) {
		compareKernels(r, a, b)
	}
	if a.Has(facts.PartRegions) && b.Has(facts.PartRegions) {
		compareRegions(r, a, b)
	}
	compareMFU(r, a, b)
	r.Regression = len(r.Regressions) > 0
	if r.Regressions == nil {
		r.Regressions = []string{}
	}
	if r.Improvements == nil {
		r.Improvements = []string{}
	}
	if r.HostMoves == nil {
		r.HostMoves = []string{}
	}
	if r.Missing == nil {
		r.Missing = []facts.DiffMissing{}
	}
	r.Incomplete = len(r.Missing) > 0
	if r.Notes == nil {
		r.Notes = []string{}
	}
	return r
}

func side(s *Summary) facts.DiffSide {
	read := s.Read
	if read == nil {
		read = []string{}
	}
	return facts.DiffSide{Source: s.Source, RunID: s.RunID, Model: s.Model, Device: s.Device, Read: read}
}

// Rule says the verdict rule in words, as the reports print it.
func Rule(th model.Thresholds) string {
	pct := func(f float64) string { return trimPct(100 * f) }
	var thr string
	if u := Uniform(th.Stage); th.Kernel == u.Kernel && th.Region == u.Region && th.MFU == u.MFU {
		thr = pct(th.Stage) + " of A"
	} else {
		thr = fmt.Sprintf("its part's threshold (stages %s, kernels %s, regions %s, MFU %s of A)",
			pct(th.Stage), pct(th.Kernel), pct(th.Region), pct(th.MFU))
	}
	host := "a wall the host moved is reported (verdict host), not failing"
	if th.GateHost {
		host = "a wall the host moved fails too (the host is gated)"
	}
	return fmt.Sprintf("A change counts when |Δ| exceeds %s and, for a stage with at least 2 repeats in both runs, "+
		"Welch's t-test finds it significant (two-sided, α = %g); otherwise it is noise. "+
		"Kernel and region totals are one number per run: threshold only, and a change counts only beyond %s of A's kernel time "+
		"and, for a kernel, twice the spread its launches' recorded durations give its total. "+
		"Slower is a regression, faster an improvement (reported, not failing); MFU lower by more than the threshold, relative to A, is a regression. "+
		"A kernel that appeared is a regression when its time exceeds the threshold share of A's listed kernel time; disappeared kernels are reported. "+
		"A stage's GPU work (kernel time, busy time and launches per instance) that grew beyond the kernel threshold is a regression; "+
		"a wall that moved with the GPU work unchanged is the GPU's when the stage is GPU-bound (slower: a regression) "+
		"and the host's when it is launch-bound in both runs: %s. "+
		"%s.",
		thr, model.Alpha, pct(th.Floor), host, upperFirst(model.WarmupRule()))
}

func trimPct(v float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.4f", v), "0"), ".") + "%"
}

// judge turns a change into a verdict: exceeds says whether it passed the
// threshold, noise whether the noise test then rejected it, worse whether
// its direction is the bad one.
func judge(exceeds, noise, worse bool) facts.Verdict {
	switch {
	case !exceeds:
		return facts.Unchanged
	case noise:
		return facts.Noise
	case worse:
		return facts.Regression
	}
	return facts.Improvement
}

// change computes B − A and whether it exceeds threshold th.
func change(a, b, th float64) (facts.DiffChange, bool) {
	d := model.RoundMS(b - a)
	c := facts.DiffChange{DeltaMS: &d}
	if a != 0 {
		p := roundFrac(100 * d / a)
		c.DeltaPct = &p
	}
	return c, math.Abs(d) > th*math.Abs(a) && d != 0
}

// shown is a name from a profiled program (kernel, range, stage, model)
// as the notes print it (input.EscapeName: U+202E as \u202e), by the one
// rule of every renderer, for the notes reach a terminal as they are
// (deepprof diff's regression message).
func shown(name string) string { return input.EscapeName(name) }

func note(r *facts.DiffResult, v facts.Verdict, what string) {
	switch v {
	case facts.Regression:
		r.Regressions = append(r.Regressions, what)
	case facts.Improvement:
		r.Improvements = append(r.Improvements, what)
	}
}

func pctText(p *float64) string {
	if p == nil {
		return "new"
	}
	return fmt.Sprintf("%+.1f%%", *p)
}

func compareStages(r *facts.DiffResult, a, b *Summary) {
	find := func(s *Summary, name string) *model.Summary {
		for i := range s.Stages {
			if s.Stages[i].Name == name {
				st := s.Stages[i].Summary
				return &st
			}
		}
		return nil
	}
	var names []string
	for _, s := range [][]model.StageTimes{a.Stages, b.Stages} {
		for _, st := range s {
			if !slices.Contains(names, st.Name) {
				names = append(names, st.Name)
			}
		}
	}
	for _, name := range SortStages(names) {
		row := facts.DiffStage{Name: name, A: find(a, name), B: find(b, name), Test: "threshold only"}
		if row.A == nil || row.B == nil {
			row.Verdict = facts.Reported
			r.Stages = append(r.Stages, row)
			continue
		}
		var exceeds bool
		row.DiffChange, exceeds = change(row.A.MeanMS, row.B.MeanMS, r.Thresholds.Stage)
		noise := false
		if row.A.N >= 2 && row.B.N >= 2 {
			row.Test = "welch"
			p := roundFrac(model.Welch(*row.A, *row.B))
			row.P = &p
			noise = p >= model.Alpha
			row.LowPower = min(row.A.N, row.B.N) < facts.MinPowerSamples
		}
		if bt, ok := a.BetweenRuns.Stage(name); ok {
			row.Between = &bt
			row.WithinRuns = exceeds && !beyondRuns(bt, row.B.MeanMS, r.Thresholds.Stage, 0)
		}
		row.Verdict = judge(exceeds, noise || row.WithinRuns, *row.DeltaMS > 0)
		wa, okA := a.Work[name]
		wb, okB := b.Work[name]
		if okA && okB && comparable(wa, wb) {
			row.Work = compareWork(wa, wb, r.Thresholds.Kernel)
		}
		attribute(&row, r.Thresholds.GateHost)
		what := fmt.Sprintf("stage %s: %s → %s ms mean (%s)", shown(name),
			model.FormatMS(row.A.MeanMS), model.FormatMS(row.B.MeanMS), pctText(row.DeltaPct))
		if row.Cause != "" {
			what += ": " + row.Why
		}
		if row.Verdict == facts.Host {
			r.HostMoves = append(r.HostMoves, what)
		}
		note(r, row.Verdict, what)
		r.Stages = append(r.Stages, row)
	}
}

// attribute says where a stage's change comes from, and turns its verdict:
// a stage whose GPU work grew is a regression, whatever its wall did (a
// launch-bound stage's host can hide it); a wall that moved with the GPU
// work unchanged is the host's when the stage is launch-bound in both runs
// (verdict Host when slower, a regression only when gateHost), the GPU's
// when it is GPU-bound in either (a regression when slower); with the bound
// or the work unknown, the wall alone decides.
func attribute(row *facts.DiffStage, gateHost bool) {
	w := row.Work
	moved := row.Verdict == facts.Regression || row.Verdict == facts.Improvement
	switch {
	case w != nil && w.Verdict == facts.Regression:
		row.Verdict, row.Cause = facts.Regression, facts.CauseGPU
		row.Why = "its GPU work grew (" + workText(w) + ")"
	case !moved:
	case w == nil:
	case isTrue(w.A.LaunchBound) && isTrue(w.B.LaunchBound):
		row.Cause = facts.CauseHost
		row.Why = "the host: its GPU work is unchanged (" + workText(w) + ") and it is launch-bound" + hostText(w)
		if row.Verdict == facts.Regression && !gateHost {
			row.Verdict = facts.Host
		}
	case isFalse(w.A.LaunchBound) || isFalse(w.B.LaunchBound):
		row.Cause = facts.CauseGPU
		row.Why = "the GPU: it is GPU-bound, so its wall is the GPU's (" + workText(w) + ")"
	}
}

func isTrue(b *bool) bool  { return b != nil && *b }
func isFalse(b *bool) bool { return b != nil && !*b }

// workText is a work comparison's figures in words.
func workText(w *facts.DiffWork) string {
	per := "per instance"
	if w.A.Instances == 0 {
		per = "over a pass"
	}
	parts := []string{fmt.Sprintf("kernel time %s → %s ms %s (%s)", model.FormatMS(w.A.KernelMS), model.FormatMS(w.B.KernelMS), per, pctText(w.KernelPct))}
	if w.BusyPct != nil {
		parts = append(parts, "busy "+pctText(w.BusyPct))
	}
	parts = append(parts, fmt.Sprintf("launches %s → %s (%s)", trimNum(w.A.Launches), trimNum(w.B.Launches), pctText(w.LaunchesPct)))
	return strings.Join(parts, ", ")
}

// hostText is what the host did, where known: its time per launch and the
// gaps.
func hostText(w *facts.DiffWork) string {
	var parts []string
	if a, b := w.A.HostUSPerLaunch, w.B.HostUSPerLaunch; a != nil && b != nil {
		parts = append(parts, fmt.Sprintf("host time per launch %s → %s µs", trimNum(*a), trimNum(*b)))
	}
	if a, b := w.A.GapMS, w.B.GapMS; a != nil && b != nil {
		parts = append(parts, fmt.Sprintf("gaps %s → %s ms per instance", model.FormatMS(*a), model.FormatMS(*b)))
	}
	if len(parts) == 0 {
		return ""
	}
	return ": " + strings.Join(parts, ", ")
}

func trimNum(v float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.1f", v), "0"), ".")
}

// collectives is the rule that says a kernel is a collective: package
// kernels' default table, as the timeline's communication split.
var collectives = kernels.Default()

type kernelKey struct {
	name   string
	device model.DeviceID
}

func compareKernels(r *facts.DiffResult, a, b *Summary) {
	inB := map[kernelKey]*model.KernelTotals{}
	for i := range b.Kernels {
		k := &b.Kernels[i]
		inB[kernelKey{k.Name, k.Device}] = k
	}
	matched := map[kernelKey]bool{}
	smallest := func(ks []model.KernelTotals) float64 {
		m := math.Inf(1)
		for _, k := range ks {
			m = min(m, k.TotalMS)
		}
		return m
	}
	aMin, bMin := smallest(a.Kernels), smallest(b.Kernels)
	// The floor's base: A's kernel time without its collectives, whose
	// time holds a rank's wait for the others.
	base := a.KernelMS
	for _, k := range a.Kernels {
		if collectives.Is(k.Name, kernels.Communication) {
			base -= k.TotalMS
		}
	}
	absFloor := r.Thresholds.Floor * max(base, 0)
	var rows []facts.DiffKernel
	for i := range a.Kernels {
		ka := &a.Kernels[i]
		key := kernelKey{ka.Name, ka.Device}
		row := facts.DiffKernel{Name: ka.Name, Device: ka.Device, A: &facts.DiffKernelSide{TotalMS: ka.TotalMS, Calls: ka.Calls}}
		kb := inB[key]
		if kb == nil {
			row.Status = facts.Disappeared
			if ka.TotalMS <= bMin {
				row.Status = facts.LeftList
			}
			row.Verdict = facts.Reported
			rows = append(rows, row)
			continue
		}
		matched[key] = true
		row.Status, row.B = facts.Matched, &facts.DiffKernelSide{TotalMS: kb.TotalMS, Calls: kb.Calls}
		var exceeds bool
		row.DiffChange, exceeds = change(ka.TotalMS, kb.TotalMS, r.Thresholds.Kernel)
		floor := kernelFloor(absFloor, *ka, *kb, a.Spreads, b.Spreads)
		row.FloorMS = &floor
		exceeds = exceeds && math.Abs(*row.DeltaMS) > floor
		if bt, ok := a.BetweenRuns.Kernel(ka.Name, ka.Device); ok {
			row.Between = &bt
			row.WithinRuns = exceeds && !beyondRuns(bt, kb.TotalMS, r.Thresholds.Kernel, floor)
		}
		row.Verdict = judge(exceeds, row.WithinRuns, *row.DeltaMS > 0)
		if row.Verdict != facts.Unchanged && collectives.Is(ka.Name, kernels.Communication) {
			// A collective's kernel runs until the last rank joins it:
			// its total holds this rank's wait for the others, which
			// moves a lot between two runs of the same 2-GPU workload
			// (fixtures/runs/h200x2-tp2-*; docs/measurements.md,
			// "Several GPUs").
			row.Verdict = facts.Reported
			r.Notes = append(r.Notes, fmt.Sprintf("kernel %s (device %d) is a collective: %s → %s ms total (%s), reported, not judged: its time holds its rank's wait for the others, which moves between runs",
				shown(ka.Name), ka.Device, model.FormatMS(ka.TotalMS), model.FormatMS(kb.TotalMS), pctText(row.DeltaPct)))
		}
		note(r, row.Verdict, fmt.Sprintf("kernel %s (device %d): %s → %s ms total (%s)", shown(ka.Name), ka.Device,
			model.FormatMS(ka.TotalMS), model.FormatMS(kb.TotalMS), pctText(row.DeltaPct)))
		rows = append(rows, row)
	}
	for i := range b.Kernels {
		kb := &b.Kernels[i]
		if matched[kernelKey{kb.Name, kb.Device}] {
			continue
		}
		row := facts.DiffKernel{Name: kb.Name, Device: kb.Device, B: &facts.DiffKernelSide{TotalMS: kb.TotalMS, Calls: kb.Calls}, Status: facts.Appeared, DiffChange: facts.DiffChange{Verdict: facts.Reported}}
		if kb.TotalMS <= aMin {
			row.Status = facts.EnteredList
		} else {
			var share float64
			if a.KernelMS > 0 {
				share = roundFrac(kb.TotalMS / a.KernelMS)
			} else {
				share = math.Inf(1)
			}
			if !math.IsInf(share, 0) {
				row.ShareOfA = &share
			}
			if kb.TotalMS > max(r.Thresholds.Kernel, r.Thresholds.Floor)*a.KernelMS {
				row.Verdict = facts.Regression
				note(r, facts.Regression, fmt.Sprintf("kernel %s (device %d) appeared: %s ms total, %s of A's kernel time",
					shown(kb.Name), kb.Device, model.FormatMS(kb.TotalMS), model.ShareText(share)))
			}
		}
		rows = append(rows, row)
	}
	// The biggest first (by the larger side), ties by name and device.
	big := func(k facts.DiffKernel) float64 {
		var v float64
		for _, s := range []*facts.DiffKernelSide{k.A, k.B} {
			if s != nil {
				v = max(v, s.TotalMS)
			}
		}
		return v
	}
	slices.SortStableFunc(rows, func(x, y facts.DiffKernel) int {
		return cmp.Or(cmp.Compare(big(y), big(x)), strings.Compare(x.Name, y.Name), cmp.Compare(x.Device, y.Device))
	})
	r.Kernels = rows
}

func compareRegions(r *facts.DiffResult, a, b *Summary) {
	ar, br := a.Regions, b.Regions
	r.RegionsSource = RegionsDeepSample
	if a.EveryLaunchRegions != nil && b.EveryLaunchRegions != nil {
		ar, br = a.EveryLaunchRegions, b.EveryLaunchRegions
		r.RegionsSource = RegionsEveryLaunch
	}
	// The regions' kernel time: the top-level regions' (a nested one's
	// time is inside its parent's).
	var regionMS float64
	for _, g := range ar {
		if !strings.Contains(g.Name, "/") {
			regionMS += g.TotalMS
		}
	}
	floor := model.RoundMS(r.Thresholds.Floor * regionMS)
	inB := map[string]*RegionTotals{}
	for i := range br {
		inB[br[i].Name] = &br[i]
	}
	seen := map[string]bool{}
	for i := range ar {
		ra := &ar[i]
		row := facts.DiffRegion{Name: ra.Name, A: &facts.DiffRegionSide{TotalMS: ra.TotalMS, KernelCount: ra.KernelCount}}
		if rb := inB[ra.Name]; rb != nil {
			row.B = &facts.DiffRegionSide{TotalMS: rb.TotalMS, KernelCount: rb.KernelCount}
		}
		seen[ra.Name] = true
		if row.B == nil {
			row.Verdict = facts.Reported
			r.Regions = append(r.Regions, row)
			continue
		}
		var exceeds bool
		row.DiffChange, exceeds = change(ra.TotalMS, row.B.TotalMS, r.Thresholds.Region)
		row.FloorMS = &floor
		exceeds = exceeds && math.Abs(*row.DeltaMS) > floor
		row.Verdict = judge(exceeds, false, *row.DeltaMS > 0)
		note(r, row.Verdict, fmt.Sprintf("region %s: %s → %s ms total (%s)", shown(ra.Name),
			model.FormatMS(ra.TotalMS), model.FormatMS(row.B.TotalMS), pctText(row.DeltaPct)))
		r.Regions = append(r.Regions, row)
	}
	for i := range br {
		if rb := &br[i]; !seen[rb.Name] {
			r.Regions = append(r.Regions, facts.DiffRegion{Name: rb.Name, B: &facts.DiffRegionSide{TotalMS: rb.TotalMS, KernelCount: rb.KernelCount}, DiffChange: facts.DiffChange{Verdict: facts.Reported}})
		}
	}
}

func compareMFU(r *facts.DiffResult, a, b *Summary) {
	get := func(s *Summary, name string) *float64 {
		if s.MFU == nil {
			return nil
		}
		switch name {
		case "model":
			return s.MFU.Model
		case "prefill":
			return s.MFU.Prefill
		}
		return s.MFU.Decode
	}
	why := func(s *Summary, run, name string) string {
		if s.MFU == nil {
			return run + " has no " + rundir.SummaryJSON + " with mfu"
		}
		return run + "'s mfu." + name + " is null"
	}
	for _, name := range []string{"model", "prefill", "decode"} {
		row := facts.DiffMFU{Name: name, A: get(a, name), B: get(b, name), Verdict: facts.NotAvail}
		switch {
		case row.A == nil && row.B == nil && a.MFU == nil && b.MFU == nil:
			row.Why = "neither run has " + rundir.SummaryJSON + " with mfu"
			r.NoMFU = true
		case row.A == nil && row.B == nil:
			row.Why = why(a, "A", name) + "; " + why(b, "B", name)
		case row.A == nil:
			row.Why = why(a, "A", name)
		case row.B == nil:
			row.Why = why(b, "B", name)
		case *row.A == 0:
			row.Why = "A's mfu." + name + " is 0"
		default:
			rel := roundFrac(100 * (*row.B - *row.A) / *row.A)
			row.DeltaPct = &rel
			exceeds := math.Abs(*row.B-*row.A) > r.Thresholds.MFU**row.A
			row.Verdict = judge(exceeds, false, *row.B < *row.A)
			// MFU is the model's FLOPs over a stage's time: when that
			// stage changed the same way, the MFU row restates it and the
			// cause is counted once, at the stage.
			if st := sameCause(r, name, row.Verdict); st != nil {
				row.Why = "the same change as stage " + st.Name + " (MFU is FLOPs over its time): counted once, there"
				switch st.Verdict {
				case facts.Host, facts.Noise:
					row.Verdict = st.Verdict
				}
				switch {
				case st.WithinRuns:
					row.Why = "the same change as stage " + st.Name + " (MFU is FLOPs over its time), inside the spread between A's runs"
				case st.Verdict == facts.Noise:
					row.Why = "the same change as stage " + st.Name + " (MFU is FLOPs over its time), which its repeats call noise"
				}
				break
			}
			note(r, row.Verdict, fmt.Sprintf("MFU %s: %.3g%% → %.3g%% (%s)", name, 100**row.A, 100**row.B, pctText(&rel)))
		}
		r.MFU = append(r.MFU, row)
	}
}

// sameCause is the stage whose change an MFU row of scope (model, prefill,
// decode) restates with verdict v: a stage of that phase
// (model.DefaultPhases; for the model, either phase) with the opposite
// verdict on time (slower is lower MFU; a slower stage the host moved
// counts), else one whose change the same way its repeats, or the spread
// between A's runs, call noise (the MFU's change is then that noise). nil
// when none.
func sameCause(r *facts.DiffResult, scope string, v facts.Verdict) *facts.DiffStage {
	if v != facts.Regression && v != facts.Improvement {
		return nil
	}
	var noise *facts.DiffStage
	for i, st := range r.Stages {
		p := model.DefaultPhases.Of(st.Name, "")
		if p == "" || (scope != "model" && p != scope) {
			continue
		}
		if st.Verdict == v || (v == facts.Regression && st.Verdict == facts.Host) {
			return &r.Stages[i]
		}
		slower := st.DeltaMS != nil && *st.DeltaMS > 0
		if st.Verdict == facts.Noise && noise == nil && st.DeltaMS != nil && slower == (v == facts.Regression) {
			noise = &r.Stages[i]
		}
	}
	return noise
}

// beyondRuns says whether v lies beyond the spread between runs bt by more
// than the threshold th of its nearest edge and more than floor: a figure
// inside the spread between processes of one program, or just past it,
// has not changed.
func beyondRuns(bt model.Between, v, th, floor float64) bool {
	edge := model.Nearest(bt, v)
	d := math.Abs(v - edge)
	return d > th*math.Abs(edge) && d > floor
}

// kernelFloor is the least change of a kernel's total that counts: the
// absolute floor, or twice the standard deviation of the difference of
// its two totals were its launches independent draws with the spread
// recorded for it (√(n_A·sd_A² + n_B·sd_B²); a side without one takes the
// other's), whichever is larger.
func kernelFloor(abs float64, ka, kb model.KernelTotals, sa, sb map[kernelKey]model.Spread) float64 {
	key := kernelKey{ka.Name, ka.Device}
	spa, okA := sa[key]
	spb, okB := sb[key]
	switch {
	case !okA && !okB:
		return model.RoundMS(abs)
	case !okA:
		spa = spb
	case !okB:
		spb = spa
	}
	noise := 2 * math.Sqrt(float64(ka.Calls)*spa.StdDevMS*spa.StdDevMS+float64(kb.Calls)*spb.StdDevMS*spb.StdDevMS)
	return model.RoundMS(max(abs, noise))
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// roundFrac rounds a derived fraction or p-value to 1e-6.
func roundFrac(v float64) float64 { return math.Round(v*1e6) / 1e6 }

// JSON writes the result as indented JSON.
func JSON(r *facts.DiffResult, w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}

// SetupDifferences says how two runs do not measure one thing: of different
// models, workload shapes or kernel sources, or on different GPUs (each
// compared where both sides know it); none when they do. A comparison of
// such runs counts every difference as a regression or an improvement.
func SetupDifferences(a, b *Summary) []string {
	var diffs []string
	if a.Model != "" && b.Model != "" && a.Model != b.Model {
		diffs = append(diffs, fmt.Sprintf("run A is of %s and run B of %s", shown(a.Model), shown(b.Model)))
	}
	if (a.Model == "" || b.Model == "") && a.Program != "" && b.Program != "" && a.Program != b.Program {
		// No model to tell them apart (a program that writes no workload
		// report): the programs themselves.
		diffs = append(diffs, fmt.Sprintf("run A profiled the program %s and run B %s", shown(a.Program), shown(b.Program)))
	}
	if a.Device != "" && b.Device != "" && a.Device != b.Device {
		diffs = append(diffs, fmt.Sprintf("run A ran on %s and run B on %s", shown(a.Device), shown(b.Device)))
	}
	if a.Shape != "" && b.Shape != "" && a.Shape != b.Shape {
		diffs = append(diffs, fmt.Sprintf("run A's workload is %s and run B's %s", a.Shape, b.Shape))
	}
	if ka, kb := a.KernelsFrom, b.KernelsFrom; ka.Path != "" && kb.Path != "" && ka.EveryLaunch != kb.EveryLaunch {
		counts := func(s rundir.Source) string {
			if s.EveryLaunch {
				return "count every launch (" + s.Path + ")"
			}
			return "are the deep pass's sample (" + s.Path + ")"
		}
		diffs = append(diffs, fmt.Sprintf("run A's kernels %s and run B's %s", counts(ka), counts(kb)))
	}
	return diffs
}
