package harness

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/llm-perf-opt/deepprof/internal/kernels"
	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/regions"
	"github.com/llm-perf-opt/deepprof/internal/render"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
	"github.com/llm-perf-opt/deepprof/internal/timeline"
	"github.com/llm-perf-opt/deepprof/internal/workload"
)

// hasCupti reports whether the run has a CUPTI timeline.
func hasCupti(run *rundir.Run) bool { return len(rundir.CuptiFiles(run)) > 0 }

// loadTimeline reads the run's CUPTI record files once per rebuild (the
// kernel table, the regions, the phases and the trace all come from it).
func (c settings) loadTimeline(run *rundir.Run) (*timeline.Timeline, error) {
	if c.memo != nil && (c.memo.tl != nil || c.memo.err != nil) {
		return c.memo.tl, c.memo.err
	}
	tl, err := timeline.Load(rundir.TimelineCupti, rundir.CuptiFiles(run), run.Open)
	if c.memo != nil {
		c.memo.tl, c.memo.err = tl, err
	}
	return tl, err
}

// memo holds what one rebuild read once.
type memo struct {
	tl     *timeline.Timeline
	err    error
	steady *timeline.Steady
}

// steady is the rebuild's one warm-up decision on the timeline's ranges of
// the program's domain (timeline.Steady), made once: the stages, the
// phases and every figure built from instances read it.
func (c settings) steady(tl *timeline.Timeline) *timeline.Steady {
	if c.memo != nil && c.memo.steady != nil {
		return c.memo.steady
	}
	s := tl.SteadyState([]string{c.Domain})
	if c.memo != nil {
		c.memo.steady = s
	}
	return s
}

// cuptiKernels is the kernel table of the run's CUPTI timeline: every launch
// in the configured NVTX ranges, with each kernel's spread. The session
// picks the deep pass's kernels from it, and kernels.md/json show it.
func cuptiKernels(run *rundir.Run, cfg settings) (*model.KernelTable, error) {
	tl, err := cfg.loadTimeline(run)
	if err != nil {
		return nil, err
	}
	return tl.KernelTable(rundir.TimelineCupti, func(l *model.Launch) bool { return model.InRanges(l, cfg.Include) })
}

// readCuptiKernels is the rebuild's kernel table from the CUPTI timeline:
// the launches in the profiled ranges (cfg.Include, as decideRanges set
// it).
func readCuptiKernels(run *rundir.Run, _ string, cfg settings) (*model.KernelTable, error) {
	return cuptiKernels(run, cfg)
}

// decideRanges makes the rebuild's one decision of the NVTX ranges the
// kernel table, the deep pass's sample and the summary cover
// (timeline.ProfiledRanges from nvtx.include and the phases' names, the
// rule a session applies and then writes to config.yaml): cfg.Include and
// cfg.IncludeNames become them, and a decision other than nvtx.include is
// said in a note. A run without a CUPTI timeline keeps nvtx.include.
func decideRanges(run *rundir.Run, cfg *settings) error {
	if !hasCupti(run) || len(cfg.IncludeNames) == 0 {
		return nil
	}
	tl, err := cfg.loadTimeline(run)
	if err != nil {
		return nil // the timeline's readers say why
	}
	ranges, changed := tl.ProfiledRanges(cfg.IncludeNames, cfg.Domain, cfg.Summary.Phases)
	if !changed {
		return nil
	}
	inc := [][]model.Range{}
	for _, f := range ranges {
		lv, err := model.Configured(f, cfg.Domain)
		if err != nil {
			return err
		}
		inc = append(inc, lv)
	}
	run.Note("kernels: not every one of the ranges %v (nvtx.include) occurred in the CUPTI timeline; the kernel table covers %s: those that did, and the program's prefill and decode ranges (phases.*), else its outermost ranges, as a session does (set nvtx.include to choose)", cfg.IncludeNames, orWhole(ranges))
	cfg.Include, cfg.IncludeNames = inc, ranges
	return nil
}

// orWhole names the ranges, or the whole program for none.
func orWhole(ranges []string) string {
	if len(ranges) == 0 {
		return "the whole program"
	}
	return fmt.Sprint(ranges)
}

