package render

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
	"github.com/llm-perf-opt/deepprof/internal/workload"
)

// Chart is an SVG chart of the summary: its file (relative to the
// report), what it shows, and why it is missing when it is.
type Chart struct {
	Path, Title, Missing string
	SVG                  []byte // the chart as drawn; nil when Missing
}

// SummaryMarkdown renders stakeholder_summary.md: the sections of the
// stakeholder summary in order, each with a table, or with the reason its
// input is missing.
func SummaryMarkdown(w io.Writer, s *facts.Summary, charts []Chart) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Stakeholder summary: run %s\n\n", EscapeCell(s.RunID))
	if c := contextLine(s.Environment); c != "" {
		b.WriteString(c + "\n\n")
	}
	findings(&b, s.Narrative)
	anomalies(&b, s.Anomalies)
	whatToTry(&b, s.Narrative, s.WhatIf)
	if len(charts) > 0 {
		b.WriteString("Charts: ")
		var parts []string
		for _, c := range charts {
			if c.Missing != "" {
				parts = append(parts, EscapeCell(c.Title)+" (not drawn: "+EscapeCell(c.Missing)+")")
			} else {
				parts = append(parts, "["+EscapeCell(c.Title)+"]("+c.Path+")")
			}
		}
		b.WriteString(strings.Join(parts, ", ") + ".\n\n")
	}
	if s.Trace != "" {
		fmt.Fprintf(&b, "Timeline: %s in the run directory holds every kernel, copy, launch call and NVTX range, with an arrow from each launch call to its kernel; open it in the Perfetto UI (ui.perfetto.dev, \"Open trace file\") or in chrome://tracing.\n\n", "`"+s.Trace+"`")
	}
	stagesSection(&b, s)
	busyTable(&b, s.Phases)
	communication(&b, s.Communication)
	topKernels(&b, s.Kernels, s.Environment.Program.GraphLaunches)
	perRegion(&b, s.Regions)
	mfu(&b, s.MFU, s.Stages, s.Environment.Model)
	serving(&b, s.Serving)
	topOperators(&b, s.Operators, s.Kernels)
	environment(&b, s.Environment)
	_, err := io.WriteString(w, b.String())
	return err
}

// Sections are the stakeholder summary's second-level headings, in order:
// the HTML report and its browser test hold to them. A summary with
// communication (a multi-rank run) has CommunicationSection too
// (SectionsOf).
var Sections = []string{findingsSection, "What to try", "Stages", busySection, "Top Kernels",
	"Per-Region Breakdown", "MFU", "Top Operators", "Environment"}

// The headings of Sections that another section may follow.
const (
	findingsSection = "Findings"
	busySection     = "GPU busy and idle per phase"
)

// CommunicationSection is the heading of the section that only a summary
// with communication has, after "GPU busy and idle per phase".
const CommunicationSection = "Communication"

// SectionsOf are the second-level headings of s's summary, in order.
func SectionsOf(s *facts.Summary) []string {
	var out []string
	for _, h := range Sections {
		out = append(out, h)
		switch {
		case h == findingsSection && len(s.Anomalies) > 0:
			out = append(out, AnomaliesSection)
		case h == busySection && s.Communication != nil:
			out = append(out, CommunicationSection)
		}
	}
	return out
}

// AnomaliesSection is the heading of the section that only a summary of a
// recording with anomalies has, after "Findings".
const AnomaliesSection = "Anomalies"

// contextLine says in one line what ran where.
func contextLine(e facts.Environment) string {
	var parts []string
	if m := e.Model; m != nil && m.Name != "" {
		parts = append(parts, "Model "+EscapeCell(m.Name))
	}
	if e.GPU != "" {
		parts = append(parts, "GPU "+EscapeCell(e.GPU))
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, " on ") + "; the environment is at the end."
}

// findings opens the summary: at most summary.MaxFindings lines, each a
// number and what it means.
func findings(b *strings.Builder, n facts.Narrative) {
	b.WriteString("## Findings\n\n")
	if len(n.Lines) == 0 {
		missing(b, "no stage times and no kernel table to read a finding from")
		return
	}
	for _, l := range n.Lines {
		fmt.Fprintf(b, "- %s\n", EscapeCell(l))
	}
	b.WriteString("\n")
}

// anomalies lists what the recording holds that changes the summary's
// numbers, right after the findings; nothing when it holds none.
func anomalies(b *strings.Builder, as []string) {
	if len(as) == 0 {
		return
	}
	b.WriteString("## " + AnomaliesSection + "\n\n")
	b.WriteString("The recording holds these, and the numbers below are made from what it holds: the run is partial.\n\n")
	for _, a := range as {
		fmt.Fprintf(b, "- %s\n", EscapeCell(a))
	}
	b.WriteString("\n")
}

// whatToTry lists the recommendations in their order, said once.
func whatToTry(b *strings.Builder, n facts.Narrative, w facts.WhatIf) {
	b.WriteString("## What to try\n\n")
	ladder(b, w)
	if len(n.Recommendations) == 0 {
		missing(b, "nothing to read advice from")
		return
	}
	for i, r := range n.Recommendations {
		fmt.Fprintf(b, "%d. %s\n", i+1, EscapeCell(r.Text))
	}
	b.WriteString("\n")
	if n.Order != "" {
		fmt.Fprintf(b, "Order: %s\n\n", EscapeCell(n.Order))
	}
}

// SummaryJSON writes summary.json.
func SummaryJSON(w io.Writer, s *facts.Summary) error {
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	return e.Encode(s)
}

func missing(b *strings.Builder, why string) {
	fmt.Fprintf(b, "Not available: %s.\n\n", EscapeCell(strings.TrimSuffix(why, ".")))
}

// programCell words what kind of program ran, from which executable, and
// the CUDA graphs it launched.
func programCell(p facts.Program) string {
	kind := map[facts.ProgramKind]string{
		facts.ProgramPyTorch:      "PyTorch (eager)",
		facts.ProgramTorchCompile: "PyTorch with torch.compile",
		facts.ProgramJAX:          "JAX (XLA)",
		facts.ProgramNative:       "C/C++ (a native executable)",
	}[p.Kind]
	if kind == "" {
		kind = "not known from its executable and kernels"
	}
	if p.Exe != "" {
		kind += ": " + EscapeCell(p.Exe)
	}
	if p.GraphLaunches > 0 {
		kind += fmt.Sprintf(", %s CUDA graph launches", count(int64(p.GraphLaunches)))
	}
	return kind
}

func orMissing(v string) string {
	if v == "" {
		return "unknown"
	}
	return EscapeCell(v)
}

