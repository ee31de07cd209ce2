package session

import (
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/llm-perf-opt/deepprof/internal/config"
	"github.com/llm-perf-opt/deepprof/internal/input"
	"github.com/llm-perf-opt/deepprof/internal/ncu"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
)

// A multi-GPU workload (workload.launcher) runs every step under its
// launcher, so each rank is a process of the run: stage 1, the CUPTI
// timeline (the library is in every rank) and the oracle alike. The deep
// pass is one ncu per rank, started in each rank by a wrapper the session
// writes (Script, Exec), each writing its own report under MAIN/ncu/ranks/;
// never one ncu around the launcher, which fails at the first collective
// (fixtures/logs/ncu-one-ncu-over-torchrun-nccl.txt). The collectives are
// left out of it (withoutCollectives). workload.launcher.deep_pass says
// whether the ranks meet ncu one at a time (the default: one run per rank,
// the others plain) or at once (lockstep: one run, every rank replaying
// its kernels while the others wait in their next collective; it
// deadlocked on 2 H100s, fixtures/logs/h100x2-lockstep-deadlock).

// rankSteps are the deep pass and its exports for every rank it profiles
// (oneRank). planned says the timeline has run (the top kernels are
// known); a dry run plans before it.
func (s *Session) rankSteps(mainDir string, deep ncu.Pass, env []string, note string, details []string, planned bool) ([]Step, error) {
	w := s.Cfg.Workload
	n := w.Launcher.Ranks()
	program := w.Command()
	deep.Program = program
	if deep.KernelRegex == "" {
		// No top kernels to filter on (a timeline with no compute
		// kernel): the collectives are still left out.
		deep.KernelNameBase, deep.KernelRegex = "function", noCollectives
		details = append(details, "no top kernels to filter on: every kernel but the collectives ("+noCollectives+")")
	}
	deep.Output = filepath.Join(mainDir, strings.TrimSuffix(rundir.RankPath(rundir.RankPlaceholder, rundir.NcuDeepReport), ".ncu-rep"))
	args, err := deep.Args()
	if err != nil {
		return nil, fmt.Errorf("deep pass: %w", err)
	}
	// ncu's own messages per rank (the ==PROF== lines the diagnosis
	// reads), apart from the ranks' shared console.
	profiler := append([]string{s.Ncu}, args[:len(args)-len(program)]...)
	profiler = append(profiler, "--log-file", filepath.Join(mainDir, rundir.RankPath(rundir.RankPlaceholder, rundir.NcuDeepLog)))
	py := w.Python
	if py == "" {
		py = "python3"
	}
	script := filepath.Join(mainDir, rundir.NcuRankExec)
	details = append(details, fmt.Sprintf("one ncu per rank, %d ranks, each started in its rank by MAIN/%s under the launcher and writing MAIN/%s; never one ncu around the launcher, which fails at the first collective",
		n, rundir.NcuRankExec, rundir.RankPath(rundir.RankPlaceholder, rundir.NcuDeepReport)))
	var steps []Step
	profiled := n
	// A step profiles a local rank (--only): on one machine it is the
	// global rank; on a node of a multi-node run (the launcher's own argv)
	// the global rank is known only once the launcher's rendezvous has
	// numbered the nodes (torchrun's c10d numbers them by arrival, whatever
	// --node-rank says), so the step and its console are named by the
	// local rank, the console outside ncu/ranks/ (which holds what the
	// wrapper names by $RANK, and which a merge takes whole).
	multiNode := len(w.Launcher.Argv) > 0
	if w.Launcher.DeepPass == config.DeepOneAtATime {
		details = append(details, "one rank at a time (workload.launcher.deep_pass=one_at_a_time): a run per rank, ncu in that rank alone, the others plain")
		if why := s.oneRank(); why != "" {
			profiled = 1
			details = append(details, why)
		} else if w.Launcher.DeepRanks == config.DeepRanksAuto && !planned {
			details = append(details, "workload.launcher.deep_ranks=auto: rank 0 alone if the CUPTI timeline shows every rank launching the same top kernels in the same launch configurations, else each rank")
		}
		for r := range profiled {
			variant, console := rankVariant(r), rundir.RankPath(strconv.Itoa(r), rankConsoleLog)
			if multiNode {
				variant, console = "local rank "+strconv.Itoa(r), path.Join(path.Dir(rundir.NcuRanks), "console-local-rank"+strconv.Itoa(r)+".log")
			}
			steps = append(steps, Step{ID: StepNcuDeep, Variant: variant, Argv: w.Launched(Exec(py, script, r, profiler, program)),
				Env: env, Log: console, Note: note, Details: details})
		}
	} else {
		details = append(details, "every rank at once (workload.launcher.deep_pass=lockstep): one run, each rank replaying its kernels while the others wait in their next collective; it can deadlock (2 H100s: both ranks stuck after 87 launches), one_at_a_time does not")
		steps = append(steps, Step{ID: StepNcuDeep, Argv: w.Launched(Exec(py, script, All, profiler, program)),
			Env: env, Log: rundir.NcuDeepLog, Note: note, Details: details})
	}
	for r := range profiled {
		steps = append(steps, s.rankExports(mainDir, strconv.Itoa(r))...)
	}
	return steps, nil
}

