package session

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/llm-perf-opt/deepprof/harness/artifacts"
	"github.com/llm-perf-opt/deepprof/harness/config"
	"github.com/llm-perf-opt/deepprof/harness/kernels"
	"github.com/llm-perf-opt/deepprof/harness/ncu"
	"github.com/llm-perf-opt/deepprof/harness/regions"
	"github.com/llm-perf-opt/deepprof/harness/workload"
)

// Session is one Stage 2 profiling session.
type Session struct {
	Cfg *config.Config
	// ConfigYAML is what config.yaml holds: the fully resolved configuration.
	ConfigYAML []byte
	Runner     Runner
	Ncu        string // path of ncu
	// Env returns env.json's content; nil writes env.json as skipped.
	Env func() ([]byte, error)
	// Now is the clock; Log gets one line per step (nil: quiet).
	Now func() time.Time
	Log io.Writer
}

// Step is one program the session runs, as the dry run prints it.
type Step struct {
	Name   string
	Argv   []string
	Env    []string
	Stdout string // file (relative to MAIN) that receives stdout; "" for the log
	Log    string // file (relative to MAIN) that receives stdout and stderr
	Note   string
}

const timingMetric = ncu.DurationMetric

// includes turns the configured NVTX ranges into ncu filter expressions.
func includes(cfg *config.Config, paths []string) []string {
	var out []string
	for _, p := range paths {
		domain, rest := "", p
		if d, r, ok := strings.Cut(p, "@"); ok && !strings.Contains(d, `\`) && !strings.Contains(d, "/") {
			domain, rest = d, r
		} else if cfg.NVTX.Domain != "" {
			domain = cfg.NVTX.Domain
		}
		out = append(out, ncu.IncludeExpr(domain, strings.Split(rest, "/")))
	}
	return out
}

func (s *Session) spec(mainDir string) workload.Spec {
	return workload.Spec{
		Argv: s.Cfg.Workload.Command(), Env: s.Cfg.Workload.Env, Inputs: s.Cfg.Workload.Inputs,
		Repeats: s.Cfg.Workload.Repeats, Visible: visible(s.Cfg.Device), NVTXDomain: s.Cfg.NVTX.Domain,
		Model: modelMap(s.Cfg.Model),
	}
}

// visible is CUDA_VISIBLE_DEVICES for a device spec: "cuda:1" -> "1"; a
// UUID passes through.
func visible(device string) string {
	if rest, ok := strings.CutPrefix(device, "cuda:"); ok {
		return rest
	}
	if device == "cuda" {
		return "0"
	}
	return device
}

func modelMap(m config.Model) map[string]any {
	out := map[string]any{}
	for k, v := range m.Options {
		out[k] = v
	}
	for k, v := range map[string]string{"name": m.Name, "arch": m.Arch, "dtype": m.Dtype} {
		if v != "" {
			out[k] = v
		}
	}
	return out
}

func (s *Session) pass(out string, metrics []string, set string, sections []string, regex string, count int) ncu.Pass {
	c := s.Cfg.NCU
	p := ncu.Pass{
		Output: out, TargetProcesses: c.TargetProcesses, NVTX: true,
		Includes: includes(s.Cfg, s.Cfg.NVTX.Include), Excludes: includes(s.Cfg, s.Cfg.NVTX.Exclude),
		Set: set, Sections: sections, Metrics: metrics, ReplayMode: c.ReplayMode,
		LaunchSkip: c.LaunchSkip, LaunchCount: count, Force: true, Extra: c.ExtraArgs,
		Program: s.Cfg.Workload.Command(),
	}
	if regex != "" {
		p.KernelNameBase, p.KernelRegex = c.KernelNameBase, regex
	}
	return p
}

// Plan returns every step in order. The deep pass's kernel filter comes
// from the timing pass; before it has run, topKernels is nil and the plan
// says so.
func (s *Session) Plan(mainDir string, topKernels []string) ([]Step, error) {
	spec := s.spec(mainDir)
	stage1Env, err := spec.Environ(workload.PhaseStage1, filepath.Join(mainDir, artifacts.Stage1Report))
	if err != nil {
		return nil, err
	}
	ncuEnv, err := spec.Environ(workload.PhaseNcu, "")
	if err != nil {
		return nil, err
	}
	steps := []Step{
		{Name: "ncu-sections", Argv: append([]string{s.Ncu}, ncu.ListSectionsArgs()...), Stdout: artifacts.NcuSections},
		{Name: "stage1", Argv: spec.Argv, Env: stage1Env, Log: artifacts.Stage1Log},
	}
	timing := s.pass(filepath.Join(mainDir, "ncu", "timing"), []string{timingMetric}, "", nil, "", 0)
	targs, err := timing.Args()
	if err != nil {
		return nil, fmt.Errorf("timing pass: %w", err)
	}
	steps = append(steps,
		Step{Name: "ncu-timing", Argv: append([]string{s.Ncu}, targs...), Env: ncuEnv, Log: artifacts.NcuTimingLog,
			Note: "timeline: an ncu timing pass (" + timingMetric + ", same NVTX gating)"},
		Step{Name: "export-timing-raw", Argv: append([]string{s.Ncu}, ncu.ExportArgs(filepath.Join(mainDir, artifacts.NcuTimingReport), "raw", "")...), Stdout: artifacts.NcuTimingRaw},
	)
	c := s.Cfg.NCU
	regex, count, note := "", c.LaunchCount, "deep pass over every launch in the NVTX ranges"
	if len(topKernels) > 0 {
		regex = ncu.KernelRegex(topKernels)
		if count == 0 {
			count = c.PerKernelLaunches * len(topKernels)
		}
		note = fmt.Sprintf("deep pass on the top %d kernels, %d launches in all", len(topKernels), count)
	} else if topKernels == nil {
		note = "deep pass on the top-N kernels of the timing pass (known once it has run)"
	}
	deep := s.pass(filepath.Join(mainDir, "ncu", "deep"), c.Metrics, c.Set, c.Sections, regex, count)
	dargs, err := deep.Args()
	if err != nil {
		return nil, fmt.Errorf("deep pass: %w", err)
	}
	steps = append(steps,
		Step{Name: "ncu-deep", Argv: append([]string{s.Ncu}, dargs...), Env: ncuEnv, Log: artifacts.NcuDeepLog, Note: note},
		Step{Name: "export-raw", Argv: append([]string{s.Ncu}, ncu.ExportArgs(filepath.Join(mainDir, artifacts.NcuDeepReport), "raw", "")...), Stdout: artifacts.NcuRaw},
		Step{Name: "export-details", Argv: append([]string{s.Ncu}, ncu.ExportArgs(filepath.Join(mainDir, artifacts.NcuDeepReport), "details", "")...), Stdout: artifacts.NcuDetails},
	)
	return steps, nil
}

// FormatPlan writes the dry run: each step's argv (quoted where needed),
// environment additions and outputs.
func FormatPlan(w io.Writer, steps []Step) error {
	var b strings.Builder
	for i, st := range steps {
		fmt.Fprintf(&b, "%d. %s", i+1, st.Name)
		if st.Note != "" {
			fmt.Fprintf(&b, " (%s)", st.Note)
		}
		b.WriteString("\n   argv:")
		for _, a := range st.Argv {
			fmt.Fprintf(&b, " %s", quoteArg(a))
		}
		b.WriteString("\n")
		for _, e := range st.Env {
			fmt.Fprintf(&b, "   env: %s\n", e)
		}
		if st.Stdout != "" {
			fmt.Fprintf(&b, "   stdout: MAIN/%s\n", st.Stdout)
		}
		if st.Log != "" {
			fmt.Fprintf(&b, "   log: MAIN/%s\n", st.Log)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func quoteArg(a string) string {
	if a != "" && !strings.ContainsAny(a, " \t\n\"'\\$`|&;<>()*?[]{}!#~") {
		return a
	}
	return "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
}

func (s *Session) logf(format string, args ...any) {
	if s.Log != nil {
		fmt.Fprintf(s.Log, "deepprof: "+format+"\n", args...)
	}
}

// Run runs the session into a new run directory and returns it. The run
// directory and its manifest are written whatever happens; an error means
// the run is failed or partial, and the manifest says which and why.
func (s *Session) Run(ctx context.Context) (*artifacts.Run, error) {
	now := s.Now
	if now == nil {
		now = time.Now
	}
	run, err := artifacts.Create(s.Cfg.Run.Root, s.Cfg.Run.ID, now())
	if err != nil {
		return nil, err
	}
	s.logf("run directory %s", run.Dir)
	err = s.run(ctx, run)
	if err != nil {
		if ctx.Err() != nil {
			run.MarkPartial("interrupted: " + err.Error())
		} else {
			run.MarkPartial(err.Error())
		}
	}
	derr := Rebuild(run, DeriveConfig{TopN: s.Cfg.Report.TopN, Regions: regionsConfig(s.Cfg)})
	if derr != nil {
		run.MarkPartial(derr.Error())
	}
	if werr := run.WriteManifest(now()); werr != nil {
		return run, errors.Join(err, derr, werr)
	}
	return run, errors.Join(err, derr)
}

func (s *Session) run(ctx context.Context, run *artifacts.Run) error {
	if err := run.Write(artifacts.ConfigYAML, s.ConfigYAML); err != nil {
		return err
	}
	if err := s.writeInputs(run); err != nil {
		return err
	}
	if s.Env == nil {
		run.Record(artifacts.EnvJSON, artifacts.StatusSkipped, "no NVML provenance collector given")
	} else if b, err := s.Env(); err != nil {
		run.Record(artifacts.EnvJSON, artifacts.StatusMissing, err.Error())
		run.Note("env.json: %v", err)
	} else if err := run.Write(artifacts.EnvJSON, b); err != nil {
		return err
	}

	steps, err := s.Plan(run.Dir, nil)
	if err != nil {
		return err
	}
	byName := map[string]Step{}
	for _, st := range steps {
		byName[st.Name] = st
	}
	if err := s.step(ctx, run, byName["ncu-sections"]); err != nil {
		run.Note("ncu --list-sections: %v", err)
	}
	if err := os.MkdirAll(filepath.Dir(run.Path(artifacts.Stage1Report)), 0o755); err != nil {
		return err
	}
	if err := s.step(ctx, run, byName["stage1"]); err != nil {
		return fmt.Errorf("stage 1: %w", err)
	}
	if err := checkStage1(run); err != nil {
		return err
	}
	if s.Cfg.Timeline.Tool == "nsys" {
		return errors.New("timeline.tool=nsys: the session does not drive Nsight Systems yet; use timeline.tool=auto or ncu (an ncu timing pass)")
	}
	run.Note("timeline: an ncu timing pass (%s, same NVTX gating) found the top kernels; the session does not drive nsys yet", timingMetric)
	if err := s.profile(ctx, run, byName["ncu-timing"]); err != nil {
		return fmt.Errorf("timing pass: %w", err)
	}
	if err := s.step(ctx, run, byName["export-timing-raw"]); err != nil {
		return fmt.Errorf("timing export: %w", err)
	}
	top, err := s.topKernels(run)
	if err != nil {
		return err
	}
	steps, err = s.Plan(run.Dir, top)
	if err != nil {
		return err
	}
	for _, st := range steps {
		byName[st.Name] = st
	}
	run.Note("%s", byName["ncu-deep"].Note)
	deepErr := s.profile(ctx, run, byName["ncu-deep"])
	if deepErr != nil && !exists(run.Path(artifacts.NcuDeepReport)) {
		return fmt.Errorf("deep pass: %w", deepErr)
	}
	// A failed pass that left a report keeps what it profiled.
	var errs []error
	if deepErr != nil {
		errs = append(errs, fmt.Errorf("deep pass (its report is kept, partial): %w", deepErr))
	}
	for _, name := range []string{"export-raw", "export-details"} {
		if err := s.step(context.WithoutCancel(ctx), run, byName[name]); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		} else if deepErr != nil {
			run.Record(byName[name].Stdout, artifacts.StatusPartial, "exported from the partial report of a failed deep pass")
		}
	}
	return errors.Join(errs...)
}

