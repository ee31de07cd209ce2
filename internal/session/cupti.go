package session

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/llm-perf-opt/deepprof/internal/config"
	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/phases"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
	"github.com/llm-perf-opt/deepprof/internal/timeline"
	"github.com/llm-perf-opt/deepprof/internal/workload"
)

// The CUPTI timeline (timeline.tool=cupti, or auto without a usable nsys):
// the plain workload runs once more, with workload.repeats, and deepprof's
// CUPTI library injected into every CUDA process it starts. Why a second
// plain run rather than stage 1 itself: stage 1 stays the run whose wall
// times the summary reports, untouched by any tracing, at the cost of one
// more plain run, which is small beside the deep pass. The library's
// overhead is measured inside the recorded run: deepprof's default
// workload alternates its repeats with as many with recording paused
// (deepprof_cupti_pause/resume), because between two processes the same
// plain workload moves more than the library costs (docs/measurements.md,
// "CUPTI library overhead"). It then detaches the library
// (deepprof_cupti_detach) and times as many repeats again with no profiler
// attached: those stand in for stage 1's (plainRunNeeded). The kernel times, the regions and the deep
// pass's choice of kernels come from this run, not from a replay under
// ncu, which lengthens kernels (fixtures/logs/timing-fidelity-ncu-vs-cupti.txt;
// docs/measurements.md, "The ncu timing pass").

// errCuptiBuild marks a timeline that failed because the library could not
// be built: with timeline.tool=auto the session goes on with an ncu timing
// pass.
var errCuptiBuild = errors.New("CUPTI library")

// cuptiOptions is where the library's toolkit and compiler are found.
func (s *Session) cuptiOptions() Options {
	if s.CUPTI != nil {
		return *s.CUPTI
	}
	return Options{}
}

// cuptiUsable says whether the library can be built here: a CUDA toolkit
// with CUPTI and a C compiler (nothing is compiled yet: a dry run stays
// free of side effects).
func (s *Session) cuptiUsable() error {
	opts := s.cuptiOptions()
	if _, err := FindToolkit(opts); err != nil {
		return err
	}
	_, err := FindCompiler(opts)
	return err
}

// notNsys is the timeline when nsys is not usable (why says why): CUPTI
// when the library can be built, else the ncu timing pass.
func (s *Session) notNsys(why string) *timelineKind {
	if err := s.cuptiUsable(); err != nil {
		return &timelineKind{tool: timelineNcu, why: "; " + why + "; " + err.Error()}
	}
	return &timelineKind{tool: timelineCupti, why: "; " + why}
}

// cuptiLibPlaceholder stands for the library's path in a plan made before
// it is built.
const cuptiLibPlaceholder = "<the CUPTI library, built on first use>"

