package session

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/llm-perf-opt/deepprof/internal/config"
	"github.com/llm-perf-opt/deepprof/internal/input"
	"github.com/llm-perf-opt/deepprof/internal/kernels"
	"github.com/llm-perf-opt/deepprof/internal/machine"
	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/ncu"
	"github.com/llm-perf-opt/deepprof/internal/phases"
	"github.com/llm-perf-opt/deepprof/internal/rebuild"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
	"github.com/llm-perf-opt/deepprof/internal/timeline"
	"github.com/llm-perf-opt/deepprof/internal/workload"
)

// Session is one Stage 2 profiling session.
type Session struct {
	Cfg *config.Config
	// autoRanges is the folder of deepprof's sitecustomize while the
	// session runs (workload.auto_ranges); "" when off.
	autoRanges string
	// ConfigYAML is what config.yaml holds: the fully resolved configuration.
	ConfigYAML []byte
	Runner     Runner
	Ncu        string // path of ncu
	// Nsys is the path of nsys; "" lets the session look for it (nsys.path,
	// else machine.Find on ToolEnv) when timeline.tool is auto or nsys. Found,
	// it is run with --version: an nsys whose version does not parse is not
	// used.
	Nsys string
	// ToolEnv is where the session looks for nsys; nil: this process's PATH
	// and CUDA_HOME, then the usual install folders.
	ToolEnv *machine.Env
	// NsysNotRun, when set, is why the nsys of nsys.path is not run for its
	// version (a dry run runs no program a profile file names by its
	// path): the plan shows the steps the session runs with it if it
	// prints one.
	NsysNotRun string
	// Env returns env.json's content; nil writes env.json as skipped.
	Env func() ([]byte, error)
	// Report makes the run's derived files, the session's last step; nil:
	// rebuild.Run (the pipeline of deepprof report MAIN), given the CUPTI
	// timeline the session read.
	Report func(run *rundir.Run, cfg *config.Config) error
	// Now is the clock; Log gets one line per step (nil: quiet).
	Now func() time.Time
	Log io.Writer
	// Progress gets a status line while ncu profiles, fed from ncu's own
	// output (nil: quiet). With ProgressLive (a terminal) the line rewrites
	// itself with "\r" at most four times a second; without (CI, pipes) only
	// one summary line per pass is written, "ncu-deep: 412 launches
	// profiled in 12.3s".
	Progress     io.Writer
	ProgressLive bool

	// CUPTI is where the CUPTI library's toolkit and compiler are looked
	// for; nil: $CUDA_HOME (else /usr/local/cuda) and $CC (else gcc, cc).
	CUPTI *Options

	tl *timelineKind // how the top kernels are found; see chooseTimeline
	// topProcesses are the CUDA processes of the CUPTI timeline that
	// launched the top kernels (a program and its children): the deep
	// pass's launch count is shared by all of them (see plan).
	topProcesses phases.TopProcesses
	// targets is the deep pass planned from a CUPTI timeline by exact
	// kernel names (nil: by kernel functions, as from the other timelines).
	targets *deepTargets
	// sameRanks says the CUPTI timeline shows every rank of a multi-GPU
	// workload launching the same top kernels in the same launch
	// configurations (timeline.SameTopLaunches); rankProcs is how many
	// processes launched them.
	sameRanks bool
	rankProcs int
	// began is when Run started, stepsDone the steps run since: what a
	// step's end line says of the session's progress.
	began     time.Time
	stepsDone atomic.Int64
	// logMu keeps the log's lines whole when steps run at once (the
	// exports).
	logMu sync.Mutex
	// read is the CUPTI timeline of the run read last (recordsOf): the
	// records do not change once the CUPTI run has written them.
	read struct {
		dir   string
		files []string
		tl    *timeline.Timeline
		// inferred are the launches inside the phases inferred from tl's
		// kernel stream (inferredOf), found once.
		inferred     phases.Inferred
		inferredDone bool
	}
	// traced waits for the trace of read.tl that rebuild.StartTrace began
	// as the deep pass started (nil: none began).
	traced func() error
}

// Step is one program the session runs, as the dry run prints it.
type Step struct {
	ID StepID
	// Variant tells a second attempt from the first: "kernel replay" for a
	// deep pass that ran again after range replay was refused. It is part
	// of the name (Name).
	Variant string
	Argv    []string
	Env     []string
	Stdout  string // file (relative to MAIN) that receives stdout; "" for the log
	Log     string // file (relative to MAIN) that receives stdout and stderr
	// AppendLog adds this step's output to what earlier runs wrote to Log
	// (the runs of stage 1 of a command, one after another).
	AppendLog bool
	Note      string
	// Details are further notes of the plan: decisions a reader of the dry
	// run should know about.
	Details []string
	// Deadline bounds the step (see Session.deadline).
	Deadline Deadline
	// StopAfter, for a pass of ncu, is the number of profiled launches
	// after which the program is stopped (0: it runs to its end): ncu
	// then writes its report of them (Session.step).
	StopAfter int
	// NcuKills says that ncu itself ends the program once StopAfter
	// launches are profiled (--launch-count with --kill): the session
	// stops it only if it has not ended killGrace after the last one.
	NcuKills bool
}

// killGrace is how long a step whose ncu ends the program itself
// (Step.NcuKills) may run on after the planned launches are profiled.
var killGrace = 10 * time.Second

// Name is the step's name in the dry run, the log and the manifest: its ID,
// and its variant in parentheses.
func (st Step) Name() string {
	if st.Variant != "" {
		return fmt.Sprintf("%s (%s)", st.ID, st.Variant)
	}
	return string(st.ID)
}

const timingMetric = model.DurationMetric

// includes turns the configured NVTX range paths (nvtx.include or
// nvtx.exclude) into ncu filter expressions: ncu.Include, levels written
// without a domain being in nvtx.domain. A path ncu cannot take (levels of
// two domains, an empty level) is an error naming its key; plan checks them
// before any step is made.
func includes(cfg *config.Config, key string, paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		e, err := ncu.Include(p, cfg.NVTX.Domain)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		out = append(out, e)
	}
	return out, nil
}

// checkIncludes reports the first configured range path that includes
// refuses.
func checkIncludes(cfg *config.Config) error {
	if _, err := includes(cfg, "nvtx.include", cfg.NVTX.Include); err != nil {
		return err
	}
	_, err := includes(cfg, "nvtx.exclude", cfg.NVTX.Exclude)
	return err
}

func (s *Session) spec() workload.Spec {
	repeats := s.Cfg.Workload.Repeats
	if s.Cfg.Workload.RepeatBy == config.RepeatByProcess {
		repeats = 1 // the session repeats the process (stage1)
	}
	return workload.Spec{
		Argv: s.Cfg.Workload.Launched(s.Cfg.Workload.Command()), Env: s.Cfg.Workload.Env, Inputs: s.Cfg.Workload.Inputs,
		Repeats: repeats, Visible: visibleRanks(s.Cfg.Device, s.Cfg.Workload.Launcher.Ranks()), NVTXDomain: s.Cfg.NVTX.Domain,
		Model: modelMap(s.Cfg.Model),
	}
}

