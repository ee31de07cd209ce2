package summary

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/kernels"
	"github.com/llm-perf-opt/deepprof/internal/machine"
	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
	"github.com/llm-perf-opt/deepprof/internal/workload"
)

// Inputs is what a run directory holds, already parsed. A nil input comes
// with the reason it is missing.
type Inputs struct {
	RunID string
	// Trace is the run directory's Perfetto trace of the timeline, "" when
	// it has none.
	Trace string
	// Anomalies are what the recording holds that changes the numbers
	// made from it (timeline.Timeline.Anomalies), each a line.
	Anomalies []string

	GPU        *machine.GPU // the selected GPU of env.json
	Driver     string
	CUDA       string
	EnvMissing string
	Tools      map[string]string // profiler name → version

	// Used are the GPUs the workload could use, in CUDA order, and Links
	// how each pair of them is linked, one line each (env.json's used and
	// topology lines); nil in an env.json written before it had them.
	Used  []machine.GPU
	Links []string

	Workload        *workload.Report // stage1/report.json
	WorkloadMissing string
	// WorkloadSource says where the stages come from when it is not the
	// workload's report of stage 1 (the workload's report of the CUPTI run,
	// standing in for stage 1; or, for a program that wrote none, its NVTX
	// ranges in the CUPTI timeline: StagesFromRanges); "" for stage 1.
	WorkloadSource   string
	StagesFromRanges bool
	// ProgramFacts are the model facts the program's framework gave
	// (timeline/model.json: the automatic ranges read them from its
	// transformers config): they fill what neither the workload's report
	// nor the profile (Options.Facts) gives.
	ProgramFacts *workload.ModelFacts
	// Alone is stage 1's report (the program alone, no profiler) where the
	// stages come from the CUPTI run's report: its means stand beside the
	// stages' and give the serving figures and MFU (the program's speed).
	// AloneDetached says it comes from the CUPTI run's repeats after the
	// library detached (rundir.SourceAloneDetached), not from stage 1.
	Alone         *workload.Report
	AloneDetached bool
	// AloneMissing is why stage 1's report, there beside the CUPTI run's,
	// could not be read: the stages keep that run's own times.
	AloneMissing string

	// Kernels is the whole kernel table (no top-N cut) of the timeline
	// export; KernelsSource says what it is.
	Kernels       *model.KernelTable
	KernelsSource string
	// KernelsTimedBy is the tool that timed them; RegionsTimedBy the
	// regions'.
	KernelsTimedBy, RegionsTimedBy facts.Timer
	// KernelRanges are the NVTX ranges the kernel table covers (the
	// rebuild's one decision); none: the whole run. KernelRangesInferred
	// says they are phases inferred from the kernel stream.
	KernelRanges         []string
	KernelRangesInferred bool
	// KernelsWarmup is what of the kernel table's scope ran in warm-up
	// instances: left out of Kernels for a scope of ranges, held in it for
	// the whole run (facts.KernelsWarmup.LeftOut); nil where the table's
	// source has no warm-up decision.
	KernelsWarmup *facts.KernelsWarmup
	// SessionPartial is why the session that made the run did not finish
	// (the program failed, was killed or stopped; a step failed): the
	// manifest's reason; "" for a session that did.
	SessionPartial string
	KernelsMissing string

	// Metrics are the deep pass's per-kernel metrics, by kernel name, and
	// what measured them.
	Metrics   map[string]*kernels.Metrics
	MetricsBy facts.DeepSource
	// ConfigNS is each kernel's time by launch configuration
	// (kernels.ConfigKey), from a timeline; nil without one.
	ConfigNS       map[string]map[string]float64
	MetricsMissing string

	// Rules are ncu's rules of the deep pass's details page, by kernel
	// name; nil with RulesMissing when there are none.
	Rules        map[string][]facts.Rule
	RulesMissing string

	// Regions are NVTX regions over every launch of the timeline export
	// when it has them (RegionsSampled false), else the deep pass's
	// sample.
	Regions        *facts.RegionReport
	RegionsSampled bool
	RegionsMissing string
	// RegionsSampleReport is the region report of the deep pass's sample,
	// with its metrics, relative to MAIN; "" when there is none.
	RegionsSampleReport string

	// Phases are the run's phases at NVTX depth 1 from its CUPTI timeline
	// (phases.Of); nil when the run has no CUPTI timeline, or with
	// PhasesMissing when it has one that could not be read.
	Phases *facts.PhaseReport
	// Decode is the decode's steps in the CUPTI timeline
	// (phases.DecodeSteps): TPOT and TTFT where the stages come from its
	// ranges; nil when none repeats.
	Decode        *facts.Decode
	PhasesMissing string

	// Program is what kind of program ran (ProgramOf); the zero value
	// is an unknown one.
	Program facts.Program
}