// cuptiSteps are the timeline's steps with CUPTI: the plain run with the
// library, then (timeline.oracle) a plain run under torch.profiler.
func (s *Session) cuptiSteps(mainDir string, tl *timelineKind) ([]Step, error) {
	spec := s.spec()
	env, err := spec.Environ(workload.PhaseCupti, filepath.Join(mainDir, rundir.TimelineReport))
	if err != nil {
		return nil, err
	}
	lib := tl.cupti
	if lib == "" {
		lib = cuptiLibPlaceholder
	}
	env = append(env, Env(lib, filepath.Join(mainDir, rundir.TimelineCupti))...)
	if s.Cfg.Workload.AutoRanges == "on" {
		env = append(env, workload.EnvModelFacts+"="+filepath.Join(mainDir, rundir.TimelineModel))
	}
	if !s.plainRunDeferred(tl) {
		// stage 1 is made anyway: no alone repeats, no operator table
		env = append(env, workload.EnvAlone+"=0")
	}
	details := []string{
		fmt.Sprintf("the workload runs as in stage 1 (%s=%d); its records go to MAIN/%s/cupti-<pid>.tsv, one file per CUDA process, children included", workload.EnvRepeats, spec.Repeats, rundir.TimelineCupti),
		"report.md gives the library's overhead: repeats with recording on against as many with it paused in the same process (deepprof's default workload alternates them), and against stage 1",
	}
	if s.deepInRun() {
		menv, line := s.inRunEnv()
		env = append(env, menv...)
		details = append(details, line)
	}
	steps := []Step{{ID: StepCupti, Argv: spec.Argv, Env: env, Log: rundir.TimelineLog,
		Note:    "timeline: the CUPTI run, deepprof's CUPTI library in the program: every kernel, copy, launch call and NVTX range, at the run's own clocks",
		Details: details}}
	if s.Cfg.Timeline.Oracle {
		oenv, err := spec.Environ(workload.PhaseOracle, "")
		if err != nil {
			return nil, err
		}
		oenv = append(oenv, workload.EnvOracle+"="+filepath.Join(mainDir, rundir.OracleJSON))
		steps = append(steps, Step{ID: StepOracle, Argv: spec.Argv, Env: oenv, Log: rundir.OracleLog,
			Note:    "the torch.profiler check: torch.profiler's kernel figures in a separate run (timeline.oracle)",
			Details: []string{"a workload that does not support " + workload.EnvPhase + "=" + string(workload.PhaseOracle) + " writes no figures: a note says so, and the run goes on"}})
	}
	return steps, nil
}

