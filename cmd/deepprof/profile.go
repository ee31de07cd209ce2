package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/llm-perf-opt/deepprof/harness/config"
	"github.com/llm-perf-opt/deepprof/harness/gpu"
	"github.com/llm-perf-opt/deepprof/harness/session"
	"github.com/llm-perf-opt/deepprof/harness/tools"
)

func runProfile(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("profile", "profile [--profile NAME]... [--profiles DIR] [--dry-run] [key=value | +key=value | group=name]...", stderr)
	var profiles stringList
	fs.Var(&profiles, "profile", "compose profile `NAME` (e.g. stage2, workloads/llama3-8b) or a .yaml file; repeatable; default stage2")
	dir := fs.String("profiles", config.DefaultDir, "the profiles `DIR`")
	dry := fs.Bool("dry-run", false, "check the configuration, the workload's inputs and the tools, and print every step's argv and outputs; run nothing")
	pos, err := parseFlags(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
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
	s := &session.Session{Cfg: cfg, ConfigYAML: y, Runner: session.ExecRunner{}, Ncu: ncuPath, Now: now, Log: stderr}
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
	sel, err := gpu.ParseDevice(cfg.Device)
	if err != nil {
		return err
	}
	s.Env = func() ([]byte, error) {
		return session.NewEnvInfo(func() (gpu.Provenance, error) { return gpu.Collect(gpu.Open(), sel) }, found, toolErrs).JSON()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	run, err := s.Run(ctx)
	if run != nil {
		fmt.Fprintf(stdout, "%s\n", run.Dir)
	}
	return err
}
