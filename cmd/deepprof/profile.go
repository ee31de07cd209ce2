package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"syscall"

	"github.com/llm-perf-opt/deepprof/harness"
)

// runProfile is "deepprof profile": a Stage 2 session into a new run
// directory. When it is done it prints MAIN and a one-line verdict on
// stdout; a run that is not complete is an error (exit status 1) whose
// reason main prints on stderr.
//
// Ctrl-C (or SIGTERM) once is enough: the program running (ncu and the
// workload, in their own process group) gets SIGINT and SIGKILL 10s later,
// a deep-pass report ncu managed to write is still exported (30s at most),
// and the manifest is written, saying "interrupted during STEP". Further
// Ctrl-Cs are caught and change nothing: killing deepprof then would leave
// the workload running on the GPU and the run directory without its
// manifest.
func runProfile(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	args, command, err := splitCommand(args)
	if err != nil {
		return err
	}
	fs := newFlagSet("profile", "profile [--profile NAME]... [--profiles DIR] [--check] [--dry-run] [--print-config] [--no-preflight] [key=value | +key=value | group=name]... [-- CMD ARGS...]", stdout)
	fs.extra = profileExamples
	var profiles stringList
	fs.Var(&profiles, "profile", "compose profile `NAME` (e.g. stage2, workloads/llama3-8b) or a .yaml file; repeatable; default stage2")
	dir := fs.String("profiles", harness.DefaultProfilesDir, "the profiles `DIR`")
	dry := fs.Bool("dry-run", false, "run the preflight checks and print what they found, then every step's argv and outputs; run nothing and write nothing: a program a profile file names by its path, or whose environment it sets, is shown and not started")
	printConfig := fs.Bool("print-config", false, "print the composed configuration, and where each value came from (a profile file and line, the embedded defaults, an override, the command after --), then exit; write nothing")
	noPreflight := fs.Bool("no-preflight", false, "start the session without the preflight checks (GPU, ncu, the workload's files and interpreter)")
	check := fs.Bool("check", false, "also run the torch.profiler check: the program once more under torch.profiler, its kernel times compared with the CUPTI run's (timeline.oracle=true; only a workload that supports DEEPPROF_PHASE=oracle, such as the default one, writes its figures)")
	pos, help, err := parseFlags(fs, args)
	if help || err != nil {
		return err
	}
	sess, err := harness.NewProfile(harness.ProfileOptions{Profiles: profiles, ProfilesDir: *dir, Overrides: pos, Command: command,
		Check: *check, NoPreflight: *noPreflight, DryRun: *dry, Log: stderr, Progress: stderr, ProgressLive: liveProgress(stderr), Now: now})
	if oe := (*harness.OptionError)(nil); errors.As(err, &oe) {
		return &usageError{oe.Msg}
	}
	if err != nil {
		return err
	}
	if *printConfig {
		return sess.WriteConfig(stdout)
	}
	if err := sess.Prepare(); err != nil {
		return err
	}
	if *dry {
		// What the preflight found is part of the dry run's answer; only a
		// plan that cannot be made is its error.
		if err := sess.WritePreflight(stdout); err != nil {
			return err
		}
		return sess.WritePlan(stdout)
	}
	if err := sess.WritePreflight(stderr); err != nil {
		return err
	}
	if err := sess.Ready(); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	live := liveProgress(stderr)
	tell := context.AfterFunc(ctx, func() {
		if live {
			fmt.Fprintln(stderr) // end the status line
		}
		fmt.Fprintln(stderr, "deepprof: interrupted: stopping the running step, then writing the manifest; no need to press Ctrl-C again")
	})
	run, err := sess.Run(ctx)
	tell()
	return verdict(stdout, run, err)
}

// readFirst ends profile's and report's output with the paths of what a
// person reads first: the stakeholder summary and the HTML report (those
// the run has).
func readFirst(stdout io.Writer, run *harness.Run) {
	for _, f := range run.ReadFirst() {
		fmt.Fprintf(stdout, "%-7s: %s\n", f.What, harness.EscapeHidden(f.Path))
	}
}

// liveProgress reports whether the progress line may rewrite itself: on a
// terminal, and not under CI (whose logs keep every "\r" frame).
func liveProgress(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && isTerminal(f) && os.Getenv("CI") == ""
}