// cuptiTimeline builds the library (cached), runs the workload with it and
// the oracle, and picks the deep pass's kernel functions from its records.
func (s *Session) cuptiTimeline(ctx context.Context, run *rundir.Run) ([]string, error) {
	clock := s.now()
	start := clock()
	lib, err := Build(ctx, s.cuptiOptions())
	exit := 0
	if err != nil {
		exit = 1
	}
	run.RecordStep("cupti-build", clock().Sub(start).Seconds(), exit)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errCuptiBuild, err)
	}
	s.tl.cupti = lib
	run.Note("timeline: deepprof's CUPTI library (%s) in a plain run timed every kernel launch%s", lib, s.tl.why)
	if err := rundir.MkdirIn(run.Dir, run.Path(rundir.TimelineCupti)); err != nil {
		return nil, err
	}
	byID, err := s.stepsByID(run.Dir)
	if err != nil {
		return nil, err
	}
	if err := s.step(ctx, run, byID[StepCupti], false); err != nil {
		if files := rundir.CuptiFiles(run); len(files) > 0 {
			run.Note("CUPTI timeline: the workload failed under the library; the %d record file(s) it wrote are kept", len(files))
		}
		return nil, fmt.Errorf("CUPTI timeline: %w", err)
	}
	// On a node of a multi-node run (the launcher's own argv) the report is
	// rank 0's node's alone, and every node must run the same steps (a
	// node that skipped one would leave the others waiting in its
	// rendezvous): the oracle runs on each.
	if _, ok := byID[StepOracle]; ok && !run.Exists(rundir.Stage1Report) && !run.Exists(rundir.TimelineReport) && len(s.Cfg.Workload.Launcher.Argv) == 0 {
		run.Note("oracle (torch.profiler): not run: the program wrote no workload report, and only a workload that supports %s=%s (deepprof's default one) writes torch.profiler's figures", workload.EnvPhase, workload.PhaseOracle)
		delete(byID, StepOracle)
	}
	if st, ok := byID[StepOracle]; ok {
		if err := s.step(ctx, run, st, false); err != nil {
			if isStopped(err) {
				return nil, err
			}
			run.Note("oracle (torch.profiler): %v; the timeline is not checked against it", err)
		} else if !run.Exists(rundir.OracleJSON) {
			run.Note("oracle (torch.profiler): the workload wrote no figures to $%s (only a workload that supports %s=%s does, such as deepprof's default one); the timeline is not checked against it",
				workload.EnvOracle, workload.EnvPhase, workload.PhaseOracle)
		} else {
			run.Record(rundir.OracleJSON, rundir.StatusComplete, "")
		}
	}
	if run.Exists(rundir.TimelineReport) {
		run.Record(rundir.TimelineReport, rundir.StatusComplete, "")
	}
	// A program that never loaded CUDA left no record file at all: the
	// same answer as one that loaded it and launched nothing.
	if len(rundir.CuptiFiles(run)) == 0 {
		return nil, noKernel(run)
	}
	if err := s.profileWhatOccurred(run); err != nil {
		return nil, err
	}
	tl, err := s.recordsOf(run)
	if err != nil {
		return nil, err
	}
	keep, within, err := s.scope(tl)
	if err != nil {
		return nil, err
	}
	tab, err := s.cuptiKernels(tl, keep)
	if err != nil {
		return nil, err
	}
	if within {
		all, err := s.cuptiKernels(tl, func(*model.Launch) bool { return true })
		if err != nil {
			return nil, err
		}
		run.Note("kernels: the program opened no NVTX range of nvtx.domain=%q; the kernel table and the deep pass's choice of kernels cover the phases inferred from its kernel stream (%s): %d of its %d launches, %.3f of %.3f ms of GPU time. What ran before the first phase (imports, the model's build, a compiler's autotuning) or after the last is outside them; ncu/regions/ has the whole run",
			s.Cfg.NVTX.Domain, strings.Join(phases.InferredRanges(), ", "), tab.Launches, all.Launches, tab.TotalMS, all.TotalMS)
	}
	if tab.Launches == 0 {
		return nil, noKernel(run)
	}
	top := s.cover(run, *tab, "")
	var names []string
	seen := map[string]bool{}
	for _, k := range top.Kernels {
		if name := model.FunctionName(k.Name); !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	s.topProcesses = phases.TopProcessesOf(tl, names)
	if s.Cfg.Workload.Launcher.Multi() {
		s.sameRanks, s.rankProcs = phases.SameTopLaunches(tl, names)
	}
	s.targets = nil
	// Exact targets for a program whose top kernels one process launched,
	// or for the ranks of a multi-GPU workload profiled one at a time (ncu
	// then follows one rank's process): with several processes under one
	// ncu, its count is shared among them (deepLaunchCount), and the pass
	// keeps the kernel-function filter.
	if s.exactTargets() {
		var kn []string
		for _, k := range top.Kernels {
			kn = append(kn, k.Name)
		}
		targets := phases.Targets
		if within {
			targets = phases.TargetsWithin
		}
		ts := targets(tl, kn, keep)
		// One launch of each kernel is chosen by its invocation number
		// among all its launches, as ncu counts them; the chosen ones are
		// in the nvtx.include ranges, which the timeline knows, not
		// outside nvtx.exclude ones, which it does not check.
		multi := s.Cfg.Workload.Launcher.Multi()
		one := !multi && len(s.Cfg.NVTX.Exclude) == 0
		s.targets = planTargets(top.Kernels, top.TotalMS, ts, s.Cfg.NCU, multi, one, within)
	}
	return names, nil
}

// exactTargets says whether the deep pass can name its kernels exactly:
// one process under each ncu (a program whose top kernels one process
// launched, or one rank at a time) and kernel replay.
func (s *Session) exactTargets() bool {
	l := s.Cfg.Workload.Launcher
	if rangeReplay(s.Cfg.NCU.ReplayMode) {
		return false
	}
	if l.Multi() {
		return l.DeepPass == config.DeepOneAtATime
	}
	return len(s.topProcesses.Processes) < 2
}

// noKernel is the error of a CUPTI timeline without a kernel launch.
func noKernel(run *rundir.Run) error {
	return fmt.Errorf("CUPTI timeline: the program launched no CUDA kernel (%d record file(s) in MAIN/%s). Next: check that it runs its work on the GPU (CUDA_VISIBLE_DEVICES, its device selection) and that its CUDA runtime is the one the library was injected into; the workload log is MAIN/%s",
		len(rundir.CuptiFiles(run)), rundir.TimelineCupti, rundir.TimelineLog)
}