// Options are the report's settings (the profile's report section).
type Options struct {
	TopN              int
	Categories        kernels.Categories
	BoundThresholdPct float64
	// PeakOverride, when TFLOPS is non-zero, replaces the table's peak.
	PeakOverride machine.Peak
	// Phases name the prefill and decode stages (zero: model.DefaultPhases).
	Phases model.Names
	// Facts are the model facts of the profile (model.*): they fill what
	// the workload report does not say, and are all a program that
	// writes no report has.
	Facts Facts
}

// Facts are model facts and token counts given in the profile, or by the
// program's framework.
type Facts struct {
	Model  workload.Model
	Tokens workload.Tokens
	Batch  int64 // the sequences of one generate; 0: not given
}

// programFacts are the facts of a program's framework (ModelFacts), for
// fill.
func programFacts(f *workload.ModelFacts) Facts {
	if f == nil {
		return Facts{}
	}
	return Facts{Model: f.Model, Tokens: f.Tokens, Batch: f.Batch}
}

// fill is w with what it lacks taken from the facts: the report's own
// values win.
func (f Facts) fill(w *workload.Report) *workload.Report {
	if f == (Facts{}) {
		return w
	}
	c := *w
	if f.Batch > 0 && w.Batch() <= 1 {
		if _, given := w.Extra["batch"]; !given {
			c.Extra = maps.Clone(w.Extra)
			if c.Extra == nil {
				c.Extra = map[string]json.RawMessage{}
			}
			c.Extra["batch"] = json.RawMessage(strconv.FormatInt(f.Batch, 10))
		}
	}
	m, g := &c.Model, f.Model
	for _, s := range []struct {
		dst *string
		src string
	}{{&m.Name, g.Name}, {&m.Arch, g.Arch}, {&m.Dtype, g.Dtype}} {
		if *s.dst == "" {
			*s.dst = s.src
		}
	}
	for _, n := range []struct {
		dst *int64
		src int64
	}{{&m.Params, g.Params}, {&m.MatmulParams, g.MatmulParams},
		{&m.Layers, g.Layers}, {&m.HiddenSize, g.HiddenSize}, {&m.Heads, g.Heads}, {&m.KVHeads, g.KVHeads}, {&m.HeadDim, g.HeadDim},
		{&m.VocabSize, g.VocabSize}, {&c.Tokens.Prompt, f.Tokens.Prompt}, {&c.Tokens.Generated, f.Tokens.Generated}} {
		if *n.dst == 0 {
			*n.dst = n.src
		}
	}
	return &c
}

// Format is summary.json's format key (facts.Format).
const Format = facts.Format

// RanksDiffer is the rule for showing a stage's times per rank: the gap
// between the ranks' means is more than the largest of their standard
// deviations (each rank's warm-up left out, as the stage table does).
func RanksDiffer(ranks []facts.StageRank) bool {
	if len(ranks) < 2 {
		return false
	}
	lo, hi, sd := ranks[0].MeanMS, ranks[0].MeanMS, 0.0
	for _, r := range ranks {
		lo, hi, sd = min(lo, r.MeanMS), max(hi, r.MeanMS), max(sd, r.SDMS)
	}
	return hi-lo > sd
}

// building is a summary while Build makes it, with what the findings are
// worded from and summary.json does not hold.
type building struct {
	*facts.Summary
	workloadRanges json.RawMessage // the workload report's "ranges"
	names          model.Names     // which stages and ranges are prefill and decode (phases.*)
	boundThreshold float64         // the SOL rule's threshold, percent (Options.BoundThresholdPct)
}