// verdict prints MAIN and how the run ended ("complete", or "partial: "
// and the reason) and returns the error the command ends with: nil only
// for a complete run.
func verdict(stdout io.Writer, run *harness.Run, err error) error {
	if run == nil {
		return err
	}
	status, reason := run.Status()
	line := status
	if reason != "" {
		line += ": " + reason
	}
	fmt.Fprintf(stdout, "MAIN: %s\n%s\n", run.Dir(), line)
	readFirst(stdout, run)
	switch {
	case !run.Complete():
		return fmt.Errorf("run %s (see %s)", line, run.Path(harness.ReportMD))
	case err != nil:
		return err
	}
	return nil
}

// profileExamples close "deepprof profile --help".
const profileExamples = `
Without -- the workload is the profile's (default: deepprof's own LLM workload, tiny-llama). After --,
any program is the workload: run as that argv (no shell) in the current directory, with your
environment. It needs no deepprof import: its NVTX ranges give the stages (prefill and decode_all
by default, nvtx.include to choose; without them the session profiles the ranges it finds, or the
whole program), and every CUDA process it starts is followed.

For a program after --:
  workload.repeats=N      stage 1 runs it N times, each timed from start to exit (default 1);
                          the profiled steps run it once
  workload.plain_run=always
                          a plain run (stage 1) first; by default (auto) a program run once
                          gets one only if its CUPTI run shows it needs one: it marks no NVTX
                          range, or writes a workload report that has no repeats timed after
                          the library detached (deepprof_cupti_detach) and does not show the
                          library cost at most 5% in its own process; otherwise that run's
                          report or ranges give its stages
  phases.prefill=[...]    which of its NVTX ranges are the prefill and the decode (names or
  phases.decode=[...]     patterns; default [prefill] and [decode, decode_all])
  model.matmul_params=... model.layers=... model.heads=... model.head_dim=... model.dtype=...
  model.prompt_tokens=... model.generated_tokens=... model.batch=...
                          its model's facts, for MFU and MBU (a program that writes no report
                          has none, unless the automatic ranges read them from its
                          transformers config)

The deep metrics (each top kernel's bound):
  ncu.deep_source=library the default: deepprof's CUPTI library replays one launch of each top
                          launch configuration in the CUPTI run itself (CUPTI's range profiler),
                          its time at most 20% of the program's after a first 1.5 s: the program
                          starts once; ncu runs only where the library measured nothing, or
                          where the timeline is nsys's or an ncu timing pass
  ncu.deep_source=ncu     ncu's pass, the program started again under ncu: its rules' advice,
                          and the kernels inside CUDA graphs, which the library cannot replay
  ncu.deep_source=both    both; the summary takes ncu's

Several GPUs (a tensor-parallel model), one process (rank) per GPU:
  workload.launcher.kind=torchrun workload.launcher.nproc_per_node=N
                          every step runs under torchrun (--standalone --no-python), GPUs from
                          device= on; the CUPTI timeline records every rank, and each rank's
                          process measures its own deep metrics (collectives never); with
                          ncu.deep_source=ncu the deep pass is one ncu per rank
  workload.launcher.deep_pass=one_at_a_time|lockstep
                          ncu's pass: one run per rank under ncu (the default), or the ranks
                          under ncu at once (faster; it can deadlock on a collective)
  workload.launcher.deep_ranks=auto|all
                          one_at_a_time profiles rank 0 alone when the CUPTI timeline shows
                          every rank launching the same top kernels (the default, auto), or
                          each rank (all)

Examples:
  deepprof profile                                   # the default session: tiny-llama, random weights
  deepprof profile -- python3 my_generate.py --tokens 32
  deepprof profile nvtx.include=[forward] workload.repeats=3 -- ./build/my_runner --batch 8
  deepprof profile workloads=tiny-llama-tp2          # tensor-parallel over 2 GPUs under torchrun
  deepprof profile workload.launcher.kind=torchrun workload.launcher.nproc_per_node=4 -- python3 tp_generate.py
`

// splitCommand splits "deepprof profile" arguments at the first "--": what
// comes before it are flags and overrides, what follows the program to
// profile (nil without "--").
func splitCommand(args []string) (before, command []string, err error) {
	i := slices.Index(args, "--")
	if i < 0 {
		return args, nil, nil
	}
	if i == len(args)-1 {
		return nil, nil, &usageError{"nothing after --: give the program to profile, as in deepprof profile -- python3 my_script.py"}
	}
	return args[:i], args[i+1:], nil
}
