package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/llm-perf-opt/deepprof/harness/artifacts"
	"github.com/llm-perf-opt/deepprof/harness/config"
	"github.com/llm-perf-opt/deepprof/harness/gpu"
	"github.com/llm-perf-opt/deepprof/harness/ncu"
	"github.com/llm-perf-opt/deepprof/harness/rundir"
	"github.com/llm-perf-opt/deepprof/harness/session"
	"github.com/llm-perf-opt/deepprof/harness/tools"
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
	fs := newFlagSet("profile", "profile [--profile NAME]... [--profiles DIR] [--dry-run] [key=value | +key=value | group=name]...", stderr)
	var profiles stringList
	fs.Var(&profiles, "profile", "compose profile `NAME` (e.g. stage2, workloads/llama3-8b) or a .yaml file; repeatable; default stage2")
	dir := fs.String("profiles", config.DefaultDir, "the profiles `DIR`")
	dry := fs.Bool("dry-run", false, "check the configuration, the workload's inputs and the tools, and print every step's argv and outputs; run nothing")
	pos, help, err := parseFlags(fs, args)
	if help || err != nil {
		return err
	}
	cfg, err := config.Load(config.LoadOptions{Dir: *dir, Profiles: profiles, Overrides: pos})
	if err != nil {
		return err
	}
	y, err := cfg.YAML()
	if err != nil {
		return err
	}
	var problems []error
	if err := cfg.CheckInputs("."); err != nil {
		problems = append(problems, err)
	}
	for _, a := range cfg.Workload.Command() {
		if filepath.Ext(a) == ".py" {
			if _, err := os.Stat(a); err != nil {
				problems = append(problems, fmt.Errorf("workload script %s: %w", a, err))
			}
		}
	}
	ncuPath := cfg.NCU.Path
	var found = map[string]tools.Tool{}
	var toolErrs = map[string]error{}
	if ncuPath == "" {
		t, err := tools.Find("ncu", tools.EnvFromOS())
		if err != nil {
			problems = append(problems, err)
			toolErrs["ncu"] = err
			ncuPath = "ncu"
		} else {
			ncuPath = t.Path
		}
	}
	s := &session.Session{Cfg: cfg, ConfigYAML: y, Runner: session.ExecRunner{}, Ncu: ncuPath, Now: now, Log: stderr,
		Progress: stderr, ProgressLive: liveProgress(stderr)}
	if *dry {
		main := cfg.Run.Root + "/" + cfg.Run.ID
		if cfg.Run.ID == "" {
			main = cfg.Run.Root + "/<run id>"
		}
		steps, err := s.Plan(main, nil)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "MAIN: %s\n", main)
		if err := session.FormatPlan(stdout, steps); err != nil {
			return err
		}
		return errors.Join(problems...)
	}
	if len(problems) > 0 {
		return errors.Join(problems...)
	}
	if t, err := tools.Probe(context.Background(), ncuPath); err == nil {
		found["ncu"] = t
	} else {
		toolErrs["ncu"] = err
	}
	// env.json names nsys too: where it is and its version, or why there
	// is none (the session decides from the same search whether to use it).
	if p := cfg.Nsys.Path; p != "" {
		if t, err := tools.Probe(context.Background(), p); err == nil {
			found["nsys"] = t
		} else {
			toolErrs["nsys"] = err
		}
	} else if t, err := tools.Find("nsys", tools.EnvFromOS()); err != nil {
		toolErrs["nsys"] = err
	} else if t, err = tools.Probe(context.Background(), t.Path); err == nil {
		found["nsys"] = t
	} else {
		toolErrs["nsys"] = err
	}
	sel, err := gpu.ParseDevice(cfg.Device)
	if err != nil {
		return err
	}
	s.Env = func() ([]byte, error) {
		return rundir.NewEnvInfo(func() (gpu.Provenance, error) { return gpu.Collect(gpu.Open(), sel) }, found, toolErrs).JSON()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	tell := context.AfterFunc(ctx, func() {
		if s.ProgressLive {
			fmt.Fprintln(stderr) // end the status line
		}
		fmt.Fprintln(stderr, "deepprof: interrupted: stopping the running step, then writing the manifest; no need to press Ctrl-C again")
	})
	run, err := s.Run(ctx)
	tell()
	return verdict(stdout, run, err)
}

// liveProgress reports whether the progress line may rewrite itself: on a
// terminal, and not under CI (whose logs keep every "\r" frame).
func liveProgress(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && ncu.IsTerminal(f) && os.Getenv("CI") == ""
}

// verdict prints MAIN and how the run ended ("complete", or "partial: "
// and the reason) and returns the error the command ends with: nil only
// for a complete run.
func verdict(stdout io.Writer, run *artifacts.Run, err error) error {
	if run == nil {
		return err
	}
	m := run.Manifest()
	line := string(m.Status)
	if m.Reason != "" {
		line += ": " + m.Reason
	}
	fmt.Fprintf(stdout, "MAIN: %s\n%s\n", run.Dir, line)
	switch {
	case m.Status != artifacts.StatusComplete:
		return fmt.Errorf("run %s (see %s)", line, filepath.Join(run.Dir, artifacts.ReportMD))
	case err != nil:
		return err
	}
	return nil
}