// regionsConfig is the profile's region settings (validated when the
// configuration was loaded; the defaults if they somehow are not valid).
func regionsConfig(cfg *config.Config) regions.Config {
	rc, err := cfg.Regions.Config()
	if err != nil {
		return regions.DefaultConfig()
	}
	return rc
}

// step runs one step, its output going to its files.
func (s *Session) step(ctx context.Context, run *artifacts.Run, st Step) error {
	s.logf("%s: %s", st.Name, strings.Join(st.Argv, " "))
	var out, log bytes.Buffer
	cmd := Command{Argv: st.Argv, Env: st.Env, Stdout: &log, Stderr: &log}
	if st.Stdout != "" {
		cmd.Stdout = &out
	}
	res, err := s.Runner.Run(ctx, cmd)
	if st.Log != "" {
		if werr := run.Write(st.Log, log.Bytes()); werr != nil {
			return werr
		}
	}
	if err != nil {
		return err
	}
	if st.Stdout != "" {
		if werr := run.Write(st.Stdout, out.Bytes()); werr != nil {
			return werr
		}
	}
	if res.Interrupted {
		return fmt.Errorf("interrupted after %s", res.Duration.Round(time.Millisecond))
	}
	if res.ExitCode != 0 {
		tail := lastLines(log.Bytes(), 5)
		return fmt.Errorf("%s exited with status %d: %s", filepath.Base(st.Argv[0]), res.ExitCode, tail)
	}
	return nil
}

