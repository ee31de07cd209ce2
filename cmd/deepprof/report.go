package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/llm-perf-opt/deepprof/internal/config"
	"github.com/llm-perf-opt/deepprof/internal/rebuild"
	"github.com/llm-perf-opt/deepprof/internal/regions"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
)

// now is the clock of commands that stamp what they write; tests replace it.
var now = time.Now

func runReport(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("report", "report [--top N] MAIN", stderr)
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
	run, err := rundir.Open(pos[0])
	var notRun *rundir.NotRunDirError
	if errors.As(err, &notRun) {
		// Nothing is written into a directory that is not a run directory.
		return &exitError{code: 2, err: err}
	}
	if err != nil {
		return err
	}
	dc := reportConfig(run, stderr)
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "top" {
			dc.TopN = *top
		}
	})
	rerr := rebuild.Rebuild(run, dc)
	if err := run.WriteRebuiltManifest(now()); err != nil {
		return errors.Join(rerr, err)
	}
	if rerr != nil {
		fmt.Fprintf(stdout, "%s: rebuilt in part: the files made from what failed are removed, the others remade; see %s for what is missing and why\n", pos[0], run.Path(rundir.ReportMD))
		readFirst(stdout, run)
		return rerr
	}
	fmt.Fprintf(stdout, "%s: derived files rebuilt (%s lists every file, its source and status); read these first:\n", pos[0], rundir.ReportMD)
	readFirst(stdout, run)
	return nil
}

// reportConfig is the run's own settings for its derived files (the report
// and regions sections of MAIN/config.yaml). A run without a readable
// config.yaml is rebuilt with the defaults, and says so on stderr and in
// its manifest, so that nothing changes silently.
func reportConfig(run *rundir.Run, stderr io.Writer) rebuild.Config {
	def, _ := rebuild.ConfigFor(config.Default())
	def.Regions = regions.DefaultConfig()
	p := run.Path(rundir.ConfigYAML)
	if _, err := os.Stat(p); err != nil {
		return def
	}
	cfg, err := config.Parse(p)
	if err == nil {
		var dc rebuild.Config
		if dc, err = rebuild.ConfigFor(cfg); err == nil {
			return dc
		}
	}
	fmt.Fprintf(stderr, "deepprof: warning: %v; the derived files use the default report settings\n", err)
	run.Note("derived files made with the default report settings: %s could not be read (%v)", rundir.ConfigYAML, err)
	return def
}