// profileWhatOccurred decides, once, which NVTX ranges the kernel table
// and the deep pass cover (phases.ProfiledRanges: the configured ones
// where they all occurred, else those that did and the program's prefill
// and decode ranges, else its outermost ranges, else the whole program).
// A decision other than nvtx.include is said in a note and written to
// config.yaml, so that the deep pass's filter and every rebuild read the
// same ranges.
func (s *Session) profileWhatOccurred(run *rundir.Run) error {
	if len(s.Cfg.NVTX.Include) == 0 {
		return nil
	}
	tl, err := s.recordsOf(run)
	if err != nil {
		return err
	}
	ranges, changed := phases.ProfiledRanges(tl, s.Cfg.NVTX.Include, s.Cfg.NVTX.Domain, s.Cfg.Phases)
	if !changed {
		return nil
	}
	was := s.Cfg.NVTX.Include
	s.Cfg.NVTX.Include = ranges
	some := slices.ContainsFunc(was, func(r string) bool { return slices.Contains(ranges, r) })
	switch {
	case len(ranges) == 0 && len(s.inferredOf(tl)) > 0:
		run.Note("nvtx.include: none of the ranges %v occurred and the program opened no NVTX range: ncu follows the whole program, and the kernel table and the deep pass cover the phases inferred from its kernel stream (the kernels: note says how much of it). NVTX ranges of its own make them exact (%s)", was, model.HowToMark)
	case len(ranges) == 0:
		run.Note("nvtx.include: none of the ranges %v occurred and the program opened no NVTX range: the whole program is profiled. To time its stages, mark its phases with NVTX ranges (%s)", was, model.HowToMark)
	case !some:
		run.Note("nvtx.include: none of the ranges %v occurred; the program's outermost ranges are %v, and those are profiled (set nvtx.include to choose)", was, ranges)
	default:
		run.Note("nvtx.include: not every one of the ranges %v occurred; the kernel table and the deep pass cover %v: those that did, and the program's prefill and decode ranges (phases.*) (set nvtx.include to choose)", was, ranges)
	}
	if some {
		s.logf("not every NVTX range of %v occurred; profiling %v", was, ranges)
	} else {
		s.logf("none of the NVTX ranges %v occurred; profiling %v", was, orWhole(ranges))
	}
	y, err := s.Cfg.YAML()
	if err != nil {
		return err
	}
	s.ConfigYAML = y
	return run.Write(rundir.ConfigYAML, y)
}

func orWhole(include []string) string {
	if len(include) == 0 {
		return "the whole program"
	}
	return fmt.Sprint(include)
}

// recordsOf is the run's CUPTI timeline, read once: again only for
// another run or other record files.
func (s *Session) recordsOf(run *rundir.Run) (*timeline.Timeline, error) {
	files := rundir.CuptiFiles(run)
	if s.read.tl != nil && s.read.dir == run.Dir && slices.Equal(s.read.files, files) {
		return s.read.tl, nil
	}
	tl, err := timeline.Load(rundir.TimelineCupti, files, run.Open)
	if err != nil {
		return nil, fmt.Errorf("CUPTI timeline: %w", err)
	}
	s.read.dir, s.read.files, s.read.tl = run.Dir, files, tl
	s.read.inferred, s.read.inferredDone = nil, false
	return tl, nil
}

// Timeline is the CUPTI timeline the session read of run's record files
// while they are still the files it read (nil when it read none): the
// rebuild that ends the session takes it rather than reading them again.
// The session only queries it; the rebuild may add to it (inferred
// phases), so it is asked for as the deep pass starts, for the trace
// (StartTrace, which begins none where the rebuild will add to it), and
// once the session's steps are done.
func (s *Session) Timeline(run *rundir.Run) *timeline.Timeline {
	if s.read.tl == nil || s.read.dir != run.Dir || !slices.Equal(s.read.files, rundir.CuptiFiles(run)) {
		return nil
	}
	return s.read.tl
}