// Build computes the summary from a run's inputs.
func Build(in Inputs, opt Options) *facts.Summary {
	if opt.TopN <= 0 {
		opt.TopN = 10
	}
	if opt.Categories == nil {
		opt.Categories = kernels.Default()
	}
	if opt.BoundThresholdPct <= 0 {
		opt.BoundThresholdPct = kernels.DefaultThresholdPct
	}
	s := &building{Summary: &facts.Summary{Format: Format, RunID: in.RunID, Anomalies: in.Anomalies, Trace: in.Trace, Partial: in.SessionPartial},
		names: opt.Phases, boundThreshold: opt.BoundThresholdPct}
	if in.Workload != nil {
		s.workloadRanges = in.Workload.Extra["ranges"]
		in.Workload = programFacts(in.ProgramFacts).fill(opt.Facts.fill(in.Workload))
	}
	s.Environment = environment(in, opt)
	s.Stages = stages(in, opt.Phases)
	s.MFU = mfu(in, s.Environment.Peak, s.Environment.PeakMissing, s.Stages)
	s.Serving = serving(in, s.Environment.Peak, s.Stages)
	s.Operators = operators(in, opt.TopN)
	if s.Operators.Rows == nil {
		s.Operators.Rows = []workload.Operator{} // none: a list, empty
	}
	s.Kernels = topKernels(in, opt, s.Environment.Peak)
	s.Regions = regionRows(in)
	if ranges := s.Kernels.TotalMS + leftOutMS(s.Kernels); len(s.Kernels.Ranges) > 0 && !s.Regions.Sampled && s.Regions.TotalMS >= ranges && s.Kernels.Missing == "" {
		v := s.Regions.TotalMS - ranges
		s.Kernels.OutsideMS = &v
	}
	if in.KernelsWarmup == nil && s.Kernels.Missing == "" {
		s.Kernels.WarmupIncluded = slices.ContainsFunc(s.Stages.Rows, func(r facts.Stage) bool { return r.WarmupMS != nil })
	}
	s.Phases = phaseRows(in)
	s.WhatIf = whatIf(in, s)
	s.Communication = communication(in)
	s.Narrative = narrate(s)
	return s.Summary
}

func environment(in Inputs, opt Options) facts.Environment {
	e := facts.Environment{Driver: in.Driver, CUDA: in.CUDA, Tools: in.Tools, Missing: in.EnvMissing}
	if in.GPU != nil {
		e.GPU, e.MemoryBytes, e.ComputeCapability = in.GPU.Name, in.GPU.MemoryTotalBytes, in.GPU.ComputeCapability
	}
	e.Program = in.Program
	if e.Program.Kind == "" {
		e.Program.Kind = facts.ProgramUnknown
	}
	if len(in.Used) > 1 {
		for _, g := range in.Used {
			e.GPUsUsed = append(e.GPUsUsed, fmt.Sprintf("GPU %d %s", g.Index, g.Name))
		}
		e.GPULinks = in.Links
	}
	if in.Workload != nil {
		e.Frameworks = in.Workload.Versions
		m := in.Workload.Model
		// One spelling of a dtype everywhere in summary.json: bf16, fp16,
		// fp32 (machine.Dtype), whichever the workload wrote.
		m.Dtype = machine.Dtype(m.Dtype)
		if m != (workload.Model{}) {
			e.Model = &m
		}
		e.Dtype = m.Dtype
		if in.ProgramFacts != nil && m != (workload.Model{}) {
			e.ModelFrom = in.ProgramFacts.From + ", where the profile (model.*) gives none"
		}
	}
	switch {
	case opt.PeakOverride.TFLOPS > 0:
		p := opt.PeakOverride
		if p.Source == "" {
			p.Source = "the profile (report.peak_tflops)"
		}
		e.Peak = &p
	case e.GPU == "":
		e.PeakMissing = "the GPU is unknown (no env.json GPU): set report.peak_tflops in the profile"
	case e.Dtype == "":
		e.PeakMissing = "the model's dtype is unknown (the workload report gives none): give it as model.dtype"
		if in.Workload == nil || in.StagesFromRanges {
			e.PeakMissing = "the model's dtype is unknown (no workload report): give it as model.dtype"
		}
	default:
		if p, ok := machine.LookupPeak(e.GPU, e.Dtype); ok {
			e.Peak = &p
		} else {
			e.PeakMissing = fmt.Sprintf("%s with %s is not in deepprof's peak table (%s): set report.peak_tflops and report.peak_memory_tbps in the profile",
				e.GPU, e.Dtype, strings.Join(machine.KnownPeakGPUs(), ", "))
		}
	}
	return e
}

