package rebuild

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/kernels"
	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/phases"
	"github.com/llm-perf-opt/deepprof/internal/regions"
	"github.com/llm-perf-opt/deepprof/internal/render"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
	"github.com/llm-perf-opt/deepprof/internal/timeline"
	"github.com/llm-perf-opt/deepprof/internal/workload"
)

// hasCupti reports whether the run has a CUPTI timeline.
func hasCupti(rec rundir.Recorded) bool { return len(rec.CuptiFiles) > 0 }

// loadTimeline reads the run's CUPTI record files once per rebuild (the
// kernel table, the regions, the phases and the trace all come from it),
// or takes the timeline already read of them (settings.read); where the
// program marked no phase of its own and cfg infers them
// (settings.InferPhases), the phases found in its kernel stream are added
// to it (phases.InferPhases), as the trace shows them.
func (in *inputs) loadTimeline(run *rundir.Run, cfg settings) {
	in.tl = cfg.read
	if in.tl == nil {
		in.tl, in.tlErr = timeline.Load(rundir.TimelineCupti, in.rec.CuptiFiles, run.Open)
	}
	if in.tlErr == nil && cfg.InferPhases {
		in.inferred, in.phasesFound = phases.InferPhases(in.tl, cfg.Domain)
	}
}

// onTimeline is what a source of the CUPTI timeline is made of: the
// timeline as load read it (err: why it could not be), the settings with
// the ranges decided, the one warm-up decision on the timeline's ranges of
// the program's domain (phases.Steady: the stages, the phases and every
// figure built from instances read it), and stage 1's runs.
type onTimeline struct {
	tl      *timeline.Timeline
	err     error
	cfg     settings
	steady  *phases.Steady
	runs    *workload.Runs
	runsErr error
	// tables are the kernel tables of the profiled ranges (kernelTables),
	// made once.
	tables    *phases.SteadyTables
	tablesErr error
}

// onTimelineOf is what the sources of in's timeline are made of, with the
// ranges decided in cfg.
func onTimelineOf(in *inputs, cfg settings) *onTimeline {
	on := &onTimeline{tl: in.readTimeline(), err: in.tlErr, cfg: cfg, runs: in.files.runs, runsErr: in.files.runsErr}
	if on.tl != nil {
		on.steady = phases.SteadyState(on.tl, []string{cfg.Domain})
	}
	return on
}

// kernelTables are the kernel tables of the timeline's launches in the
// profiled ranges (cfg.Include, as decideRanges set it), made once: all of
// them, and those in warm-up and in steady state (the latter where there
// are ranges to profile: the summary's table is then theirs).
func (on *onTimeline) kernelTables() (*phases.SteadyTables, error) {
	if on.tables == nil && on.tablesErr == nil {
		t, err := phases.KernelTables(on.tl, rundir.TimelineCupti, model.InRangesOf(on.cfg.Include), on.steady,
			[]string{on.cfg.Domain}, len(on.cfg.Include) > 0)
		on.tables, on.tablesErr = &t, err
	}
	return on.tables, on.tablesErr
}

// cuptiKernels is the kernel table of the run's CUPTI timeline: every
// launch in the profiled ranges, with each kernel's spread. The session
// picks the deep pass's kernels from it, and kernels.md/json show it.
func cuptiKernels(on *onTimeline) (*model.KernelTable, error) {
	if on.err != nil {
		return nil, on.err
	}
	t, err := on.kernelTables()
	if err != nil {
		return nil, err
	}
	return t.All, nil
}

// summaryKernels is the summary's kernel table of the CUPTI timeline and
// what of its scope ran in warm-up instances (the one warm-up decision):
// for the profiled ranges, their launches in steady state, the warm-up's
// left out; for the whole run, tab (every launch), the warm-up in it. No
// timeline (it could not be read) leaves tab, with no warm-up decision.
func summaryKernels(on *onTimeline, tab *model.KernelTable) (*model.KernelTable, *facts.KernelsWarmup, error) {
	if on.tl == nil {
		return tab, nil, nil
	}
	t, err := on.kernelTables()
	if err != nil {
		return nil, nil, err
	}
	w := &facts.KernelsWarmup{MS: t.Warmup.TotalMS, Launches: t.Warmup.Launches, LeftOut: len(on.cfg.Include) > 0, MeasuredLaunches: t.Measured}
	if !w.LeftOut {
		return tab, w, nil
	}
	return t.Steady, w, nil
}

