package session

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/llm-perf-opt/deepprof/internal/machine"
	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/nsys"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
	"github.com/llm-perf-opt/deepprof/internal/workload"
)

// The timeline tools, as timeline.tool names them.
const (
	timelineAuto  = "auto"
	timelineNsys  = "nsys"
	timelineNcu   = "ncu"
	timelineCupti = "cupti"
)

// nsysRepeats is DEEPPROF_REPEATS under nsys: the timeline ranks kernels,
// and one run launches every kernel the workload uses; stage 1 measured the
// repeats. It also keeps the timeline's call counts those of one run, as
// the ncu timing pass's are.
const nsysRepeats = 1

// probeTimeout bounds `nsys --version`.
const probeTimeout = 30 * time.Second

// nsysFilterHint is noted when a deep pass filtered on nsys's names profiled
// nothing.
const nsysFilterHint = "the deep pass's kernel filter holds the function names of the nsys timeline (" + rundir.NsysKernSumBase +
	"); if ncu names these functions otherwise, the filter selects no kernel: timeline.tool=ncu takes the names from an ncu timing pass instead"

// timelineKind is how the session finds the top kernels: with nsys, or with an
// ncu timing pass.
type timelineKind struct {
	tool   string       // timelineNsys, timelineCupti or timelineNcu
	cupti  string       // tool cupti: the library, once built ("" before)
	nsys   machine.Tool // tool nsys: the nsys run
	why    string       // tool ncu: why not nsys, as the manifest says it
	report string       // tool nsys: the report, relative to MAIN (rundir.NsysReport until resolved)
	notRun string       // tool nsys: why its version was not read (Session.NsysNotRun)
}

// chooseTimeline decides, once, how the top kernels are found:
// timeline.tool=ncu is the ncu timing pass; nsys and auto look for nsys
// (Session.Nsys, nsys.path, else machine.Find) and run `nsys --version`, the
// version having to parse. Without a usable nsys, auto takes the CUPTI
// timeline when the library can be built, else the ncu timing pass, and
// says why in the manifest; nsys is an error that says what to do.
// timeline.tool=cupti, and any multi-GPU workload, needs the library. With
// NsysNotRun, the nsys of nsys.path is taken unread: a dry run's plan.
func (s *Session) chooseTimeline(ctx context.Context) (*timelineKind, error) {
	if s.tl != nil {
		return s.tl, nil
	}
	want := s.Cfg.Timeline.Tool
	if l := s.Cfg.Workload.Launcher; l.Multi() {
		// Under ncu's replay a collective's duration is how long its
		// rank waited for the other's profiler (fixtures/ncu/h200x2-*);
		// nsys is not usable on the machines measured. The CUPTI
		// library records every rank's plain run.
		if want != "auto" && want != timelineCupti {
			return nil, fmt.Errorf("timeline.tool=%s: a multi-GPU workload (workload.launcher.kind=%s) needs the CUPTI timeline (timeline.tool=cupti or auto): under ncu's replay a collective's time is how long a rank waited for another's profiler", want, l.Kind)
		}
		if err := s.cuptiUsable(); err != nil {
			return nil, fmt.Errorf("a multi-GPU workload (workload.launcher.kind=%s) needs the CUPTI timeline: %w. Next: set CUDA_HOME to a CUDA toolkit with CUPTI (include/cupti.h, lib64/libcupti.so) and have a C compiler (gcc, or $CC)", l.Kind, err)
		}
		s.tl = &timelineKind{tool: timelineCupti, why: fmt.Sprintf(" (%d ranks under %s: the CUPTI library in every rank)", l.Ranks(), l.Kind)}
		return s.tl, nil
	}
	if want == timelineNcu {
		s.tl = &timelineKind{tool: timelineNcu, why: " (timeline.tool=ncu)"}
		return s.tl, nil
	}
	if want == timelineCupti {
		if err := s.cuptiUsable(); err != nil {
			return nil, fmt.Errorf("timeline.tool=cupti: %w. Next: set CUDA_HOME to a CUDA toolkit with CUPTI (include/cupti.h, lib64/libcupti.so) and have a C compiler (gcc, or $CC), or run with timeline.tool=ncu", err)
		}
		s.tl = &timelineKind{tool: timelineCupti}
		return s.tl, nil
	}
	if p := s.Cfg.Nsys.Path; s.Nsys == "" && p != "" && s.NsysNotRun != "" {
		s.tl = &timelineKind{tool: timelineNsys, nsys: machine.Tool{Name: "nsys", Path: p}, report: rundir.NsysReport, notRun: s.NsysNotRun}
		return s.tl, nil
	}
	t, err := s.probeNsys(ctx)
	var nf *machine.NotFoundError
	switch {
	case err == nil:
		s.tl = &timelineKind{tool: timelineNsys, nsys: t, report: rundir.NsysReport}
	case want == timelineNsys:
		return nil, fmt.Errorf("timeline.tool=nsys: %w. Next: install Nsight Systems and set nsys.path, or run with timeline.tool=auto (an ncu timing pass when nsys is not usable) or timeline.tool=ncu", err)
	case errors.As(err, &nf):
		// Not the folders searched: they depend on the host.
		s.tl = s.notNsys("no nsys was found (PATH, $CUDA_HOME/bin, the usual Nsight Systems folders): set nsys.path to use one")
	default:
		s.tl = s.notNsys("no usable nsys: " + err.Error())
	}
	return s.tl, nil
}