// timesOf are the repeats ms with package model's statistics of them: one
// warm-up rule for every stage, process and rank.
func timesOf(ms, steps []float64) facts.StageTimes {
	s := model.Sample{Repeats: ms, Steps: steps}
	sum := s.Summary()
	out := facts.StageTimes{MS: ms, MeanMS: sum.MeanMS, SDMS: sum.SDMS, N: sum.N, WarmupMS: sum.WarmupMS, WarmupN: sum.WarmupN}
	if steps != nil {
		per, n := s.PerStep()
		out.Steps, out.StepMS, out.StepsKept = steps, &per, int(n)
	}
	return out
}

func stages(in Inputs, phases model.Names) facts.Stages {
	if in.Workload == nil {
		return facts.Stages{Missing: orWhy(in.WorkloadMissing, "no workload report")}
	}
	w := in.Workload
	st := facts.Stages{Tokens: &w.Tokens, Batch: w.Batch(), Source: in.WorkloadSource, FromRanges: in.StagesFromRanges}
	// The program alone's repeats are the rows' only where they time every
	// stage the report does: a table of one run, sub-stages with their
	// parents.
	alone := in.Alone
	if alone != nil {
		for n := range w.Stages {
			if len(alone.Stages[n].MS) == 0 {
				alone = nil
				break
			}
		}
	}
	if alone != nil && in.AloneDetached {
		st.AloneSource = rundir.SourceAloneDetached
	}
	st.AloneMissing = in.AloneMissing
	names := make([]string, 0, len(w.Stages))
	for n := range w.Stages {
		names = append(names, n)
	}
	// Top-level stages in the order of inference (prefill, decode, then
	// others by name); each sub-stage right after its parent.
	rank := func(n string) int {
		switch phases.Of(n, "") {
		case model.Prefill:
			return 0
		case model.Decode:
			return 1
		}
		return 2
	}
	top := func(n string) string {
		if p := w.Stages[n].Parent; p != "" {
			return p
		}
		return n
	}
	sort.Slice(names, func(i, j int) bool {
		a, b := names[i], names[j]
		ta, tb := top(a), top(b)
		if ta != tb {
			if rank(ta) != rank(tb) {
				return rank(ta) < rank(tb)
			}
			return ta < tb
		}
		if (w.Stages[a].Parent == "") != (w.Stages[b].Parent == "") {
			return w.Stages[a].Parent == ""
		}
		return a < b
	})
	for _, n := range names {
		ws := w.Stages[n]
		row := facts.Stage{Name: n, Parent: ws.Parent, Phase: phases.Of(n, ws.Parent), StageTimes: timesOf(ws.MS, ws.Steps)}
		if alone != nil {
			// The program alone's times are the row's, as diff and
			// baselines take them; the CUPTI run's stand beside them.
			if as := alone.Stages[n]; len(as.MS) > 0 {
				recorded := row.StageTimes
				row.Recorded, row.StageTimes = &recorded, timesOf(as.MS, as.Steps)
			}
		}
		for _, p := range ws.Processes {
			row.Processes = append(row.Processes, facts.StageProcess{ProcessID: p.ProcessID, StageTimes: timesOf(p.MS, p.Steps)})
		}
		slices.SortFunc(row.Processes, func(a, b facts.StageProcess) int { return cmp.Compare(a.ProcessID, b.ProcessID) })
		var ranks []facts.StageRank
		byRank := w.Ranks // each rank's times, of the report the row's times are
		if row.Recorded != nil {
			byRank = alone.Ranks
		}
		for _, r := range byRank {
			if ms, ok := r.Stages[n]; ok && len(ms) > 0 {
				ranks = append(ranks, facts.StageRank{Rank: r.Rank, StageTimes: timesOf(ms, nil)})
			}
		}
		if RanksDiffer(ranks) {
			row.Ranks = ranks
		} else if len(ranks) > 1 {
			row.RanksAgree = len(ranks)
		}
		switch row.Phase {
		case model.Prefill:
			row.Tokens = w.Tokens.Prompt
		case model.Decode:
			row.Tokens = w.Tokens.Generated
		}
		if row.Tokens > 0 && row.MeanMS > 0 {
			row.TokensS = float64(row.Tokens) / (row.MeanMS / 1e3)
		}
		st.Rows = append(st.Rows, row)
	}
	return st
}