// summaryLaunch admits the launches of the summary's kernel table
// (summaryKernels): those of the profiled ranges, in steady state where
// they are ranges.
func (c settings) summaryLaunch(steady *phases.Steady) func(*timeline.Kernel, *model.Launch) bool {
	domains, inRanges := []string{c.Domain}, model.InRangesOf(c.Include)
	return func(k *timeline.Kernel, l *model.Launch) bool {
		return inRanges(l) && (len(c.Include) == 0 || !steady.LaunchInWarmup(k.Range, k.Start, domains))
	}
}

// decideRanges makes the rebuild's one decision of the NVTX ranges the
// kernel table, the deep pass's sample and the summary cover
// (phases.ProfiledRanges from nvtx.include and the phases' names, the
// rule a session applies and then writes to config.yaml; where that
// leaves the whole run and the program's phases were inferred from its
// kernel stream, those phases, phases.InferredRanges, as a session
// chooses the deep pass's kernels among them; found: they were inferred):
// cfg.Include and cfg.IncludeNames become them, and a decision other than
// nvtx.include comes with the manifest note that says it. A run without a
// CUPTI timeline tl (nil: none, or one that cannot be read, which the
// timeline's readers say) keeps nvtx.include.
func decideRanges(tl *timeline.Timeline, cfg *settings, found bool) (note string, err error) {
	if tl == nil {
		return "", nil
	}
	ranges, changed := cfg.IncludeNames, false
	if len(ranges) > 0 {
		ranges, changed = phases.ProfiledRanges(tl, cfg.IncludeNames, cfg.Domain, cfg.Summary.Phases)
		if changed {
			note = fmt.Sprintf("kernels: not every one of the ranges %v (nvtx.include) occurred in the CUPTI timeline; the kernel table covers %s: those that did, and the program's prefill and decode ranges (phases.*), else its outermost ranges, as a session does (set nvtx.include to choose)", cfg.IncludeNames, orWhole(ranges))
		}
	}
	if len(ranges) == 0 && found {
		ranges, changed = phases.InferredRanges(), true
		note = fmt.Sprintf("kernels: the program opened no NVTX range to profile; the kernel table covers the phases inferred from its kernel stream (%s), as a session chooses the deep pass's kernels among them. What ran before the first phase (imports, the model's build, a compiler's autotuning) or after the last is outside every range: %s has the whole run",
			strings.Join(ranges, ", "), rundir.RegionsMD)
	}
	cfg.inferredScope = found && len(ranges) > 0 && !slices.ContainsFunc(ranges, func(r string) bool { return !slices.Contains(phases.InferredRanges(), r) })
	if !changed {
		return "", nil
	}
	inc := [][]model.Range{}
	for _, f := range ranges {
		lv, err := model.Configured(f, cfg.Domain)
		if err != nil {
			return "", err
		}
		inc = append(inc, lv)
	}
	cfg.Include, cfg.IncludeNames = inc, ranges
	return note, nil
}

// orWhole names the ranges, or the whole program for none.
func orWhole(ranges []string) string {
	if len(ranges) == 0 {
		return "the whole program"
	}
	return fmt.Sprint(ranges)
}

// cuptiRegions is the run's regions from the CUPTI timeline: every
// launch, by the NVTX stack of the thread that launched it.
func cuptiRegions(on *onTimeline) (*facts.RegionReport, error) {
	if on.err != nil {
		return nil, on.err
	}
	agg, err := regions.New(runRegionsConfig(on.cfg.Regions))
	if err != nil {
		return nil, err
	}
	for l := range on.tl.Launches() {
		if err := agg.Add(rundir.TimelineCupti, l, false); err != nil {
			return nil, err
		}
	}
	return agg.Report(rundir.TimelineCupti), nil
}

// isCommunication is the report's rule for a communication kernel: its
// category (report.categories, else package kernels' table) is "communication".
func (c settings) isCommunication() func(kernel string) bool {
	cats := c.Summary.Categories
	if cats == nil {
		cats = kernels.Default()
	}
	return func(kernel string) bool { return cats.Is(kernel, kernels.Communication) }
}

// phasesOf is the timeline's phases at depth 1 with their nested ranges,
// in steady state (the one warm-up decision).
func phasesOf(tl *timeline.Timeline, cfg settings, steady *phases.Steady) *facts.PhaseReport {
	return phases.Of(tl, phases.Options{Depth: 1, NestedDepth: nestedPhaseDepth, Communication: cfg.isCommunication(), Domains: []string{cfg.Domain}, Steady: steady})
}

