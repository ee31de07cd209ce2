package render

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
)

// DiffMarkdown writes the whole comparison: the verdict, what was not compared,
// the rule, and a table per part.
func DiffMarkdown(w io.Writer, r *facts.DiffResult) error {
	var b strings.Builder
	b.WriteString("# Run comparison: B against A\n\n")
	for _, s := range []struct {
		name string
		side facts.DiffSide
	}{{"A", r.A}, {"B", r.B}} {
		fmt.Fprintf(&b, "- %s: %s\n", s.name, sideText(s.side))
	}
	b.WriteString("\n")
	diffVerdict(r, &b, true)
	fmt.Fprintf(&b, "Rule: %s\n\n", EscapeCell(r.Rule))
	diffStages(r, &b)
	diffKernels(r, &b)
	diffRegions(r, &b)
	diffMFU(r, &b)
	_, err := io.WriteString(w, b.String())
	return err
}

// MovedMarkdown is the verdict and one table of the rows that moved (any
// verdict but unchanged and n/a): what a failing baseline check prints.
func MovedMarkdown(r *facts.DiffResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "A: %s\nB: %s\n\n", sideText(r.A), sideText(r.B))
	diffVerdict(r, &b, false)
	t := Table{
		Header: []string{"part", "name", "A", "B", "Δ %", "verdict"},
		Right:  []bool{false, false, true, true, true, false},
	}
	moved := func(v facts.Verdict) bool { return v != facts.Unchanged && v != facts.NotAvail }
	ms := func(v float64) string { return model.FormatMS(v) + " ms" }
	var movedStages []facts.DiffStage
	for _, s := range r.Stages {
		if moved(s.Verdict) {
			movedStages = append(movedStages, s)
			t.Rows = append(t.Rows, []string{"stage", EscapeCell(s.Name),
				optText(s.A != nil, func() string { return ms(s.A.MeanMS) }),
				optText(s.B != nil, func() string { return ms(s.B.MeanMS) }),
				pctCell(s.DeltaPct), verdictCell(s.Verdict, s.P, s.InRuns)})
		}
	}
	for _, k := range r.Kernels {
		if moved(k.Verdict) {
			t.Rows = append(t.Rows, []string{"kernel", EscapeCell(k.Name),
				optText(k.A != nil, func() string { return ms(k.A.TotalMS) }),
				optText(k.B != nil, func() string { return ms(k.B.TotalMS) }),
				kernelPct(k), string(k.Verdict) + runsNote(k.InRuns, model.FormatMS) + kernelStatus(k)})
		}
	}
	for _, g := range r.Regions {
		if moved(g.Verdict) {
			t.Rows = append(t.Rows, []string{"region", EscapeCell(g.Name),
				optText(g.A != nil, func() string { return ms(g.A.TotalMS) }),
				optText(g.B != nil, func() string { return ms(g.B.TotalMS) }),
				pctCell(g.DeltaPct), string(g.Verdict) + regionStatus(g)})
		}
	}
	for _, m := range r.MFU {
		if moved(m.Verdict) {
			t.Rows = append(t.Rows, []string{"MFU", m.Name, mfuCell(m.A), mfuCell(m.B), pctCell(m.DeltaPct), string(m.Verdict)})
		}
	}
	if len(t.Rows) == 0 {
		b.WriteString("Nothing moved beyond the rule.\n")
	} else {
		b.WriteString(t.String())
		var w strings.Builder
		writeWarmups(&w, movedStages, model.FormatMS)
		if w.Len() > 0 {
			b.WriteString("\n" + strings.TrimSuffix(w.String(), "\n"))
		}
	}
	return b.String()
}

func sideText(s facts.DiffSide) string {
	var facts []string
	if s.RunID != "" {
		facts = append(facts, "run "+s.RunID)
	}
	if s.Model != "" {
		facts = append(facts, "model "+s.Model)
	}
	if s.Device != "" {
		facts = append(facts, s.Device)
	}
	text := s.Source
	if len(facts) > 0 {
		text += " (" + strings.Join(facts, ", ") + ")"
	}
	if len(s.Read) > 0 {
		text += "; read " + strings.Join(s.Read, ", ")
	} else {
		text += "; a baseline file"
	}
	return EscapeCell(text)
}