// batch is the workload report's "batch" (1 when absent).

func operators(in Inputs, topN int) facts.Operators {
	if in.Workload == nil {
		return facts.Operators{Missing: orWhy(in.WorkloadMissing, "no workload report")}
	}
	if len(in.Workload.Operators) == 0 {
		if in.StagesFromRanges {
			// A program of the user's: deepprof's workload flags are not its.
			return facts.Operators{Missing: "the program wrote no workload report, so there is no operator table: a program that writes one " +
				"(JSON at $DEEPPROF_REPORT) may give its \"operators\" (name, calls, total_ms, from torch.profiler), as deepprof's own workloads do in stage 1"}
		}
		if in.WorkloadSource != "" && in.Alone == nil {
			return facts.Operators{Missing: "no operator table: deepprof's workloads make it with no profiler attached, in stage 1 or in the CUPTI run " +
				"once the library has detached, and this CUPTI run stood in for stage 1 without detaching (workload.plain_run=always makes a plain run, " +
				"and with it the table)", NotMade: true}
		}
		return facts.Operators{Missing: "the workload report has no operator table: run the workload with --operators " +
			"(the default workloads do; they make it with no profiler attached, in stage 1 or in the CUPTI run once the library has detached)"}
	}
	o := facts.Operators{Detached: in.AloneDetached}
	for _, op := range in.Workload.Operators {
		if op.TotalMS == 0 && op.CUDAMS > 0 {
			o.Dropped++ // torch lists each kernel as an event with GPU time and no CPU time
			continue
		}
		o.Rows = append(o.Rows, op)
	}
	slices.SortStableFunc(o.Rows, func(a, b workload.Operator) int {
		if a.CUDAMS != b.CUDAMS {
			if a.CUDAMS > b.CUDAMS {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	if len(o.Rows) > topN {
		o.Rows = o.Rows[:topN]
	}
	return o
}

func topKernels(in Inputs, opt Options, peak *machine.Peak) facts.Kernels {
	k := facts.Kernels{BoundRule: kernels.RuleText(opt.BoundThresholdPct)}
	if in.Kernels == nil {
		k.Missing = orWhy(in.KernelsMissing, "no kernel table")
		return k
	}
	t := in.Kernels
	k.Source, k.TimedBy, k.TotalMS, k.Launches = in.KernelsSource, in.KernelsTimedBy, t.TotalMS, t.Launches
	if w := in.KernelsWarmup; w != nil && w.Launches > 0 {
		c := *w
		k.Warmup = &c
	}
	k.Scope, k.Ranges = facts.ScopeWholeRun, in.KernelRanges
	if len(in.KernelRanges) > 0 {
		k.Scope, k.Inferred = facts.ScopeRanges, in.KernelRangesInferred
	}
	cats := map[string]*facts.CategoryTime{}
	category := map[string]string{} // each name classified once
	for _, r := range t.Kernels {
		c, seen := category[r.Name]
		if !seen {
			c = opt.Categories.Of(r.Name)
			category[r.Name] = c
		}
		ct := cats[c]
		if ct == nil {
			ct = &facts.CategoryTime{Category: c}
			cats[c] = ct
		}
		ct.TotalMS += r.TotalMS
		ct.Kernels++
	}
	for _, ct := range cats {
		ct.Share = share(ct.TotalMS, t.TotalMS)
		k.ByCategory = append(k.ByCategory, *ct)
	}
	slices.SortFunc(k.ByCategory, func(a, b facts.CategoryTime) int {
		if a.TotalMS != b.TotalMS {
			if a.TotalMS > b.TotalMS {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Category, b.Category)
	})
	var p kernels.Peak
	if peak != nil {
		p = kernels.Peak{FLOPS: peak.FLOPS(), BytesPerSec: peak.BytesPerSec()}
	}
	if in.Metrics == nil {
		k.BoundsNote = orWhy(in.MetricsMissing, "no deep-pass metrics")
	} else {
		var deep float64
		for _, r := range t.Kernels {
			if m := in.Metrics[r.Name]; m != nil {
				w := 1.0
				if sp := sampled(m.Configs, in.ConfigNS[r.Name]); sp != nil {
					w = sp.Share
				}
				deep += w * r.TotalMS
			}
		}
		v := share(deep, t.TotalMS)
		k.DeepShare, k.DeepSource = &v, in.MetricsBy
	}
	for _, r := range t.Top(opt.TopN).Kernels {
		row := facts.KernelRow{Name: r.Name, TotalMS: r.TotalMS, Calls: r.Calls, Share: share(r.TotalMS, t.TotalMS),
			Category: category[r.Name], Spread: r.Spread}
		row.FP32GEMM = row.Category == "gemm" && kernels.FP32GEMM(r.Name, in.Metrics[r.Name])
		switch m := in.Metrics[r.Name]; {
		case in.Metrics == nil:
			row.Bound = facts.Bound{Class: "unknown", Why: "no deep-pass metrics"}
		case m == nil && category[r.Name] == kernels.Communication && in.MetricsBy == facts.DeepByLibrary:
			row.Bound = facts.Bound{Class: "unknown", Why: "a collective: never replayed in the run, since its replay would wait for the other ranks; its time and its overlap with compute are in the communication figures"}
		case m == nil && category[r.Name] == kernels.Communication:
			row.Bound = facts.Bound{Class: "unknown", Why: "a collective: the deep pass leaves collectives out, since under ncu's replay their time is waiting for the other ranks; its time and its overlap with compute are in the communication figures"}
		case m == nil && in.MetricsBy == facts.DeepByLibrary:
			row.Bound = facts.Bound{Class: "unknown", Why: "not measured: deepprof's library measured the kernels of most time first, within its cap on the measuring's time; ncu.deep_source=ncu measures every top kernel, the program started again"}
		case m == nil:
			row.Bound = facts.Bound{Class: "unknown", Why: "the deep pass did not profile this kernel"}
		default:
			row.Bound = kernels.Classify(*m, p, opt.BoundThresholdPct)
			row.Sampled = sampled(m.Configs, in.ConfigNS[r.Name])
			row.PartlyMeasured = row.Sampled != nil && row.Sampled.Share < MinMeasuredShare
			if m.HasSOL {
				sm, mem := m.SMPct, m.MemPct
				row.SMPct, row.MemPct = &sm, &mem
				sol := max(sm, mem)
				c := max(100-sol, 0)
				row.SOLPct, row.SaveCapPct = &sol, &c
			}
			if ai, ok := m.Intensity(); ok {
				if f, ok := m.FLOPS(); ok && ai > 0 && f > 0 {
					k.Roofline = append(k.Roofline, facts.RooflinePt{Kernel: r.Name, Intensity: ai, FLOPS: f})
				}
			}
		}
		row.Rules = capRules(in.Rules[r.Name], row.SaveCapPct)
		for j, rule := range row.Rules {
			if kernels.Actionable(rule) && len(row.ShownRules) < facts.MaxRulesPerKernel {
				row.ShownRules = append(row.ShownRules, j)
			}
		}
		k.Rows = append(k.Rows, row)
	}
	if in.Rules == nil {
		k.RulesMissing = orWhy(in.RulesMissing, "no deep-pass details page")
	}
	names := make([]string, len(k.Rows))
	for i, r := range k.Rows {
		names[i] = r.Name
	}
	for i, d := range facts.DisplayNames(names) {
		k.Rows[i].Display = d
	}
	switch {
	case len(k.Roofline) == 0:
		k.RooflineWhy = "no top kernel has both FLOP counts and DRAM bytes: profile with ncu=roofline for a roofline chart"
	case peak == nil:
		k.RooflineWhy = "the GPU's peaks are unknown, so there are no roofs to draw"
		k.Roofline = nil
	}
	return k
}

// leftOutMS is the warm-up's kernel time the table leaves out of its scope
// (facts.KernelsWarmup.LeftOut), 0 when none.
func leftOutMS(k facts.Kernels) float64 {
	if k.Warmup == nil || !k.Warmup.LeftOut {
		return 0
	}
	return k.Warmup.MS
}

// MinMeasuredShare is the least share of a kernel's time its measured
// launch configurations must run for its bound to be the kernel's.
const MinMeasuredShare = 0.5

// orWhy is a missing input's reason, or a plain one when none was given.
func orWhy(why, plain string) string {
	if why == "" {
		return plain
	}
	return why
}

func share(part, total float64) float64 {
	if total <= 0 {
		return 0
	}
	return part / total
}

func regionRows(in Inputs) facts.Regions {
	if in.Regions == nil {
		return facts.Regions{Missing: orWhy(in.RegionsMissing, "no region report")}
	}
	r := in.Regions
	out := facts.Regions{Source: r.Source, TimedBy: in.RegionsTimedBy, Sampled: in.RegionsSampled, TotalMS: r.ProfiledMS, Outside: r.OutsideMS, Launches: r.Launches,
		SampleReport: in.RegionsSampleReport}
	if !r.RegionProfiling {
		out.Missing = "no launch of " + r.Source + " was inside an NVTX range"
		return out
	}
	for _, g := range r.Aggregate {
		out.Rows = append(out.Rows, facts.RegionRow{Name: g.Name, Depth: g.Depth, TotalMS: g.TotalMS, Launches: g.KernelCount,
			Share: share(g.TotalMS, r.ProfiledMS)})
	}
	return out
}

// sampled is what of a kernel the deep pass profiled (its configurations)
// against its time by configuration in the timeline; nil without the time.
// Samples is, by kernel name, what of each kernel in metrics the deep pass
// profiled, for those whose time by launch configuration configNS has.
func Samples(metrics map[string]*kernels.Metrics, configNS map[string]map[string]float64) map[string]*facts.Sample {
	out := map[string]*facts.Sample{}
	for name, m := range metrics {
		if m == nil {
			continue
		}
		if sp := sampled(m.Configs, configNS[name]); sp != nil {
			out[name] = sp
		}
	}
	return out
}

func sampled(profiled []string, byConfig map[string]float64) *facts.Sample {
	if len(byConfig) == 0 {
		return nil
	}
	var all, in float64
	n := 0
	for c, ns := range byConfig {
		all += ns
		if slices.Contains(profiled, c) {
			in += ns
			n++
		}
	}
	return &facts.Sample{Configs: n, Of: len(byConfig), Share: share(in, all)}
}

// capRules are a kernel's rules with each estimate that passes the
// kernel's saving cap (KernelRow.SaveCapPct) capped; rules is not changed.
func capRules(rules []facts.Rule, capPct *float64) []facts.Rule {
	if capPct == nil || rules == nil {
		return rules
	}
	out := slices.Clone(rules)
	for i, r := range out {
		if r.SpeedupPct != nil && *r.SpeedupPct > *capPct {
			c := *capPct
			out[i].CappedPct = &c
		}
	}
	return out
}

// estimate is a rule's estimated saving on its kernel, percent of its
// time: ncu's, or the cap where ncu's passes it (capped).
func estimate(r facts.Rule) (pct float64, capped bool) {
	switch {
	case r.CappedPct != nil:
		return *r.CappedPct, true
	case r.SpeedupPct != nil:
		return *r.SpeedupPct, false
	}
	return 0, false
}