// nestedPhaseDepth is how deep timeline/phases.json and the summary go
// inside the phases: a decode step, a vision encoder inside prefill, each
// with its GPU busy and idle time.
const nestedPhaseDepth = 3

// oracleCheckFile is timeline/oracle-check.json (render.OracleCheck).
type oracleCheckFile = render.OracleCheck

// byRank gives each of the oracle's ranks the device the timeline gave its
// GPU, where the timeline numbered the GPUs across processes
// (timeline.GPUs: ranks that each saw only their own GPU, as "device 0",
// or ranks of several nodes); otherwise the oracle's device is the ordinal
// the rank saw, as the timeline's is.
func byRank(f *workload.Figures, tl *timeline.Timeline) {
	for i, r := range f.Ranks {
		for _, g := range tl.GPUs {
			if slices.Contains(g.Ranks, r.Rank) {
				f.Ranks[i].Device = model.DeviceID(g.Device)
			}
		}
	}
}

// oracleCheck compares the timeline with the oracle's figures f: each
// phase with the region of its range, and each kernel with its launches in
// those phases (the oracle saw nothing else, whatever nvtx.include chose
// for the kernel table).
func oracleCheck(f *workload.Figures, tl *timeline.Timeline, reg *facts.RegionReport, isCommunication func(string) bool) (*oracleCheckFile, error) {
	if reg == nil {
		return nil, errors.New("no regions from the timeline to compare")
	}
	f = inTimelineSpelling(f)
	m := workload.Measured{Phases: map[string]workload.OraclePhase{}, Kernels: map[string]workload.OracleKernel{}}
	for _, p := range f.Phases {
		name := model.Path([]model.Range{{Domain: f.Domain, Name: p.Range}})
		for _, r := range reg.Aggregate {
			if r.Name == name {
				m.Phases[p.Range] = workload.OraclePhase{Range: p.Range, KernelMS: r.TotalMS, Launches: r.KernelCount}
			}
		}
	}
	phases := map[model.Range]bool{}
	for _, p := range f.Phases {
		phases[model.Range{Domain: f.Domain, Name: p.Range}] = true
	}
	ns := map[string]float64{} // summed in ns, as model.KernelAggregator does
	for l := range tl.Launches() {
		if l.NVTX == nil || len(l.NVTX.Levels) == 0 || !phases[l.NVTX.Levels[0]] || !l.Duration.Valid {
			continue
		}
		k := m.Kernels[l.Kernel]
		k.Name, k.Calls = l.Kernel, k.Calls+1
		m.Kernels[l.Kernel] = k
		ns[l.Kernel] += l.Duration.Base
	}
	for name, k := range m.Kernels {
		k.TotalMS = ns[name] / 1e6
		m.Kernels[name] = k
	}
	if len(f.Ranks) > 0 {
		collectives(&m, tl, phases, isCommunication)
		byRank(f, tl)
	}
	rows := workload.Check(f, m)
	return &oracleCheckFile{Oracle: rundir.OracleJSON, Tool: f.Tool, Passed: workload.Passed(rows), Rows: rows}, nil
}

// inTimelineSpelling is f with its kernels named as the timeline names
// them: torch.profiler leaves mangled the long CUTLASS names that the
// timeline demangles (timeline.DemangledName); two names that become one are
// summed.
func inTimelineSpelling(f *workload.Figures) *workload.Figures {
	g := *f
	g.Kernels = make([]workload.OracleKernel, 0, len(f.Kernels))
	at := map[string]int{}
	for _, k := range f.Kernels {
		k.Name = timeline.DemangledName(k.Name)
		if i, ok := at[k.Name]; ok {
			g.Kernels[i].TotalMS += k.TotalMS
			g.Kernels[i].Calls += k.Calls
			continue
		}
		at[k.Name] = len(g.Kernels)
		g.Kernels = append(g.Kernels, k)
	}
	return &g
}

