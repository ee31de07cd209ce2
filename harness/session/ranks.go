package session

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/llm-perf-opt/deepprof/harness/artifacts"
	"github.com/llm-perf-opt/deepprof/harness/config"
	"github.com/llm-perf-opt/deepprof/harness/ncu"
	"github.com/llm-perf-opt/deepprof/harness/ranks"
)

// A multi-GPU workload (workload.launcher) runs every step under its
// launcher, so each rank is a process of the run: stage 1, the CUPTI
// timeline (the library is in every rank) and the oracle alike. The deep
// pass is one ncu per rank, started in each rank by a wrapper the session
// writes (package ranks), each writing its own report under MAIN/ncu/ranks/;
// never one ncu around the launcher, which fails at the first collective
// (fixtures/logs/ncu-one-ncu-over-torchrun-nccl.txt). The collectives are
// left out of it (withoutCollectives). workload.launcher.deep_pass says
// whether the ranks meet ncu at once (lockstep: one run, every rank
// replaying its kernels while the others wait in their next collective) or
// one at a time (one run per rank, the others plain).

// rankSteps are the deep pass and its exports for every rank.
func (s *Session) rankSteps(mainDir string, deep ncu.Pass, env []string, note string, details []string) ([]Step, error) {
	w := s.Cfg.Workload
	n := w.Launcher.Ranks()
	program := w.Command()
	deep.Program = program
	deep.Output = filepath.Join(mainDir, strings.TrimSuffix(artifacts.RankPath(artifacts.RankPlaceholder, artifacts.NcuDeepReport), ".ncu-rep"))
	args, err := deep.Args()
	if err != nil {
		return nil, fmt.Errorf("deep pass: %w", err)
	}
	// ncu's own messages per rank (the ==PROF== lines the diagnosis
	// reads), apart from the ranks' shared console.
	profiler := append([]string{s.Ncu}, args[:len(args)-len(program)]...)
	profiler = append(profiler, "--log-file", filepath.Join(mainDir, artifacts.RankPath(artifacts.RankPlaceholder, artifacts.NcuDeepLog)))
	py := w.Python
	if py == "" {
		py = "python3"
	}
	script := filepath.Join(mainDir, artifacts.NcuRankExec)
	details = append(details, fmt.Sprintf("one ncu per rank, %d ranks, each started in its rank by MAIN/%s under the launcher and writing MAIN/%s; never one ncu around the launcher, which fails at the first collective",
		n, artifacts.NcuRankExec, artifacts.RankPath(artifacts.RankPlaceholder, artifacts.NcuDeepReport)))
	var steps []Step
	if w.Launcher.DeepPass == config.DeepOneAtATime {
		details = append(details, "one rank at a time (workload.launcher.deep_pass=one_at_a_time): a run per rank, ncu in that rank alone, the others plain")
		for r := range n {
			steps = append(steps, Step{ID: StepNcuDeep, Variant: rankVariant(r), Argv: w.Launched(ranks.Exec(py, script, r, profiler, program)),
				Env: env, Log: artifacts.RankPath(strconv.Itoa(r), rankConsoleLog), Note: note, Details: details})
		}
	} else {
		details = append(details, "every rank at once (workload.launcher.deep_pass=lockstep): one run, each rank replaying its kernels while the others wait in their next collective")
		steps = append(steps, Step{ID: StepNcuDeep, Argv: w.Launched(ranks.Exec(py, script, ranks.All, profiler, program)),
			Env: env, Log: artifacts.NcuDeepLog, Note: note, Details: details})
	}
	for r := range n {
		report := filepath.Join(mainDir, artifacts.RankPath(strconv.Itoa(r), artifacts.NcuDeepReport))
		steps = append(steps,
			Step{ID: StepExportRaw, Variant: rankVariant(r), Argv: append([]string{s.Ncu}, ncu.ExportArgs(report, "raw", "")...), Stdout: artifacts.RankPath(strconv.Itoa(r), artifacts.NcuRaw)},
			Step{ID: StepExportDetails, Variant: rankVariant(r), Argv: append([]string{s.Ncu}, ncu.ExportArgs(report, "details", "")...), Stdout: artifacts.RankPath(strconv.Itoa(r), artifacts.NcuDetails)},
		)
	}
	return steps, nil
}

// rankConsoleLog is a one-rank deep pass's console (the ranks' output),
// beside its ncu log.
const rankConsoleLog = "console.log"

func rankVariant(r int) string { return "rank " + strconv.Itoa(r) }

// deepRanks runs the deep pass of every rank and exports each rank's
// report. A rank whose ncu wrote no report is missing (the manifest says
// why) and the run partial; the other ranks' reports are kept and used.
func (s *Session) deepRanks(ctx context.Context, run *artifacts.Run, steps []Step) error {
	if err := run.Write(artifacts.NcuRankExec, ranks.Script); err != nil {
		return err
	}
	n := s.Cfg.Workload.Launcher.Ranks()
	for r := range n {
		if err := os.MkdirAll(filepath.Dir(run.Path(artifacts.RankPath(strconv.Itoa(r), artifacts.NcuDeepLog))), 0o755); err != nil {
			return err
		}
	}
	var errs []error
	judgeRank := func(r int, err error) {
		log := artifacts.RankPath(strconv.Itoa(r), artifacts.NcuDeepLog)
		if jerr := s.judge(run, "ncu-deep ("+rankVariant(r)+")", log, err, diagnose(run, log, err)); jerr != nil {
			errs = append(errs, fmt.Errorf("%s: %w", rankVariant(r), jerr))
		}
	}
	for _, st := range steps {
		if st.ID != StepNcuDeep {
			continue
		}
		err := s.step(ctx, run, st, true)
		if st.Variant == "" {
			for r := range n {
				judgeRank(r, err)
			}
		} else {
			r, _ := strconv.Atoi(strings.TrimPrefix(st.Variant, "rank "))
			judgeRank(r, err)
		}
		if isStopped(err) {
			break
		}
	}
	profiled := 0
	ectx, cancel := afterGrace(ctx, exportGrace)
	defer cancel()
	for _, st := range steps {
		if st.ID != StepExportRaw && st.ID != StepExportDetails {
			continue
		}
		r, _ := strconv.Atoi(strings.TrimPrefix(st.Variant, "rank "))
		report := artifacts.RankPath(strconv.Itoa(r), artifacts.NcuDeepReport)
		if !exists(run.Path(report)) {
			continue
		}
		if st.ID == StepExportRaw {
			profiled++
		}
		if err := s.step(ectx, run, st, false); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", st.Name(), err))
		} else if a, ok := run.Manifest().Find(report); ok && a.Status == artifacts.StatusPartial {
			run.Record(st.Stdout, artifacts.StatusPartial, "exported from the partial report of a failed deep pass")
		}
	}
	if profiled == 0 {
		return fmt.Errorf("deep pass: no rank's ncu wrote a report (%d ranks): %w", n, errors.Join(errs...))
	}
	if profiled < n {
		run.Note("deep pass: %d of %d ranks profiled; the kernels of the others have no deep metrics", profiled, n)
	}
	return errors.Join(errs...)
}