// profile runs an ncu profiling step and turns what ncu printed into the
// run's verdict: findings go to the manifest's notes; a failure that left a
// report keeps it and marks the run partial.
func (s *Session) profile(ctx context.Context, run *artifacts.Run, st Step) error {
	err := s.step(ctx, run, st)
	logb, _ := os.ReadFile(run.Path(st.Log))
	findings := ncu.Diagnose(logb)
	for _, f := range findings {
		run.Note("%s: %s:%d: %s Next: %s", st.Name, st.Log, f.Line, f.Message, f.Next)
	}
	report := strings.TrimSuffix(st.Log, ".log") + ".ncu-rep"
	if exists(run.Path(report)) {
		if err != nil || len(findings) > 0 {
			run.Record(report, artifacts.StatusPartial, "ncu reported problems: see the notes")
		} else {
			run.Record(report, artifacts.StatusComplete, "")
		}
	} else if err == nil {
		reason := "ncu wrote no report"
		if len(findings) > 0 {
			reason += ": " + findings[0].Message
		}
		run.Record(report, artifacts.StatusMissing, reason)
		return errors.New(reason)
	}
	return err
}

func (s *Session) topKernels(run *artifacts.Run) ([]string, error) {
	f, err := os.Open(run.Path(artifacts.NcuTimingRaw))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tab, err := kernels.FromReader(ncu.NewReader(f, artifacts.NcuTimingRaw, ncu.Options{}), artifacts.NcuTimingRaw)
	if err != nil {
		return nil, err
	}
	tab = tab.Top(s.Cfg.Timeline.TopN)
	var names []string
	seen := map[string]bool{}
	for _, k := range tab.Kernels {
		if !seen[k.Name] {
			seen[k.Name] = true
			names = append(names, k.Name)
		}
	}
	return names, nil
}