// stage1 is the plain run. A workload that repeats itself
// (workload.repeat_by=env) runs once; a program run as a whole process
// (repeat_by=process) runs workload.repeats times, one after another, its
// output in one log, each run's wall time from start to exit in
// stage1/runs.json. The first run that fails ends it: the runs before it
// are kept.
func (s *Session) stage1(ctx context.Context, run *rundir.Run, st Step) error {
	if s.Cfg.Workload.RepeatBy != config.RepeatByProcess {
		return s.step(ctx, run, st, false)
	}
	n := max(s.Cfg.Workload.Repeats, 1)
	var runs workload.Runs
	clock := s.now()
	var err error
	for i := 1; i <= n && err == nil; i++ {
		one := st
		if n > 1 {
			one.Variant, one.AppendLog = fmt.Sprintf("run %d of %d", i, n), i > 1
		}
		start := clock()
		if err = s.step(ctx, run, one, false); err == nil {
			runs.Runs = append(runs.Runs, workload.Run{WallMS: float64(clock().Sub(start).Microseconds()) / 1e3})
		}
	}
	if len(runs.Runs) > 0 {
		b, jerr := runs.JSON()
		if jerr == nil {
			jerr = run.Write(rundir.Stage1Runs, b)
		}
		if jerr != nil {
			return errors.Join(err, jerr)
		}
		if err != nil {
			run.Record(rundir.Stage1Runs, rundir.StatusPartial, fmt.Sprintf("%d of %d runs: run %d failed", len(runs.Runs), n, len(runs.Runs)+1))
		}
	}
	return err
}

// ncuRepeats is DEEPPROF_REPEATS under ncu: the workload does the minimum.
// ncu replays each launch as many times as its metrics need, so more
// repeats only multiply profiling time (three repeats, three times the
// time) and the number of launches to filter.
const ncuRepeats = 1

// Replay modes of the deep pass.
const (
	replayKernel   = "kernel"
	replayRange    = "range"
	replayAppRange = "app-range"
)

// rangeReplay reports whether mode replays whole NVTX ranges, which ncu
// may refuse (then the deep pass falls back to kernel replay).
func rangeReplay(mode string) bool { return mode == replayRange || mode == replayAppRange }

// deepRangeLog keeps the log of a deep pass whose range replay ncu refused,
// beside the kernel-replay rerun's ncu/deep.log.
const deepRangeLog = rundir.NcuDeepRangeLog

// visible is CUDA_VISIBLE_DEVICES for a device spec: "cuda:1" -> "1"; a
// UUID passes through.
func visible(device string) string {
	if rest, ok := strings.CutPrefix(device, "cuda:"); ok {
		return rest
	}
	if device == "cuda" {
		return "0"
	}
	return device
}

// visibleRanks is CUDA_VISIBLE_DEVICES for n ranks from device on: "cuda:2"
// with 2 ranks -> "2,3" (one GPU each; the launcher's ranks pick theirs by
// LOCAL_RANK). One rank is visible's.
func visibleRanks(device string, n int) string {
	first, err := strconv.Atoi(strings.TrimPrefix(device, "cuda:"))
	if n <= 1 || err != nil {
		return visible(device)
	}
	ids := make([]string, n)
	for i := range ids {
		ids[i] = strconv.Itoa(first + i)
	}
	return strings.Join(ids, ",")
}

// Devices is the GPUs a session of cfg runs on, for env.json: device's,
// or with a launcher the ranks' (CUDA_VISIBLE_DEVICES as the session sets
// it).
func Devices(cfg *config.Config) (machine.Selection, error) {
	if cfg.Workload.Launcher.Multi() {
		return machine.ParseVisible(visibleRanks(cfg.Device, cfg.Workload.Launcher.Ranks()))
	}
	return machine.ParseDevice(cfg.Device)
}

// modelMap is $DEEPPROF_MODEL: the profile's model section as it is
// written in config.yaml, {"name", "arch", "dtype", "options": {...}}.
func modelMap(m config.Model) map[string]any {
	out := map[string]any{"options": m.Options}
	for k, v := range map[string]string{"name": m.Name, "arch": m.Arch, "dtype": m.Dtype} {
		if v != "" {
			out[k] = v
		}
	}
	return out
}

func (s *Session) pass(out, replay string, metrics []string, set string, sections []string, regex string, count int) ncu.Pass {
	c := s.Cfg.NCU
	// plan refused a configured path these cannot turn into a filter
	// (checkIncludes).
	inc, _ := includes(s.Cfg, "nvtx.include", s.Cfg.NVTX.Include)
	exc, _ := includes(s.Cfg, "nvtx.exclude", s.Cfg.NVTX.Exclude)
	p := ncu.Pass{
		Output: out, TargetProcesses: c.TargetProcesses, NVTX: true,
		Includes: inc, Excludes: exc,
		Set: set, Sections: sections, Metrics: metrics, ReplayMode: replay,
		LaunchSkip: c.LaunchSkip, LaunchCount: count, Force: true, Extra: c.ExtraArgs,
		Program: s.Cfg.Workload.Command(),
	}
	// Range and app-range replay profile whole ranges: a kernel filter has no
	// meaning there, and ncu refuses --filter-mode per-launch-config with
	// them. The kernel-replay fallback gets the filter.
	if regex != "" && replay != "range" && replay != "app-range" {
		// Sample each top kernel: the launch count applies to every launch
		// configuration of every matching kernel, not to all of them
		// together (which took the first launches, all in prefill, on an
		// H200).
		// Mangled names, matched by function (see topKernels and
		// ncu.MangledFunctionRegex): each template instantiation is then a
		// kernel of its own for the per-launch-config sampling.
		p.KernelNameBase, p.KernelRegex, p.FilterMode = "mangled", regex, "per-launch-config"
	}
	return p
}

// Plan returns every step in order. The deep pass's kernel filter comes
// from the timeline (nsys, or the ncu timing pass); before it has run,
// topKernels is nil and the plan says so. Which timeline runs is decided
// once, the first time it is needed (see chooseTimeline: that may run
// nsys --version).
func (s *Session) Plan(mainDir string, topKernels []string) ([]Step, error) {
	return s.plan(mainDir, topKernels, s.Cfg.NCU.ReplayMode)
}

