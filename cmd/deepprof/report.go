package main

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/llm-perf-opt/deepprof/harness/artifacts"
	"github.com/llm-perf-opt/deepprof/harness/regions"
	"github.com/llm-perf-opt/deepprof/harness/session"
)

// now is the clock of commands that stamp what they write; tests replace it.
var now = time.Now

func runReport(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("report", "report [--top N] MAIN", stderr)
	top := fs.Int("top", 0, "show the `N` kernels with the most total time in kernels.md (0: all)")
	pos, help, err := parseFlags(fs, args)
	if help || err != nil {
		return err
	}
	if err := onePositional("report", "run directory (MAIN)", pos); err != nil {
		return err
	}
	if *top < 0 {
		return &usageError{fmt.Sprintf("--top %d: must be 0 (all) or more", *top)}
	}
	run, err := artifacts.Open(pos[0])
	if err != nil {
		return err
	}
	rerr := session.Rebuild(run, session.DeriveConfig{TopN: *top, Regions: regions.DefaultConfig()})
	if err := run.WriteManifest(now()); err != nil {
		return errors.Join(rerr, err)
	}
	fmt.Fprintf(stdout, "%s: derived files rebuilt; see %s\n", pos[0], run.Path(artifacts.ReportMD))
	return rerr
}
