package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/llm-perf-opt/deepprof/harness"
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
	m, err := harness.Merge(*out, pos, harness.ReportOptions{Now: now})
	if ie := (*harness.InputError)(nil); errors.As(err, &ie) {
		return &exitError{code: 2, err: err}
	}
	var noManifest *harness.ManifestError
	var notRebuilt *harness.NotRebuiltError
	if m == nil || errors.As(err, &noManifest) || errors.As(err, &notRebuilt) {
		return err
	}
	fmt.Fprintf(stdout, "%s: merged %d run directories, %d files, ranks %v\n", *out, len(pos), m.Files, m.Ranks)
	if err != nil {
		fmt.Fprintf(stdout, "%s: rebuilt in part; see %s for what is missing and why\n", *out, m.Run.Path(harness.ReportMD))
	}
	readFirst(stdout, m.Run)
	return err
}
