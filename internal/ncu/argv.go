package ncu

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// TimingMetric is the one metric of the cheap timing pass: each launch's GPU
// duration.
const TimingMetric = "gpu__time_duration.sum"

// Pass describes one ncu profiling run. Args turns it into ncu's argv.
//
// There is deliberately no log-file option: with -o, ncu writes its data to
// the report and --csv --log-file F puts no CSV in F, only ==PROF== lines
// (fixtures/logs/ncu-output-file-plus-log-file.txt, recorded on the H200). A
// Pass always writes a report; ExportArgs exports it to CSV afterwards, and
// ncu's console output is captured by whoever runs it.
type Pass struct {
	Output          string   // report path, with or without ".ncu-rep" (-o); required
	TargetProcesses string   // "all" (the default when "") or "application-only"
	NVTX            bool     // --nvtx: NVTX support, and the NVTX stack column in exports
	Includes        []string // --nvtx-include expressions (see Include); need NVTX
	Excludes        []string // --nvtx-exclude expressions; need NVTX
	Set             string   // --set (basic, detailed, full, roofline, ...); "" for ncu's default
	Sections        []string // --section, each
	Metrics         []string // --metrics, joined by ','
	ReplayMode      string   // "kernel", "application", "range", "app-range", or "" for ncu's default (kernel)
	KernelNameBase  string   // --kernel-name-base: "function", "demangled", "mangled", or ""
	KernelRegex     string   // --kernel-name, a "regex:" value (see KernelRegex)
	LaunchSkip      int      // --launch-skip; 0 = unset
	LaunchCount     int      // --launch-count; 0 = unset
	// FilterMode is --filter-mode: "global" (ncu's default), "per-gpu", or
	// "per-launch-config", which applies the kernel and launch filters to
	// each launch configuration (grid, block, shared memory) of each kernel
	// separately: -c 2 then profiles two launches of every configuration.
	FilterMode string
	KernelID   string // --kernel-id, e.g. "::regex:gemm:1"
	// Kill is --kill 1: ncu ends the program once LaunchCount launches
	// are profiled.
	Kill         bool
	CacheControl string   // --cache-control: "all", "none", or ""
	ClockControl string   // --clock-control: "base", "none", "reset", or ""
	Force        bool     // -f: overwrite an existing report
	Extra        []string // more options, written after the ones above and before Program
	Program      []string // the workload's argv; last on ncu's command line; required
}

var (
	replayModes     = []string{"kernel", "application", "range", "app-range"}
	targetProcesses = []string{"all", "application-only"}
	kernelNameBases = []string{"function", "demangled", "mangled"}
	cacheControls   = []string{"all", "none"}
	filterModes     = []string{"global", "per-gpu", "per-launch-config"}
	clockControls   = []string{"base", "none", "reset"}
)

// ReportPath is the file ncu writes for Output: Output with ".ncu-rep"
// appended unless it ends so already.
func (p Pass) ReportPath() string {
	if strings.HasSuffix(p.Output, ".ncu-rep") {
		return p.Output
	}
	return p.Output + ".ncu-rep"
}