func environment(b *strings.Builder, e facts.Environment) {
	b.WriteString("## Environment\n\n")
	if e.Missing != "" {
		fmt.Fprintf(b, "env.json: %s.\n\n", EscapeCell(strings.TrimSuffix(e.Missing, ".")))
	}
	t := Table{Header: []string{"what", "value"}}
	add := func(k, v string) { t.Rows = append(t.Rows, []string{k, v}) }
	add("GPU (NVML)", orMissing(e.GPU))
	if e.MemoryBytes > 0 {
		add("GPU memory", model.Fixed(float64(e.MemoryBytes)/(1<<30), 1)+" GiB")
	} else {
		add("GPU memory", "unknown")
	}
	add("compute capability", orMissing(e.ComputeCapability))
	if len(e.GPUsUsed) > 0 {
		var used []string
		for _, g := range e.GPUsUsed {
			used = append(used, EscapeCell(g))
		}
		add("GPUs used (CUDA order)", strings.Join(used, ", "))
	}
	for _, l := range e.GPULinks {
		add("GPU link", EscapeCell(l))
	}
	add("driver", orMissing(e.Driver))
	add("CUDA (driver)", orMissing(e.CUDA))
	if p := e.Program; p.Exe != "" || (p.Kind != "" && p.Kind != facts.ProgramUnknown) {
		add("program", programCell(p))
	}
	for _, name := range sortedKeys(e.Tools) {
		add(EscapeCell(name), orMissing(e.Tools[name]))
	}
	for _, name := range sortedKeys(e.Frameworks) {
		add(EscapeCell(name)+" (workload)", orMissing(e.Frameworks[name]))
	}
	if m := e.Model; m != nil && m.Params > 0 {
		add("model", fmt.Sprintf("%s (%s), %s parameters, %s", EscapeCell(m.Name), EscapeCell(m.Arch), count(m.Params), EscapeCell(m.Dtype)))
		if e.ModelFrom != "" {
			add("model facts from", EscapeCell(e.ModelFrom))
		}
	} else if m != nil {
		// Facts given in the profile (model.*) for a program with no report.
		var facts []string
		for _, f := range []struct {
			what string
			v    int64
		}{{"matmul parameters", m.MatmulParams}, {"layers", m.Layers}, {"heads", m.Heads}, {"head dim", m.HeadDim}} {
			if f.v > 0 {
				facts = append(facts, f.what+" "+count(f.v))
			}
		}
		if m.Dtype != "" {
			facts = append(facts, EscapeCell(m.Dtype))
		}
		add("model", strings.Join(facts, ", ")+" (from the profile's model.* facts)")
	} else {
		add("model", "unknown (no workload report: it, or the model.* overrides, give the model's facts and MFU with them)")
	}
	if p := e.Peak; p != nil {
		add("peak used for MFU", fmt.Sprintf("%s TFLOPS dense %s; DRAM %s TB/s", trim(p.TFLOPS), EscapeCell(e.Dtype), trim(p.MemoryTBps)))
		add("peak source", EscapeCell(p.Source))
	} else {
		add("peak used for MFU", "none: "+EscapeCell(e.PeakMissing))
	}
	b.WriteString(t.String())
	b.WriteString("\n")
}

// repeatCount is a stage's repeats column: how many its statistics use, and
// of how many when a warm-up was dropped.
func repeatCount(r facts.Stage) string {
	if r.WarmupMS != nil {
		return fmt.Sprintf("%d of %d", r.N, len(r.MS))
	}
	return fmt.Sprint(r.N)
}