// cuptiKernels is the kernel table of the CUPTI timeline tl: every launch
// keep admits (scope), with each kernel's spread.
func (s *Session) cuptiKernels(tl *timeline.Timeline, keep func(*model.Launch) bool) (*model.KernelTable, error) {
	tab, err := phases.KernelTable(tl, rundir.TimelineCupti, keep)
	if err != nil {
		return nil, fmt.Errorf("CUPTI timeline: %w", err)
	}
	return tab, nil
}

// scope is the launches of tl the kernel table and the deep pass's choice
// of kernels cover: those in the profiled ranges (nvtx.include, as
// profileWhatOccurred decided them); where that leaves the whole run and
// the program's phases are inferred from its kernel stream (as its rebuild
// infers them, workload.auto_ranges: phases.InferredRanges), the launches
// inside those. within says ncu cannot filter on the scope: the program
// pushed none of its ranges.
func (s *Session) scope(tl *timeline.Timeline) (keep func(*model.Launch) bool, within bool, err error) {
	include, err := s.Cfg.NVTX.IncludeRanges()
	if err != nil {
		return nil, false, err
	}
	if in := s.inferredOf(tl); len(include) == 0 && len(in) > 0 {
		return in.Has, true, nil
	}
	return func(l *model.Launch) bool { return model.InRanges(l, include) }, false, nil
}

// inferredOf is phases.FindInferred of the session's timeline tl, found
// once; none with workload.auto_ranges off, where the rebuild infers none.
func (s *Session) inferredOf(tl *timeline.Timeline) phases.Inferred {
	if s.Cfg.Workload.AutoRanges == "off" {
		return nil
	}
	if s.read.tl != tl {
		return phases.FindInferred(tl, s.Cfg.NVTX.Domain)
	}
	if !s.read.inferredDone {
		s.read.inferred, s.read.inferredDone = phases.FindInferred(tl, s.Cfg.NVTX.Domain), true
	}
	return s.read.inferred
}

// plainRunDeferred reports whether the program's plain run (stage 1) waits
// for the CUPTI run, to be made only if that run shows it is needed
// (plainRunNeeded): a program whose one CUPTI run makes every repeat stage
// 1 would (it repeats itself, workload.repeat_by=env, or is run once,
// workload.repeats=1), with a CUPTI timeline and workload.plain_run=auto.
func (s *Session) plainRunDeferred(tl *timelineKind) bool {
	w := s.Cfg.Workload
	return tl != nil && tl.tool == timelineCupti && w.PlainRun == config.PlainRunAuto &&
		(w.RepeatBy == config.RepeatByEnv || w.RepeatBy == config.RepeatByProcess && w.Repeats <= 1)
}

// StandInOverhead is the most the CUPTI library may cost, measured in the
// CUPTI run's own process, for that run's workload report to stand in for
// stage 1's.
const StandInOverhead = 0.05

// plainRunNeeded says why a program whose plain run was deferred needs one
// after all, or "": it wrote a workload report in the CUPTI run that has
// no program-alone repeats (run after the library detached CUPTI from
// the process: workload.Report.Alone) and whose in-process measure of the
// library's cost is missing or over StandInOverhead (its figures are to
// come from a run without the library), or it marks no NVTX range of
// nvtx.domain (its one stage is the plain run's wall time). rep and
// repErr are the CUPTI run's workload report as read (both nil: it wrote
// none).
func (s *Session) plainRunNeeded(run *rundir.Run, rep *workload.Report, repErr error) string {
	if rep != nil || repErr != nil {
		if rep != nil {
			if _, ok := rep.Alone(); ok {
				return ""
			}
		}
		r, err := overheadOf(rep, repErr)
		switch {
		case err != nil:
			return "the program's workload report of the CUPTI run does not show what the library cost (" + err.Error() + "); its figures come from a run without the library"
		case r.Median > 1+StandInOverhead:
			return fmt.Sprintf("the CUPTI library cost %.3fx in the CUPTI run's process (recording against paused repeats), over the %.0f%% that run may cost to stand in for a plain one", r.Median, 100*StandInOverhead)
		}
		return ""
	}
	tl, err := s.recordsOf(run)
	if err != nil {
		return "its CUPTI timeline could not be read (" + err.Error() + ")"
	}
	if len(phases.TopRanges(tl, s.Cfg.NVTX.Domain)) == 0 {
		return fmt.Sprintf("the program marks no NVTX range of nvtx.domain=%q; its one stage is its wall time", s.Cfg.NVTX.Domain)
	}
	return ""
}