// readCuptiRegions is the run's regions from the CUPTI timeline: every
// launch, by the NVTX stack of the thread that launched it.
func readCuptiRegions(run *rundir.Run, _ string, cfg settings) (*regions.Report, error) {
	tl, err := cfg.loadTimeline(run)
	if err != nil {
		return nil, err
	}
	agg, err := regions.New(runRegionsConfig(cfg.Regions))
	if err != nil {
		return nil, err
	}
	for l := range tl.Launches() {
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
	return func(kernel string) bool { return cats.Of(kernel) == kernels.Communication }
}

// writeTimeline writes the CUPTI timeline's derived files: the trace, the
// phases and the check against the oracle. It returns the phases at depth 1
// (nil without a timeline) for the summary.
func writeTimeline(run *rundir.Run, cfg settings, tab *model.KernelTable, reg *regions.Report) (*timeline.PhaseReport, error) {
	derived := []string{rundir.TimelineTrace, rundir.TimelinePhases, rundir.OracleCheckJSON}
	if !hasCupti(run) {
		for _, rel := range derived {
			run.Remove(rel)
			run.Forget(rel)
		}
		return nil, nil
	}
	tl, err := cfg.loadTimeline(run)
	if err != nil {
		for _, rel := range derived {
			run.Remove(rel)
			run.Record(rel, rundir.StatusMissing, err.Error())
		}
		return nil, err
	}
	var errs []error
	for _, p := range tl.Processes {
		if p.Truncation != "" {
			run.Record(p.File, rundir.StatusPartial, "cut short ("+p.Truncation+"): the process ended without writing its last records (a crash or a kill); what it flushed before is kept")
		} else {
			run.Record(p.File, rundir.StatusComplete, "")
		}
	}
	if err := render.WriteFile(run.Dir, run.Path(rundir.TimelineTrace), tl); err != nil {
		run.Record(rundir.TimelineTrace, rundir.StatusMissing, err.Error())
		errs = append(errs, err)
	} else {
		run.Record(rundir.TimelineTrace, rundir.StatusComplete, "")
	}
	ph := tl.Phases(timeline.PhaseOptions{Depth: 1, NestedDepth: nestedPhaseDepth, Communication: cfg.isCommunication(), Domains: []string{cfg.Domain}, Steady: cfg.steady(tl)})
	b, err := json.MarshalIndent(ph, "", "  ")
	if err == nil {
		err = run.Write(rundir.TimelinePhases, append(b, '\n'))
	}
	errs = append(errs, err)
	errs = append(errs, writeOracleCheck(run, tl, reg, cfg.isCommunication()))
	return ph, errors.Join(errs...)
}

// nestedPhaseDepth is how deep timeline/phases.json and the summary go
// inside the phases: a decode step, a vision encoder inside prefill, each
// with its GPU busy and idle time.
const nestedPhaseDepth = 3

// OracleCheck is timeline/oracle-check.json: the CUPTI timeline against
// the oracle's figures, row by row (workload.Check has the rule).
type OracleCheck struct {
	Oracle string         `json:"oracle"` // the oracle's file
	Tool   string         `json:"tool"`
	Passed bool           `json:"passed"`
	Rows   []workload.Row `json:"rows"`
}

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

// writeOracleCheck compares the timeline with the oracle's figures when the
// run has them: each phase with the region of its range, and each kernel
// with its launches in those phases (the oracle saw nothing else, whatever
// nvtx.include chose for the kernel table).
func writeOracleCheck(run *rundir.Run, tl *timeline.Timeline, reg *regions.Report, isCommunication func(string) bool) error {
	rel := rundir.OracleCheckJSON
	if !run.Exists(rundir.OracleJSON) {
		run.Remove(rel)
		run.Forget(rel)
		return nil
	}
	b, err := readRunFile(run, rundir.OracleJSON)
	var f *workload.Figures
	if err == nil {
		f, err = workload.Read(b, rundir.OracleJSON)
	}
	if err == nil && reg == nil {
		err = errors.New("no regions from the timeline to compare")
	}
	if err != nil {
		run.Remove(rel)
		run.Record(rel, rundir.StatusMissing, err.Error())
		return err
	}
	m := workload.Measured{Phases: map[string]workload.OraclePhase{}, Kernels: map[string]workload.Kernel{}}
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
	out, err := json.MarshalIndent(OracleCheck{Oracle: rundir.OracleJSON, Tool: f.Tool, Passed: workload.Passed(rows), Rows: rows}, "", "  ")
	if err != nil {
		return err
	}
	return run.Write(rel, append(out, '\n'))
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
		d, err := strconv.Atoi(l.Device)
		if !is || err != nil {
			continue
		}
		dev := model.DeviceID(d)
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

// overhead is what the CUPTI library cost the workload, measured two ways.
// InProcess is the measure: the workload's repeats alternating, in the one
// process the library records, between recording on and paused (the
// workload report's "overhead"; only a workload that uses the library's
// pause does this, such as deepprof's default one), as torch.profiler's
// overhead is measured. Across processes compares the recorded run with
// stage 1, a separate process: it is always there, but carries the
// machine's process-to-process spread (on the H100 measured, the same
// plain workload's median moved by up to 1.8x between processes:
// fixtures/cupti/h100-overhead-lean/runs.txt).
type overhead struct {
	// PlainMS and CuptiMS are medians over repeats of every top-level
	// stage summed per repeat: stage 1's and the recorded run's.
	PlainMS, CuptiMS float64
	Repeats          int
	// InProcess is nil when the workload did not measure it.
	InProcess *inProcessOverhead
	// Reference is torch.profiler's overhead measured the same way in the
	// oracle's process (nil without it).
	Reference *inProcessOverhead
}

// inProcessOverhead is a profiler's cost measured in one process: repeats
// with the profiler on and off, alternating; the figure is the median of
// the pairs' ratios (model.PairedRatio), the medians of each side are shown
// beside it.
type inProcessOverhead struct {
	OnMS, OffMS float64
	model.Ratio
	Method string
}

// newInProcess is nil unless on and off are pairs of finite times > 0.
func newInProcess(method string, on, off []float64) *inProcessOverhead {
	r, ok := model.PairedRatio(on, off)
	if !ok {
		return nil
	}
	return &inProcessOverhead{OnMS: model.Median(on), OffMS: model.Median(off), Ratio: r, Method: method}
}

// Ratio is CuptiMS / PlainMS.
func (o overhead) Ratio() float64 { return o.CuptiMS / o.PlainMS }

// cuptiOverhead reads both workload reports; false when either is missing.
func cuptiOverhead(run *rundir.Run) (overhead, bool) {
	plain, err1 := readStages(run, rundir.Stage1Report, settings{})
	cupti, err2 := readStages(run, rundir.TimelineReport, settings{})
	if err1 != nil || err2 != nil {
		return overhead{}, false
	}
	p, n1 := repeatTotals(plain)
	c, n2 := repeatTotals(cupti)
	if p <= 0 || c <= 0 {
		return overhead{}, false
	}
	o := overhead{PlainMS: p, CuptiMS: c, Repeats: min(n1, n2)}
	if raw, ok := cupti.Extra["overhead"]; ok {
		var v struct {
			Method    string    `json:"method"`
			Recording []float64 `json:"recording_ms"`
			Paused    []float64 `json:"paused_ms"`
		}
		if json.Unmarshal(raw, &v) == nil {
			o.InProcess = newInProcess(v.Method, v.Recording, v.Paused)
		}
	}
	if data, err := readRunFile(run, rundir.OracleJSON); err == nil {
		if f, err := workload.Read(data, rundir.OracleJSON); err == nil && f.Overhead != nil {
			o.Reference = newInProcess(f.Overhead.Method, f.Overhead.ProfiledMS, f.Overhead.PlainMS)
		}
	}
	return o, true
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

// timelineSection is report.md's account of the CUPTI timeline: its files,
// what it cost, and the check against the oracle.
func timelineSection(run *rundir.Run) string {
	if !hasCupti(run) {
		return ""
	}
	var b strings.Builder
	b.WriteString("## The CUPTI timeline\n\n")
	var files []string
	for _, f := range rundir.CuptiFiles(run) {
		files = append(files, "["+render.EscapeCell(f)+"]("+f+")")
	}
	fmt.Fprintf(&b, "Kernel times come from deepprof's CUPTI library in the CUPTI run (the workload under no other profiler), one record file per CUDA process (%s): the run's own clocks and caches, no replay. The trace opens in Perfetto (ui.perfetto.dev) or chrome://tracing: [%s](%s).\n\n",
		strings.Join(files, ", "), rundir.TimelineTrace, rundir.TimelineTrace)
	if o, ok := cuptiOverhead(run); ok {
		b.WriteString(overheadText(o))
	}
	if data, err := readRunFile(run, rundir.OracleCheckJSON); err == nil {
		var c OracleCheck
		if json.Unmarshal(data, &c) == nil {
			verdict := "agrees"
			if !c.Passed {
				verdict = "does NOT agree"
			}
			ranks := ""
			for _, r := range c.Rows {
				if strings.HasPrefix(r.What, "collectives net of waiting") {
					ranks = fmt.Sprintf(", the collectives (NCCL kernels) net of waiting within %.0f %% (or %g times the oracle's own spread between its generates, where that is more: here %.1f %%): a collective runs on every rank until the last one joins it, so each call's shortest duration over the ranks is its own time, the rest on the others their wait, which differs between two runs; each side's figure is a generate's, the median over the generates (each rank's collectives with their waits are shown, not judged; with them, phases are compared with their collectives left out)",
						100*workload.CollectiveTolerance, workload.SpreadFactor, 100*r.Tolerance)
					break
				}
			}
			fmt.Fprintf(&b, "Independent check: the timeline %s with %s (the torch.profiler check, a separate run, [%s](%s)); phases within %.0f %%, the top %d kernels within %.0f %%%s, launch counts equal:\n\n",
				verdict, c.Tool, rundir.OracleJSON, rundir.OracleJSON, 100*workload.PhaseTolerance, workload.TopKernels, 100*workload.KernelTolerance, ranks)
			b.WriteString("| what | oracle ms | timeline ms | diff | oracle launches | timeline launches | ok |\n| --- | ---: | ---: | ---: | ---: | ---: | --- |\n")
			for _, r := range c.Rows {
				ok := "yes"
				switch {
				case r.Informational:
					ok = "shown: " + r.Why
				case !r.OK:
					ok = "no: " + r.Why
				}
				fmt.Fprintf(&b, "| %s | %.3f | %.3f | %+.2f %% | %d | %d | %s |\n", render.EscapeCell(r.What), r.OracleMS, r.TimedMS, 100*r.Diff, r.OracleLaunches, r.TimedLaunches, render.EscapeCell(ok))
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// overheadText is report.md's account of the library's overhead.
func overheadText(o overhead) string {
	var b strings.Builder
	across := fmt.Sprintf("with the library the workload's stages took %.3f ms per repeat against %.3f ms in stage 1, a separate process (medians of %d repeats): %.3fx",
		o.CuptiMS, o.PlainMS, o.Repeats, o.Ratio())
	if ip := o.InProcess; ip == nil {
		b.WriteString("Overhead: " + across + ". The workload did not measure it in one process (deepprof's default workload does, pausing the library between repeats), so this includes the machine's spread between processes.")
	} else {
		fmt.Fprintf(&b, "Overhead: **%.3fx** (quartiles %.3f–%.3f): in the recorded process, the median over %d pairs of a repeat with recording on and one with recording paused (%s); medians %.3f ms on, %.3f ms paused. Across processes, %s; that comparison also carries the machine's spread between processes.",
			ip.Median, ip.Q1, ip.Q3, ip.Pairs, ip.Method, ip.OnMS, ip.OffMS, across)
	}
	if r := o.Reference; r != nil {
		fmt.Fprintf(&b, " For reference, torch.profiler (CUDA activity) cost %.3fx (quartiles %.3f–%.3f) on this machine, measured the same way over %d pairs of generates in the oracle's process.",
			r.Median, r.Q1, r.Q3, r.Pairs)
	}
	b.WriteString("\n\n")
	return b.String()
}

// readCuptiStages is the stages of a program that wrote no workload report:
// one stage per push/pop NVTX range name (its label, "prefill", "LLM@prefill"),
// each closed instance a repeat, in start order, every process's
// instances together; a nested range's parent is its enclosing range's
// name. A program with no NVTX range has no stages: the error says how to
// add them.
func readCuptiStages(run *rundir.Run, _ string, cfg settings) (*workload.Report, error) {
	tl, err := cfg.loadTimeline(run)
	if err != nil {
		return nil, err
	}
	rep := &workload.Report{Stages: map[string]workload.Stage{}}
	var others []string // domains left out
	for _, s := range tl.Stages(cfg.steady(tl)) {
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
		for _, ns := range s.DurationsNS {
			st.MS = append(st.MS, float64(ns)/1e6)
			pm.MS = append(pm.MS, float64(ns)/1e6)
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
	if f, err := run.Open(rundir.Stage1Runs); err == nil {
		defer f.Close()
		runs, err := workload.ReadRuns(f, rundir.Stage1Runs)
		if err != nil {
			return nil, err
		}
		var ms []float64
		for _, r := range runs.Runs {
			ms = append(ms, r.WallMS)
		}
		rep.Stages[workload.WholeProgram] = workload.Stage{MS: ms}
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
			st.MS = nil
			for _, p := range st.Processes {
				ms := p.MS
				if model.Summarize(ms).WarmupMS != nil {
					ms = ms[1:]
				}
				st.MS = append(st.MS, ms...)
			}
		}
		rep.Stages[n] = st
	}
}

// noNVTXHint is what a run of a program with no NVTX range says.
const noNVTXHint = "the program opened no NVTX range, so there are no stages to time: mark its phases with NVTX ranges (" + noNVTXHowTo + ")"

// noNVTXHowTo says how to mark a program's phases.
const noNVTXHowTo = model.HowToMark

// processesOf is the CUPTI timeline's TopProcesses for the top kernels'
// functions.
func processesOf(run *rundir.Run, functions []string) (timeline.TopProcesses, error) {
	tl, err := settings{}.loadTimeline(run)
	if err != nil {
		return timeline.TopProcesses{}, err
	}
	return tl.TopProcesses(functions), nil
}