// warmups says, under a table of stage statistics, which repeat of which
// stage the warm-up rule dropped and why: package model's rule, the one
// deepprof diff and baselines apply.
func warmups(b *strings.Builder, rows []facts.Stage) {
	var lines []string
	for _, r := range rows {
		if d := dropped(r.StageTimes); d != "" {
			uses := "the mean and sd use"
			if r.TokensS > 0 {
				uses = "the mean, sd and tokens/s use"
			}
			lines = append(lines, fmt.Sprintf("- %s: %s; %s the other %d.", EscapeCell(r.Name), d, uses, r.N))
		}
		if c := r.Recorded; c != nil {
			if d := dropped(*c); d != "" {
				lines = append(lines, fmt.Sprintf("- %s, in the CUPTI run: %s; its mean uses the other %d.", EscapeCell(r.Name), d, c.N))
			}
		}
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(b, "Warm-up dropped (%s, as deepprof diff and baselines do):\n\n%s\n\n", model.WarmupRule(), strings.Join(lines, "\n"))
}

// dropped says which repeat of st the warm-up rule dropped and why
// (model.Dropped), "" when none was.
func dropped(st facts.StageTimes) string {
	s := model.Summary{N: st.N, MeanMS: st.MeanMS, SDMS: st.SDMS, WarmupMS: st.WarmupMS}
	return model.Dropped(s, func(v float64) string { return model.Fixed(v, 3) })
}

// leadingWarmups says, under the stages table, which one-repeat stages
// hold a warm-up in their first steps (facts.PhaseWarmup.Steps): the
// stage's time is the whole instance, the phase's figures its steady part.
func leadingWarmups(b *strings.Builder, tops []facts.Stage, p facts.Phases) {
	for _, st := range tops {
		if st.N != 1 || len(st.Processes) > 0 {
			continue
		}
		for _, r := range p.Rows {
			if r.Nested || r.Phase != st.Name || r.Warmup == nil || r.Warmup.Steps == 0 {
				continue
			}
			fmt.Fprintf(b, "%s: its one repeat holds a warm-up, its %s (%s ms); in steady state it takes %s ms over its other %d steps, the figures of GPU busy and idle per phase and of the what-if ladder.\n\n",
				EscapeCell(st.Name), firstSteps(r.Warmup.Steps), model.Fixed(r.Warmup.WallMS, 3), model.Fixed(r.WallMS, 3), r.Warmup.SteadySteps)
		}
	}
}

func sd(r facts.Stage) string {
	if r.N < 2 {
		return "n/a (1 repeat)"
	}
	return model.Fixed(r.SDMS, 3)
}

// stagesSection is one table of the stages' wall times (statistics,
// repeats, tokens), the sub-stages beside it, and, without a CUPTI
// timeline, the phases' kernel time against their wall time.
func stagesSection(b *strings.Builder, s *facts.Summary) {
	st := s.Stages
	b.WriteString("## Stages\n\n")
	if st.Missing != "" {
		missing(b, st.Missing)
		return
	}
	switch {
	case st.FromRanges:
		fmt.Fprintf(b, "Wall time from %s, per instance of each range.\n\n", EscapeCell(st.Source))
	case st.Source != "" && recordedColumn(st.Rows):
		fmt.Fprintf(b, "Wall time per generate in %s: the program alone's, the times deepprof diff and baselines take, and the serving figures and MFU; batch %d. Prefill tokens are the prompt's, decode tokens the generated ones. Beside it, the stage's mean in %s.\n\n",
			EscapeCell(aloneSource(st)), st.Batch, EscapeCell(st.Source))
	case st.Source != "":
		fmt.Fprintf(b, "Wall time from %s, per generate; batch %d. Prefill tokens are the prompt's, decode tokens the generated ones.\n\n", EscapeCell(st.Source), st.Batch)
		if st.AloneMissing != "" {
			fmt.Fprintf(b, "Not the program alone's: %s.\n\n", EscapeCell(st.AloneMissing))
		}
	default:
		fmt.Fprintf(b, "Wall time of stage 1 (the program alone, no profiler), per generate; batch %d. Prefill tokens are the prompt's, decode tokens the generated ones.\n\n", st.Batch)
	}
	t := Table{Header: []string{"stage", "phase", "mean ms", "sd ms", "repeats", "ms per repeat", "tokens", "tokens/s"},
		Right: []bool{false, false, true, true, true, false, true, true}}
	recorded := recordedColumn(st.Rows)
	if recorded {
		t.Header = append(t.Header, "CUPTI run ms (library recording)")
		t.Right = append(t.Right, true)
	}
	var tops, subs []facts.Stage
	for _, r := range st.Rows {
		if r.Parent != "" {
			subs = append(subs, r)
			continue
		}
		tops = append(tops, r)
		tok, rate := "", ""
		if r.Phase != "" {
			tok, rate = "unknown", "unknown"
		}
		if r.Tokens > 0 {
			tok, rate = fmt.Sprint(r.Tokens), model.Fixed(r.TokensS, 1)
		}
		row := []string{EscapeCell(r.Name), r.Phase, model.Fixed(r.MeanMS, 3), sd(r), repeatCount(r), repeats(r), tok, rate}
		if recorded {
			a := ""
			if r.Recorded != nil {
				a = model.Fixed(r.Recorded.MeanMS, 3)
			}
			row = append(row, a)
		}
		t.Rows = append(t.Rows, row)
	}
	b.WriteString(t.String())
	b.WriteString("\n")
	for _, r := range tops {
		if r.Name == workload.WholeProgram && st.FromRanges {
			fmt.Fprintf(b, "%s: each run of the program in stage 1 (the program alone, no profiler), from start to exit, process start-up included (%s).\n\n", EscapeCell(r.Name), rundir.Stage1Runs)
			if len(st.Rows) == 1 {
				fmt.Fprintf(b, "The program opened no NVTX range of its domain (nvtx.domain), so the whole program is its only stage. To time its stages, mark its phases with NVTX ranges (%s), or set nvtx.domain to a library's domain to time its ranges.\n\n", EscapeCell(model.HowToMark))
			}
		}
	}
	warmups(b, tops)
	leadingWarmups(b, tops, s.Phases)
	if len(subs) > 0 {
		b.WriteString("Sub-stages run inside another stage; their time is part of the parent's row above and is not added to it.\n\n")
		t := Table{Header: []string{"sub-stage", "inside", "mean ms", "share of parent", "ms per repeat"}, Right: []bool{false, false, true, true, false}}
		parent := map[string]float64{}
		for _, r := range st.Rows {
			parent[r.Name] = r.MeanMS
		}
		for _, r := range subs {
			sh := "n/a"
			if p := parent[r.Parent]; p > 0 {
				sh = model.FormatPercent(r.MeanMS / p)
			}
			t.Rows = append(t.Rows, []string{EscapeCell(r.Name), EscapeCell(r.Parent), model.Fixed(r.MeanMS, 3), sh, repeats(r)})
		}
		b.WriteString(t.String())
		b.WriteString("\n")
		warmups(b, subs)
	}
	perProcess(b, st.Rows)
	perRank(b, st.Rows)
	wallVsKernel(b, s)
}

// aloneSource is where the stages' program-alone times come from
// (summary.json from before alone_source: stage 1).
func aloneSource(st facts.Stages) string {
	if st.AloneSource == "" {
		return facts.AloneStage1
	}
	return st.AloneSource
}

// recordedColumn says whether a stage row has the CUPTI run's own mean
// beside the program alone's.
func recordedColumn(rows []facts.Stage) bool {
	for _, r := range rows {
		if r.Recorded != nil {
			return true
		}
	}
	return false
}

// perProcess renders the stages whose instances come from more than one
// process, one row per process: the table above pools them.
func perProcess(b *strings.Builder, rows []facts.Stage) {
	t := Table{Header: []string{"stage", "process", "mean ms", "sd ms", "repeats", "ms per repeat"}, Right: []bool{false, true, true, true, true, false}}
	for _, r := range rows {
		for _, p := range r.Processes {
			one := facts.Stage{StageTimes: p.StageTimes}
			t.Rows = append(t.Rows, []string{EscapeCell(r.Name), fmt.Sprint(p.ProcessID), model.Fixed(p.MeanMS, 3), sd(one), repeatCount(one), repeats(one)})
		}
	}
	if len(t.Rows) == 0 {
		return
	}
	b.WriteString("Per process: these stages' instances come from the NVTX ranges of more than one process, which the rows above pool (each process's warm-up left out); each process's own, with the warm-up rule applied to its own first instance:\n\n")
	b.WriteString(t.String())
	b.WriteString("\n")
}

// perRank renders, for a workload report with its ranks' own times (the
// stages above are rank 0's), each rank's times of the stages where the
// ranks differ by more than their spread (summary.RanksDiffer), and says
// which stages they agree on.
func perRank(b *strings.Builder, rows []facts.Stage) {
	t := Table{Header: []string{"stage", "rank", "mean ms", "sd ms", "repeats", "ms per repeat"}, Right: []bool{false, true, true, true, true, false}}
	var agree []string
	ranks := 0
	for _, r := range rows {
		for _, p := range r.Ranks {
			one := facts.Stage{StageTimes: p.StageTimes}
			t.Rows = append(t.Rows, []string{EscapeCell(r.Name), fmt.Sprint(p.Rank), model.Fixed(p.MeanMS, 3), sd(one), repeatCount(one), repeats(one)})
		}
		if r.RanksAgree > 0 {
			agree = append(agree, EscapeCell(r.Name))
			ranks = r.RanksAgree
		}
	}
	if len(agree) > 0 {
		fmt.Fprintf(b, "Per rank: the stages above are rank 0's; the workload's %d ranks agree on %s within their spread (the gap between their means is within the largest sd).\n\n", ranks, strings.Join(agree, ", "))
	}
	if len(t.Rows) == 0 {
		return
	}
	b.WriteString("Per rank: the stages above are rank 0's; where the ranks' means differ by more than the largest of their sds, each rank's own, from the workload report:\n\n")
	b.WriteString(t.String())
	b.WriteString("\n")
}

// wallVsKernel compares each phase's kernel time with its wall time, and
// says why the two differ; only without a CUPTI timeline, whose section
// measures the same thing on one run.
func wallVsKernel(b *strings.Builder, s *facts.Summary) {
	n := s.Narrative
	if len(n.GPUBusy) == 0 || s.Phases.Missing == "" {
		return
	}
	head := []string{"phase", "NVTX region", "kernel ms (timing pass)", "wall ms (stage 1)", "GPU busy"}
	if n.GPUBusy[0].Instances > 0 {
		head[2], head[3] = "kernel ms per instance", "wall ms per instance"
	}
	t := Table{Header: head, Right: []bool{false, false, true, true, true}}
	for _, g := range n.GPUBusy {
		t.Rows = append(t.Rows, []string{EscapeCell(g.Phase), EscapeCell(g.Region), model.Fixed(g.GPUMS, 3), model.Fixed(g.WallMS, 3), model.FormatPercent(g.Busy)})
	}
	b.WriteString("Wall time against kernel time:\n\n")
	b.WriteString(t.String())
	host := "the program's own code and its launches"
	switch s.Environment.Program.Kind {
	case facts.ProgramPyTorch, facts.ProgramTorchCompile, facts.ProgramJAX:
		host = "Python, framework, launches"
	}
	fmt.Fprintf(b, "\nGPU busy is the phase's kernel time in %s divided by its wall time above: the rest of the wall time is the host's (%s).", EscapeCell(s.Regions.Source), host)
	if ncuTimed(s.Regions.TimedBy) {
		b.WriteString(" Under an ncu timing pass kernels run serialized, at base clocks with flushed caches unless the run's plan says otherwise, so they take longer than in the plain run: a share above 100% means the phase is kernel-bound, and a low share is an upper bound of the true one.")
	}
	b.WriteString("\n\n")
}

// ncuTimed says ncu timed the kernels, one at a time (at base clocks,
// caches flushed, unless the run's plan says otherwise): they take longer
// than in the program's own run.
func ncuTimed(t facts.Timer) bool { return t == facts.TimedByNcu || t == facts.TimedByDeepPass }

// maxRepeatsShown is the most repeats a "ms per repeat" cell lists; the
// rest are in summary.json.
const maxRepeatsShown = 6

// repeats lists a stage's repeats, the one a warm-up rule dropped marked.
func repeats(r facts.Stage) string {
	parts := make([]string, 0, min(len(r.MS), maxRepeatsShown))
	for i, v := range r.MS {
		if i == maxRepeatsShown {
			parts = append(parts, fmt.Sprintf("… (%d in all, in summary.json)", len(r.MS)))
			break
		}
		parts = append(parts, model.Fixed(v, 3))
	}
	if r.WarmupMS != nil && len(parts) > 0 {
		parts[0] += " (warm-up, dropped)"
	}
	return strings.Join(parts, ", ")
}

func mfu(b *strings.Builder, m facts.MFU, st facts.Stages, wm *workload.Model) {
	b.WriteString("## MFU\n\n")
	if m.Missing != "" {
		missing(b, m.Missing)
	} else {
		t := Table{Header: []string{"scope", "FLOPs", "mean ms", "achieved TFLOPS", "MFU"}, Right: []bool{false, true, true, true, true}}
		for _, r := range m.Rows {
			t.Rows = append(t.Rows, []string{r.Scope, fmt.Sprintf("%.4g", r.FLOPs), model.Fixed(r.MeanMS, 3), model.Fixed(r.AchievedTFLOPS, 3), fmt.Sprintf("%.3g%%", 100*r.MFU)})
		}
		b.WriteString(t.String())
		b.WriteString("\n")
		var dropped []string
		for _, r := range st.Rows {
			if r.WarmupMS != nil && r.Phase != "" {
				dropped = append(dropped, EscapeCell(r.Name))
			}
		}
		if len(dropped) > 0 {
			fmt.Fprintf(b, "Mean times are the Stages table's means: the first repeat of %s is dropped there as warm-up.\n\n", strings.Join(dropped, " and "))
		}
		if m.Peak != nil {
			fmt.Fprintf(b, "Peak: %s TFLOPS (%s).\n\n", trim(m.Peak.TFLOPS), EscapeCell(m.Peak.Source))
		}
		if wm != nil && wm.MatmulParams > 0 {
			// What the percentages are of: the model's size, batch and
			// tokens, beside the GPU's peak.
			batch := st.Batch
			if batch <= 0 {
				batch = 1
			}
			fmt.Fprintf(b, "Scale: each token multiplies %s weights (matmul\\_params) over %d layers, at batch %d; ", count(wm.MatmulParams), wm.Layers, batch)
			if st.Tokens != nil {
				fmt.Fprintf(b, "a generate reads %d prompt tokens and generates %d. ", st.Tokens.Prompt, st.Tokens.Generated)
			}
			b.WriteString("Decode does 2 FLOPs per weight per token while it reads every weight once, so its MFU stays far below the peak above; its MBU (below) says how near it comes to the bandwidth peak.\n\n")
		}
	}
	fmt.Fprintf(b, "Formula: %s\n\nAssumptions:\n\n", EscapeCell(m.Formula))
	for _, a := range m.Assumptions {
		fmt.Fprintf(b, "- %s\n", EscapeCell(a))
	}
	b.WriteString("\n")
}

// serving writes the figures LLM serving quotes under the MFU section:
// TTFT, TPOT with its spread, decode throughput, and MBU with the decode
// step's floor at the GPU's peak bandwidth, then how the bytes are counted.
func serving(b *strings.Builder, s facts.Serving) {
	b.WriteString("### Serving figures\n\n")
	t := Table{Header: []string{"figure", "value"}, Right: []bool{false, true}}
	ms := func(v *float64) string {
		if v == nil {
			return "n/a"
		}
		return model.Fixed(*v, 3) + " ms"
	}
	tpot := ms(s.TPOTMS)
	if s.TPOTSDMS != nil {
		tpot += " (sd " + model.Fixed(*s.TPOTSDMS, 3) + ")"
	}
	of := ""
	if s.From != "" {
		of = " in " + s.From + " (the program alone)"
	}
	ttftWhat, tpotWhat := "the prefill's mean"+of, "the decode's mean per token of a sequence"+of
	if d := s.Steps; d != nil {
		if d.TTFTMS != nil {
			ttftWhat = "from " + d.TTFTFrom + " to the first decode step, mean of the steady generates"
		}
		tpotWhat = fmt.Sprintf("a steady decode step (%s), from its start to the next one's, over %d steps of %d generates",
			EscapeCell(d.Step), d.SteadySteps, d.SteadyRuns)
	}
	t.Rows = append(t.Rows,
		[]string{"time to first token (TTFT): " + ttftWhat, ms(s.TTFTMS)},
		[]string{"time per output token (TPOT, inter-token latency): " + tpotWhat, tpot})
	if s.DecodeTokensPerS != nil {
		what := "decode throughput, every sequence of the batch"
		if s.BatchUnknown {
			what = "decode throughput, one sequence (the batch size is unknown: model.batch gives it)"
		}
		t.Rows = append(t.Rows, []string{what, model.Fixed(*s.DecodeTokensPerS, 1) + " tokens/s"})
	}
	if s.MBU != nil {
		t.Rows = append(t.Rows,
			[]string{"bytes a decode stage reads (weights and KV cache)", fmt.Sprintf("%.4g GB", s.DecodeBytes/1e9)},
			[]string{"a decode step's floor at peak bandwidth", fmt.Sprintf("%.4g ms", *s.StepFloorMS)},
			[]string{"model bandwidth utilization (MBU), decode", fmt.Sprintf("%.3g%%", 100**s.MBU)})
	}
	b.WriteString(t.String())
	b.WriteString("\n")
	if d := s.Steps; d != nil && len(d.Warmup) > 0 {
		b.WriteString("Left out of TTFT and TPOT as warm-up (a generate with a step in a stage's warm-up: new shapes, compilation, kernel selection")
		if slices.ContainsFunc(d.Warmup, func(w facts.DecodeRun) bool { return w.Measured }) {
			b.WriteString("; one marked measured held one of deepprof's library's measurements instead, or overlapped a peer process's")
		}
		b.WriteString("):\n\n")
		for _, w := range d.Warmup {
			measured := ""
			if w.Measured {
				measured = " (measured)"
			}
			fmt.Fprintf(b, "- process %d, generate %d%s: %d steps at %s ms a step, %sx the steady %s ms\n",
				w.ProcessID, w.Index, measured, w.Steps, model.Fixed(w.StepMS, 3), model.Fixed(w.StepMS/d.StepMS, 1), model.Fixed(d.StepMS, 3))
		}
		b.WriteString("\n")
	}
	if s.Missing != "" {
		fmt.Fprintf(b, "Not given: %s.\n\n", EscapeCell(s.Missing))
	}
	fmt.Fprintf(b, "Bytes: %s\n\nAssumptions:\n\n", EscapeCell(s.BytesFormula))
	for _, a := range s.BytesAssumptions {
		fmt.Fprintf(b, "- %s\n", EscapeCell(a))
	}
	b.WriteString("\n")
}

func topOperators(b *strings.Builder, o facts.Operators, k facts.Kernels) {
	b.WriteString("## Top Operators\n\n")
	if o.Missing != "" {
		missing(b, o.Missing)
		return
	}
	b.WriteString(OperatorTable(o.Rows).String())
	fmt.Fprintf(b, "\nFrom torch.profiler in %s (one generate after the timed repeats), by CUDA time. Operators nest (aten::linear holds aten::mm): their times overlap and do not add up.", operatorsRun(o))
	if o.Dropped > 0 {
		fmt.Fprintf(b, " %d rows with GPU time and no CPU time (kernels torch lists among operators) are left out: the kernels are in Top Kernels.", o.Dropped)
	}
	if k.Missing == "" {
		// The pair a reader compares: an operator's CUDA time and the
		// kernels it launched in Top Kernels.
		of := " of stage 1"
		if o.Detached {
			of = ""
		}
		fmt.Fprintf(b, " An operator's CUDA ms is the time of the kernels it launched in that one generate%s; Top Kernels sums %s", of, EscapeCell(k.Source))
		if ncuTimed(k.TimedBy) {
			b.WriteString(", one profiled generate whose kernels ncu serialized at base clocks with flushed caches: the same kernels take longer there than under the operator's CUDA ms")
		} else {
			b.WriteString(", every traced generate: divide by the generates traced before comparing")
		}
		b.WriteString(".")
	}
	b.WriteString(" All rows: [operators.md](operators.md).\n\n")
}

// operatorsRun names the run the operator table was made in.
func operatorsRun(o facts.Operators) string {
	if o.Detached {
		return "the CUPTI run, after the library detached CUPTI from the process"
	}
	return "stage 1"
}

// OperatorTable is the table of operators.md and of the summary.
func OperatorTable(ops []workload.Operator) Table {
	t := Table{Header: []string{"operator", "calls", "CPU total ms", "CUDA ms"}, Right: []bool{false, true, true, true}}
	for _, op := range ops {
		t.Rows = append(t.Rows, []string{EscapeCell(op.Name), fmt.Sprint(op.Calls), model.Fixed(op.TotalMS, 3), model.Fixed(op.CUDAMS, 3)})
	}
	return t
}

// OperatorsMarkdown renders operators.md: the workload's whole operator
// table.
func OperatorsMarkdown(w io.Writer, runID string, ops []workload.Operator, o facts.Operators) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Operators: run %s\n\n", EscapeCell(runID))
	if o.Missing != "" {
		missing(&b, o.Missing)
	} else {
		fmt.Fprintf(&b, "The workload's torch.profiler operator table (%s, one generate after the timed repeats), as it reported it. Operators nest: times overlap.\n\n", operatorsRun(o))
		b.WriteString(OperatorTable(ops).String())
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// topKernels writes the Top Kernels section; graphLaunches is how many CUDA
// graph launches the program made (their kernels the library cannot replay).
func topKernels(b *strings.Builder, k facts.Kernels, graphLaunches int) {
	b.WriteString("## Top Kernels\n\n")
	if k.Missing != "" {
		missing(b, k.Missing)
		return
	}
	fmt.Fprintf(b, "From %s, %s%s: %d launches, %s ms of GPU time; share is of that time.", EscapeCell(k.Source), EscapeCell(k.ScopeText()), EscapeCell(k.WarmupText(3)), k.Launches, model.Fixed(k.TotalMS, 3))
	if w := k.Warmup; w != nil && w.LeftOut {
		fmt.Fprintf(b, " %s %s are left out, as from every figure of the phases; %s lists every launch in the ranges.",
			"The "+w.Of(), plural(w.Launches, "launch", "launches"), rundir.KernelsMD)
	}
	if k.OutsideMS != nil {
		whole := k.TotalMS + *k.OutsideMS
		if w := k.Warmup; w != nil && w.LeftOut {
			whole += w.MS
		}
		fmt.Fprintf(b, " The whole run's kernel time is %s ms: %s ms (%s) lies outside these ranges (Per-Region Breakdown covers the whole run).",
			model.Fixed(whole, 3), model.Fixed(*k.OutsideMS, 3), model.FormatPercent(*k.OutsideMS/whole))
	}
	if k.DeepShare != nil {
		by := "The deep pass"
		if k.DeepSource == facts.DeepByLibrary {
			by = "The deep pass, made in the recorded run by deepprof's CUPTI library (CUPTI's range profiler, one launch replayed of each launch configuration it measured, the kernels of most time first within its cap on the measuring's time; no ncu rules),"
		}
		fmt.Fprintf(b, " %s measured %s of it: the launch configurations it profiled, weighted by their time (a kernel's bound holds where they ran at least half of its time; a partly measured kernel has none).", by, model.FormatPercent(*k.DeepShare))
		if k.DeepSource == facts.DeepByLibrary && graphLaunches > 0 && *k.DeepShare < 1 {
			fmt.Fprintf(b, " The kernels that ran inside the program's CUDA graphs (%d graph launches) are not replayed by the library: ncu.deep_source=ncu measures them in ncu's pass, the program started again.", graphLaunches)
		}
	}
	b.WriteString("\n\n")
	if k.BoundsNote != "" {
		fmt.Fprintf(b, "Bounds not available: %s.\n\n", EscapeCell(strings.TrimSuffix(k.BoundsNote, ".")))
	}
	t := Table{Header: []string{"#", "kernel", "total ms", "calls", "share", "category", "bound", "SM %", "memory %"},
		Right: []bool{true, false, true, true, true, false, false, true, true}}
	spread, ds := kernelSpread(k.Rows)
	if spread {
		t.Header = append(t.Header[:4], append([]string{"launch ms: median (min–max)"}, t.Header[4:]...)...)
		t.Right = append(t.Right[:4], append([]bool{true}, t.Right[4:]...)...)
	}
	// bounds not from SOL throughputs: each reason once, with its rows
	var whys []string
	rowsOf := map[string][]string{}
	for i, r := range k.Rows {
		sm, mem := "", ""
		if r.SMPct != nil && r.MemPct != nil {
			sm, mem = model.Fixed(*r.SMPct, 1), model.Fixed(*r.MemPct, 1)
		} else if r.Bound.Why != "" {
			if rowsOf[r.Bound.Why] == nil {
				whys = append(whys, r.Bound.Why)
			}
			rowsOf[r.Bound.Why] = append(rowsOf[r.Bound.Why], fmt.Sprintf("#%d", i+1))
		}
		bound := string(r.Bound.Class)
		if sp := r.Sampled; sp != nil {
			// What the bound was measured on: the configurations the deep
			// pass profiled, and the share of the kernel's time they ran.
			bound += fmt.Sprintf(" (%d of %d configs, %s of its time)", sp.Configs, sp.Of, model.FormatPercent(sp.Share))
			if r.PartlyMeasured {
				bound = fmt.Sprintf("partly measured (%s of its time; %s there, %d of %d configs)", model.FormatPercent(sp.Share), r.Bound.Class, sp.Configs, sp.Of)
			}
		}
		row := []string{fmt.Sprint(i + 1), EscapeCell(r.Shown()), model.Fixed(r.TotalMS, 4), fmt.Sprint(r.Calls), model.FormatPercent(r.Share), r.Category, bound, sm, mem}
		if spread {
			cell := ""
			if p := r.Spread; p != nil {
				cell = model.Fixed(p.MedianMS, ds) + " (" + model.Fixed(p.MinMS, ds) + "–" + model.Fixed(p.MaxMS, ds) + ")"
			}
			row = append(row[:4], append([]string{cell}, row[4:]...)...)
		}
		t.Rows = append(t.Rows, row)
	}
	b.WriteString(t.String())
	if spread {
		b.WriteString("\nLaunch ms: each launch's duration in the timeline, median (min–max); standard deviations are in summary.json and kernels.json.\n")
	}
	b.WriteString("\nSM % and memory %: the deep pass's Speed Of Light throughputs, percent of peak, duration-weighted over its launches of the kernel.")
	if len(whys) > 0 {
		other := make([]string, len(whys))
		for i, why := range whys {
			other[i] = strings.Join(rowsOf[why], ", ") + ": " + EscapeCell(why)
		}
		b.WriteString(" Where they are missing, the bound's reason: " + strings.Join(other, "; ") + ".")
	}
	b.WriteString("\n")
	fullNames(b, k.Rows)
	fmt.Fprintf(b, "\nBound: %s\n", EscapeCell(k.BoundRule))
	b.WriteString("\nTime by kernel category (every kernel of the table, not only the top):\n\n")
	c := Table{Header: []string{"category", "total ms", "share", "kernels"}, Right: []bool{false, true, true, true}}
	for _, r := range k.ByCategory {
		c.Rows = append(c.Rows, []string{r.Category, model.Fixed(r.TotalMS, 4), model.FormatPercent(r.Share), fmt.Sprint(r.Kernels)})
	}
	b.WriteString(c.String())
	ncuRules(b, k)
	b.WriteString("\n")
}

// RuleRows are the rows of the summary's table of ncu's rules: per top
// kernel (its index in k.Rows), the rules the analysis shows.
func RuleRows(k facts.Kernels) [][2]int {
	var out [][2]int
	for i, r := range k.Rows {
		for _, j := range r.ShownRules {
			out = append(out, [2]int{i, j})
		}
	}
	return out
}

// ncuRules lists ncu's guided analysis on the top kernels: each kernel's
// rules with an estimated gain, largest first.
func ncuRules(b *strings.Builder, k facts.Kernels) {
	b.WriteString("\n\n### ncu's rules on the top kernels\n\n")
	if k.RulesMissing != "" {
		missing(b, k.RulesMissing)
		return
	}
	t := Table{Header: []string{"#", "rule", "severity", "est. speedup", "of kernel time", "launches", "ncu's advice"},
		Right: []bool{true, false, false, true, true, true, false}}
	for _, ij := range RuleRows(k) {
		r := k.Rows[ij[0]]
		rule := r.Rules[ij[1]]
		est := *rule.SpeedupPct
		speedup := model.Fixed(est, 1) + "%"
		if c := rule.CappedPct; c != nil && r.SOLPct != nil {
			est = *c
			speedup += "; at " + model.Fixed(*r.SOLPct, 1) + "% of peak at most " + model.Fixed(est, 1) + "%"
		}
		t.Rows = append(t.Rows, []string{fmt.Sprint(ij[0] + 1), EscapeCell(rule.Name), rule.Severity, speedup, model.Fixed(r.Share*est, 2) + "%", fmt.Sprintf("%d of %d", rule.Launches, rule.Of), EscapeCell(rule.Advice)})
	}
	if len(t.Rows) == 0 {
		b.WriteString("No rule of the deep pass estimates a speedup for a top kernel.\n")
		return
	}
	b.WriteString(t.String())
	fmt.Fprintf(b, "\nFrom the deep pass's details page (ncu's guided analysis), at most %d rules per kernel, those with an estimated speedup. Est. speedup is ncu's estimate for the kernel (duration-weighted over its profiled launches; a launch the rule did not fire on counts 0), capped where it passes what the kernel's speed of light leaves: a kernel at S%% of peak can save at most 100 − S%% of its time; of kernel time is the capped estimate times the kernel's share. Every rule, its full text and its kind of estimate are in kernels.json.\n", facts.MaxRulesPerKernel)
}

// fullNames lists the top kernels' full demangled names, folded: the
// table shows each by a short name that is unique in the report.
func fullNames(b *strings.Builder, rows []facts.KernelRow) {
	short := false
	for _, r := range rows {
		short = short || r.Shown() != r.Name
	}
	if !short {
		return
	}
	b.WriteString("\n<details><summary>Full kernel names (the table shows each by a short name, unique in this report)</summary>\n\n")
	for i, r := range rows {
		fmt.Fprintf(b, "%d. %s\n", i+1, EscapeCell(r.Name))
	}
	b.WriteString("\n</details>\n")
}

func perRegion(b *strings.Builder, r facts.Regions) {
	b.WriteString("## Per-Region Breakdown\n\n")
	if r.Missing != "" {
		missing(b, r.Missing)
		return
	}
	if r.Sampled {
		fmt.Fprintf(b, "From %s, the deep pass: a sample of launches (a few per kernel), so these times are the sample's, not the run's.\n\n", EscapeCell(r.Source))
	} else {
		fmt.Fprintf(b, "From %s, %s: every launch of one run of the workload under the profiler (kernel durations; the phases' wall time in that run is in GPU busy and idle per phase, where there is a timeline, and the program alone's in Stages). Regions nest: a row's time includes the rows inside it.\n\n", EscapeCell(r.Source), facts.ScopeWholeRun)
	}
	t := Table{Header: []string{"region", "depth", "GPU ms", "launches", "share"}, Right: []bool{false, true, true, true, true}}
	rows, left := largestRegions(r.Rows, MaxRegionRows)
	for _, g := range rows {
		t.Rows = append(t.Rows, []string{EscapeCell(g.Name), fmt.Sprint(g.Depth), model.Fixed(g.TotalMS, 4), fmt.Sprint(g.Launches), model.FormatPercent(g.Share)})
	}
	t.Rows = append(t.Rows, []string{"(outside every range)", "", model.Fixed(r.Outside, 4), "", model.FormatPercent(safeDiv(r.Outside, r.TotalMS))})
	b.WriteString(t.String())
	b.WriteString("\n")
	if left.regions > 0 {
		fmt.Fprintf(b, "Left out of the table: the %d smaller regions, %s ms of GPU time (%d launches) in all, each counted once where they nest; %s and %s list every region.\n\n",
			left.regions, model.Fixed(left.totalMS, 3), left.launches, rundir.RegionsMD, rundir.SummaryJSON)
	}
	if r.SampleReport != "" {
		fmt.Fprintf(b, "Metrics per region (Speed Of Light, occupancy, DRAM), over the deep pass's sample of launches, are in [%s](%s).\n\n", EscapeCell(r.SampleReport), r.SampleReport)
	}
}

// MaxRegionRows is how many regions the summary's Per-Region Breakdown
// lists: the largest by GPU time, in their order; the rest are summed
// below the table. A program that opens a range per iteration
// ("decode_step 0", "decode_step 1", ...) has thousands, each in the
// region report and in summary.json.
const MaxRegionRows = 100

// regionsLeftOut are the regions a table leaves out: how many, and their
// GPU time and launches, each counted once where they nest.
type regionsLeftOut struct {
	regions  int
	totalMS  float64
	launches int64
}

// largestRegions is rows' n largest by GPU time (ties: the earlier), in
// their order, and what is left out. rows are depth first, a region's
// time including its nested ones', so a kept region's parent is kept: the
// left-out time sums the left-out regions whose nearest listed parent is
// kept (or that have none).
func largestRegions(rows []facts.RegionRow, n int) ([]facts.RegionRow, regionsLeftOut) {
	if len(rows) <= n {
		return rows, regionsLeftOut{}
	}
	idx := make([]int, len(rows))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(rows[b].TotalMS, rows[a].TotalMS) })
	keep := make([]bool, len(rows))
	for _, i := range idx[:n] {
		keep[i] = true
	}
	var kept []facts.RegionRow
	var left regionsLeftOut
	type listed struct {
		depth int
		kept  bool
	}
	var stack []listed // the row's listed ancestors, outermost first
	for i, r := range rows {
		for len(stack) > 0 && stack[len(stack)-1].depth >= r.Depth {
			stack = stack[:len(stack)-1]
		}
		parentKept := len(stack) == 0 || stack[len(stack)-1].kept
		stack = append(stack, listed{r.Depth, keep[i]})
		if keep[i] {
			kept = append(kept, r)
			continue
		}
		left.regions++
		if parentKept {
			left.totalMS += r.TotalMS
			left.launches += r.Launches
		}
	}
	return kept, left
}

