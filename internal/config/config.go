package config

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/llm-perf-opt/deepprof/internal/kernels"

	"go.yaml.in/yaml/v3"

	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/regions"
)

// Config is the whole configuration of a session. Every key of a profile
// or an override is a field here (snake_case, as in the koanf and yaml
// tags); workload.env and model.options are the only free-form maps.
type Config struct {
	Run      Run      `koanf:"run" yaml:"run"`
	Device   string   `koanf:"device" yaml:"device"` // cuda:N, or a GPU UUID (GPU-…, MIG-…)
	Workload Workload `koanf:"workload" yaml:"workload"`
	Model    Model    `koanf:"model" yaml:"model"`
	NVTX     NVTX     `koanf:"nvtx" yaml:"nvtx"`
	// Phases say which stages are the prefill and the decode (names or
	// patterns): the tokens, MFU, charts and GPU-busy figures use them.
	Phases   model.Names `koanf:"phases" yaml:"phases"`
	Timeline Timeline    `koanf:"timeline" yaml:"timeline"`
	NCU      NCU         `koanf:"ncu" yaml:"ncu"`
	Nsys     Nsys        `koanf:"nsys" yaml:"nsys"`
	Regions  Regions     `koanf:"regions" yaml:"regions"`
	Report   Report      `koanf:"report" yaml:"report"`
	// Baseline are the tolerances of performance baselines
	// (golden/perf/*.json, package compare), in percent.
	Baseline model.Tolerances `koanf:"baseline" yaml:"baseline"`

	// Sources are what was composed, in order: "defaults" (Default), each
	// profile file, then "override KEY=VALUE" for each override. It is not
	// part of config.yaml.
	Sources []string `koanf:"-" yaml:"-"`
	// Origins say, key by key, where each value came from: a profile file
	// and line ("(embedded) profiles/stage2.yaml:16" for the embedded
	// defaults), an override, the command after --, or the built-in
	// defaults. Not part of config.yaml.
	Origins []Origin `koanf:"-" yaml:"-"`
}

// Origin is where one configuration key's value came from.
type Origin struct {
	Key, From string
	// InFile: From is a profile file outside the binary (a profiles
	// folder, or a file named with --profile). A file whose content is
	// the binary's own profile of that name counts as the binary's.
	InFile bool
}

// SetInFile is where a profile file outside the binary set key, or any
// key under it (an entry of workload.env): "FILE:LINE" as Origins give
// it, the first such key's; "" when only the binary's own profiles and
// defaults, the overrides and the command after -- set them.
func (c *Config) SetInFile(key string) string {
	for _, o := range c.Origins {
		if o.InFile && (o.Key == key || strings.HasPrefix(o.Key, key+".")) {
			return o.From
		}
	}
	return ""
}

// Run says where a run's artifacts go: MAIN is Root/ID.
type Run struct {
	Root string `koanf:"root" yaml:"root"`
	ID   string `koanf:"id" yaml:"id"` // "": generated when the run starts
}

// Workload is the program profiled. It is run as Command(), with Env added
// to the harness's environment.
type Workload struct {
	// Name labels the workload profile in config.yaml (workloads/NAME);
	// nothing runs differently for it.
	Name string `koanf:"name" yaml:"name"`
	// Python is the interpreter put before Argv when Argv[0] is a .py file
	// ("" runs Argv as it is).
	Python  string            `koanf:"python" yaml:"python"`
	Argv    []string          `koanf:"argv" yaml:"argv"`
	Env     map[string]string `koanf:"env" yaml:"env"`
	Inputs  []string          `koanf:"inputs" yaml:"inputs"` // files that must exist (CheckInputs)
	Repeats int               `koanf:"repeats" yaml:"repeats"`
	// RepeatBy says how the repeats are made: "env", the workload loops
	// $DEEPPROF_REPEATS times in one process (deepprof's own workloads);
	// "process", stage 1 runs the whole program that many times and times
	// each run (a command after --: it knows nothing of the variable).
	RepeatBy string `koanf:"repeat_by" yaml:"repeat_by"`
	// PlainRun says when a program whose one CUPTI run makes every repeat
	// (repeat_by env, or process once) gets its own plain run with a CUPTI
	// timeline: "auto", only when the CUPTI run shows it needs one (a
	// workload report whose in-process measure of the library's cost is
	// missing or over session.StandInOverhead, or no NVTX range of its
	// domain); otherwise that run's report or ranges give its stages;
	// "always", stage 1 first as for every other workload.
	PlainRun string `koanf:"plain_run" yaml:"plain_run"`
	// AutoRanges ("on", the default, or "off") puts deepprof's
	// sitecustomize first on the program's PYTHONPATH: a PyTorch program's
	// transformers generate() calls that run outside every range of its
	// own get the ranges prefill, decode_all and decode_step, with no
	// change to its code. A program that pushes its own ranges keeps them.
	AutoRanges string `koanf:"auto_ranges" yaml:"auto_ranges"`
	// Timeout is the deadline of a run of the workload alone (stage 1),
	// whatever workload.repeats asks of it; "": none. Package session says
	// which deadline each step gets.
	Timeout Duration `koanf:"timeout" yaml:"timeout"`
	// Launcher starts the program as several processes, one per GPU (a
	// tensor-parallel model); its zero value runs the command as the one
	// process.
	Launcher Launcher `koanf:"launcher" yaml:"launcher"`
}

