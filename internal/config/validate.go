package config

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/llm-perf-opt/deepprof/internal/input"
	"github.com/llm-perf-opt/deepprof/internal/kernels"
	"github.com/llm-perf-opt/deepprof/internal/model"
)

// Allowed values of the keys that take one of a set.
var (
	TimelineTools = []string{"auto", "nsys", "cupti", "ncu"}
	ReplayModes   = []string{"kernel", "range", "app-range"}
	// DeepSources are ncu.deep_source's choices: where the deep metrics
	// are measured.
	DeepSources = []string{DeepSourceLibrary, DeepSourceNcu, DeepSourceBoth}
	// NCUClockControls and NCUCacheControls are the ncu timing pass's
	// --clock-control and --cache-control choices.
	NCUClockControls = []string{"none", "base"}
	NCUCacheControls = []string{"none", "all"}
	TargetProcesses  = []string{"all", "application-only"}
	// NCUSets are the sets `ncu --list-sets` names (Nsight Compute 2025.3.1,
	// fixtures/logs/ncu-list-sets.txt); "" asks for none.
	NCUSets = []string{"", "basic", "detailed", "full", "nvlink", "pmsampling", "roofline"}
	// CaptureRanges are nsys --capture-range values; "" records the whole run.
	CaptureRanges = []string{"", "none", "cudaProfilerApi", "nvtx", "hotkey"}
	// Dtypes are the model.dtype spellings workloads accept; "" leaves it
	// to the workload.
	Dtypes = []string{"", "auto", "bf16", "fp16", "fp32", "fp8"}
	// RepeatBys are the values of workload.repeat_by.
	RepeatBys = []string{RepeatByEnv, RepeatByProcess}
	// PlainRuns are the values of workload.plain_run.
	PlainRuns = []string{PlainRunAuto, PlainRunAlways}
	// LauncherKinds and DeepPassModes are the values of
	// workload.launcher.kind and workload.launcher.deep_pass.
	LauncherKinds = []string{LauncherNone, LauncherTorchrun}
	DeepPassModes = []string{DeepLockstep, DeepOneAtATime}
	// DeepRanksModes are the values of workload.launcher.deep_ranks.
	DeepRanksModes = []string{DeepRanksAuto, DeepRanksAll}
)

// MaxRanks bounds workload.launcher.nproc_per_node: the GPUs of one machine.
const MaxRanks = 64