// kernelSpread says whether any top kernel has a per-launch spread, and the
// decimals that show its values.
func kernelSpread(rows []facts.KernelRow) (bool, int) {
	var vs []float64
	for _, r := range rows {
		if p := r.Spread; p != nil {
			vs = append(vs, p.MinMS, p.MedianMS, p.MaxMS)
		}
	}
	return len(vs) > 0, model.Decimals(vs, 3)
}

// busyTable renders "GPU busy and idle per phase": one table, its rule in one
// note.
func busyTable(b *strings.Builder, p facts.Phases) {
	b.WriteString("## GPU busy and idle per phase\n\n")
	if p.Missing != "" {
		missing(b, p.Missing)
		return
	}
	scopes := map[[2]int64]bool{}
	for _, r := range p.Rows {
		scopes[[2]int64{r.ProcessID, int64(r.Device)}] = true
	}
	t := Table{
		Header: []string{"phase", "instances", "wall ms (sum)", "kernel ms (sum)", "busy", "idle", "gaps", "gap ms (sum)", "largest gap", "launch latency median µs", "memcpy ms (sum)", "launch-bound"},
		Right:  []bool{false, true, true, true, true, true, true, true, false, true, true, false},
	}
	for _, r := range p.Rows {
		name := EscapeCell(r.Phase)
		if r.Phase == "" {
			name = "(whole run)"
		}
		if len(scopes) > 1 {
			name = facts.Whose(r.Rank, r.ProcessID, r.Device) + ": " + name
		}
		gap := "none"
		if g := r.LargestGap; g != nil {
			gap = fmt.Sprintf("%s ms after %s, before %s", model.Fixed(g.MS, 3), EscapeCell(facts.Short(g.Before)), EscapeCell(facts.Short(g.After)))
			if r.Instances > 1 {
				gap += fmt.Sprintf(" (instance %d)", g.Instance)
			}
		}
		lat := "n/a"
		if r.LaunchLatencyMedianUS != nil {
			lat = model.Fixed(*r.LaunchLatencyMedianUS, 1)
		}
		lb := "no"
		switch {
		case r.LaunchBound:
			lb = "yes"
		case r.HostAhead:
			lb = "no: host ahead"
		case r.Kernels == 0:
			lb = "no kernel"
		}
		t.Rows = append(t.Rows, []string{name, instancesCell(r), model.Fixed(r.WallMS, 3), model.Fixed(r.KernelMS, 3), model.FormatPercent(r.Busy), model.FormatPercent(r.Idle), fmt.Sprint(r.Gaps), model.Fixed(r.GapMS, 3), gap, lat, model.Fixed(r.MemcpyMS, 3), lb})
	}
	b.WriteString(t.String())
	fmt.Fprintf(b, "\nFrom the CUPTI run's timeline (the program's own kernel times), NVTX phases at depth %d, steady state: each row sums its phase's instances but the warm-up ones (below). "+
		"A phase's wall time spans its instances on the GPU, "+
		"each from the later of its range's start and the end of the range before it on its thread (siblings never overlap) to the later of its range's end and its last kernel or copy. "+
		"Busy is the time the phase's own kernels (launched inside it) run on the GPU, never more than their kernel ms; another phase's kernels in its window are not its own. Idle is the rest; kernel ms sums the phase's own kernels "+
		"(overlapping kernels count twice). Gaps are the idle holes between two of its kernels; launch latency runs from the launch call's start to the kernel's start; "+
		"copies do not count as busy. A phase with kernels idle more than %s of its wall time is launch-bound where the gaps between its kernels make at least half of the idle time (the GPU waits between launches); "+
		"with smaller gaps and a median launch latency of 100 µs or more, the host is ahead: its kernels wait in a queue and the GPU sets the pace. The whole run's row is every kernel, warm-up included.%s\n\n",
		p.Depth, model.FormatPercent(p.LaunchBoundIdleShare), nestedNote(p))
	for _, l := range p.LeftOut {
		what, whose := "phases", ""
		if l.Nested {
			what = "regions inside the phases"
		}
		if len(scopes) > 1 {
			whose = " for " + facts.Whose(l.Rank, l.ProcessID, l.Device)
		}
		fmt.Fprintf(b, "Left out of the table%s: the %d smaller %s, %s ms of kernels (%d launches) in all; %s lists every region.\n\n",
			whose, l.Regions, what, model.Fixed(l.KernelMS, 3), l.Kernels, rundir.RegionsMD)
	}
	phaseWarmups(b, p)
}