// oneRank says why the deep pass profiles rank 0 alone, or "" when it
// profiles each rank: with workload.launcher.deep_ranks=auto, when the
// CUPTI timeline showed every rank launching the same top kernels in the
// same launch configurations (a tensor-parallel program), so that their
// metrics are rank 0's.
//
// A node of a multi-node run (the launcher's own argv) profiles each of its
// ranks whatever its timeline shows: every node must run as many deep-pass
// runs as the others, and each decides from its own records.
func (s *Session) oneRank() string {
	l := s.Cfg.Workload.Launcher
	if l.DeepRanks != config.DeepRanksAuto || !s.sameRanks || l.Ranks() < 2 || s.rankProcs != l.Ranks() || len(l.Argv) > 0 {
		return ""
	}
	return fmt.Sprintf("rank 0 alone (workload.launcher.deep_ranks=auto): in the CUPTI timeline the %d processes that launched the top kernels launched the same ones in the same launch configurations, so each kernel's deep metrics are rank 0's; deep_ranks=all profiles each rank (a run each)", s.rankProcs)
}

// rankProgress writes, after a rank deep-pass step, each rank's profiled
// launches as its ncu log counts them: "ncu-deep (rank 1): 101 launches
// profiled (MAIN/ncu/ranks/rank1/deep.log)".
func (s *Session) rankProgress(run *rundir.Run, step string) {
	if s.Progress == nil {
		return
	}
	for _, r := range rankDirs(run) {
		log := rundir.RankPath(r, rundir.NcuDeepLog)
		b, err := input.ReadFile(run.Path(log))
		if err != nil {
			continue
		}
		p := ncu.NewProgressLine(time.Now)
		for line := range strings.Lines(string(b)) {
			p.Feed(strings.TrimRight(line, "\r\n"))
		}
		fmt.Fprintf(s.Progress, "%s: rank %s: %d launches profiled so far (MAIN/%s)\n", step, r, p.Launches(), log)
	}
}

// noCollectives is the deep pass's kernel filter when it has no top
// kernels: every function but NCCL's (ncclDevKernel_*, ncclKernel_*)
// (tried on 2 GPUs: fixtures/README.md; docs/measurements.md).
const noCollectives = "regex:^(?!nccl)"

// rankConsoleLog is a one-rank deep pass's console (the ranks' output),
// beside its ncu log.
const rankConsoleLog = "console.log"

func rankVariant(r int) string { return "rank " + strconv.Itoa(r) }