// Launcher is how a multi-GPU workload is started: deepprof drives the
// launcher, so that every step (stage 1, the timeline, the deep pass) runs
// every rank; each rank's process measures its own deep metrics in the
// CUPTI run, and ncu's pass, where it runs, is one ncu per rank (never one
// ncu around the launcher: it fails at the first collective).
type Launcher struct {
	// Kind is "" (no launcher: the command is the one process) or
	// "torchrun" (torch.distributed.run, --standalone, one machine).
	Kind string `koanf:"kind" yaml:"kind"`
	// NprocPerNode is how many processes (ranks) torchrun starts, one per
	// GPU: the device's GPU and the ones after it (device=cuda:2 with 2
	// processes uses GPUs 2 and 3).
	NprocPerNode int `koanf:"nproc_per_node" yaml:"nproc_per_node"`
	// Argv runs the launcher, with its own rendezvous options (a node of
	// a multi-node run: torchrun --nnodes 4 --node-rank 1 --rdzv-endpoint
	// HOST:PORT); empty: workload.python -m torch.distributed.run
	// --standalone (one machine). --nproc-per-node and --no-python follow.
	Argv []string `koanf:"argv" yaml:"argv"`
	// DeepPass is how the ranks meet ncu: "one_at_a_time" (the default),
	// one deep pass per rank with ncu in that rank alone while the others
	// run plain, or "lockstep", one ncu in every rank at once, which can
	// deadlock: both ranks stop profiling and never go on until ncu.timeout
	// ends them (fixtures/logs/h100x2-lockstep-deadlock; docs/measurements.md,
	// "Several GPUs").
	DeepPass string `koanf:"deep_pass" yaml:"deep_pass"`
	// DeepRanks is which ranks one_at_a_time profiles: "auto" (the
	// default), rank 0 alone when the CUPTI timeline shows every rank
	// launching the same top kernels in the same launch configurations
	// (tensor parallel), else each; "all", each rank.
	DeepRanks string `koanf:"deep_ranks" yaml:"deep_ranks"`
}

// The launcher kinds (workload.launcher.kind) and deep-pass modes
// (workload.launcher.deep_pass).
const (
	LauncherNone     = ""
	LauncherTorchrun = "torchrun"
	DeepLockstep     = "lockstep"
	DeepOneAtATime   = "one_at_a_time"
	DeepRanksAuto    = "auto"
	DeepRanksAll     = "all"
)

// Ranks is how many processes the workload runs as: 1 without a launcher.
func (l Launcher) Ranks() int {
	if l.Kind == LauncherNone || l.NprocPerNode < 1 {
		return 1
	}
	return l.NprocPerNode
}

// Multi reports whether the workload runs as several ranks.
func (l Launcher) Multi() bool { return l.Kind != LauncherNone }