var (
	cudaDevice = regexp.MustCompile(`^cuda:[0-9]+$`)
	// maxDeviceIndex is the largest GPU index a device may name: far
	// past any machine's GPUs, short of an index that overflows.
	maxDeviceIndex = 1<<16 - 1
	gpuUUID        = regexp.MustCompile(`^(?i)(GPU-|MIG-)?[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	runID          = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
)

// Validate checks the values of c: sets, ranges, durations, patterns. Each
// problem is an *Error naming its key; all of them are joined.
func (c *Config) Validate() error {
	var errs []error
	for _, e := range validate(c) {
		errs = append(errs, e)
	}
	return errors.Join(errs...)
}

// MaxRepeats bounds workload.repeats.
const MaxRepeats = 1000

// Upper bounds of the profile's counts and facts: far above any real use,
// low enough that a typo (a few zeros too many) is an error that says why
// instead of a session that runs for days or a figure that overflows.
const (
	// DefaultMaxLaunches is ncu.max_launches unless a profile says
	// otherwise: some 15 s of profiling at 0.63 s a launch (10 replay
	// passes of the basic set on an H100: docs/measurements.md), room
	// for one launch of each of the top kernels of the LLMs measured.
	DefaultMaxLaunches = 24
	// MaxMaxLaunches bounds ncu.max_launches.
	MaxMaxLaunches = 100000
	// MaxPerKernelLaunches bounds ncu.per_kernel_launches: ncu replays
	// each profiled launch tens of times (one pass per metric group).
	MaxPerKernelLaunches = 1000
	// MaxLaunchCount bounds ncu.launch_count (0: no limit).
	MaxLaunchCount = 100_000
	// MaxLaunchSkip bounds ncu.launch_skip.
	MaxLaunchSkip = 1_000_000_000
	// MaxKernels bounds timeline.top_n, timeline.max_kernels, report.top_n
	// and regions.top_kernels: the kernels named in the deep pass's filter
	// and listed in the reports.
	MaxKernels = 10_000
	// MaxTimeout bounds every step's timeout.
	MaxTimeout = 7 * 24 * time.Hour
	// Model facts: MaxMatmulParams (10 T weights), MaxLayers, MaxHeads,
	// MaxHeadDim, MaxTokens (prompt and generated, per repeat).
	MaxMatmulParams = 10_000_000_000_000
	MaxLayers       = 10_000
	MaxHeads        = 10_000
	MaxHeadDim      = 65_536
	MaxTokens       = 100_000_000
	// MaxPeakTFLOPS and MaxPeakMemoryTBps bound report.peak_tflops and
	// report.peak_memory_tbps (an H200: 989 dense BF16 TFLOPS, 4.8 TB/s);
	// MinPeak is the least either may be when set.
	MaxPeakTFLOPS     = 100_000
	MaxPeakMemoryTBps = 1000
	MinPeak           = 0.001
)

// When a program gets its own plain run (workload.plain_run).
const (
	PlainRunAuto   = "auto"   // when the CUPTI run shows it needs one
	PlainRunAlways = "always" // stage 1 first, always
)

// How repeats are made (workload.repeat_by).
// Where a session measures the deep metrics (ncu.deep_source).
const (
	// DeepSourceLibrary (the default) measures them in the recorded CUPTI
	// run, with deepprof's library (CUPTI's range profiler): the program
	// starts once, each rank measuring its own launches. ncu's own pass
	// runs where the library measured nothing, and for a timeline other
	// than CUPTI.
	DeepSourceLibrary = "library"
	// DeepSourceNcu starts the program again under ncu, which measures
	// kernels launched inside CUDA graphs too and gives its rules.
	DeepSourceNcu = "ncu"
	// DeepSourceBoth does both: ncu's figures and rules in the summary, the
	// library's kept in the records to check against them.
	DeepSourceBoth = "both"
)

const (
	RepeatByEnv     = "env"     // the workload loops $DEEPPROF_REPEATS times
	RepeatByProcess = "process" // stage 1 runs the program that many times
)

// SessionEnv are the environment variables the session sets for the
// workload, each with what sets it: workload.env may not set them (the
// session's value would silently win). They are package workload's and
// package session's Env* names (TestSessionEnvIsComplete checks).
var SessionEnv = map[string]string{
	"DEEPPROF_PHASE":        "the step being run",
	"DEEPPROF_REPORT":       "the run directory",
	"DEEPPROF_REPEATS":      "workload.repeats",
	"DEEPPROF_NVTX_DOMAIN":  "nvtx.domain",
	"DEEPPROF_MODEL":        "the model section",
	"DEEPPROF_ORACLE":       "timeline.oracle",
	"CUDA_VISIBLE_DEVICES":  "device",
	"DEEPPROF_CUPTI_DIR":    "the CUPTI timeline",
	"CUDA_INJECTION64_PATH": "the CUPTI timeline",
	"NVTX_INJECTION64_PATH": "the CUPTI timeline",
}

// validator gathers the errors of one Config's check, each keyed by the
// setting it is about.
type validator struct {
	errs []*Error
}

// bad adds an error about key.
func (v *validator) bad(key, format string, args ...any) {
	v.errs = append(v.errs, &Error{Key: key, Msg: key + ": " + fmt.Sprintf(format, args...)})
}

// oneOf is an error where val is not in set, listing the valid values
// ("" as none).
func (v *validator) oneOf(key, val string, set []string) {
	if !slices.Contains(set, val) {
		valid := slices.DeleteFunc(slices.Clone(set), func(s string) bool { return s == "" })
		if len(valid) < len(set) {
			valid = append(valid, `"" (none)`)
		}
		e := unknownValue(key, val, valid)
		v.errs = append(v.errs, e)
	}
}

// atLeast is an error where n is under lo.
func (v *validator) atLeast(key string, n, lo int) {
	if n < lo {
		v.bad(key, "must be at least %d, got %d", lo, n)
	}
}

// atMost is an error where n is over hi, with why said after the figures.
func (v *validator) atMost(key string, n, hi int, why string) {
	if n > hi {
		v.bad(key, "at most %d, got %d%s", hi, n, why)
	}
}

// peak is an error where a peak is NaN, over hi, or set under MinPeak (0
// is unset: from deepprof's table of GPUs).
func (v *validator) peak(key string, x, hi float64) {
	switch {
	case math.IsNaN(x):
		v.bad(key, "a number, got NaN")
	case x > hi:
		v.bad(key, "at most %g, got %g", hi, x)
	case x > 0 && x < MinPeak:
		v.bad(key, "at least %g when set (0: from deepprof's table of GPUs), got %g", MinPeak, x)
	}
}

// duration is an error where d does not parse as a duration.
func (v *validator) duration(key string, d Duration) {
	if err := checkDuration(key, string(d)); err != nil {
		v.errs = append(v.errs, err.(*Error))
	}
}

// noEmpty is an error for each blank entry of list.
func (v *validator) noEmpty(key string, list []string) {
	for i, s := range list {
		if strings.TrimSpace(s) == "" {
			v.bad(key, "entry %d is empty", i)
		}
	}
}

// validate is every error of c, section by section in the file's order.
func validate(c *Config) []*Error {
	v := &validator{}
	v.checkRun(c)
	v.checkWorkload(c)
	v.checkModel(c)
	v.checkPhasesAndNVTX(c)
	v.checkTimeline(c)
	v.checkProfilers(c)
	v.checkRegionsAndReport(c)
	return v.errs
}

// checkRun checks where runs go and which GPU: a run root that is set and
// plain, a run id of safe characters, and a device named cuda:N (N a real
// index) or by a GPU UUID.
func (v *validator) checkRun(c *Config) {
	if c.Run.Root == "" {
		v.bad("run.root", "must not be empty")
	}
	if strings.ContainsFunc(c.Run.Root, input.IsHidden) {
		// A newline or a control character would be printed with the
		// run's path, forging the lines after it.
		v.bad("run.root", "%s: holds a control or invisible character: want a plain folder path", input.EscapeHidden(strconv.Quote(c.Run.Root)))
	}
	if c.Run.ID != "" && !runID.MatchString(c.Run.ID) {
		v.bad("run.id", "%q: want letters, digits, '.', '_' and '-', starting with a letter or digit", c.Run.ID)
	}
	switch {
	case !cudaDevice.MatchString(c.Device) && !gpuUUID.MatchString(c.Device):
		v.bad("device", "%q: want cuda:N or a GPU UUID such as GPU-5c8b2a1e-0f3d-4b7a-9c6e-1a2b3c4d5e6f", c.Device)
	case cudaDevice.MatchString(c.Device):
		if n, err := strconv.Atoi(strings.TrimPrefix(c.Device, "cuda:")); err != nil || n > maxDeviceIndex {
			v.bad("device", "%q: no GPU has that index: want cuda:N with N from 0 to %d", c.Device, maxDeviceIndex)
		}
	}
}

// checkWorkload checks the program and how it is run: a command, repeats
// and their mode, the launcher (ranks and the device they start from) and
// an environment that names real variables the session does not set.
func (v *validator) checkWorkload(c *Config) {
	w := c.Workload
	if len(w.Argv) == 0 {
		v.bad("workload.argv", "is empty: name the program to run (a workloads/* profile sets it)")
	}
	v.noEmpty("workload.inputs", w.Inputs)
	v.atLeast("workload.repeats", w.Repeats, 1)
	v.oneOf("workload.repeat_by", w.RepeatBy, RepeatBys)
	v.oneOf("workload.plain_run", w.PlainRun, PlainRuns)
	v.oneOf("workload.auto_ranges", w.AutoRanges, []string{"on", "off"})
	if w.Repeats > MaxRepeats {
		v.bad("workload.repeats", "at most %d, got %d: every plain run of the session (stage 1, the timeline, the oracle) runs that many generates", MaxRepeats, w.Repeats)
	}
	v.duration("workload.timeout", w.Timeout)
	v.oneOf("workload.launcher.kind", w.Launcher.Kind, LauncherKinds)
	v.oneOf("workload.launcher.deep_pass", w.Launcher.DeepPass, DeepPassModes)
	v.oneOf("workload.launcher.deep_ranks", w.Launcher.DeepRanks, DeepRanksModes)
	v.noEmpty("workload.launcher.argv", w.Launcher.Argv)
	if w.Launcher.Multi() {
		if w.Launcher.NprocPerNode < 1 {
			v.bad("workload.launcher.nproc_per_node", "how many processes (ranks) %s starts, one per GPU: at least 1, got %d", w.Launcher.Kind, w.Launcher.NprocPerNode)
		}
		if w.Launcher.NprocPerNode > MaxRanks {
			v.bad("workload.launcher.nproc_per_node", "at most %d (the GPUs of one machine), got %d", MaxRanks, w.Launcher.NprocPerNode)
		}
		if !cudaDevice.MatchString(c.Device) {
			v.bad("device", "%q: with workload.launcher.kind=%s, name the first GPU as cuda:N (the ranks use it and the ones after it)", c.Device, w.Launcher.Kind)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(w.Env)) {
		if k == "" || strings.ContainsAny(k, "=\x00") || !utf8.ValidString(k) || strings.IndexFunc(k, unicode.IsControl) >= 0 {
			// keyed by the variable, so that the error names where it was set
			v.errs = append(v.errs, &Error{Key: "workload.env." + k, Msg: fmt.Sprintf("workload.env: %q is not an environment variable name", k)})
		} else if by, ok := SessionEnv[k]; ok {
			v.bad("workload.env."+k, "the session sets %s itself (from %s): set that instead", k, by)
		}
	}
}

// checkModel checks the model's facts: a known dtype and sizes neither
// negative nor past their bounds.
func (v *validator) checkModel(c *Config) {
	v.oneOf("model.dtype", c.Model.Dtype, Dtypes)
	for _, f := range []struct {
		key string
		v   int
	}{{"model.matmul_params", c.Model.MatmulParams}, {"model.layers", c.Model.Layers}, {"model.heads", c.Model.Heads},
		{"model.head_dim", c.Model.HeadDim}, {"model.prompt_tokens", c.Model.PromptTokens}, {"model.generated_tokens", c.Model.GeneratedTokens},
		{"model.batch", c.Model.Batch}} {
		if f.v < 0 {
			v.bad(f.key, "must not be negative, got %d", f.v)
		}
	}
	v.atMost("model.matmul_params", c.Model.MatmulParams, MaxMatmulParams, "")
	v.atMost("model.layers", c.Model.Layers, MaxLayers, "")
	v.atMost("model.heads", c.Model.Heads, MaxHeads, "")
	v.atMost("model.head_dim", c.Model.HeadDim, MaxHeadDim, "")
	v.atMost("model.prompt_tokens", c.Model.PromptTokens, MaxTokens, ": tokens of one repeat")
	v.atMost("model.generated_tokens", c.Model.GeneratedTokens, MaxTokens, ": tokens of one repeat")
	v.atMost("model.batch", c.Model.Batch, MaxTokens, ": sequences of one repeat")
}

// checkPhasesAndNVTX checks the phase patterns (at least one phase named)
// and the NVTX filters: no empty entry.
func (v *validator) checkPhasesAndNVTX(c *Config) {
	if err := c.Phases.Check(); err != nil {
		key := "phases"
		if pe := (*model.PatternError)(nil); errors.As(err, &pe) {
			key = pe.Key
		}
		v.errs = append(v.errs, &Error{Key: key, Msg: err.Error()})
	}
	if len(c.Phases.Prefill) == 0 && len(c.Phases.Decode) == 0 {
		v.bad("phases", "names no stage: give phases.prefill and phases.decode (stage names or patterns), or leave the defaults")
	}
	v.noEmpty("phases.prefill", c.Phases.Prefill)
	v.noEmpty("phases.decode", c.Phases.Decode)

	v.noEmpty("nvtx.include", c.NVTX.Include)
	v.noEmpty("nvtx.exclude", c.NVTX.Exclude)
}

// checkTimeline checks the timeline: its tool, how many kernels it keeps,
// ncu's clock and cache control, and a coverage share in (0, 1].
func (v *validator) checkTimeline(c *Config) {
	v.oneOf("timeline.tool", c.Timeline.Tool, TimelineTools)
	v.atLeast("timeline.top_n", c.Timeline.TopN, 1)
	v.atLeast("timeline.max_kernels", c.Timeline.MaxKernels, c.Timeline.TopN)
	v.atMost("timeline.top_n", c.Timeline.TopN, MaxKernels, "")
	v.atMost("timeline.max_kernels", c.Timeline.MaxKernels, MaxKernels, ": the deep pass's kernel filter names each")
	v.oneOf("timeline.ncu_clock_control", c.Timeline.NCUClockControl, NCUClockControls)
	v.oneOf("timeline.ncu_cache_control", c.Timeline.NCUCacheControl, NCUCacheControls)
	if cv := c.Timeline.Coverage; !(cv > 0 && cv <= 1) {
		v.bad("timeline.coverage", "must be a share in (0, 1], got %v", cv)
	}
}

// checkProfilers checks ncu's and nsys's sections: known modes, launch
// counts within their bounds, no empty entry, valid timeouts.
func (v *validator) checkProfilers(c *Config) {
	n := c.NCU
	v.oneOf("ncu.set", n.Set, NCUSets)
	v.oneOf("ncu.replay_mode", n.ReplayMode, ReplayModes)
	v.oneOf("ncu.deep_source", n.DeepSource, DeepSources)
	v.oneOf("ncu.target_processes", n.TargetProcesses, TargetProcesses)
	v.atLeast("ncu.launch_skip", n.LaunchSkip, 0)
	v.atLeast("ncu.launch_count", n.LaunchCount, 0)
	v.atLeast("ncu.per_kernel_launches", n.PerKernelLaunches, 1)
	v.atLeast("ncu.max_launches", n.MaxLaunches, 1)
	v.atMost("ncu.max_launches", n.MaxLaunches, MaxMaxLaunches, ": each profiled launch takes some 0.6 s of replay")
	v.atMost("ncu.launch_skip", n.LaunchSkip, MaxLaunchSkip, "")
	v.atMost("ncu.launch_count", n.LaunchCount, MaxLaunchCount, ": ncu replays each profiled launch tens of times (0: no limit)")
	v.atMost("ncu.per_kernel_launches", n.PerKernelLaunches, MaxPerKernelLaunches, ": ncu replays each profiled launch tens of times, for each top kernel")
	v.noEmpty("ncu.sections", n.Sections)
	v.noEmpty("ncu.metrics", n.Metrics)
	v.duration("ncu.timeout", n.Timeout)

	v.oneOf("nsys.capture_range", c.Nsys.CaptureRange, CaptureRanges)
	v.noEmpty("nsys.trace", c.Nsys.Trace)
	v.duration("nsys.timeout", c.Nsys.Timeout)
}

// checkRegionsAndReport checks the regions (known groups, compiling
// patterns), the report's sizes, categories, bound threshold and peaks,
// and the baseline's thresholds.
func (v *validator) checkRegionsAndReport(c *Config) {
	r := c.Regions
	for _, g := range r.Groups {
		v.oneOf("regions.groups", g, groupNames())
	}
	for _, in := range []struct {
		key  string
		pats []string
	}{{"regions.include", r.Include}, {"regions.exclude", r.Exclude}} {
		for _, p := range in.pats {
			if _, err := regexp.Compile(p); err != nil {
				v.bad(in.key, "%q: %v", p, err)
			}
		}
	}
	v.atLeast("regions.top_kernels", r.TopKernels, 0)
	v.atMost("regions.top_kernels", r.TopKernels, MaxKernels, " (0: all)")
	v.atLeast("report.top_n", c.Report.TopN, 1)
	v.atMost("report.top_n", c.Report.TopN, MaxKernels, "")
	if _, err := kernels.Parse(c.Report.Categories); err != nil {
		v.bad("report.categories", "%v", err)
	}
	if t := c.Report.BoundThresholdPct; !(t > 0 && t <= 100) {
		v.bad("report.bound_threshold_pct", "must be in (0, 100], got %v", t)
	}
	if c.Report.PeakTFLOPS < 0 || c.Report.PeakMemoryTBps < 0 {
		v.bad("report.peak_tflops", "peaks must not be negative (0: from deepprof's table of GPUs)")
	}
	v.peak("report.peak_tflops", c.Report.PeakTFLOPS, MaxPeakTFLOPS)
	v.peak("report.peak_memory_tbps", c.Report.PeakMemoryTBps, MaxPeakMemoryTBps)
	if _, err := c.Baseline.Thresholds(); err != nil {
		v.bad("baseline", "%v", err)
	}
	if c.Report.PeakTFLOPS == 0 && c.Report.PeakMemoryTBps > 0 {
		v.bad("report.peak_tflops", "report.peak_memory_tbps is set: set the compute peak too (both come from the same datasheet)")
	}
}