// collectives is the timeline's communication kernels (isCommunication:
// the run's categories, report.categories, whose default the workload's
// oracle mirrors) inside the given top-level ranges, by the CUDA device that
// ran them, totals and each call: the other side of the oracle's per-rank
// collective figures.
func collectives(m *workload.Measured, tl *timeline.Timeline, phases map[model.Range]bool, isCommunication func(string) bool) {
	comm := map[string]bool{}
	ns := map[model.DeviceID]float64{} // summed in ns, as model.KernelAggregator does
	m.Collectives = map[model.DeviceID]workload.OraclePhase{}
	m.CollectiveCalls = map[model.DeviceID]map[string][]float64{}
	m.CollectiveNames = map[string]bool{}
	for l := range tl.Launches() { // each process's in start order
		if l.NVTX == nil || len(l.NVTX.Levels) == 0 || !phases[l.NVTX.Levels[0]] || !l.Duration.Valid {
			continue
		}
		is, seen := comm[l.Kernel]
		if !seen {
			is = isCommunication(l.Kernel)
			comm[l.Kernel] = is
		}
		if !is {
			continue
		}
		dev := l.Device
		m.CollectiveNames[l.Kernel] = true
		p := m.Collectives[dev]
		p.Launches++
		m.Collectives[dev] = p
		ns[dev] += l.Duration.Base
		byPhase := m.CollectiveCalls[dev]
		if byPhase == nil {
			byPhase = map[string][]float64{}
			m.CollectiveCalls[dev] = byPhase
		}
		ph := l.NVTX.Levels[0].Name
		byPhase[ph] = append(byPhase[ph], l.Duration.Base/1e6)
	}
	for dev, p := range m.Collectives {
		p.KernelMS = ns[dev] / 1e6
		m.Collectives[dev] = p
	}
}

// newInProcess is nil unless on and off are pairs of finite times > 0
// (model.PairedRatio).
func newInProcess(method string, on, off []float64) *render.InProcessOverhead {
	r, ok := model.PairedRatio(on, off)
	if !ok {
		return nil
	}
	return &render.InProcessOverhead{OnMS: model.Median(on), OffMS: model.Median(off), Ratio: r, Method: method}
}

// cuptiOverhead is what the CUPTI library cost the workload, from the
// workload reports as the rebuild read them (the CUPTI run's, and stage
// 1's or nil) and the oracle's figures: nil without the CUPTI run's report
// or with nothing to say. The in-process measure is
// the workload report's "overhead" (repeats alternating, in the one
// process the library records, between recording on and paused); across
// processes compares the CUPTI run with stage 1, a separate process, and
// carries the machine's process-to-process spread.
func cuptiOverhead(cupti, plain *workload.Report, oracle *workload.Figures) *render.CuptiOverhead {
	if cupti == nil {
		return nil
	}
	o := &render.CuptiOverhead{}
	if v, ok := cupti.Overhead(); ok {
		o.InProcess = newInProcess(v.Method, v.Recording, v.Paused)
	}
	if plain != nil {
		p, n1 := repeatTotals(plain)
		c, n2 := repeatTotals(cupti)
		if p > 0 && c > 0 {
			o.PlainMS, o.CuptiMS, o.Repeats = p, c, min(n1, n2)
		}
	}
	if o.InProcess == nil && o.PlainMS == 0 {
		return nil
	}
	if oracle != nil && oracle.Overhead != nil {
		o.Reference = newInProcess(oracle.Overhead.Method, oracle.Overhead.ProfiledMS, oracle.Overhead.PlainMS)
	}
	return o
}

// repeatTotals is the median over repeats of the top-level stages' summed
// wall time, and the number of repeats.
func repeatTotals(r *workload.Report) (float64, int) {
	var sums []float64
	for _, st := range r.Stages {
		if st.Parent != "" {
			continue
		}
		for i, ms := range st.MS {
			for len(sums) <= i {
				sums = append(sums, 0)
			}
			sums[i] += ms
		}
	}
	if len(sums) == 0 {
		return 0, 0
	}
	return model.Median(sums), len(sums)
}