// Model describes the model the workload runs. Options are model-specific
// knobs (shapes, a config path...) handed to the workload as they are.
type Model struct {
	Name    string         `koanf:"name" yaml:"name"`
	Arch    string         `koanf:"arch" yaml:"arch"`
	Dtype   string         `koanf:"dtype" yaml:"dtype"`
	Options map[string]any `koanf:"options" yaml:"options"`

	// The model's facts for MFU, for a program that writes no workload
	// report (deepprof profile -- CMD model.matmul_params=...); a report's
	// own facts win over them. MatmulParams are the weights every token
	// multiplies (each linear layer's and the output head's; not the
	// embeddings); PromptTokens the tokens one prefill stage processes,
	// GeneratedTokens those one decode stage generates, each the whole
	// batch's; Batch the sequences they are shared among (TPOT is per
	// sequence's token).
	MatmulParams    int `koanf:"matmul_params" yaml:"matmul_params,omitempty"`
	Layers          int `koanf:"layers" yaml:"layers,omitempty"`
	Heads           int `koanf:"heads" yaml:"heads,omitempty"`
	HeadDim         int `koanf:"head_dim" yaml:"head_dim,omitempty"`
	PromptTokens    int `koanf:"prompt_tokens" yaml:"prompt_tokens,omitempty"`
	GeneratedTokens int `koanf:"generated_tokens" yaml:"generated_tokens,omitempty"`
	Batch           int `koanf:"batch" yaml:"batch,omitempty"`
}

// NVTX selects the NVTX push/pop ranges profiled. Include and Exclude are
// range paths as region reports write them ("decode_all", "prefill/layer0",
// "LLM@decode_all" for a named domain; levels without one are in Domain),
// turned into --nvtx-include/--nvtx-exclude by ncu.Include.
type NVTX struct {
	Domain  string   `koanf:"domain" yaml:"domain"`
	Include []string `koanf:"include" yaml:"include"`
	Exclude []string `koanf:"exclude" yaml:"exclude"`
}

// Timeline is the pass that finds the top kernels by total time.
type Timeline struct {
	Tool string `koanf:"tool" yaml:"tool"` // auto (nsys, else CUPTI, else an ncu timing pass), nsys, cupti, ncu
	// Oracle runs the workload once more under torch.profiler (CUDA activity
	// only) when the timeline is CUPTI, and keeps its kernel figures in the
	// run directory: the independent check of the timeline's times (the
	// torch.profiler check). Off by default: it costs a run of the program
	// that a user did not ask for; deepprof profile --check, the GPU tests
	// and deepproftest turn it on. Only a workload that supports
	// DEEPPROF_PHASE=oracle (the default one) writes them; another gets a
	// note.
	Oracle bool `koanf:"oracle" yaml:"oracle"`
	// The deep pass gets the fewest kernels, by total time, that cover
	// Coverage of the timed GPU time, at least TopN and at most MaxKernels.
	TopN       int     `koanf:"top_n" yaml:"top_n"`
	Coverage   float64 `koanf:"coverage" yaml:"coverage"`
	MaxKernels int     `koanf:"max_kernels" yaml:"max_kernels"`
	// NCUClockControl and NCUCacheControl are the ncu timing pass's
	// --clock-control (none, base) and --cache-control (none, all). none and
	// none measure closest to the plain run; ncu's own defaults (base and
	// all) lengthen kernels more (fixtures/logs/timing-fidelity-ncu-vs-cupti.txt;
	// the figures: docs/measurements.md, "The ncu timing pass"). The deep
	// pass keeps ncu's defaults: its metrics want locked clocks and cold
	// caches.
	NCUClockControl string `koanf:"ncu_clock_control" yaml:"ncu_clock_control"`
	NCUCacheControl string `koanf:"ncu_cache_control" yaml:"ncu_cache_control"`
}

// NCU is the Nsight Compute deep pass.
type NCU struct {
	Path       string   `koanf:"path" yaml:"path"`     // "": found on PATH or under CUDA_HOME
	Preset     string   `koanf:"preset" yaml:"preset"` // the ncu/* profile composed; select one with ncu=NAME
	Set        string   `koanf:"set" yaml:"set"`       // --set; "": none
	Sections   []string `koanf:"sections" yaml:"sections"`
	Metrics    []string `koanf:"metrics" yaml:"metrics"`
	ReplayMode string   `koanf:"replay_mode" yaml:"replay_mode"` // kernel, range, app-range
	// DeepSource is where the deep metrics are measured: ncu (a pass of its
	// own, the default), library (in the recorded CUPTI run) or both.
	DeepSource  string `koanf:"deep_source" yaml:"deep_source"`
	LaunchSkip  int    `koanf:"launch_skip" yaml:"launch_skip"`
	LaunchCount int    `koanf:"launch_count" yaml:"launch_count"` // 0: no limit
	// PerKernelLaunches is how many launches of each top kernel get the
	// deep metrics.
	PerKernelLaunches int `koanf:"per_kernel_launches" yaml:"per_kernel_launches"`
	// MaxLaunches is the deep pass's launch budget with a CUPTI timeline:
	// the top kernels, by GPU-time share, while their launch
	// configurations (times per_kernel_launches) fit in it.
	MaxLaunches     int      `koanf:"max_launches" yaml:"max_launches"`
	TargetProcesses string   `koanf:"target_processes" yaml:"target_processes"` // all, application-only
	ExtraArgs       []string `koanf:"extra_args" yaml:"extra_args"`
	// Timeout is the deadline of each step ncu runs: a pass (the workload
	// under ncu), an export of its report, --list-sections; "": none.
	Timeout Duration `koanf:"timeout" yaml:"timeout"`
}