// deepRanks runs the deep pass of every rank and exports each rank's
// report. The ranks are the folders the wrapper made (ncu/ranks/rank<R>/,
// R the global rank: on a node of a multi-node run, not 0..N-1). A rank
// whose ncu wrote no report is missing (the manifest says why) and the run
// partial; the other ranks' reports are kept and used.
func (s *Session) deepRanks(ctx context.Context, run *rundir.Run, steps []Step) error {
	if err := run.Write(rundir.NcuRankExec, Script); err != nil {
		return err
	}
	if err := rundir.MkdirIn(run.Dir, run.Path(rundir.NcuRanks)); err != nil {
		return err
	}
	var stepErrs []error
	for _, st := range steps {
		if st.ID != StepNcuDeep {
			continue
		}
		// The step's console is the launcher's: ncu's own lines go to
		// each rank's log, which rankProgress counts after it.
		err := s.step(ctx, run, st, false)
		if err != nil {
			stepErrs = append(stepErrs, fmt.Errorf("%s: %w", st.Name(), err))
		}
		s.rankProgress(run, st.Name())
		if isStopped(err) {
			break
		}
	}
	stepErr := errors.Join(stepErrs...)
	found := rankDirs(run)
	if len(found) == 0 {
		return fmt.Errorf("deep pass: no rank's ncu wrote anything under MAIN/%s (%d ranks): %w", rundir.NcuRanks, s.Cfg.Workload.Launcher.Ranks(), stepErr)
	}
	errs := stepErrs
	for _, r := range found {
		log := rundir.RankPath(r, rundir.NcuDeepLog)
		// The step's error is said once, above; judge says what is
		// the rank's own (no report, ncu's findings).
		if jerr := s.judge(run, "ncu-deep (rank "+r+")", log, stepErr, diagnose(run, log, stepErr)); jerr != nil && stepErr == nil {
			errs = append(errs, fmt.Errorf("rank %s: %w", r, jerr))
		}
	}
	profiled := 0
	ectx, cancel := afterGrace(ctx, exportGrace)
	defer cancel()
	for _, r := range found {
		report := rundir.RankPath(r, rundir.NcuDeepReport)
		if !exists(run.Path(report)) {
			continue
		}
		profiled++
		exports := s.rankExports(run.Dir, r)
		for i, err := range s.stepsAtOnce(ectx, run, exports) {
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", exports[i].Name(), err))
			} else if a, ok := run.Manifest().Find(report); ok && a.Status == rundir.StatusPartial {
				run.Record(exports[i].Stdout, rundir.StatusPartial, "exported from the partial report of a failed deep pass")
			}
		}
	}
	if profiled == 0 {
		return fmt.Errorf("deep pass: no rank's ncu wrote a report (%d ranks): %w", len(found), errors.Join(errs...))
	}
	want := s.Cfg.Workload.Launcher.Ranks()
	if why := s.oneRank(); why != "" && s.Cfg.Workload.Launcher.DeepPass == config.DeepOneAtATime {
		want = 1
		run.Note("deep pass: %s", why)
	}
	if profiled < max(want, len(found)) {
		run.Note("deep pass: %d of %d ranks profiled; the kernels of the others have no deep metrics", profiled, max(want, len(found)))
	}
	return errors.Join(errs...)
}

// rankExports are the exports of rank r's deep-pass report (rank: its
// folder's number).
func (s *Session) rankExports(mainDir, r string) []Step {
	report := filepath.Join(mainDir, rundir.RankPath(r, rundir.NcuDeepReport))
	steps := []Step{
		{ID: StepExportRaw, Variant: "rank " + r, Argv: append([]string{s.Ncu}, ncu.ExportArgs(report, "raw", "")...), Stdout: rundir.RankPath(r, rundir.NcuRaw)},
		{ID: StepExportDetails, Variant: "rank " + r, Argv: append([]string{s.Ncu}, ncu.ExportArgs(report, "details", "")...), Stdout: rundir.RankPath(r, rundir.NcuDetails)},
	}
	return s.withDeadlines(steps)
}

// rankDirs lists the ranks (folder numbers, as text) under ncu/ranks/ that
// hold a deep pass's report or log, by rank.
func rankDirs(run *rundir.Run) []string {
	var out []string
	for _, r := range rundir.Ranks(run.Dir) {
		if exists(run.Path(rundir.RankPath(r, rundir.NcuDeepReport))) || exists(run.Path(rundir.RankPath(r, rundir.NcuDeepLog))) {
			out = append(out, r)
		}
	}
	return out
}