// Args returns ncu's argv after the executable's name, options first and the
// workload's argv last, to be run with no shell. It reports every field that
// ncu would refuse or that would profile nothing, joined in one error.
func (p Pass) Args() ([]string, error) {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	oneOf := func(field, v string, allowed []string) {
		if v == "" {
			return
		}
		for _, a := range allowed {
			if v == a {
				return
			}
		}
		bad("%s %q is not one of %s", field, v, strings.Join(allowed, ", "))
	}

	if p.Output == "" {
		bad("no Output: a Pass always writes a report (-o)")
	}
	if len(p.Program) == 0 || p.Program[0] == "" {
		bad("no Program: the workload's argv is empty")
	}
	oneOf("TargetProcesses", p.TargetProcesses, targetProcesses)
	oneOf("ReplayMode", p.ReplayMode, replayModes)
	oneOf("KernelNameBase", p.KernelNameBase, kernelNameBases)
	oneOf("CacheControl", p.CacheControl, cacheControls)
	oneOf("FilterMode", p.FilterMode, filterModes)
	oneOf("ClockControl", p.ClockControl, clockControls)
	if !p.NVTX && len(p.Includes)+len(p.Excludes) > 0 {
		bad("NVTX include/exclude expressions need NVTX (--nvtx)")
	}
	for _, e := range append(append([]string(nil), p.Includes...), p.Excludes...) {
		if e == "" {
			bad("empty NVTX expression")
		}
	}
	if (p.ReplayMode == "range" || p.ReplayMode == "app-range") && len(p.Includes) == 0 && !hasOption(p.Extra, "--profile-from-start") {
		// fixtures/logs/ncu-range-replay-no-nvtx-include.txt
		bad("ReplayMode %q with no NVTX include profiles nothing (\"No ranges were profiled\"): name the ranges in Includes", p.ReplayMode)
	}
	if p.KernelRegex != "" && !strings.HasPrefix(p.KernelRegex, "regex:") {
		bad("KernelRegex %q lacks the \"regex:\" prefix (build it with KernelRegex)", p.KernelRegex)
	}
	if p.KernelRegex != "" && p.KernelID != "" {
		bad("both KernelRegex and KernelID: ncu takes one kernel filter")
	}
	if p.LaunchSkip > 0 && invocation(p.KernelID) {
		// fixtures/logs/ncu-kernel-id-invocations.txt
		bad("LaunchSkip with KernelID %q: ncu refuses --launch-skip with a --kernel-id invocation number", p.KernelID)
	}
	if p.LaunchSkip < 0 {
		bad("LaunchSkip %d is negative", p.LaunchSkip)
	}
	if p.Kill && p.LaunchCount <= 0 {
		bad("Kill without LaunchCount: ncu ends the program once --launch-count launches are profiled")
	}
	if p.LaunchCount < 0 {
		bad("LaunchCount %d is negative", p.LaunchCount)
	}
	for _, m := range p.Metrics {
		if m == "" || strings.Contains(m, ",") {
			bad("metric %q: want one metric name per element", m)
		}
	}
	for _, opt := range []string{"--log-file", "-o", "--export", "--csv", "--page"} {
		if hasOption(p.Extra, opt) {
			bad("Extra holds %s: a Pass writes its report with -o and exports it with ExportArgs (with -o, --csv --log-file writes no CSV: fixtures/logs/ncu-output-file-plus-log-file.txt)", opt)
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("ncu pass: %w", errors.Join(errs...))
	}

	tp := p.TargetProcesses
	if tp == "" {
		tp = "all"
	}
	args := []string{"--target-processes", tp}
	if p.NVTX {
		args = append(args, "--nvtx")
	}
	for _, e := range p.Includes {
		args = append(args, "--nvtx-include", e)
	}
	for _, e := range p.Excludes {
		args = append(args, "--nvtx-exclude", e)
	}
	if p.ReplayMode != "" {
		args = append(args, "--replay-mode", p.ReplayMode)
	}
	if p.Set != "" {
		args = append(args, "--set", p.Set)
	}
	for _, s := range p.Sections {
		args = append(args, "--section", s)
	}
	if len(p.Metrics) > 0 {
		args = append(args, "--metrics", strings.Join(p.Metrics, ","))
	}
	if p.KernelNameBase != "" {
		args = append(args, "--kernel-name-base", p.KernelNameBase)
	}
	if p.KernelRegex != "" {
		args = append(args, "--kernel-name", p.KernelRegex)
	}
	if p.KernelID != "" {
		args = append(args, "--kernel-id", p.KernelID)
	}
	if p.LaunchSkip > 0 {
		args = append(args, "--launch-skip", strconv.Itoa(p.LaunchSkip))
	}
	if p.FilterMode != "" {
		args = append(args, "--filter-mode", p.FilterMode)
	}
	if p.LaunchCount > 0 {
		args = append(args, "--launch-count", strconv.Itoa(p.LaunchCount))
	}
	if p.Kill {
		args = append(args, "--kill", "1")
	}
	if p.CacheControl != "" {
		args = append(args, "--cache-control", p.CacheControl)
	}
	if p.ClockControl != "" {
		args = append(args, "--clock-control", p.ClockControl)
	}
	if p.Force {
		args = append(args, "-f")
	}
	args = append(args, "-o", p.Output)
	args = append(args, p.Extra...)
	return append(args, p.Program...), nil
}

// invocation reports whether a --kernel-id value names an invocation
// number (its last field, after the name's).
func invocation(id string) bool {
	i := strings.LastIndexByte(id, ':')
	return id != "" && i >= 0 && i < len(id)-1
}

// ControlNote says under which clock and cache settings the pass's kernel
// durations are measured: its --clock-control and --cache-control, or
// ncu's defaults (clocks locked to base, caches flushed before each kernel)
// when they are "". Those defaults make durations longer than in a plain
// run of the program; none and none come closest to it.
func (p Pass) ControlNote() string {
	clock := map[string]string{
		"":      "locked to base (ncu's default)",
		"base":  "locked to base (--clock-control base)",
		"none":  "the GPU's own, as in a plain run (--clock-control none)",
		"reset": "reset to base (--clock-control reset)",
	}[p.ClockControl]
	cache := map[string]string{
		"":     "flushed before each kernel (ncu's default)",
		"all":  "flushed before each kernel (--cache-control all)",
		"none": "as the previous kernels left them (--cache-control none)",
	}[p.CacheControl]
	if clock == "" {
		clock = fmt.Sprintf("--clock-control %q", p.ClockControl)
	}
	if cache == "" {
		cache = fmt.Sprintf("--cache-control %q", p.CacheControl)
	}
	return "clocks " + clock + "; caches " + cache
}

// hasOption reports whether args holds opt, alone or as "opt=value".
func hasOption(args []string, opt string) bool {
	for _, a := range args {
		if a == opt || strings.HasPrefix(a, opt+"=") {
			return true
		}
	}
	return false
}

// TimingPass is the cheap pass that measures only each launch's duration
// (TimingMetric), gated by the same NVTX expressions as the deep pass, with
// the NVTX stack column on so that its launches can be put in regions, and
// -f (a session's report paths are its own). It is what a session runs when
// there is no usable Nsight Systems timeline.
func TimingPass(output string, includes, excludes, program []string) Pass {
	return Pass{
		Output:   output,
		NVTX:     true,
		Includes: includes,
		Excludes: excludes,
		Metrics:  []string{TimingMetric},
		Force:    true,
		Program:  program,
	}
}

// Export pages and unit choices for ExportArgs.
const (
	PageRaw     = "raw"
	PageDetails = "details"
	UnitsBase   = "base"
)

// ExportArgs returns the argv (after the executable) that exports report as
// CSV on standard output: "--import R --csv --page raw|details", and
// "--print-units base" when printUnits is "base" ("" keeps ncu's auto
// scaling).
func ExportArgs(report, page, printUnits string) []string {
	args := []string{"--import", report, "--csv", "--page", page}
	if printUnits != "" {
		args = append(args, "--print-units", printUnits)
	}
	return args
}

// ListSectionsArgs returns the argv that lists the sections ncu knows
// (fixtures/logs/ncu-list-sections.txt).
func ListSectionsArgs() []string { return []string{"--list-sections"} }

// ListSetsArgs returns the argv that lists the section sets ncu knows
// (fixtures/logs/ncu-list-sets.txt).
func ListSetsArgs() []string { return []string{"--list-sets"} }