// Nsys is the Nsight Systems timeline pass.
type Nsys struct {
	Path         string   `koanf:"path" yaml:"path"`
	Trace        []string `koanf:"trace" yaml:"trace"`                 // --trace
	CaptureRange string   `koanf:"capture_range" yaml:"capture_range"` // --capture-range; "": whole run
	ExtraArgs    []string `koanf:"extra_args" yaml:"extra_args"`
	// Timeout is the deadline of each step nsys runs: nsys profile (the
	// workload under nsys), its export and stats; "": none.
	Timeout Duration `koanf:"timeout" yaml:"timeout"`
}

// Regions configures the NVTX region report (package regions).
type Regions struct {
	Include    []string `koanf:"include" yaml:"include"` // kernel-name regular expressions
	Exclude    []string `koanf:"exclude" yaml:"exclude"`
	Groups     []string `koanf:"groups" yaml:"groups"` // metric group names, regions.DefaultGroups
	Aggregate  bool     `koanf:"aggregate" yaml:"aggregate"`
	TopKernels int      `koanf:"top_kernels" yaml:"top_kernels"` // 0: all
}

// Report configures the final reports.
type Report struct {
	TopN int `koanf:"top_n" yaml:"top_n"`
	// Categories are the kernel categories, "name=regex", first match
	// wins (package kernels; default kernels.DefaultSpecs).
	Categories []string `koanf:"categories" yaml:"categories"`
	// BoundThresholdPct is the Speed Of Light throughput under which a
	// kernel is latency-bound.
	BoundThresholdPct float64 `koanf:"bound_threshold_pct" yaml:"bound_threshold_pct"`
	// PeakTFLOPS and PeakMemoryTBps replace deepprof's table of GPU peaks
	// (0: from the table by the GPU's NVML name and the model's dtype).
	PeakTFLOPS     float64 `koanf:"peak_tflops" yaml:"peak_tflops"`
	PeakMemoryTBps float64 `koanf:"peak_memory_tbps" yaml:"peak_memory_tbps"`
}

// Duration is a time.Duration written as Go writes it ("90s", "10m").
// The empty string means none.
type Duration string

// Std returns d as a time.Duration: 0 for "" or text that does not parse
// (Validate reports the latter).
func (d Duration) Std() time.Duration {
	v, err := time.ParseDuration(string(d))
	if err != nil {
		return 0
	}
	return v
}

// Default is the configuration every composition starts from.
func Default() *Config {
	var groups []string
	for _, g := range regions.DefaultGroups() {
		groups = append(groups, g.Name)
	}
	return &Config{
		Run:    Run{Root: "tmp/stage2"},
		Device: "cuda:0",
		Workload: Workload{
			Python: "python3", Argv: []string{}, Env: map[string]string{}, Inputs: []string{},
			Repeats: 3, RepeatBy: RepeatByEnv, PlainRun: PlainRunAuto, AutoRanges: "on", Timeout: "10m",
			Launcher: Launcher{Argv: []string{}, DeepPass: DeepOneAtATime, DeepRanks: DeepRanksAuto},
		},
		Model:    Model{Options: map[string]any{}},
		NVTX:     NVTX{Include: []string{}, Exclude: []string{}},
		Phases:   model.DefaultPhases,
		Timeline: Timeline{Tool: "auto", Oracle: false, TopN: 10, Coverage: 0.85, MaxKernels: 60, NCUClockControl: "none", NCUCacheControl: "none"},
		NCU: NCU{
			Sections: []string{}, Metrics: []string{},
			ReplayMode:        "kernel",
			DeepSource:        DeepSourceLibrary,
			PerKernelLaunches: 2, MaxLaunches: DefaultMaxLaunches, TargetProcesses: "all", ExtraArgs: []string{}, Timeout: "30m",
		},
		Nsys:    Nsys{Trace: []string{"cuda", "nvtx"}, ExtraArgs: []string{}, Timeout: "30m"},
		Regions: Regions{Include: []string{}, Exclude: []string{}, Groups: groups, Aggregate: true, TopKernels: regions.DefaultTopKernels},
		Report:  Report{TopN: 10, Categories: kernels.DefaultSpecs(), BoundThresholdPct: kernels.DefaultThresholdPct},
		// A host-bound stage's wall time moves far more between leased
		// machines than kernel and region totals do (docs/measurements.md,
		// "From code comments"). So wall-clock stages (and MFU, made from
		// them) only gate large regressions by default; tighten them on
		// dedicated machines (baseline.stage_pct=10).
		Baseline: model.Tolerances{StagePct: 150, KernelPct: 10, RegionPct: 10, MFUPct: 150},
	}
}