// plan is Plan with the deep pass's replay mode given.
func (s *Session) plan(mainDir string, topKernels []string, deepReplay string) ([]Step, error) {
	if err := checkIncludes(s.Cfg); err != nil {
		return nil, err
	}
	spec := s.spec()
	stage1Env, err := spec.Environ(workload.PhaseStage1, filepath.Join(mainDir, rundir.Stage1Report))
	if err != nil {
		return nil, err
	}
	ncuSpec := spec
	ncuSpec.Repeats = ncuRepeats
	ncuEnv, err := ncuSpec.Environ(workload.PhaseNcu, "")
	if err != nil {
		return nil, err
	}
	once := fmt.Sprintf("the workload runs once under ncu (%s=%d, not workload.repeats=%d): ncu replays each launch itself, so repeats would only multiply profiling time",
		workload.EnvRepeats, ncuRepeats, spec.Repeats)
	onceAgain := fmt.Sprintf("the workload runs once, as in the timing pass (%s=%d)", workload.EnvRepeats, ncuRepeats)
	steps := []Step{
		{ID: StepNcuSections, Argv: append([]string{s.Ncu}, ncu.ListSectionsArgs()...), Stdout: rundir.NcuSections},
	}
	stage1 := Step{ID: StepStage1, Argv: spec.Argv, Env: stage1Env, Log: rundir.Stage1Log}
	if s.Cfg.Workload.RepeatBy == config.RepeatByProcess {
		stage1.Note = fmt.Sprintf("the program runs %d time(s), one after another, each timed from start to exit (%s; workload.repeats)",
			s.Cfg.Workload.Repeats, rundir.Stage1Runs)
	}
	tl, err := s.chooseTimeline(context.Background())
	if err != nil {
		return nil, err
	}
	deferred := s.plainRunDeferred(tl)
	if deferred {
		stage1.Note = fmt.Sprintf("after the CUPTI run, and only if that run shows the program writes a workload report with no repeats timed after the library detached and a library cost over 5%% or unmeasured, or marks no NVTX range of nvtx.domain=%q: otherwise that run's report or ranges give the stage times, and no separate plain run is made (workload.plain_run=auto; always runs it first)", s.Cfg.NVTX.Domain)
	} else {
		steps = append(steps, stage1)
	}
	switch tl.tool {
	case timelineNsys:
		nsteps, err := s.nsysSteps(mainDir, tl)
		if err != nil {
			return nil, err
		}
		steps = append(steps, nsteps...)
		onceAgain = once
	case timelineCupti:
		csteps, err := s.cuptiSteps(mainDir, tl)
		if err != nil {
			return nil, err
		}
		steps = append(steps, csteps...)
		if deferred {
			steps = append(steps, stage1)
		}
		onceAgain = once
	default:
		tsteps, err := s.ncuTimingSteps(mainDir, once, ncuEnv)
		if err != nil {
			return nil, err
		}
		steps = append(steps, tsteps...)
	}
	c := s.Cfg.NCU
	regex, count, note, targets := s.deepFilter(topKernels, tl, deepReplay)
	deep := s.pass(filepath.Join(mainDir, "ncu", "deep"), deepReplay, c.Metrics, c.Set, c.Sections, regex, count)
	if targets != nil && targets.invocation > 0 {
		id, err := ncu.KernelInvocation(targets.mangled, targets.invocation)
		if err != nil {
			return nil, fmt.Errorf("deep pass: %w", err)
		}
		// ncu counts invocations over every launch, and the one profiled
		// ran in a launch configuration the kernel ran in the nvtx.include
		// ranges (planTargets), if not inside them (a warmup's).
		deep.KernelRegex, deep.FilterMode, deep.KernelID, deep.Includes = "", "", id, nil
		// Each target matches one launch: ncu's own count and --kill end
		// the program once they are profiled.
		deep.LaunchCount, deep.Kill = targets.launches, true
	}
	dargs, err := deep.Args()
	if err != nil {
		return nil, fmt.Errorf("deep pass: %w", err)
	}
	deepDetails := []string{s.deepPassWhen(), onceAgain}
	if s.Cfg.Workload.Launcher.Multi() {
		rsteps, err := s.rankSteps(mainDir, deep, ncuEnv, note, deepDetails, topKernels != nil)
		if err != nil {
			return nil, err
		}
		return s.withDeadlines(append(steps, rsteps...)), nil
	}
	if rangeReplay(deepReplay) {
		deepDetails = append(deepDetails, fmt.Sprintf("if ncu refuses %s replay (an API range capture does not support, or kernels that differ between application passes), the deep pass runs once more with kernel replay, per-region numbers coming from the NVTX stack column; the refused attempt's log is kept as MAIN/%s",
			deepReplay, deepRangeLog))
	}
	stopAfter := 0
	if targets != nil {
		stopAfter = targets.launches
	}
	steps = append(steps,
		Step{ID: StepNcuDeep, Argv: append([]string{s.Ncu}, dargs...), Env: ncuEnv, Log: rundir.NcuDeepLog, Note: note, Details: deepDetails, StopAfter: stopAfter, NcuKills: deep.Kill},
		Step{ID: StepExportRaw, Argv: append([]string{s.Ncu}, ncu.ExportArgs(filepath.Join(mainDir, rundir.NcuDeepReport), "raw", "")...), Stdout: rundir.NcuRaw},
		Step{ID: StepExportDetails, Argv: append([]string{s.Ncu}, ncu.ExportArgs(filepath.Join(mainDir, rundir.NcuDeepReport), "details", "")...), Stdout: rundir.NcuDetails},
	)
	return s.withDeadlines(steps), nil
}

// ncuTimingSteps are the steps of the ncu timing pass, the timeline where
// neither nsys nor CUPTI gives one: kernel replay whatever the deep pass
// replays (it needs each launch's duration), with timeline.ncu_clock_control
// and ncu_cache_control, then its raw export.
func (s *Session) ncuTimingSteps(mainDir, once string, ncuEnv []string) ([]Step, error) {
	timing := s.pass(filepath.Join(mainDir, "ncu", "timing"), replayKernel, []string{timingMetric}, "", nil, "", 0)
	timing.ClockControl, timing.CacheControl = s.Cfg.Timeline.NCUClockControl, s.Cfg.Timeline.NCUCacheControl
	targs, err := timing.Args()
	if err != nil {
		return nil, fmt.Errorf("timing pass: %w", err)
	}
	timingDetails := []string{once, fmt.Sprintf("its kernel times: %s. Chosen by timeline.ncu_clock_control=%s and timeline.ncu_cache_control=%s; none and none measure closest to the plain run",
		timing.ControlNote(), s.Cfg.Timeline.NCUClockControl, s.Cfg.Timeline.NCUCacheControl)}
	if rangeReplay(s.Cfg.NCU.ReplayMode) {
		timingDetails = append(timingDetails, "kernel replay whatever ncu.replay_mode says: the timing pass needs each launch's duration")
	}
	if s.tl != nil && s.tl.why != "" {
		timingDetails = append([]string{"this timeline, not nsys's or the CUPTI library's" + s.tl.why}, timingDetails...)
	}
	return []Step{
		{ID: StepNcuTiming, Argv: append([]string{s.Ncu}, targs...), Env: ncuEnv, Log: rundir.NcuTimingLog,
			Note: "timeline: an ncu timing pass (" + timingMetric + ", same NVTX gating)", Details: timingDetails},
		{ID: StepExportTimingRaw, Argv: append([]string{s.Ncu}, ncu.ExportArgs(filepath.Join(mainDir, rundir.NcuTimingReport), "raw", "")...), Stdout: rundir.NcuTimingRaw},
	}, nil
}

