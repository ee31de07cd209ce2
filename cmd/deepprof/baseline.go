package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/llm-perf-opt/deepprof/harness"
)

// runBaseline is "deepprof baseline MAIN": the run's baseline file on stdout.
func runBaseline(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("baseline", "baseline [--top N] [--allow-partial] MAIN", stdout)
	top := fs.Int("top", harness.DefaultBaselineTop, "keep the `N` kernels with the most total time (0: all)")
	allow := fs.Bool("allow-partial", false, "write a baseline of a run that is not complete (its manifest says partial, missing or stale files)")
	pos, help, err := parseFlags(fs, args)
	if help || err != nil {
		return err
	}
	if err := onePositional("baseline", "run directory (MAIN)", pos); err != nil {
		return err
	}
	if *top < 0 {
		return &usageError{fmt.Sprintf("--top %d: must be 0 (all) or more", *top)}
	}
	err = harness.Baseline(pos[0], harness.BaselineOptions{Top: *top, AllowPartial: *allow}, stdout)
	if ie := (*harness.InputError)(nil); errors.As(err, &ie) {
		return &exitError{2, err}
	}
	return err
}