// YAML is the configuration as config.yaml holds it: every key, in the
// order of the schema (map keys sorted), two-space indent. Loading it back
// as a profile gives the same Config.
func (c *Config) YAML() ([]byte, error) {
	var b bytes.Buffer
	e := yaml.NewEncoder(&b)
	e.SetIndent(2)
	if err := e.Encode(c); err != nil {
		return nil, err
	}
	if err := e.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Command is the argv that runs the workload: Python first when Argv[0]
// names a .py file and Python is set.
func (w Workload) Command() []string {
	if len(w.Argv) > 0 && w.Python != "" && filepath.Ext(w.Argv[0]) == ".py" {
		return append([]string{w.Python}, w.Argv...)
	}
	return append([]string(nil), w.Argv...)
}

// LauncherArgv is the launcher's argv before the program's: empty without
// a launcher. The program follows it as an executable and its arguments
// (--no-python), so a Python command keeps its interpreter.
func (w Workload) LauncherArgv() []string {
	l := w.Launcher
	if !l.Multi() {
		return nil
	}
	argv := append([]string(nil), l.Argv...)
	if len(argv) == 0 {
		py := w.Python
		if py == "" {
			py = "python3"
		}
		// One machine: torchrun picks a free port itself.
		argv = []string{py, "-m", "torch.distributed.run", "--standalone"}
	}
	return append(argv, "--nproc-per-node", strconv.Itoa(l.NprocPerNode), "--no-python")
}

// Launched is argv run under the launcher (argv itself without one).
func (w Workload) Launched(argv []string) []string {
	l := w.LauncherArgv()
	if l == nil {
		return append([]string(nil), argv...)
	}
	return append(l, argv...)
}

// CheckInputs reports workload inputs that are not files, relative paths
// taken from dir.
func (c *Config) CheckInputs(dir string) error {
	for _, in := range c.Workload.Inputs {
		p := in
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		st, err := os.Stat(p)
		if err != nil {
			return &Error{Key: "workload.inputs", Msg: fmt.Sprintf("workload.inputs: %v", err)}
		}
		if !st.Mode().IsRegular() {
			return &Error{Key: "workload.inputs", Msg: fmt.Sprintf("workload.inputs: %s is not a file", p)}
		}
	}
	return nil
}

// Config returns the region report's configuration: the groups named, in
// their order.
func (r Regions) Config() (regions.Config, error) {
	byName := map[string]regions.Group{}
	for _, g := range regions.DefaultGroups() {
		byName[g.Name] = g
	}
	rc := regions.Config{Include: r.Include, Exclude: r.Exclude, Aggregate: r.Aggregate, TopKernels: r.TopKernels}
	for _, name := range r.Groups {
		g, ok := byName[name]
		if !ok {
			return regions.Config{}, unknownValue("regions.groups", name, groupNames())
		}
		rc.Groups = append(rc.Groups, g)
	}
	return rc, nil
}

func groupNames() []string {
	var names []string
	for _, g := range regions.DefaultGroups() {
		names = append(names, g.Name)
	}
	return names
}

// IncludeRanges are nvtx.include's range paths as ranges, in nvtx.domain
// where a path names no domain; none: every launch counts.
func (n NVTX) IncludeRanges() ([][]model.Range, error) {
	var inc [][]model.Range
	for _, p := range n.Include {
		lv, err := model.Configured(p, n.Domain)
		if err != nil {
			return nil, fmt.Errorf("nvtx.include: %w", err)
		}
		inc = append(inc, lv)
	}
	return inc, nil
}
