package main

import (
	"fmt"
	"io"

	"github.com/llm-perf-opt/deepprof/harness/baseline"
)

// runBaseline is "deepprof baseline MAIN": the run's baseline file on stdout.
func runBaseline(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("baseline", "baseline [--top N] MAIN", stderr)
	top := fs.Int("top", baseline.DefaultTop, "keep the `N` kernels with the most total time (0: all)")
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
	b, err := baseline.FromRunTop(pos[0], *top)
	if err != nil {
		return err
	}
	return b.Write(stdout)
}
