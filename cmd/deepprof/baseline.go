package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/llm-perf-opt/deepprof/harness"
)

// runBaseline is "deepprof baseline MAIN [RUN...]": the run's baseline file
// on stdout; with more runs of the program, the spread between them too.
func runBaseline(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("baseline", "baseline [--top N] [--gate gpu|host] [--allow-partial] MAIN [RUN...]", stdout)
	fs.extra = "\nThe baseline holds MAIN's figures. Further RUNs, runs of the same program each in its own process (same\n" +
		"model, workload shape and kernel source, on the same GPU model), give the spread between runs, MAIN's\n" +
		"included, that it keeps of each stage's mean and each kept kernel's total: a diff against it counts a\n" +
		"change only beyond that spread, by more than the threshold of its nearest edge.\n"
	top := fs.Int("top", harness.DefaultBaselineTop, "keep the `N` kernels with the most total time (0: all)")
	gate := fs.String("gate", "", "the gate kept in the baseline (its \"gate\"): what a diff against it fails on when the diff is given no --gate, which wins over it: `gpu` (a launch-bound stage's wall that moved with its GPU work unchanged is the host's, reported, exit 0) or host (that fails too, exit 1); not given: none kept, gpu")
	allow := fs.Bool("allow-partial", false, "write a baseline of a run that is not complete (its manifest says partial, missing or stale files)")
	pos, help, err := parseFlags(fs, args)
	if help || err != nil {
		return err
	}
	if len(pos) == 0 {
		return &usageError{"baseline takes one run directory (MAIN) or more (MAIN RUN...: runs of one program, for the spread between them), got 0 arguments"}
	}
	if *top < 0 {
		return &usageError{fmt.Sprintf("--top %d: must be 0 (all) or more", *top)}
	}
	if _, err := harness.ParseGate(*gate); err != nil {
		return &usageError{"--" + err.Error()}
	}
	err = harness.Baseline(pos, harness.BaselineOptions{Top: *top, AllowPartial: *allow, Gate: *gate}, stdout)
	if ie := (*harness.InputError)(nil); errors.As(err, &ie) {
		return &exitError{2, err}
	}
	return err
}