func diffCompared(r *facts.DiffResult) (n, unchanged, noise, restated int) {
	count := func(v facts.Verdict) {
		switch v {
		case facts.Unchanged:
			unchanged++
		case facts.Noise:
			noise++
		case facts.Regression, facts.Improvement, facts.Host:
		default:
			return
		}
		n++
	}
	for _, s := range r.Stages {
		count(s.Verdict)
	}
	for _, k := range r.Kernels {
		if k.Status == facts.Matched || k.Verdict == facts.Regression {
			count(k.Verdict)
		}
	}
	for _, g := range r.Regions {
		count(g.Verdict)
	}
	for _, m := range r.MFU {
		count(m.Verdict)
		if m.Why != "" && (m.Verdict == facts.Regression || m.Verdict == facts.Improvement || m.Verdict == facts.Host) {
			restated++ // counted once, at its stage (sameCause)
		}
	}
	return n, unchanged, noise, restated
}

// diffVerdict writes the verdict line, then the lists of regressions and
// improvements (when lists is set), of what was not compared, and the notes.
func diffVerdict(r *facts.DiffResult, b *strings.Builder, lists bool) {
	n, unchanged, noise, restated := diffCompared(r)
	counts := fmt.Sprintf("%d compared: %d unchanged, %d within noise, %d %s, %d %s", n, unchanged, noise,
		len(r.Regressions), diffPlural(len(r.Regressions), "regression", "regressions"),
		len(r.Improvements), diffPlural(len(r.Improvements), "improvement", "improvements"))
	if h := len(r.HostMoves); h > 0 {
		counts += fmt.Sprintf(", %d %s by the host (reported, not failing)", h, diffPlural(h, "stage moved", "stages moved"))
	}
	if restated > 0 {
		counts += fmt.Sprintf(", %d MFU %s that restate a stage's (counted there)", restated, diffPlural(restated, "change", "changes"))
	}
	counts += "."
	switch {
	case r.Regression:
		fmt.Fprintf(b, "**Regression.** %s\n\n", counts)
	case r.Incomplete:
		fmt.Fprintf(b, "**Incomplete: no regression in what could be compared.** %s\n\n", counts)
	default:
		fmt.Fprintf(b, "**No regression.** %s\n\n", counts)
	}
	list := func(title string, items []string) {
		if len(items) == 0 {
			return
		}
		b.WriteString(title + "\n\n")
		for _, it := range items {
			b.WriteString("- " + shownCell(it) + "\n") // names shown by package compare
		}
		b.WriteString("\n")
	}
	if lists {
		list("Regressions:", r.Regressions)
		list("Moved by the host (reported, not failing; deepprof diff --gate host fails them):", r.HostMoves)
		list("Improvements (reported, not failing):", r.Improvements)
	}
	var missing []string
	for _, m := range r.Missing {
		missing = append(missing, fmt.Sprintf("%s has no %s: %s not compared", m.Run, m.File, m.Part))
	}
	list("Not compared:", missing)
	list("Notes:", r.Notes)
}

// stagesRead is the file a side's stages were read from (its first of
// stage 1's report, the CUPTI run's alone repeats, summary.json's stages),
// stage1/report.json for a baseline file.
func stagesRead(side facts.DiffSide) string {
	for _, f := range side.Read {
		if f == rundir.Stage1Report || f == rundir.ReadAloneStages || f == rundir.ReadSummaryStages {
			return f
		}
	}
	return rundir.Stage1Report
}

