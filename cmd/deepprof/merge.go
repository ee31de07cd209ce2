package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/llm-perf-opt/deepprof/harness"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
)

// runMerge is deepprof merge: rundir.Make copies the nodes' raw outputs
// into a new run directory, and the rebuild of deepprof report makes its
// derived files.
func runMerge(args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("merge", "merge --out MAIN RUN...", stdout)
	out := fs.String("out", "", "the new run directory `MAIN` (must not exist)")
	pos, help, err := parseFlags(fs, args)
	if help || err != nil {
		return err
	}
	if *out == "" {
		return &usageError{"merge: --out MAIN is required: the new run directory to write"}
	}
	if len(pos) == 0 {
		return &usageError{"merge: name the run directories to merge (one per node)"}
	}
	if _, err := os.Stat(*out); err == nil {
		return &exitError{code: 2, err: fmt.Errorf("merge: %s exists: give a new directory", *out)}
	}
	plan, err := harness.Merge(pos)
	var notRun *rundir.NotRunDirError
	if errors.As(err, &notRun) {
		return &exitError{code: 2, err: err}
	}
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(*out)
	if err != nil {
		return err
	}
	run, err := rundir.Create(filepath.Dir(abs), filepath.Base(abs), now())
	if err != nil {
		return err
	}
	if err := plan.Write(run); err != nil {
		// The run directory says it stopped, and where.
		return errors.Join(err, run.WriteManifest(now()))
	}
	rerr := harness.ReportRun(run, harness.ReportOptions{Now: now})
	var noManifest *harness.ManifestError
	var notRebuilt *harness.NotRebuiltError
	if errors.As(rerr, &noManifest) || errors.As(rerr, &notRebuilt) {
		return rerr
	}
	fmt.Fprintf(stdout, "%s: merged %d run directories, %d files, ranks %v\n", *out, len(pos), len(plan.Files), plan.Ranks())
	if rerr != nil {
		fmt.Fprintf(stdout, "%s: rebuilt in part; see %s for what is missing and why\n", *out, run.Path(rundir.ReportMD))
	}
	readFirst(stdout, run)
	return rerr
}