// instancesCell is a phase row's instances: the steady ones, and the
// warm-up ones left out.
func instancesCell(r facts.PhaseRow) string {
	if r.Phase == "" {
		return "(all)"
	}
	if w := r.Warmup; w != nil && w.Steps > 0 {
		return fmt.Sprintf("%d (its %s warm-up)", r.Instances, firstSteps(w.Steps))
	}
	var out []string
	if r.Warmup != nil {
		out = append(out, fmt.Sprintf("%d warm-up", r.Warmup.Instances))
	}
	if r.Measured != nil {
		out = append(out, fmt.Sprintf("%d measured", r.Measured.Instances))
	}
	if len(out) == 0 {
		return fmt.Sprint(r.Instances)
	}
	return fmt.Sprintf("%d (+%s)", r.Instances, strings.Join(out, ", "))
}

// firstSteps names a one-instance phase's n leading warm-up steps.
func firstSteps(n int) string {
	if n == 1 {
		return "first step"
	}
	return fmt.Sprintf("first %d steps", n)
}

// phaseWarmups says what each phase's warm-up cost, apart from its steady
// state: a first instance with large gaps before kernels that run fast
// later is one-time setup.
func phaseWarmups(b *strings.Builder, p facts.Phases) {
	var lines []string
	measured := false
	for _, r := range p.Rows {
		measured = measured || r.Measured != nil
		w := r.Warmup
		if w == nil || r.Nested {
			continue
		}
		line := fmt.Sprintf("- %s: %s of warm-up, %s ms of wall time (steady state: %s ms an instance), %s ms of kernels, %s ms idle between them",
			EscapeCell(r.Phase), plural(int64(w.Instances), "instance", "instances"), model.Fixed(w.WallMS, 3), model.Fixed(r.WallPerInstanceMS, 3),
			model.Fixed(w.KernelMS, 3), model.Fixed(w.GapMS, 3))
		if w.Steps > 0 {
			line = fmt.Sprintf("- %s: the %s of its one instance, warm-up, %s ms of wall time (steady state: %s ms a step over the other %d), %s ms of kernels, %s ms idle between them",
				EscapeCell(r.Phase), firstSteps(w.Steps), model.Fixed(w.WallMS, 3), model.Fixed(r.WallMS/float64(max(w.SteadySteps, 1)), 3), w.SteadySteps,
				model.Fixed(w.KernelMS, 3), model.Fixed(w.GapMS, 3))
		}
		if g := w.LargestGap; g != nil {
			line += fmt.Sprintf("; the largest gap %s ms, before %s", model.Fixed(g.MS, 3), EscapeCell(facts.Short(g.After)))
			if w.OneTimeSetup {
				line += ": one-time setup (kernel plans chosen, autotuning, lazy module loading) before kernels that run without such gaps later"
			}
		}
		lines = append(lines, line+".")
	}
	const measuredLine = "- The rows' measured instances are left out too: each held one of deepprof's library's measurements, or overlapped a peer process's (the GPU's queue drained, a launch replayed)."
	switch {
	case len(lines) > 0:
		if measured {
			lines = append(lines, measuredLine)
		}
		b.WriteString("Warm-up, left out of the rows above (" + EscapeCell(model.WarmupRule()) + "; an instance inside a warm-up instance is warm-up with it):\n\n")
		b.WriteString(strings.Join(lines, "\n") + "\n\n")
	case measured:
		b.WriteString("Left out of the rows above:\n\n" + measuredLine + "\n\n")
	}
}