func diffStages(r *facts.DiffResult, b *strings.Builder) {
	b.WriteString("## Stages\n\n")
	if len(r.Stages) == 0 {
		b.WriteString(notCompared(r, facts.PartStages))
		return
	}
	a, bs := stagesRead(r.A), stagesRead(r.B)
	if a == rundir.Stage1Report && bs == rundir.Stage1Report {
		fmt.Fprintf(b, "%s, ms per repeat: mean ± sd (n).\n\n", rundir.Stage1Report)
	} else {
		fmt.Fprintf(b, "Stages, ms per repeat: mean ± sd (n); A's from %s, B's from %s.\n\n", EscapeCell(a), EscapeCell(bs))
	}
	var abVals, dVals []float64
	for _, s := range r.Stages {
		for _, st := range []*model.Summary{s.A, s.B} {
			if st != nil {
				abVals = append(abVals, st.MeanMS, st.SDMS)
			}
		}
		if s.DeltaMS != nil {
			dVals = append(dVals, *s.DeltaMS)
		}
	}
	dab, dd := model.Decimals(abVals, 3), model.Decimals(dVals, 3)
	stat := func(st *model.Summary) string {
		if st == nil {
			return "—"
		}
		text := fmt.Sprintf("%s ± %s (n=%d", model.Fixed(st.MeanMS, dab), model.Fixed(st.SDMS, dab), st.N)
		if st.WarmupMS != nil {
			text += fmt.Sprintf("; warm-up %s dropped", model.Fixed(*st.WarmupMS, dab))
		}
		return text + ")"
	}
	t := Table{
		Header: []string{"stage", "A ms", "B ms", "Δ ms", "Δ %", "test", "verdict"},
		Right:  []bool{false, true, true, true, true, false, false},
	}
	low := false
	for _, s := range r.Stages {
		test := s.Test
		if s.P != nil {
			test = "Welch " + pText(*s.P)
		}
		if s.LowPower {
			test += " ¹"
			low = true
		}
		t.Rows = append(t.Rows, []string{EscapeCell(s.Name), stat(s.A), stat(s.B),
			signed(s.DeltaMS, dd), pctCell(s.DeltaPct), test,
			string(s.Verdict) + runsNote(s.InRuns, func(v float64) string { return model.Fixed(v, dab) })})
	}
	b.WriteString(t.String() + "\n")
	if low {
		fmt.Fprintf(b, "¹ fewer than %d repeats on a side: Welch's test has little power, and a real change of this size can read as noise (workload.repeats=%d or more, as benchstat asks).\n\n",
			facts.MinPowerSamples, facts.MinPowerSamples)
	}
	writeWarmups(b, r.Stages, func(v float64) string { return model.Fixed(v, dab) })
	diffWork(r, b)
}

// diffWork writes where each stage's change comes from: its GPU work in
// each run, the host's time per launch, the bound, and the cause.
func diffWork(r *facts.DiffResult, b *strings.Builder) {
	t := Table{
		Header: []string{"stage", "from", "A kernel ms", "B kernel ms", "kernel Δ %", "busy Δ %", "launches A → B", "host µs per launch A → B", "bound A / B", "cause"},
		Right:  []bool{false, false, true, true, true, true, true, true, false, false},
	}
	for _, s := range r.Stages {
		w := s.Work
		if w == nil {
			continue
		}
		from := w.A.From + " " + EscapeCell(w.A.Range)
		if w.A.Instances == 0 {
			from += " (a pass)"
		} else {
			from += " (per instance)"
		}
		host := "n/a"
		if w.A.HostUSPerLaunch != nil && w.B.HostUSPerLaunch != nil {
			host = model.Fixed(*w.A.HostUSPerLaunch, 1) + " → " + model.Fixed(*w.B.HostUSPerLaunch, 1)
		}
		cause := s.Cause
		if cause == "" {
			cause = "—"
		}
		t.Rows = append(t.Rows, []string{EscapeCell(s.Name), from, model.FormatMS(w.A.KernelMS), model.FormatMS(w.B.KernelMS),
			pctCell(w.KernelPct), pctCell(w.BusyPct), model.Fixed(w.A.Launches, 0) + " → " + model.Fixed(w.B.Launches, 0), host,
			boundText(w.A.LaunchBound) + " / " + boundText(w.B.LaunchBound), cause})
	}
	if len(t.Rows) == 0 {
		return
	}
	b.WriteString("Where each stage's change comes from: its GPU work (kernel time, busy time and launches; from summary.json's phases per steady-state instance, or its regions of every launch over a pass) against its wall. ")
	b.WriteString("Unchanged GPU work in a launch-bound stage puts a wall's move on the host.\n\n")
	b.WriteString(t.String() + "\n")
	var bounds []string
	for _, s := range r.Stages {
		if s.Work == nil {
			continue
		}
		for _, side := range []struct {
			run string
			w   facts.StageWork
		}{{"A", s.Work.A}, {"B", s.Work.B}} {
			if side.w.BoundWhy != "" {
				bounds = append(bounds, fmt.Sprintf("- %s's %s: %s.", side.run, EscapeCell(s.Name), EscapeCell(side.w.BoundWhy)))
			}
		}
	}
	if len(bounds) > 0 {
		b.WriteString("Bounds:\n\n" + strings.Join(bounds, "\n") + "\n\n")
	}
}