// cuptiRunReport is the CUPTI run's workload report.
func cuptiRunReport(run *rundir.Run) (*workload.Report, error) {
	f, err := run.OpenFile(rundir.TimelineReport)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return workload.ReadReport(f, rundir.TimelineReport)
}

// overheadOf is what the CUPTI library cost the program in the CUPTI
// run's own process, from that run's workload report as read.
func overheadOf(rep *workload.Report, err error) (model.Ratio, error) {
	if err != nil {
		return model.Ratio{}, err
	}
	o, ok := rep.Overhead()
	if !ok {
		return model.Ratio{}, errors.New("it has no in-process overhead: the program measures it with two repeats or more, recording and paused")
	}
	r, ok := model.PairedRatio(o.Recording, o.Paused)
	if !ok {
		return model.Ratio{}, errors.New("its in-process overhead is not pairs of times > 0")
	}
	return r, nil
}

// standIn records stage 1 as not run because the CUPTI run's workload
// report rep stands in for it, and adds that report's model to env.json.
func standIn(run *rundir.Run, rep *workload.Report) {
	r, _ := overheadOf(rep, nil)
	why := fmt.Sprintf("no separate plain run (workload.plain_run=auto): the CUPTI run's workload report (%s) stands in for stage 1's, recording having cost %.3fx against repeats with recording paused in that run's own process (at most %.2fx allowed; paused, the library's hooks still run, so this is the cost of recording); workload.plain_run=always makes one", rundir.TimelineReport, r.Median, 1+StandInOverhead)
	if a, ok := rep.Alone(); ok {
		why = fmt.Sprintf("no separate plain run (workload.plain_run=auto): the CUPTI run's workload report (%s) stands in for stage 1's, with the program's own speed from %d repeat(s) run in that process after the library detached CUPTI from it (the report's \"alone\": no profiler attached, no NVTX range); workload.plain_run=always makes one", rundir.TimelineReport, aloneRepeats(a))
	}
	run.Record(rundir.Stage1Log, rundir.StatusSkipped, why)
	run.Record(rundir.Stage1Report, rundir.StatusSkipped, "the CUPTI run's workload report stands in for it ("+rundir.TimelineReport+")")
	run.Note("stage 1: %s", why)
	addWorkloadToEnv(run, rep)
}

// aloneRepeats is how many repeats the program-alone figures hold (the
// most of any stage).
func aloneRepeats(a workload.AloneRepeats) int {
	n := 0
	for _, st := range a.Stages {
		n = max(n, len(st.MS))
	}
	return n
}

// skipPlainRun records stage 1 as not run: the CUPTI run's NVTX ranges
// give the program's stage times.
func skipPlainRun(run *rundir.Run, domain string) {
	why := fmt.Sprintf("no separate plain run (workload.plain_run=auto): the program wrote no workload report in the CUPTI run and marks its stages with NVTX ranges of nvtx.domain=%q, so that run's ranges give its stage times, the library's recording cost included; workload.plain_run=always makes one, for the whole program's wall time", domain)
	run.Record(rundir.Stage1Log, rundir.StatusSkipped, why)
	run.Record(rundir.Stage1Report, rundir.StatusSkipped, "the program wrote no workload report to $"+workload.EnvReport+" in the CUPTI run (optional: model facts for MFU, the operator table; the stages come from its NVTX ranges)")
	run.Note("stage 1: %s", why)
}