// deepFilter is the deep pass's kernel filter, launch count and note: the
// exact targets where they are known, else the top kernels' functions
// (the count making room for each process's share), else a note of what
// the filter will be once the timeline has run. targets is nil unless the
// targets are exact.
func (s *Session) deepFilter(topKernels []string, tl *timelineKind, deepReplay string) (regex string, count int, note string, targets *deepTargets) {
	c := s.Cfg.NCU
	// ncu counts --launch-count over every process it follows: the first
	// process would take them all (docs/measurements.md, "Profile any
	// program"), so the count makes room for each process's share. A
	// multi-GPU workload's deep pass is one ncu per rank.
	top := s.topProcesses
	if s.Cfg.Workload.Launcher.Multi() {
		top = phases.TopProcesses{}
	}
	regex, count, note = "", deepLaunchCount(c, len(topKernels) > 0, top), "deep pass over every launch in the NVTX ranges"
	targets = s.targets
	if len(topKernels) == 0 || !s.exactTargets() {
		targets = nil
	}
	if targets != nil {
		regex, count, note = ncu.KernelRegex(targets.mangled), targets.perLaunch, targets.note()
	} else if len(topKernels) > 0 {
		regex = ncu.MangledFunctionRegex(topKernels)
		note = fmt.Sprintf("deep pass on the %d kernel functions of the top kernels, %d launch(es) of each launch configuration of each", len(topKernels), count)
		if n := len(top.Processes); n > 1 && c.LaunchCount == 0 {
			note = fmt.Sprintf("deep pass on the %d kernel functions of the top kernels, %d launch(es) of each launch configuration of each over the %d processes that launched them (ncu counts launches over every process it follows: %d per process, and the earlier processes made up to %d of one configuration; at most %d)",
				len(topKernels), count, n, c.PerKernelLaunches, top.EarlierLaunches, c.PerKernelLaunches*maxProcessShares)
		}
	} else if l := s.Cfg.Workload.Launcher; topKernels == nil && tl.tool == timelineCupti && (!l.Multi() || l.DeepPass == config.DeepOneAtATime) && !rangeReplay(deepReplay) {
		stop := "the program is stopped once they are profiled"
		if l.Multi() {
			stop = "each profiled rank's, in its own run to the program's end"
		}
		one := ""
		if !l.Multi() && len(s.Cfg.NVTX.Exclude) == 0 && c.LaunchCount == 0 && c.LaunchSkip == 0 {
			one = ", or one launch of each where that gives more of them a bound"
		}
		note = fmt.Sprintf("deep pass on the top kernels of the CUPTI timeline by exact name (known once it has run): %d launch(es) of each of their launch configurations, the top kernels that fit in ncu.max_launches=%d launches%s (at most: %s); %s",
			max(1, c.LaunchCount), c.MaxLaunches, one, expectedCost(c.MaxLaunches, ncu.PassesPerLaunch(c.Set, c.Sections, c.Metrics)), stop)
	} else if topKernels == nil && tl.tool == timelineCupti {
		note = fmt.Sprintf("deep pass on the top-N kernel functions of the CUPTI timeline (known once it has run), %d launch(es) of each launch configuration of each", deepLaunchCount(c, true, phases.TopProcesses{}))
	} else if topKernels == nil && tl.tool == timelineNsys {
		note = fmt.Sprintf("deep pass on the top-N kernel functions of the nsys timeline (known once it has run), %d launch(es) of each launch configuration of each", deepLaunchCount(c, true, phases.TopProcesses{}))
	} else if topKernels == nil {
		note = fmt.Sprintf("deep pass on the top-N kernels of the timing pass (known once it has run), %d launch(es) of each launch configuration of each", deepLaunchCount(c, true, phases.TopProcesses{}))
	}
	return regex, count, note, targets
}

// startTrace starts the trace of the session's CUPTI timeline
// (rebuild.StartTrace), once a session, where the session's last step is
// rebuild.Run.
func (s *Session) startTrace(run *rundir.Run) {
	if s.traced != nil || s.Report != nil {
		return
	}
	if tl := s.Timeline(run); tl != nil {
		s.traced = rebuild.StartTrace(run, s.Cfg, tl)
	}
}