func boundText(b *bool) string {
	switch {
	case b == nil:
		return "unknown"
	case *b:
		return "launch"
	}
	return "GPU"
}

// writeWarmups says, under a table of stage means, which repeat of which
// run's stage the warm-up rule dropped and why.
func writeWarmups(b *strings.Builder, rows []facts.DiffStage, format func(float64) string) {
	var lines []string
	for _, s := range rows {
		for _, side := range []struct {
			run string
			st  *model.Summary
		}{{"A", s.A}, {"B", s.B}} {
			if side.st == nil {
				continue
			}
			if d := model.Dropped(*side.st, format); d != "" {
				lines = append(lines, fmt.Sprintf("- %s's %s: %s.", side.run, EscapeCell(s.Name), d))
			}
		}
	}
	if len(lines) > 0 {
		fmt.Fprintf(b, "Warm-up dropped:\n\n%s\n\n", strings.Join(lines, "\n"))
	}
}

func diffKernels(r *facts.DiffResult, b *strings.Builder) {
	b.WriteString("## Kernels\n\n")
	if diffMissing(r, facts.PartKernels) {
		b.WriteString(notCompared(r, facts.PartKernels))
		return
	}
	fmt.Fprintf(b, "%s, total ms per kernel name and device; one number per run: threshold only.\n\n", rundir.KernelsJSON)
	if len(r.Kernels) == 0 {
		b.WriteString("Neither run lists a kernel.\n\n")
		return
	}
	var vals, dVals []float64
	for _, k := range r.Kernels {
		for _, s := range []*facts.DiffKernelSide{k.A, k.B} {
			if s != nil {
				vals = append(vals, s.TotalMS)
			}
		}
		if k.DeltaMS != nil {
			dVals = append(dVals, *k.DeltaMS)
		}
	}
	dv, dd := model.Decimals(vals, 3), model.Decimals(dVals, 3)
	cell := func(k *facts.DiffKernelSide) string {
		if k == nil {
			return "—"
		}
		return model.Fixed(k.TotalMS, dv)
	}
	t := Table{
		Header: []string{"kernel", "device", "A ms", "B ms", "Δ ms", "Δ %", "status", "verdict"},
		Right:  []bool{false, true, true, true, true, true, false, false},
	}
	for _, k := range r.Kernels {
		v := string(k.Verdict) + runsNote(k.InRuns, func(v float64) string { return model.Fixed(v, dv) })
		if k.Verdict == facts.Unchanged && k.FloorMS != nil && k.DeltaMS != nil && k.A != nil &&
			math.Abs(*k.DeltaMS) > r.Thresholds.Kernel*k.A.TotalMS {
			v += " (under its floor, " + model.FormatMS(*k.FloorMS) + " ms)"
		}
		t.Rows = append(t.Rows, []string{EscapeCell(k.Name), k.Device.String(), cell(k.A), cell(k.B),
			signed(k.DeltaMS, dd), kernelPct(k), EscapeCell(k.Status), v})
	}
	b.WriteString(t.String() + "\n")
}

func diffRegions(r *facts.DiffResult, b *strings.Builder) {
	b.WriteString("## Regions\n\n")
	if diffMissing(r, facts.PartRegions) {
		b.WriteString(notCompared(r, facts.PartRegions))
		return
	}
	fmt.Fprintf(b, "From %s; total ms per NVTX region (inclusive); one number per run: threshold only.\n\n", r.RegionsSource)
	if len(r.Regions) == 0 {
		b.WriteString("Neither run has a region.\n\n")
		return
	}
	var vals, dVals []float64
	for _, g := range r.Regions {
		for _, s := range []*facts.DiffRegionSide{g.A, g.B} {
			if s != nil {
				vals = append(vals, s.TotalMS)
			}
		}
		if g.DeltaMS != nil {
			dVals = append(dVals, *g.DeltaMS)
		}
	}
	dv, dd := model.Decimals(vals, 3), model.Decimals(dVals, 3)
	t := Table{
		Header: []string{"region", "A ms", "B ms", "A launches", "B launches", "Δ ms", "Δ %", "verdict"},
		Right:  []bool{false, true, true, true, true, true, true, false},
	}
	for _, g := range r.Regions {
		ms := func(s *facts.DiffRegionSide) string {
			if s == nil {
				return "—"
			}
			return model.Fixed(s.TotalMS, dv)
		}
		n := func(s *facts.DiffRegionSide) string {
			if s == nil {
				return "—"
			}
			return strconv.FormatInt(s.KernelCount, 10)
		}
		t.Rows = append(t.Rows, []string{EscapeCell(g.Name), ms(g.A), ms(g.B), n(g.A), n(g.B),
			signed(g.DeltaMS, dd), pctCell(g.DeltaPct), string(g.Verdict) + regionStatus(g)})
	}
	b.WriteString(t.String() + "\n")
}