// probeNsys finds nsys and reads its version through the Runner.
func (s *Session) probeNsys(ctx context.Context) (machine.Tool, error) {
	p := s.Nsys
	if p == "" {
		p = s.Cfg.Nsys.Path
	}
	if p == "" {
		env := machine.EnvFromOS()
		if s.ToolEnv != nil {
			env = *s.ToolEnv
		}
		t, err := machine.Find("nsys", env)
		if err != nil {
			return machine.Tool{}, err
		}
		p = t.Path
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	var out bytes.Buffer
	res, err := s.Runner.Run(ctx, Command{Argv: []string{p, "--version"}, Stdout: &out, Stderr: &out})
	switch {
	case err != nil:
		return machine.Tool{}, fmt.Errorf("%s --version: %w", p, err)
	case res.Interrupted || res.ExitCode != 0:
		return machine.Tool{}, fmt.Errorf("%s --version exited with status %d: %s", p, res.ExitCode, lastLines(out.Bytes(), 3))
	}
	v, err := machine.ParseNsysVersion(out.String())
	if err != nil {
		return machine.Tool{}, fmt.Errorf("%s: %w", p, err)
	}
	return machine.Tool{Name: "nsys", Path: p, Version: v}, nil
}

// capture is the `nsys profile` of the timeline, and what the plan says of
// its range.
func (s *Session) capture(mainDir string) (nsys.Capture, []string, error) {
	c := nsys.Capture{Output: filepath.Join(mainDir, rundir.NsysOut), Trace: s.Cfg.Nsys.Trace, Force: true,
		Program: s.Cfg.Workload.Command(), Extra: s.Cfg.Nsys.ExtraArgs}
	switch cr := s.Cfg.Nsys.CaptureRange; cr {
	case "", "none":
		return c, []string{"nsys records the whole run (nsys.capture_range is \"\"): its kernel totals include the launches outside the NVTX ranges of nvtx.include, to which the deep pass is gated"}, nil
	case "nvtx":
		inc := s.Cfg.NVTX.Include
		if len(inc) != 1 {
			return c, nil, fmt.Errorf("nsys.capture_range=nvtx opens the capture on one NVTX range, and nvtx.include has %d (%s): keep one range in nvtx.include, or set nsys.capture_range=\"\" to record the whole run",
				len(inc), strings.Join(inc, ", "))
		}
		levels, err := model.Configured(inc[0], s.Cfg.NVTX.Domain)
		if err != nil {
			return c, nil, fmt.Errorf("nvtx.include: %w", err)
		}
		spec, err := nsys.CaptureRange(levels[0])
		if err != nil {
			return c, nil, fmt.Errorf("nsys.capture_range=nvtx opens the capture on nvtx.include's first range: %w", err)
		}
		c.CaptureRange, c.NVTXCapture = "nvtx", spec
		d := []string{fmt.Sprintf("nsys records from the first start of NVTX range %s to its end (--capture-range=nvtx --capture-range-end=stop; %s so that range names pushed as plain strings match)",
			c.NVTXCapture, nsys.RegisterOnlyEnv)}
		if len(levels) > 1 {
			d = append(d, fmt.Sprintf("nsys cannot open a capture on a nested range path: it records all of %s, not only %s", levels[0], inc[0]))
		}
		return c, d, nil
	default:
		return c, nil, fmt.Errorf("nsys.capture_range=%q: the session records the whole run (\"\") or one NVTX range (nvtx)", cr)
	}
}

// nsysSteps are the timeline's steps with nsys: profile, export the report
// as SQLite (first, so that nsys stats reads it rather than making its own),
// then the stats, once as nsys names kernels and once over base names.
func (s *Session) nsysSteps(mainDir string, tl *timelineKind) ([]Step, error) {
	spec := s.spec()
	repeats := spec.Repeats
	spec.Repeats = nsysRepeats
	env, err := spec.Environ(workload.PhaseNsys, "")
	if err != nil {
		return nil, err
	}
	c, details, err := s.capture(mainDir)
	if err != nil {
		return nil, err
	}
	args, err := c.Args()
	if err != nil {
		return nil, fmt.Errorf("nsys profile: %w", err)
	}
	env = append(env, c.Env()...)
	details = append(details, fmt.Sprintf("the workload runs once under nsys (%s=%d, not workload.repeats=%d): the timeline ranks kernels, and stage 1 measured the repeats",
		workload.EnvRepeats, nsysRepeats, repeats))
	if s.Cfg.Timeline.Tool == timelineAuto {
		details = append(details, "if nsys writes no report (the nsys bundled with Nsight Compute leaves a .qdstrm and nothing else) or its kernel summary cannot be read, the timeline is an ncu timing pass instead (timeline.tool=auto)")
	}
	note := fmt.Sprintf("timeline: nsys %s, every kernel launch timed", tl.nsys.Version)
	if tl.notRun != "" {
		note = "timeline: nsys, every kernel launch timed, if it prints its version"
		details = append([]string{fmt.Sprintf("%s --version not run: %s", tl.nsys.Path, tl.notRun)}, details...)
	}
	n := tl.nsys.Path
	rep := filepath.Join(mainDir, tl.report)
	return []Step{
		{ID: StepNsysProfile, Argv: append([]string{n}, args...), Env: env, Log: rundir.NsysProfileLog,
			Note: note, Details: details},
		{ID: StepNsysExportSQLite, Argv: append([]string{n}, nsys.ExportSQLiteArgs(rep, filepath.Join(mainDir, rundir.NsysSQLite))...), Log: rundir.NsysExportLog},
		{ID: StepNsysStats, Argv: append([]string{n}, nsys.StatsArgs(rep, nil, filepath.Join(mainDir, rundir.NsysOut))...), Log: rundir.NsysStatsLog,
			Note: "the kernel and NVTX range summaries as CSV: MAIN/" + rundir.NsysKernSum + ", MAIN/" + rundir.NsysNVTXSum},
		{ID: StepNsysStatsBase, Argv: append([]string{n}, nsys.StatsArgs(rep, []string{nsys.ReportKernSumBase}, filepath.Join(mainDir, rundir.NsysBaseOut))...), Log: rundir.NsysStatsBaseLog,
			Note:    "the kernel summary again, over base (function) names: the deep pass's kernel filter matches those names",
			Details: []string{"kept as MAIN/" + rundir.NsysKernSumBase + "; when nsys gives none, the function names are derived from the demangled ones (nsys.FunctionName)"}},
	}, nil
}

// stepsByID plans the session as it stands.
func (s *Session) stepsByID(mainDir string) (map[StepID]Step, error) {
	steps, err := s.Plan(mainDir, nil)
	if err != nil {
		return nil, err
	}
	return index(steps), nil
}

// runTimeline finds the deep pass's kernel functions: with nsys when it was
// chosen, else (or when nsys made no timeline and timeline.tool is auto)
// with the ncu timing pass.
func (s *Session) runTimeline(ctx context.Context, run *rundir.Run) ([]string, error) {
	if s.tl.tool == timelineCupti {
		top, err := s.cuptiTimeline(ctx, run)
		switch {
		case err == nil:
			return top, nil
		case isStopped(err) || ctx.Err() != nil || s.Cfg.Timeline.Tool == timelineCupti:
			return nil, err
		case s.Cfg.Workload.Launcher.Multi():
			// No ncu timing pass for ranks: it would replay collectives
			// (see chooseTimeline).
			return nil, fmt.Errorf("a multi-GPU workload needs the CUPTI timeline: %w", err)
		case errors.Is(err, errCuptiBuild):
			s.logf("no CUPTI timeline (%v); running the ncu timing pass instead", err)
			s.tl = &timelineKind{tool: timelineNcu, why: "; the CUPTI library could not be built: " + err.Error()}
			return s.ncuTimeline(ctx, run)
		}
		return nil, err
	}
	if s.tl.tool == timelineNsys {
		top, err := s.nsysTimeline(ctx, run)
		switch {
		case err == nil:
			return top, nil
		case isStopped(err) || ctx.Err() != nil:
			return nil, err
		case s.Cfg.Timeline.Tool == timelineNsys:
			return nil, fmt.Errorf("timeline.tool=nsys: %w. Next: use a standalone Nsight Systems (developer.nvidia.com/nsight-systems; set nsys.path), or run with timeline.tool=auto or timeline.tool=ncu (an ncu timing pass)", err)
		}
		s.tl = s.notNsys(fmt.Sprintf("nsys %s (%s) made no timeline: %v", s.tl.nsys.Version, s.tl.nsys.Path, err))
		s.logf("nsys made no timeline (%v); the timeline is %s instead", err, s.tl.tool)
		if s.tl.tool == timelineCupti {
			return s.runTimeline(ctx, run)
		}
	}
	return s.ncuTimeline(ctx, run)
}

// ncuTimeline runs the ncu timing pass and picks the top kernels from it.
func (s *Session) ncuTimeline(ctx context.Context, run *rundir.Run) ([]string, error) {
	byID, err := s.stepsByID(run.Dir)
	if err != nil {
		return nil, err
	}
	run.Note("timeline: an ncu timing pass (%s, same NVTX gating) found the top kernels%s", timingMetric, s.tl.why)
	if err := s.profile(ctx, run, byID[StepNcuTiming]); err != nil {
		if !isStopped(err) && ctx.Err() == nil && s.nothingMatched(run) {
			s.discover(ctx, run)
		}
		return nil, fmt.Errorf("timing pass: %w", err)
	}
	if err := s.step(ctx, run, byID[StepExportTimingRaw], false); err != nil {
		return nil, fmt.Errorf("timing export: %w", err)
	}
	return s.topKernels(run)
}

// nsysTimeline runs nsys and picks the deep pass's kernel functions from
// its summary over base names. An error that is not an interruption means
// nsys made no usable timeline (no report, no readable kernel summary); what
// it did make is kept and in the manifest.
func (s *Session) nsysTimeline(ctx context.Context, run *rundir.Run) ([]string, error) {
	tl := s.tl
	if err := rundir.MkdirIn(run.Dir, run.Path(rundir.NsysDir)); err != nil {
		return nil, err
	}
	byID, err := s.stepsByID(run.Dir)
	if err != nil {
		return nil, err
	}
	perr := s.step(ctx, run, byID[StepNsysProfile], false)
	// Paths relative to MAIN, as the manifest writes them.
	rep, rerr := nsys.ResolveReportAs(run.Path(rundir.NsysDir), rundir.NsysDir, path.Base(rundir.NsysOut))
	if rerr != nil {
		if nr := (*nsys.NoReportError)(nil); errors.As(rerr, &nr) {
			rerr = errors.New(nr.Why()) // the messages around it say there is no report
		}
		if stream := rundir.NsysStream; run.Exists(stream) {
			run.Record(stream, rundir.StatusPartial, "the raw data nsys collected and did not turn into a report; it can be large")
		}
		if isStopped(perr) {
			run.Record(rundir.NsysReport, rundir.StatusMissing, "nsys was stopped before it wrote its report")
			return nil, perr
		}
		run.Record(rundir.NsysReport, rundir.StatusMissing, rerr.Error())
		if perr != nil {
			return nil, fmt.Errorf("nsys profile: %w; %w", perr, rerr)
		}
		return nil, fmt.Errorf("nsys profile exited with status 0 and wrote no report (see %s): %w", rundir.NsysProfileLog, rerr)
	}
	tl.report = path.Join(rundir.NsysDir, filepath.Base(rep))
	switch {
	case isStopped(perr):
		run.Record(tl.report, rundir.StatusPartial, "written when nsys was stopped")
		return nil, perr
	case perr != nil:
		run.Record(tl.report, rundir.StatusPartial, fmt.Sprintf("nsys profile failed (%v); the report holds what it recorded", perr))
		run.Note("nsys-profile: %v; its report is kept and read (see %s)", perr, rundir.NsysProfileLog)
	default:
		run.Record(tl.report, rundir.StatusComplete, "")
	}
	if byID, err = s.stepsByID(run.Dir); err != nil { // with the report found
		return nil, err
	}

	eerr := s.step(ctx, run, byID[StepNsysExportSQLite], false)
	if isStopped(eerr) {
		return nil, eerr
	}
	recordOutput(run, rundir.NsysSQLite, eerr, "nsys export wrote no file (see "+rundir.NsysExportLog+")")

	serr := s.step(ctx, run, byID[StepNsysStats], false)
	if isStopped(serr) {
		return nil, serr
	}
	why := "nsys stats wrote no file (see " + rundir.NsysStatsLog + ")"
	recordOutput(run, rundir.NsysKernSum, serr, why)
	recordOutput(run, rundir.NsysNVTXSum, serr, why)
	if run.Exists(rundir.NsysNVTXSum) {
		if _, err := rundir.ReadStats(run, rundir.NsysNVTXSum, nsys.ReadRangeSums); err != nil {
			run.Record(rundir.NsysNVTXSum, rundir.StatusPartial, err.Error())
		}
	}
	if !run.Exists(rundir.NsysKernSum) {
		return nil, fmt.Errorf("no kernel summary (%s): %s", rundir.NsysKernSum, reasonOf(run, rundir.NsysKernSum))
	}
	sums, err := rundir.ReadStats(run, rundir.NsysKernSum, nsys.ReadKernelSums)
	if err != nil {
		// Set aside: Rebuild then takes kernels.md from the ncu timing pass.
		run.Record(rundir.NsysKernSum, rundir.StatusPartial, "not read: "+err.Error())
		return nil, fmt.Errorf("nsys kernel summary: %w", err)
	}
	if _, d, err := s.capture(run.Dir); err == nil {
		run.Note("timeline: nsys %s (%s) timed every kernel launch; %s", tl.nsys.Version, tl.nsys.Path, d[0])
	}
	return s.nsysTop(ctx, run, byID[StepNsysStatsBase], sums)
}

// nsysTop runs the kernel summary over base names and returns the top
// kernel functions by total time, under the coverage rule of the timing
// pass. Without nsys's base names, they are derived from the demangled names
// of sums.
func (s *Session) nsysTop(ctx context.Context, run *rundir.Run, st Step, sums []nsys.KernelSum) ([]string, error) {
	berr := s.step(ctx, run, st, false)
	if isStopped(berr) {
		return nil, berr
	}
	var base []nsys.KernelSum
	var why string
	found, _ := filepath.Glob(run.Path(rundir.NsysBaseOut) + "_" + model.NsysReportKernSum + "*.csv")
	switch {
	case berr != nil:
		why = berr.Error()
	case len(found) == 0:
		why = "nsys stats wrote no file (see " + rundir.NsysStatsBaseLog + ")"
	case len(found) > 1:
		why = fmt.Sprintf("nsys stats wrote %d files, not one", len(found))
	default:
		if err := os.Rename(found[0], run.Path(rundir.NsysKernSumBase)); err != nil {
			return nil, err
		}
		b, err := rundir.ReadStats(run, rundir.NsysKernSumBase, nsys.ReadKernelSums)
		if err != nil {
			why = "not read: " + err.Error()
			run.Record(rundir.NsysKernSumBase, rundir.StatusPartial, why)
			break
		}
		run.Record(rundir.NsysKernSumBase, rundir.StatusComplete, "")
		base = b
	}
	src := rundir.NsysKernSumBase
	if base == nil {
		if !run.Exists(rundir.NsysKernSumBase) {
			run.Record(rundir.NsysKernSumBase, rundir.StatusMissing, why)
		}
		run.Note("deep-pass kernels: nsys gave no kernel summary over base names (%s: %s); the function names were derived from the demangled names of %s, as ncu --kernel-name-base function writes them",
			nsys.ReportKernSumBase, why, rundir.NsysKernSum)
		for _, k := range sums {
			k.Name = model.FunctionName(k.Name)
			base = append(base, k)
		}
		src = rundir.NsysKernSum
	}
	tab := s.cover(run, nsys.Table(base, src), "kernel functions ("+src+") ")
	names := make([]string, len(tab.Kernels))
	for i, k := range tab.Kernels {
		names[i] = k.Name
	}
	return names, nil
}

// recordOutput records a file a step should have written: complete when it
// is there, else missing with the step's error or why.
func recordOutput(run *rundir.Run, rel string, stepErr error, why string) {
	switch {
	case run.Exists(rel):
		run.Record(rel, rundir.StatusComplete, "")
	case stepErr != nil:
		run.Record(rel, rundir.StatusMissing, stepErr.Error())
	default:
		run.Record(rel, rundir.StatusMissing, why)
	}
}

// reasonOf is the manifest's reason for rel.
func reasonOf(run *rundir.Run, rel string) string {
	a, _ := run.Manifest().Find(rel)
	return a.Reason
}