// floorsUnknown says why each floor is unknown, once a floor: one reason
// for every row, else each reason with the rows it holds for.
func floorsUnknown(w facts.WhatIf) string {
	var out []string
	for _, f := range []struct {
		name string
		why  func(facts.WhatIfRow) string
	}{
		{"bandwidth floor", func(r facts.WhatIfRow) string { return r.BandwidthFloorWhy }},
		{"compute floor", func(r facts.WhatIfRow) string { return r.ComputeFloorWhy }},
	} {
		var reasons []string
		rows := map[string][]string{}
		for _, r := range w.Rows {
			y := f.why(r)
			if y == "" {
				continue
			}
			if _, ok := rows[y]; !ok {
				reasons = append(reasons, y)
			}
			rows[y] = append(rows[y], r.Phase)
		}
		switch len(reasons) {
		case 0:
		case 1:
			out = append(out, f.name+": "+reasons[0])
		default:
			parts := make([]string, len(reasons))
			for i, y := range reasons {
				parts[i] = fmt.Sprintf("%s (%s)", y, strings.Join(slices.Compact(rows[y]), ", "))
			}
			out = append(out, f.name+": "+strings.Join(parts, "; "))
		}
	}
	return strings.Join(out, "; ")
}

// ladder renders the what-if ladder: per phase, now and each floor with
// what it saves, then the rule once.
func ladder(b *strings.Builder, w facts.WhatIf) {
	if len(w.Rows) == 0 {
		return
	}
	scopes := map[[2]int64]bool{}
	for _, r := range w.Rows {
		scopes[[2]int64{r.ProcessID, int64(r.Device)}] = true
	}
	t := Table{
		Header: []string{"phase", "now ms", "GPU-busy floor ms (saves)", "bandwidth floor ms (saves)", "compute floor ms (saves)", "launches", "launch call µs"},
		Right:  []bool{false, true, true, true, true, true, true},
	}
	for _, r := range w.Rows {
		name := EscapeCell(r.Phase)
		if r.Kind == facts.KindDecodeStep {
			name += " (one step)"
		}
		if len(scopes) > 1 {
			name = facts.Whose(r.Rank, r.ProcessID, r.Device) + ": " + name
		}
		rung := func(floor string) string {
			for _, g := range r.Rungs {
				if g.Floor == floor {
					return fmt.Sprintf("%s (%s)", model.Fixed(g.MS, 3), model.Fixed(g.SavesMS, 3))
				}
			}
			// A known floor under the binding one is no rung: it cannot
			// be reached.
			ms := r.BandwidthFloorMS
			if floor == facts.FloorCompute {
				ms = r.ComputeFloorMS
			}
			if ms != nil && floor != facts.FloorBusy {
				return fmt.Sprintf("%s (under the %s floor)", model.Fixed(*ms, 3), floorName(r.BindingFloor))
			}
			return "n/a"
		}
		per := "n/a"
		if r.LaunchCallUS != nil {
			per = model.Fixed(*r.LaunchCallUS, 1)
		}
		t.Rows = append(t.Rows, []string{name, model.Fixed(r.NowMS, 3), rung(facts.FloorBusy), rung(facts.FloorBandwidth), rung(facts.FloorCompute),
			model.Fixed(r.LaunchesPerInstance, 0), per})
	}
	b.WriteString("What-if ladder, per steady-state instance:\n\n")
	b.WriteString(t.String())
	fmt.Fprintf(b, "\n%s", EscapeCell(w.Rule))
	if why := floorsUnknown(w); why != "" {
		fmt.Fprintf(b, " Unknown here (n/a): %s.", EscapeCell(why))
	}
	for _, r := range w.Rows {
		if r.BandwidthFloorMS != nil && r.ComputeFloorMS != nil {
			b.WriteString(" The ladder stops at the binding floor, the higher of the bandwidth and the compute floor: the lower one is shown under it, with no saving.")
			break
		}
	}
	b.WriteString(" Launch call µs is the mean host time of one of the phase's launch calls (cudaLaunchKernel and the like, from its CUPTI API record's start to its end), n/a where none is recorded: the host's own cost of a launch; the rest of its time between launches is the program's.\n\n")
}