// cuptiStages is the stages of a program that wrote no workload report:
// one stage per push/pop NVTX range name (its label, "prefill", "LLM@prefill"),
// each closed instance a repeat, in start order, every process's
// instances together; a nested range's parent is its enclosing range's
// name; a program stage 1 ran as a whole process has its runs' wall times
// (on.runs). A program with no NVTX range has no stages: the error says
// how to add them.
func cuptiStages(on *onTimeline) (*workload.Report, error) {
	if on.err != nil {
		return nil, on.err
	}
	cfg := on.cfg
	rep := &workload.Report{Stages: map[string]workload.ReportStage{}}
	var others []string // domains left out
	for _, s := range phases.Stages(on.tl, on.steady, []string{cfg.Domain}) {
		// Push/pop ranges only: start/end ranges may overlap anything
		// (their GPU time is in the regions).
		if len(s.DurationsNS) == 0 || s.Kind != timeline.PushPop {
			continue
		}
		// The program's own domain only (nvtx.domain): a library's ranges
		// (CCCL's cub::DeviceScan, cuBLAS) are not the program's stages.
		if s.Domain != cfg.Domain {
			if !slices.Contains(others, s.Domain) {
				others = append(others, s.Domain)
			}
			continue
		}
		st := rep.Stages[s.Name]
		pm := workload.ProcessMS{ProcessID: s.ProcessID}
		for i, ns := range s.DurationsNS {
			st.MS = append(st.MS, float64(ns)/1e6)
			pm.MS = append(pm.MS, float64(ns)/1e6)
			if s.Steps != nil {
				pm.Steps = append(pm.Steps, float64(s.Steps[i]))
			}
		}
		if pm.Steps != nil || st.Steps != nil {
			// Steps beside MS, one each where a process gave none.
			for len(st.Steps) < len(st.MS)-len(pm.MS) {
				st.Steps = append(st.Steps, 1)
			}
			if pm.Steps == nil {
				pm.Steps = slices.Repeat([]float64{1}, len(pm.MS))
			}
			st.Steps = append(st.Steps, pm.Steps...)
		}
		st.Processes = append(st.Processes, pm)
		if st.Parent == "" && s.Parent != s.Name {
			st.Parent = s.Parent
		}
		rep.Stages[s.Name] = st
	}
	poolProcesses(rep)
	ranges := len(rep.Stages)
	// A program stage 1 ran as a whole process: each run's wall time (the
	// one stage of a program with no NVTX range of its domain).
	if on.runsErr != nil {
		return nil, on.runsErr
	}
	if on.runs != nil {
		var ms []float64
		for _, r := range on.runs.Runs {
			ms = append(ms, r.WallMS)
		}
		rep.Stages[workload.WholeProgram] = workload.ReportStage{MS: ms}
	}
	switch {
	case ranges > 0 || len(rep.Stages) > 0:
	case len(others) > 0:
		slices.Sort(others)
		for i, d := range others {
			others[i] = strconv.Quote(d)
			if d == "" {
				others[i] += " (the default domain)"
			}
		}
		return nil, fmt.Errorf("%s: the program opened NVTX ranges only in other domains than nvtx.domain=%q (%s): set nvtx.domain to time one of them, or mark the program's phases in its own (%s)",
			rundir.TimelineCupti, cfg.Domain, strings.Join(others, ", "), noNVTXHowTo)
	default:
		return nil, fmt.Errorf("%s: %s", rundir.TimelineCupti, noNVTXHint)
	}
	return rep, nil
}

// poolProcesses sets the stages' MS from their processes' instances. One
// process: its instances are the stage's, no split to show. Several: the
// stage pools each process's instances but its warm-up (model.WarmupRule,
// process by process: laid end to end, the rule would see only the first
// process's), which the process's own row keeps.
func poolProcesses(rep *workload.Report) {
	for n, st := range rep.Stages {
		if len(st.Processes) < 2 {
			st.Processes = nil
		} else {
			st.MS, st.Steps = nil, nil
			for _, p := range st.Processes {
				s := model.Sample{Repeats: p.MS, Steps: p.Steps}
				n, _ := s.Warmup()
				st.MS = append(st.MS, p.MS[n:]...)
				if p.Steps != nil {
					for len(st.Steps) < len(st.MS)-len(p.MS[n:]) {
						st.Steps = append(st.Steps, 1)
					}
					st.Steps = append(st.Steps, p.Steps[n:]...)
				}
			}
		}
		rep.Stages[n] = st
	}
}

// readStage1Runs is stage 1's runs of the program as a whole process
// (rundir.Stage1Runs); nil where the run has none to open.
func readStage1Runs(run *rundir.Run) (*workload.Runs, error) {
	f, err := run.Open(rundir.Stage1Runs)
	if err != nil {
		return nil, nil
	}
	defer f.Close()
	return workload.ReadRuns(f, rundir.Stage1Runs)
}

// noNVTXHint is what a run of a program with no NVTX range says.
const noNVTXHint = "the program opened no NVTX range, so there are no stages to time: mark its phases with NVTX ranges (" + noNVTXHowTo + ")"

// noNVTXHowTo says how to mark a program's phases.
const noNVTXHowTo = model.HowToMark
