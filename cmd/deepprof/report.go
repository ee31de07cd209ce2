package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/llm-perf-opt/deepprof/harness"
)

// now is the clock of commands that stamp what they write; tests replace it.
var now = time.Now

func runReport(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("report", "report [--top N] MAIN", stdout)
	top := fs.Int("top", 0, "show the `N` kernels with the most total time in kernels.md (0: all; default: the run's report.top_n)")
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
	o := harness.ReportOptions{Now: now}
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "top" {
			o.TopN = top
		}
	})
	run, rerr := harness.Report(pos[0], o)
	if ie := (*harness.InputError)(nil); errors.As(rerr, &ie) {
		// Nothing is written into a directory that is not a run directory.
		return &exitError{code: 2, err: rerr}
	}
	var noManifest *harness.ManifestError
	var notRebuilt *harness.NotRebuiltError
	if run == nil || errors.As(rerr, &noManifest) || errors.As(rerr, &notRebuilt) {
		return rerr
	}
	shown := harness.EscapeHidden(pos[0]) // a path is printed as data: no line of it forges another
	if rerr != nil {
		fmt.Fprintf(stdout, "%s: rebuilt in part: the files made from what failed are removed, the others remade; see %s for what is missing and why\n", shown, harness.EscapeHidden(run.Path(harness.ReportMD)))
		readFirst(stdout, run)
		return rerr
	}
	if why, ok := run.Partial(); ok {
		// Made whole from what the run holds, which is not whole: the
		// numbers are not the run's, and the exit says so.
		fmt.Fprintf(stdout, "%s: derived files rebuilt, and the run is partial: %s; read these first:\n", shown, why)
		readFirst(stdout, run)
		return fmt.Errorf("%s is partial: %s", pos[0], why)
	}
	fmt.Fprintf(stdout, "%s: derived files rebuilt (%s lists every file, its source and status); read these first:\n", shown, harness.ReportMD)
	readFirst(stdout, run)
	return nil
}