func diffMFU(r *facts.DiffResult, b *strings.Builder) {
	b.WriteString("## MFU\n\n")
	if r.NoMFU {
		fmt.Fprintf(b, "Not available: neither run has %s with mfu.\n", rundir.SummaryJSON)
		return
	}
	fmt.Fprintf(b, "%s, model FLOPs utilization; lower by more than the threshold (relative to A) is a regression.\n\n", rundir.SummaryJSON)
	t := Table{
		Header: []string{"mfu", "A", "B", "Δ %", "verdict"},
		Right:  []bool{false, true, true, true, false},
	}
	for _, m := range r.MFU {
		v := string(m.Verdict)
		if m.Why != "" {
			v += ": " + EscapeCell(m.Why)
		}
		t.Rows = append(t.Rows, []string{m.Name, mfuCell(m.A), mfuCell(m.B), pctCell(m.DeltaPct), v})
	}
	b.WriteString(t.String())
}

func diffMissing(r *facts.DiffResult, part string) bool {
	for _, m := range r.Missing {
		if m.Part == part {
			return true
		}
	}
	return false
}

func notCompared(r *facts.DiffResult, part string) string {
	var who []string
	for _, m := range r.Missing {
		if m.Part == part {
			who = append(who, fmt.Sprintf("%s has no %s", m.Run, EscapeCell(m.File)))
		}
	}
	if len(who) == 0 {
		return "Neither run has one.\n\n"
	}
	return "Not compared: " + strings.Join(who, "; ") + ".\n\n"
}

func kernelStatus(k facts.DiffKernel) string {
	if k.Status == facts.Matched {
		return ""
	}
	return " (" + EscapeCell(k.Status) + ")"
}

func regionStatus(g facts.DiffRegion) string {
	switch {
	case g.A == nil:
		return " (appeared)"
	case g.B == nil:
		return " (disappeared)"
	}
	return ""
}

func kernelPct(k facts.DiffKernel) string {
	if k.ShareOfA != nil {
		return "new: " + model.ShareText(*k.ShareOfA) + " of A"
	}
	return pctCell(k.DeltaPct)
}

func optText(ok bool, f func() string) string {
	if !ok {
		return "—"
	}
	return f()
}

func signed(v *float64, d int) string {
	if v == nil {
		return "—"
	}
	s := model.Fixed(*v, d)
	if !strings.HasPrefix(s, "-") {
		s = "+" + s
	}
	return s
}

func pctCell(p *float64) string {
	if p == nil {
		return "—"
	}
	return fmt.Sprintf("%+.1f%%", *p)
}

func pText(p float64) string {
	if p < 0.001 {
		return "p < 0.001"
	}
	return "p = " + model.Fixed(p, 3)
}

func verdictCell(v facts.Verdict, p *float64, in facts.InRuns) string {
	if n := runsNote(in, model.FormatMS); n != "" {
		return string(v) + n
	}
	if p != nil && (v == facts.Noise || v == facts.Regression || v == facts.Improvement) {
		return string(v) + " (Welch " + pText(*p) + ")"
	}
	return string(v)
}

// runsNote is what a row inside the spread between A's runs adds to its
// verdict (noise): that spread, its times printed by format; "" for any
// other row.
func runsNote(in facts.InRuns, format func(ms float64) string) string {
	if !in.WithinRuns || in.Between == nil {
		return ""
	}
	return fmt.Sprintf(" (within the spread between A's %d runs, %s–%s ms)", in.Between.N, format(in.Between.MinMS), format(in.Between.MaxMS))
}

func mfuCell(f *float64) string {
	if f == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.3g%%", 100**f) // three significant digits: small MFU never reads as 0
}

func diffPlural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