// floorName is a physical floor's name in a sentence.
func floorName(floor string) string {
	if floor == facts.FloorCompute {
		return "compute"
	}
	return "bandwidth"
}

// nestedNote says what the rows inside a phase are, when there are any.
func nestedNote(p facts.Phases) string {
	for _, r := range p.Rows {
		if r.Nested {
			return " A row whose path goes inside a phase (phase/range) is a range within it, its time part of the phase's row (its instances follow each other inside the phase's, so their sum is at most the phase's); only the phases themselves are judged launch-bound in the findings."
		}
	}
	return ""
}

// communication renders "Communication", only for a summary that has it:
// one table of phase × rank, then a line per phase on the ranks' balance.
func communication(b *strings.Builder, c *facts.Communication) {
	if c == nil {
		return
	}
	b.WriteString("## " + CommunicationSection + "\n\n")
	t := Table{
		Header: []string{"phase", "process", "GPU", "compute ms", "communication ms", "overlapped ms", "exposed ms", "collectives"},
		Right:  []bool{false, true, true, true, true, true, true, true},
	}
	// The launcher's ranks, first, where the records give them.
	ranked := slices.ContainsFunc(c.Rows, func(r facts.CommunicationRow) bool { return r.Rank != nil })
	if ranked {
		t.Header = append([]string{t.Header[0], "rank"}, t.Header[1:]...)
		t.Right = append([]bool{false, true}, t.Right[1:]...)
	}
	for _, r := range c.Rows {
		name := EscapeCell(r.Phase)
		if r.Phase == "" {
			name = "(whole run)"
		}
		row := []string{name, fmt.Sprint(r.ProcessID), fmt.Sprint(r.Device), model.Fixed(r.ComputeMS, 3), model.Fixed(r.CommunicationMS, 3), model.Fixed(r.OverlapMS, 3), model.Fixed(r.ExposedCommunicationMS, 3), fmt.Sprint(r.Collectives)}
		if ranked {
			rank := "?"
			if r.Rank != nil {
				rank = fmt.Sprint(*r.Rank)
			}
			row = append([]string{name, rank}, row[1:]...)
		}
		t.Rows = append(t.Rows, row)
	}
	b.WriteString(t.String())
	b.WriteString("\n")
	for _, r := range c.Balance {
		name := EscapeCell(r.Phase)
		if r.Phase == "" {
			name = "The whole run" // a phrase, not a name: it opens the line
		}
		if r.Straggler == nil {
			fmt.Fprintf(b, "- %s: one rank, nothing to compare.\n", name)
			continue
		}
		imb := "a rank ran no kernel"
		if r.Imbalance != nil {
			imb = "imbalance " + model.Fixed(*r.Imbalance, 2) + "x"
		}
		fmt.Fprintf(b, "- %s: GPU busy %s ms max / %s ms min across %d ranks (%s); compute %s / %s ms. ",
			name, model.Fixed(r.MaxBusyMS, 3), model.Fixed(r.MinBusyMS, 3), r.Ranks, imb, model.Fixed(r.MaxComputeMS, 3), model.Fixed(r.MinComputeMS, 3))
		if r.ByWait {
			fmt.Fprintf(b, "The straggler is %s: it spends the least time in collectives (%s ms against up to %s ms), so the others wait for it.",
				facts.WhoseParen(r.StragglerRank, r.Straggler.ProcessID, r.Straggler.Device), model.Fixed(r.MinCommunicationMS, 3), model.Fixed(r.MaxCommunicationMS, 3))
			if r.NetCommunicationMS != nil {
				calls := "calls"
				if r.CollectiveCalls == 1 {
					calls = "call"
				}
				fmt.Fprintf(b, " The collectives themselves take %s ms (%d %s per rank, net of waiting).", model.Fixed(*r.NetCommunicationMS, 3), r.CollectiveCalls, calls)
			}
			b.WriteString("\n")
		} else {
			fmt.Fprintf(b, "The straggler is %s: it computes longest.\n", facts.WhoseParen(r.StragglerRank, r.Straggler.ProcessID, r.Straggler.Device))
		}
	}
	b.WriteString("\nFrom the run's CUPTI timeline, per phase and rank (one process on one GPU). Communication is the time any communication kernel " +
		"(the category communication: NCCL collectives and the like) runs on the GPU, compute the time any other kernel does, each counted once however many overlap; " +
		"overlapped is the time both run at once (a collective on another stream), exposed the communication with no compute beside it. " +
		"Imbalance is the most GPU busy time of a rank over the least. A collective's kernel runs until the last rank joins it, so a rank's communication time " +
		"holds its wait for the others: the straggler, the rank they wait for, is the one with the least communication time (late on the host or slow on the GPU alike), " +
		"or without collectives the one that computes longest. Net of waiting, a collective is its shortest duration over the ranks (the i-th call of each rank paired).\n\n")
}

func safeDiv(a, b float64) float64 {
	if b <= 0 {
		return 0
	}
	return a / b
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// count writes a parameter count in millions or billions.
func count(n int64) string {
	switch {
	case n >= 1e9:
		return model.Fixed(float64(n)/1e9, 2) + " B"
	case n >= 1e6:
		return model.Fixed(float64(n)/1e6, 1) + " M"
	}
	return fmt.Sprint(n)
}

// trim writes a peak figure without trailing zeros.
func trim(v float64) string {
	s := model.Fixed(v, 3)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}