// FormatPlan writes the dry run: each step's argv (quoted where needed),
// environment additions, outputs and deadline.
func FormatPlan(w io.Writer, steps []Step) error {
	// Every field is data (a command, an environment value, a range name):
	// a control character or an escape sequence in one is shown escaped,
	// never printed raw, so no value can print a line that looks like the
	// plan's own.
	safe := input.EscapeHidden
	var b strings.Builder
	for i, st := range steps {
		title := fmt.Sprintf("%d. %s", i+1, safe(st.Name()))
		if st.Note != "" {
			title += fmt.Sprintf(" (%s)", safe(st.Note))
		}
		b.WriteString(input.Wrap(title, planWidth, planWidth, "   ") + "\n")
		// The argv on one line, quoted where needed, as a shell would take
		// it: to paste or to grep, it is not wrapped.
		b.WriteString("   argv:")
		for _, a := range st.Argv {
			fmt.Fprintf(&b, " %s", safe(quoteArg(a)))
		}
		b.WriteString("\n")
		for _, e := range st.Env {
			fmt.Fprintf(&b, "   env: %s\n", safe(e))
		}
		if st.Stdout != "" {
			fmt.Fprintf(&b, "   stdout: MAIN/%s\n", safe(st.Stdout))
		}
		if st.Log != "" {
			fmt.Fprintf(&b, "   log: MAIN/%s\n", safe(st.Log))
		}
		if st.Deadline.Key != "" {
			fmt.Fprintf(&b, "   deadline: %s\n", safe(st.Deadline.String()))
		}
		for _, d := range st.Details {
			b.WriteString("   " + input.Wrap("note: "+safe(d), planWidth-3, planWidth, "         ") + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// planWidth is the widest line of the dry run's titles and notes (a word
// longer than that stands alone; argv lines are not wrapped).
const planWidth = 120

func quoteArg(a string) string {
	if a != "" && !strings.ContainsAny(a, " \t\n\"'\\$`|&;<>()*?[]{}!#~") {
		return a
	}
	return "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
}

func (s *Session) logf(format string, args ...any) {
	if s.Log != nil {
		s.logMu.Lock()
		defer s.logMu.Unlock()
		fmt.Fprintf(s.Log, "deepprof: "+format+"\n", args...)
	}
}

// Run runs the session into a new run directory and returns it. The run
// directory and its manifest are written whatever happens; an error means
// the run is failed or partial, and the manifest says which and why.
//
// When ctx ends (Ctrl-C), the program running gets SIGINT (see
// ExecRunner), what was done before is kept, a deep pass that left a report
// is still exported (for at most exportGrace), and the manifest says
// "interrupted ...": one cancellation is enough to end Run. A step that
// reaches its deadline (see Session.deadline) is stopped the same way, and
// the run ends there, partial, its reason saying which deadline to raise.
func (s *Session) Run(ctx context.Context) (*rundir.Run, error) {
	now := s.now()
	s.began, s.traced = now(), nil
	s.stepsDone.Store(0)
	run, err := rundir.Create(s.Cfg.Run.Root, s.Cfg.Run.ID, now())
	if err != nil {
		return nil, err
	}
	// One writer at a time: a deepprof report of this run waits for the
	// session to end.
	lock, err := rundir.LockRun(run.Dir)
	if err != nil {
		return run, err
	}
	defer lock.Unlock()
	s.logf("run directory %s", run.Dir)
	err = s.run(ctx, run)
	if err != nil {
		var se *stoppedError
		switch {
		case errors.As(err, &se):
			run.MarkPartial(se.reason())
		case ctx.Err() != nil:
			run.MarkPartial("interrupted: " + err.Error())
		default:
			run.MarkPartial(err.Error())
		}
	}
	var derr error
	if s.Report != nil {
		derr = s.Report(run, s.Cfg)
	} else {
		derr = rebuild.Run(run, s.Cfg, s.Timeline(run), s.traced)
	}
	if derr != nil {
		run.MarkPartial(derr.Error())
	}
	if werr := run.WriteManifest(now()); werr != nil {
		return run, errors.Join(err, derr, werr)
	}
	return run, errors.Join(err, derr, run.Sweep())
}

func (s *Session) now() func() time.Time {
	if s.Now == nil {
		return time.Now
	}
	return s.Now
}

// exportGrace is how long the exports of a deep pass's report may still
// run once the session is interrupted: what ncu profiled before is worth
// saving, but not worth a second Ctrl-C.
const exportGrace = 30 * time.Second

func (s *Session) run(ctx context.Context, run *rundir.Run) error {
	if err := run.Write(rundir.ConfigYAML, s.ConfigYAML); err != nil {
		return err
	}
	dir, done, err := s.startAutoRanges()
	if err != nil {
		return err
	}
	defer done()
	if s.autoRanges = dir; dir != "" {
		run.Note("%s", autoRangesNote)
	}
	if err := s.writeInputs(run); err != nil {
		return err
	}
	if s.Env == nil {
		run.Record(rundir.EnvJSON, rundir.StatusSkipped, "no NVML provenance collector given")
	} else if b, err := s.Env(); err != nil {
		run.Record(rundir.EnvJSON, rundir.StatusMissing, err.Error())
		run.Note("env.json: %v", err)
	} else if err := run.Write(rundir.EnvJSON, b); err != nil {
		return err
	}

	// Before anything runs: timeline.tool=nsys with no usable nsys ends here.
	if _, err := s.chooseTimeline(ctx); err != nil {
		return err
	}
	steps, err := s.Plan(run.Dir, nil)
	if err != nil {
		return err
	}
	byID := index(steps)
	if !s.cachedSections(run) {
		if err := s.step(ctx, run, byID[StepNcuSections], false); err != nil {
			// Only Ctrl-C ends the session here: the list of sections is
			// provenance, and nothing after it needs it.
			if se := (*stoppedError)(nil); errors.As(err, &se) && !se.timedOut() {
				return err
			}
			run.Note("ncu --list-sections: %v", err)
		} else {
			s.cacheSections(run)
		}
	}
	if err := os.MkdirAll(filepath.Dir(run.Path(rundir.Stage1Report)), 0o755); err != nil {
		return err
	}
	plainRun := func() error {
		if err := s.stage1(ctx, run, byID[StepStage1]); err != nil {
			return fmt.Errorf("stage 1: %w", err)
		}
		rep, err := checkStage1(run)
		if err != nil {
			return err
		}
		if rep != nil {
			addWorkloadToEnv(run, rep)
		} else if s.tl.tool != timelineCupti {
			run.Note("stage 1: the program wrote no workload report, and the timeline is %s: stage times come from the NVTX ranges of a CUPTI timeline (timeline.tool=cupti, which needs the CUDA toolkit with CUPTI and a C compiler)", s.tl.tool)
		}
		return nil
	}
	deferred := s.plainRunDeferred(s.tl)
	if !deferred {
		if err := plainRun(); err != nil {
			return err
		}
	}
	top, err := s.runTimeline(ctx, run)
	if err != nil {
		return err
	}
	if deferred {
		var rep *workload.Report
		var repErr error
		if run.Exists(rundir.TimelineReport) {
			rep, repErr = cuptiRunReport(run)
		}
		if why := s.plainRunNeeded(run, rep, repErr); why != "" {
			run.Note("stage 1: the program alone, run after the CUPTI run: %s (workload.plain_run=auto)", why)
			if err := plainRun(); err != nil {
				return err
			}
		} else if rep != nil {
			standIn(run, rep)
		} else {
			skipPlainRun(run, s.Cfg.NVTX.Domain)
		}
	}
	if s.deepDoneInRun(run) {
		return nil
	}
	steps, err = s.Plan(run.Dir, top)
	if err != nil {
		return err
	}
	byID = index(steps)
	run.Note("%s", byID[StepNcuDeep].Note)
	// The plan of the longest step, before it starts: what it profiles,
	// how many launches and about how long.
	s.logf("%s: plan: %s", StepNcuDeep, byID[StepNcuDeep].Note)
	if s.Cfg.Workload.Launcher.Multi() {
		return s.deepRanks(ctx, run, steps)
	}
	var deepErr error
	if rangeReplay(s.Cfg.NCU.ReplayMode) {
		deepErr = s.deepRange(ctx, run, byID[StepNcuDeep], top)
	} else {
		deepErr = s.profile(ctx, run, byID[StepNcuDeep])
	}
	if deepErr != nil && !exists(run.Path(rundir.NcuDeepReport)) {
		if s.tl.tool == timelineNsys && len(top) > 0 {
			run.Note("%s", nsysFilterHint)
		}
		return fmt.Errorf("deep pass: %w", deepErr)
	}
	// A failed pass that left a report keeps what it profiled, even when
	// the session was interrupted.
	var errs []error
	if deepErr != nil {
		errs = append(errs, fmt.Errorf("deep pass (its report is kept, partial): %w", deepErr))
	}
	ectx, cancel := afterGrace(ctx, exportGrace)
	defer cancel()
	exports := []Step{byID[StepExportRaw], byID[StepExportDetails]}
	for i, err := range s.stepsAtOnce(ectx, run, exports) {
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", exports[i].ID, err))
		} else if deepErr != nil {
			run.Record(exports[i].Stdout, rundir.StatusPartial, "exported from the partial report of a failed deep pass")
		}
	}
	s.noteUnprofiledProcesses(run)
	return errors.Join(errs...)
}

// noteUnprofiledProcesses says when the deep pass profiled launches of
// fewer processes than launched the top kernels in the timeline: their
// kernels' metrics come from the others' launches only.
func (s *Session) noteUnprofiledProcesses(run *rundir.Run) {
	if len(s.topProcesses.Processes) < 2 {
		return
	}
	f, err := run.OpenFile(rundir.NcuRaw)
	if err != nil {
		return // the export's own error is the run's
	}
	defer f.Close()
	seen := map[int64]string{}
	for range ncu.Scan(ncu.NewReader(f, rundir.NcuRaw, ncu.Options{}), rundir.NcuRaw, model.HandlerFunc(func(_ *model.Export, l *model.Launch) error {
		seen[l.ProcessID] = l.ProcessName
		return nil
	})) {
	}
	if len(seen) >= len(s.topProcesses.Processes) {
		return
	}
	var got []string
	for id, name := range seen {
		got = append(got, fmt.Sprintf("%d (%s)", id, name))
	}
	slices.Sort(got)
	run.Note("deep pass: ncu profiled launches of %d of the %d processes that launched the top kernels in the timeline (profiled: %s): the others' kernels are measured from these processes' launches only; raise ncu.per_kernel_launches (ncu counts launches over every process it follows) to reach them",
		len(seen), len(s.topProcesses.Processes), orNone(got))
}

func orNone(list []string) string {
	if len(list) == 0 {
		return "none"
	}
	return strings.Join(list, ", ")
}

// afterGrace returns a context that ctx's end does not end at once: only
// grace later (or when the returned cancel is called).
func afterGrace(ctx context.Context, grace time.Duration) (context.Context, context.CancelFunc) {
	c, cancel := context.WithCancel(context.WithoutCancel(ctx))
	go func() {
		select {
		case <-ctx.Done():
			t := time.NewTimer(grace)
			defer t.Stop()
			select {
			case <-t.C:
				cancel()
			case <-c.Done():
			}
		case <-c.Done():
		}
	}()
	return c, cancel
}

// deepRange runs a deep pass that replays NVTX ranges (range or app-range).
// When ncu refuses (an API range capture does not support, kernels that
// differ between application passes), the attempt's log is kept as
// ncu/deep-range.log and the deep pass runs once more with kernel replay:
// each launch's NVTX stack column still gives the per-region numbers.
func (s *Session) deepRange(ctx context.Context, run *rundir.Run, st Step, top []string) error {
	err := s.step(ctx, run, st, true)
	findings := diagnose(run, st.Log, err)
	refusal, ok := refused(findings)
	if !ok || ctx.Err() != nil {
		return s.judge(run, st.Name(), st.Log, err, findings)
	}
	if rerr := os.Rename(run.Path(st.Log), run.Path(deepRangeLog)); rerr != nil {
		return rerr
	}
	run.Record(deepRangeLog, rundir.StatusComplete, "the log of the refused "+s.Cfg.NCU.ReplayMode+"-replay attempt")
	report := strings.TrimSuffix(st.Log, ".log") + ".ncu-rep"
	if exists(run.Path(report)) {
		kept := strings.TrimSuffix(deepRangeLog, ".log") + ".ncu-rep"
		if rerr := os.Rename(run.Path(report), run.Path(kept)); rerr != nil {
			return rerr
		}
		run.Record(kept, rundir.StatusPartial, "the report of the refused "+s.Cfg.NCU.ReplayMode+"-replay attempt; not exported")
	}
	for _, f := range findings {
		if f != refusal {
			run.Note("%s (%s replay): %s:%d: %s Next: %s", st.Name(), s.Cfg.NCU.ReplayMode, deepRangeLog, f.Line, f.Message, f.Next)
		}
	}
	run.Note("range replay refused: %s:%d: %s; fell back to kernel replay (--replay-mode kernel with --nvtx: per-region numbers from each launch's NVTX stack column)",
		deepRangeLog, refusal.Line, refusal.Message)
	s.logf("%s: ncu refused %s replay; running the deep pass again with kernel replay", st.Name(), s.Cfg.NCU.ReplayMode)
	steps, err := s.plan(run.Dir, top, replayKernel)
	if err != nil {
		return err
	}
	k, ok := index(steps)[st.ID]
	if !ok {
		return fmt.Errorf("no %s step in the plan", st.ID)
	}
	k.Variant = "kernel replay"
	return s.profile(ctx, run, k)
}

// refused returns the finding by which ncu refused range replay, if any.
func refused(findings []ncu.Finding) (ncu.Finding, bool) {
	for _, f := range findings {
		if f.Kind == ncu.KindRangeReplayUnsupported || f.Kind == ncu.KindAppRangeMismatch {
			return f, true
		}
	}
	return ncu.Finding{}, false
}

// stepsAtOnce runs steps that do not depend on each other (each of its own
// files) at the same time, each as step does, and gives each one's error.
// The manifest records their times in the order given.
func (s *Session) stepsAtOnce(ctx context.Context, run *rundir.Run, steps []Step) []error {
	errs := make([]error, len(steps))
	recs := make([]*rundir.StepTime, len(steps))
	var wg sync.WaitGroup
	for i, st := range steps {
		wg.Go(func() {
			errs[i] = s.stepRecorded(ctx, run, st, false, func(rec rundir.StepTime) { recs[i] = &rec })
		})
	}
	wg.Wait()
	for _, rec := range recs {
		if rec != nil {
			run.RecordStepTime(*rec)
		}
	}
	return errs
}

// step runs one step under its deadline, its output going to its files.
// With watch (an ncu profiling step), its output also feeds the progress
// line. A step stopped before it ended (Ctrl-C, its deadline) keeps what it
// wrote, is recorded as stopped, and returns a *stoppedError.
func (s *Session) step(ctx context.Context, run *rundir.Run, st Step, watch bool) error {
	return s.stepRecorded(ctx, run, st, watch, run.RecordStepTime)
}

// stepRecorded is step, giving the step's time to record.
func (s *Session) stepRecorded(ctx context.Context, run *rundir.Run, st Step, watch bool, record func(rundir.StepTime)) error {
	if ctx.Err() != nil {
		return &stoppedError{step: st.Name()} // before it started
	}
	if st.ID == StepNcuDeep {
		s.startTrace(run)
	}
	s.logf("%s: %s", st.Name(), strings.Join(st.Argv, " "))
	var out bytes.Buffer
	// The console output kept for the log: its head and tail when it is
	// large (stepLog), so that memory stays bounded.
	log := newStepLog(stepLogHead, stepLogTail)
	// One writer for both streams, so that a Runner that compares them
	// (exec.Cmd does) sends both through one pipe, in order.
	var sink io.Writer = log
	var prog *progress
	if watch && s.Progress != nil {
		prog = newProgress(st.Name(), s.Progress, s.ProgressLive, s.now())
		sink = io.MultiWriter(log, prog)
	}
	sctx, cancel, timedOut := stopContext(ctx, st.Deadline)
	defer cancel()
	runCtx := sctx
	var planned *plannedStop
	if st.StopAfter > 0 {
		var stop context.CancelFunc
		runCtx, stop = context.WithCancel(sctx)
		defer stop()
		planned = &plannedStop{want: st.StopAfter, stop: stop}
		if st.NcuKills {
			planned.grace = killGrace
		}
		defer planned.close()
		sink = io.MultiWriter(sink, planned)
	}
	cmd := Command{Argv: st.Argv, Env: withAutoRanges(st.Env, s.autoRanges), Stdout: sink, Stderr: sink}
	if st.Stdout != "" {
		cmd.Stdout = &out
	}
	clock := s.now()
	start := clock()
	res, err := s.Runner.Run(runCtx, cmd)
	if planned != nil && planned.fired() && res.Interrupted && sctx.Err() == nil {
		// Stopped as planned: what ncu profiled is what was asked for.
		res.Interrupted, res.ExitCode, res.Signal = false, 0, 0
		if st.NcuKills {
			run.Note("%s: ncu's --kill did not end the program within %s of the last planned launch: it was stopped once the %d planned launches were profiled (%s), %.1f s into the pass", st.Name(), killGrace, st.StopAfter, planned.passes(), clock().Sub(start).Seconds())
		} else {
			run.Note("%s: the program was stopped once the %d planned launches were profiled (%s), %.1f s into the pass", st.Name(), st.StopAfter, planned.passes(), clock().Sub(start).Seconds())
		}
	} else if planned != nil && planned.fired() && st.NcuKills && !res.Interrupted {
		run.Note("%s: ncu ended the program once the %d planned launches were profiled (--kill; %s), %.1f s into the pass", st.Name(), st.StopAfter, planned.passes(), clock().Sub(start).Seconds())
	}
	rec := rundir.StepTime{Name: st.Name(), Seconds: clock().Sub(start).Seconds(), ExitCode: res.ExitCode}
	done := s.stepsDone.Add(1)
	expected := ""
	if st.ID == StepNcuDeep && s.targets != nil {
		if e := s.targets.estimate(); e > 0 {
			expected = fmt.Sprintf(", about %.0f s planned", e)
		}
	}
	if !s.began.IsZero() {
		s.logf("%s: done in %.1f s%s (step %d, %.1f s into the session)", st.Name(), rec.Seconds, expected, done, clock().Sub(s.began).Seconds())
	}
	if err != nil {
		rec.ExitCode = -1
	}
	var stopped *stoppedError
	if err == nil && res.Interrupted {
		stopped = &stoppedError{step: st.Name(), after: res.Duration, log: st.Log}
		if timedOut() {
			stopped.deadline = st.Deadline
		}
		rec.Stopped = stopped.how()
	}
	record(rec)
	if prog != nil {
		if stopped != nil {
			prog.Stopped(stopped.short())
		}
		prog.Close()
	}
	if st.Log != "" {
		data := log.Bytes()
		if st.AppendLog {
			before, _ := input.Tail(run.Path(st.Log)) // earlier runs of the step, each already capped
			data = append(append(before, fmt.Sprintf("==> %s <==\n", st.Name())...), data...)
		}
		if werr := run.Write(st.Log, data); werr != nil {
			return werr
		}
	}
	if err != nil {
		return err
	}
	if st.Stdout != "" {
		if werr := run.Write(st.Stdout, out.Bytes()); werr != nil {
			return werr
		}
		if stopped != nil {
			run.Record(st.Stdout, rundir.StatusPartial, "cut short: "+stopped.Error())
		}
	}
	if stopped != nil {
		if stopped.timedOut() {
			s.logf("%s", stopped.Error())
		}
		return stopped
	}
	if res.Signal != 0 {
		tail := lastLines(log.Bytes(), 5)
		return fmt.Errorf("%s was killed by %s (%s): %s", filepath.Base(st.Argv[0]), signalName(res.Signal), signalWhy(res.Signal), tail)
	}
	if res.ExitCode != 0 {
		tail := lastLines(log.Bytes(), 5)
		if hint := MissingModule(st.Argv, tail); hint != "" {
			tail += " (" + hint + ")"
		}
		return fmt.Errorf("%s exited with status %d: %s", filepath.Base(st.Argv[0]), res.ExitCode, tail)
	}
	return nil
}

// signalName is a signal as a shell names it (SIGKILL), else its number.
func signalName(sig syscall.Signal) string {
	names := map[syscall.Signal]string{syscall.SIGKILL: "SIGKILL", syscall.SIGTERM: "SIGTERM", syscall.SIGINT: "SIGINT",
		syscall.SIGSEGV: "SIGSEGV", syscall.SIGABRT: "SIGABRT", syscall.SIGBUS: "SIGBUS", syscall.SIGFPE: "SIGFPE", syscall.SIGILL: "SIGILL"}
	if n, ok := names[sig]; ok {
		return n
	}
	return fmt.Sprintf("signal %d", int(sig))
}

// signalWhy is what usually sends sig to a program, for the next step.
func signalWhy(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGKILL:
		return "sent by the kernel's out-of-memory killer, a scheduler's limit or a timeout: check dmesg and the job's memory limit"
	case syscall.SIGSEGV, syscall.SIGBUS, syscall.SIGILL, syscall.SIGFPE, syscall.SIGABRT:
		return "the program crashed: its log's last lines say where"
	}
	return "sent from outside the program: " + sig.String()
}

// profile runs an ncu profiling step and judges what ncu printed.
func (s *Session) profile(ctx context.Context, run *rundir.Run, st Step) error {
	err := s.step(ctx, run, st, true)
	return s.judge(run, st.Name(), st.Log, err, diagnose(run, st.Log, err))
}

// diagnose reads what ncu printed into the log rel, unless the step was
// stopped (err, a *stoppedError): ncu stopped early prints that it profiled
// no kernel, which would read as a fault of the filters
// (fixtures/logs/session-interrupted-during-deep-pass.txt).
func diagnose(run *rundir.Run, rel string, err error) []ncu.Finding {
	if isStopped(err) {
		return nil
	}
	// ncu's errors and summary are at a log's end: a log past the cap
	// keeps its last part.
	b, _ := input.Tail(run.Path(rel))
	return ncu.Diagnose(b)
}

// isStopped reports whether err is a step stopped by Ctrl-C or its deadline.
func isStopped(err error) bool {
	var se *stoppedError
	return errors.As(err, &se)
}

// judge turns what an ncu pass printed (into log, beside its report) and
// how it ended (err) into the run's verdict: findings go to the manifest's
// notes, or for a stopped pass a note saying so; a failure that left a
// report keeps it and marks it partial.
func (s *Session) judge(run *rundir.Run, name, log string, err error, findings []ncu.Finding) error {
	if se := (*stoppedError)(nil); errors.As(err, &se) {
		run.Note("%s", se.note())
	}
	for _, f := range findings {
		run.Note("%s: %s:%d: %s Next: %s", name, log, f.Line, f.Message, f.Next)
	}
	report := strings.TrimSuffix(log, ".log") + ".ncu-rep"
	switch {
	case exists(run.Path(report)):
		if err != nil || len(findings) > 0 {
			run.Record(report, rundir.StatusPartial, "ncu reported problems: see the notes")
		} else {
			run.Record(report, rundir.StatusComplete, "")
		}
	case err == nil:
		reason := "ncu wrote no report"
		if len(findings) > 0 {
			reason += ": " + findings[0].Message
		}
		run.Record(report, rundir.StatusMissing, reason)
		return errors.New(reason)
	default:
		run.Record(report, rundir.StatusMissing, err.Error())
	}
	return err
}

// nothingMatched reports whether the timing pass's log says its NVTX
// filter matched nothing.
func (s *Session) nothingMatched(run *rundir.Run) bool {
	logb, _ := input.Tail(run.Path(rundir.NcuTimingLog))
	for _, f := range ncu.Diagnose(logb) {
		if f.Kind == ncu.KindNVTXNoMatch || f.Kind == ncu.KindNoKernels {
			return true
		}
	}
	return false
}

// discoveryLaunches bounds the discovery pass: enough launches to see the
// ranges a workload pushes, cheap enough to run on any failure.
const discoveryLaunches = 500

// discover runs a cheap pass with no NVTX filter (durations of the first
// launches only) and notes which ranges the program really pushed, written
// as nvtx.include takes them.
func (s *Session) discover(ctx context.Context, run *rundir.Run) {
	p := ncu.TimingPass(run.Path(rundir.NcuDiscoveryReport), nil, nil, s.Cfg.Workload.Command())
	p.LaunchCount = discoveryLaunches
	args, err := p.Args()
	if err != nil {
		run.Note("NVTX discovery pass: %v", err)
		return
	}
	env, _ := s.spec().Environ(workload.PhaseNcu, "")
	env = append(env, workload.EnvRepeats+"=1")
	steps := s.withDeadlines([]Step{
		{ID: StepNcuDiscovery, Argv: append([]string{s.Ncu}, args...), Env: env, Log: rundir.NcuDiscoveryLog},
		{ID: StepExportDiscoveryRaw, Argv: append([]string{s.Ncu}, ncu.ExportArgs(run.Path(rundir.NcuDiscoveryReport), ncu.PageRaw, "")...), Stdout: rundir.NcuDiscoveryRaw},
	})
	for _, st := range steps {
		if err := s.step(ctx, run, st, false); err != nil {
			run.Note("NVTX discovery pass: %s: %v", st.Name(), err)
			return
		}
	}
	f, err := os.Open(run.Path(rundir.NcuDiscoveryRaw))
	if err != nil {
		run.Note("NVTX discovery pass: %v", err)
		return
	}
	defer f.Close()
	counts := map[string]int{}
	var order []string
	r := ncu.NewReader(f, rundir.NcuDiscoveryRaw, ncu.Options{})
	for r.Scan() {
		if l, ok := r.Record().(*model.Launch); ok && l.NVTX != nil && len(l.NVTX.Levels) > 0 {
			path := l.NVTX.Path()
			if counts[path] == 0 {
				order = append(order, path)
			}
			counts[path]++
		}
	}
	if len(order) == 0 {
		run.Note("NVTX discovery pass: the first %d launches ran inside no NVTX push/pop range: does the workload push its ranges (and with --nvtx, are they push/pop, not start/end)?", discoveryLaunches)
		return
	}
	parts := make([]string, len(order))
	for i, p := range order {
		parts[i] = fmt.Sprintf("%s (%d launch(es))", p, counts[p])
	}
	run.Note("NVTX discovery pass (no filter, first %d launches): the workload pushed %s; nvtx.include takes these names as they are written here, e.g. nvtx.include=[%s]",
		discoveryLaunches, strings.Join(parts, ", "), order[0])
}

// cover cuts a timeline's kernel table to the deep pass's kernels: the
// fewest, by total time, that cover timeline.coverage, at least
// timeline.top_n and at most timeline.max_kernels; the manifest says how much
// of the timed GPU time they cover. what names the rows, when they are not
// the timing pass's kernels ("kernel functions (FILE) ").
func (s *Session) cover(run *rundir.Run, tab model.KernelTable, what string) model.KernelTable {
	tl := s.Cfg.Timeline
	tab = s.withoutCollectives(run, tab)
	tab = tab.Covering(tl.Coverage, tl.TopN, tl.MaxKernels)
	run.Note("deep-pass kernels: the top %d %sby total time cover %.1f%% of the timed GPU time (asked: %.0f%%, at least %d, at most %d kernels)",
		len(tab.Kernels), what, 100*tab.Share(), 100*tl.Coverage, tl.TopN, tl.MaxKernels)
	return tab
}

// withoutCollectives leaves the collectives (the kernels of category
// communication, report.categories) out of the deep pass's choice, and says
// which and why in a note: under ncu's replay a collective's duration is how
// long its rank waited for the others' profilers (the same all-reduce
// differs by an order of magnitude between ranks: fixtures/ncu/h200x2-*,
// docs/measurements.md), and profiling one serializes the ranks it joins. Their times come from the
// timeline. The coverage is then of the other kernels' time.
func (s *Session) withoutCollectives(run *rundir.Run, tab model.KernelTable) model.KernelTable {
	cats, err := kernels.Parse(s.Cfg.Report.Categories)
	if err != nil {
		return tab // validated with the configuration
	}
	var keep []model.KernelStats
	var left []string
	ms := 0.0
	for _, k := range tab.Kernels {
		if cats.Is(k.Name, kernels.Communication) {
			left = append(left, fmt.Sprintf("%s (device %d, %.3f ms)", k.Name, k.Device, k.TotalMS))
			ms += k.TotalMS
			continue
		}
		keep = append(keep, k)
	}
	if len(left) == 0 {
		return tab
	}
	run.Note("deep pass: %d collective kernel(s) left out, %.3f ms of timed GPU time: %s. Why: a collective is never replayed, by ncu or by deepprof's library in the run: under replay its duration is how long its rank waited for the others, and profiling it serializes the ranks it joins; its time is the timeline's (a CUPTI timeline of the plain run)",
		len(left), ms, strings.Join(left, "; "))
	tab.Kernels, tab.TotalMS = keep, tab.TotalMS-ms
	return tab
}

// topKernels picks the deep pass's kernels from the timing pass: the fewest,
// by total time, that cover timeline.coverage; it returns their function
// names, which the deep pass filters on: ncu matches --kernel-name-base
// demangled against another spelling than the export's "Kernel Name" (seen
// on an H200, ncu 2025.3.1: regex:^void at::elementwise_kernel<128, 4
// selected nothing), so deep passes filter with --kernel-name-base function.
// The names are derived from the demangled ones (model.FunctionName): a
// second export of the timing report with --print-kernel-base function
// gave the same names for every launch of the recorded sessions, and took
// 35 s for the 8B-shaped model.
func (s *Session) topKernels(run *rundir.Run) ([]string, error) {
	f, err := os.Open(run.Path(rundir.NcuTimingRaw))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tab, err := ncu.KernelTable(ncu.NewReader(f, rundir.NcuTimingRaw, ncu.Options{}), rundir.NcuTimingRaw)
	if err != nil {
		return nil, err
	}
	tab = s.cover(run, tab, "")
	var names []string
	seen := map[string]bool{}
	for _, k := range tab.Kernels {
		if name := model.FunctionName(k.Name); !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	return names, nil
}

// checkStage1 reads the workload's report of stage 1. The report is
// optional (any program can be profiled): without one the result is nil,
// the manifest says the file is absent and why, and the stages come from
// the timeline's NVTX ranges. A report that is there but malformed is an
// error.
func checkStage1(run *rundir.Run) (*workload.Report, error) {
	f, err := os.Open(run.Path(rundir.Stage1Report))
	if err != nil {
		run.Record(rundir.Stage1Report, rundir.StatusSkipped, "the program wrote no workload report to $"+workload.EnvReport+" (optional: model facts for MFU, the operator table; the stages come from its NVTX ranges)")
		run.Note("stage 1: the program wrote no workload report to $%s; its stage times come from its NVTX ranges in the timeline", workload.EnvReport)
		return nil, nil
	}
	defer f.Close()
	rep, err := workload.ReadReport(f, rundir.Stage1Report)
	if err != nil {
		run.Record(rundir.Stage1Report, rundir.StatusPartial, err.Error())
		return nil, err
	}
	run.Record(rundir.Stage1Report, rundir.StatusComplete, "")
	return rep, nil
}

// addWorkloadToEnv adds the workload's model identity and versions, from
// its stage-1 report, to env.json. An env.json that is not deepprof's (a
// test's stand-in) is left as it is, and the note says so.
func addWorkloadToEnv(run *rundir.Run, rep *workload.Report) {
	env, err := workload.ReadEnvFile(run.Path(rundir.EnvJSON))
	if errors.Is(err, os.ErrNotExist) {
		return // none was written; the manifest says why
	}
	if err != nil {
		run.Note("env.json: the workload's model and versions were not added: %v", err)
		return
	}
	env.Workload = &workload.WorkloadInfo{Model: rep.Model, Versions: rep.Versions}
	out, err := env.JSON()
	if err == nil {
		err = run.Write(rundir.EnvJSON, out)
	}
	if err != nil {
		run.Note("env.json: the workload's model and versions were not added: %v", err)
	}
}

// inputs is inputs.yaml: exactly what the workload was run with.
type inputs struct {
	Argv   []string `yaml:"argv"`
	Env    []string `yaml:"env"`
	Files  []file   `yaml:"files"`
	Device string   `yaml:"device"`
}

type file struct {
	Path  string `yaml:"path"`
	Bytes int64  `yaml:"bytes"`
}

func (s *Session) writeInputs(run *rundir.Run) error {
	env, err := s.spec().Environ(workload.PhaseStage1, filepath.Join(run.Dir, rundir.Stage1Report))
	if err != nil {
		return err
	}
	in := inputs{Argv: s.spec().Argv, Env: env, Device: s.Cfg.Device}
	for _, p := range s.Cfg.Workload.Inputs {
		st, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("workload input %s: %w", p, err)
		}
		in.Files = append(in.Files, file{Path: p, Bytes: st.Size()})
	}
	b, err := yaml.Marshal(in)
	if err != nil {
		return err
	}
	return run.Write(rundir.InputsYAML, b)
}

func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