func checkStage1(run *artifacts.Run) error {
	f, err := os.Open(run.Path(artifacts.Stage1Report))
	if err != nil {
		run.Record(artifacts.Stage1Report, artifacts.StatusMissing, "the workload wrote no report to $"+workload.EnvReport)
		return fmt.Errorf("stage 1: the workload wrote no report to $%s (%s)", workload.EnvReport, artifacts.Stage1Report)
	}
	defer f.Close()
	if _, err := workload.ReadReport(f, artifacts.Stage1Report); err != nil {
		run.Record(artifacts.Stage1Report, artifacts.StatusPartial, err.Error())
		return err
	}
	run.Record(artifacts.Stage1Report, artifacts.StatusComplete, "")
	return nil
}

// inputs is inputs.yaml: exactly what the workload was run with.
type inputs struct {
	Argv   []string `yaml:"argv"`
	Env    []string `yaml:"env"`
	Files  []file   `yaml:"files"`
	Device string   `yaml:"device"`
}

type file struct {
	Path  string `yaml:"path"`
	Bytes int64  `yaml:"bytes"`
}

func (s *Session) writeInputs(run *artifacts.Run) error {
	env, err := s.spec(run.Dir).Environ(workload.PhaseStage1, filepath.Join(run.Dir, artifacts.Stage1Report))
	if err != nil {
		return err
	}
	in := inputs{Argv: s.Cfg.Workload.Command(), Env: env, Device: s.Cfg.Device}
	for _, p := range s.Cfg.Workload.Inputs {
		st, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("workload input %s: %w", p, err)
		}
		in.Files = append(in.Files, file{Path: p, Bytes: st.Size()})
	}
	b, err := yaml.Marshal(in)
	if err != nil {
		return err
	}
	return run.Write(artifacts.InputsYAML, b)
}

func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
