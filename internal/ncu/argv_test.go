package ncu_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sebdah/goldie/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/ncu"
)

// workload is the argv of the H200 fixtures' workload.
var workload = []string{"python3", "wl.py"}

// renderArgs writes one argument a line, quoted, so that spaces and escapes show.
func renderArgs(args []string) []byte {
	var b strings.Builder
	for _, a := range args {
		fmt.Fprintf(&b, "%q\n", a)
	}
	return []byte(b.String())
}

// include is the --nvtx-include expression of a range path.
func include(t *testing.T, path string) string {
	t.Helper()
	e, err := ncu.Include(path, "")
	require.NoError(t, err)
	return e
}

// Golden argv of the passes a session runs; each mirrors a recorded fixture
// command (fixtures/README.md).
func TestPassArgsGolden(t *testing.T) {
	decode := []string{include(t, "decode_all")}
	top := realKernelNames(t)[:5]
	tests := []struct {
		name string
		pass ncu.Pass
	}{
		{"timing", ncu.TimingPass("out/timing", decode, nil, workload)},
		{"default-set", ncu.Pass{Output: "out/a", NVTX: true, Includes: decode, Program: workload}},
		{"roofline-top-n", ncu.Pass{
			Output: "out/roofline.ncu-rep", NVTX: true, Includes: decode, Set: "roofline",
			KernelNameBase: "demangled", KernelRegex: ncu.KernelRegex(top), Force: true, Program: workload,
		}},
		{"full-launch-count", ncu.Pass{
			Output: "out/full", NVTX: true, Includes: decode, Set: "full", LaunchSkip: 2, LaunchCount: 6,
			CacheControl: "all", ClockControl: "base", Program: workload,
		}},
		{"range-replay", ncu.Pass{
			Output: "range", NVTX: true, ReplayMode: "range", Force: true,
			Includes: []string{include(t, "A"), include(t, "B"), include(t, "A/A1")},
			Program:  []string{"./nvtx_ranges", "ranges"},
		}},
	}
	g := goldie.New(t, goldie.WithFixtureDir("../../golden/ncu-argv"), goldie.WithNameSuffix(""))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args, err := tt.pass.Args()
			require.NoError(t, err)
			// the workload's argv comes last, unchanged
			assert.Equal(t, tt.pass.Program, args[len(args)-len(tt.pass.Program):])
			g.Assert(t, tt.name, renderArgs(args))
		})
	}
}

func TestPassArgsInvalid(t *testing.T) {
	ok := ncu.Pass{Output: "out/a", NVTX: true, Includes: []string{"decode_all/"}, Program: workload}
	tests := []struct {
		name   string
		change func(p *ncu.Pass)
		err    string
	}{
		{"no program", func(p *ncu.Pass) { p.Program = nil }, "no Program"},
		{"empty program name", func(p *ncu.Pass) { p.Program = []string{"", "x"} }, "no Program"},
		{"no output", func(p *ncu.Pass) { p.Output = "" }, "no Output"},
		{"unknown replay mode", func(p *ncu.Pass) { p.ReplayMode = "ranges" }, `ReplayMode "ranges" is not one of kernel, application, range, app-range`},
		{"range replay, no include", func(p *ncu.Pass) { p.ReplayMode = "range"; p.Includes = nil }, "profiles nothing"},
		{"app-range replay, no include", func(p *ncu.Pass) { p.ReplayMode = "app-range"; p.Includes = nil }, "profiles nothing"},
		{"includes without NVTX", func(p *ncu.Pass) { p.NVTX = false }, "need NVTX"},
		{"empty include", func(p *ncu.Pass) { p.Includes = []string{""} }, "empty NVTX expression"},
		{"kernel regex without prefix", func(p *ncu.Pass) { p.KernelRegex = "gemm" }, `lacks the "regex:" prefix`},
		{"bad kernel name base", func(p *ncu.Pass) { p.KernelNameBase = "short" }, "KernelNameBase"},
		{"bad target processes", func(p *ncu.Pass) { p.TargetProcesses = "children" }, "TargetProcesses"},
		{"bad cache control", func(p *ncu.Pass) { p.CacheControl = "flush" }, "CacheControl"},
		{"bad clock control", func(p *ncu.Pass) { p.ClockControl = "max" }, "ClockControl"},
		{"negative count", func(p *ncu.Pass) { p.LaunchCount = -1 }, "LaunchCount -1 is negative"},
		{"negative skip", func(p *ncu.Pass) { p.LaunchSkip = -1 }, "LaunchSkip -1 is negative"},
		{"metric list in one element", func(p *ncu.Pass) { p.Metrics = []string{"a,b"} }, `metric "a,b"`},
		{"log file in Extra", func(p *ncu.Pass) { p.Extra = []string{"--log-file", "x.csv"} }, "ncu-output-file-plus-log-file.txt"},
		{"log file= in Extra", func(p *ncu.Pass) { p.Extra = []string{"--log-file=x.csv"} }, "Extra holds --log-file"},
		{"second -o in Extra", func(p *ncu.Pass) { p.Extra = []string{"-o", "b"} }, "Extra holds -o"},
		{"csv in Extra", func(p *ncu.Pass) { p.Extra = []string{"--csv"} }, "Extra holds --csv"},
		{"kill without a count", func(p *ncu.Pass) { p.Kill = true }, "Kill without LaunchCount"},
		{"kernel name and id", func(p *ncu.Pass) { p.KernelRegex, p.KernelID = "regex:gemm", "::gemm:1" }, "ncu takes one kernel filter"},
		{"skip with an invocation", func(p *ncu.Pass) { p.LaunchSkip, p.KernelID = 1, "::regex:^(gemm)$:2" }, "ncu refuses --launch-skip with a --kernel-id invocation number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := ok
			tt.change(&p)
			args, err := p.Args()
			require.Error(t, err)
			assert.Nil(t, args)
			assert.Contains(t, err.Error(), tt.err)
			assert.True(t, strings.HasPrefix(err.Error(), "ncu pass: "), err.Error())
		})
	}

	// every problem is reported at once
	_, err := ncu.Pass{ReplayMode: "x"}.Args()
	require.Error(t, err)
	for _, want := range []string{"no Output", "no Program", "ReplayMode"} {
		assert.Contains(t, err.Error(), want)
	}

	// range replay driven by cuProfilerStart/Stop needs no include
	p := ncu.Pass{Output: "r", ReplayMode: "range", Extra: []string{"--profile-from-start", "off"}, Program: workload}
	args, err := p.Args()
	require.NoError(t, err)
	assert.Equal(t, []string{"--target-processes", "all", "--replay-mode", "range", "-o", "r", "--profile-from-start", "off", "python3", "wl.py"}, args)
}

func TestPassDefaults(t *testing.T) {
	args, err := ncu.Pass{Output: "a", Program: []string{"./app", "--flag", "two words"}}.Args()
	require.NoError(t, err)
	assert.Equal(t, []string{"--target-processes", "all", "-o", "a", "./app", "--flag", "two words"}, args)

	args, err = ncu.Pass{Output: "a", TargetProcesses: "application-only", Sections: []string{"SpeedOfLight", "Occupancy"},
		Metrics: []string{"gpu__time_duration.sum", "sm__throughput.avg.pct_of_peak_sustained_elapsed"}, KernelID: "::regex:gemm:1",
		ReplayMode: "kernel", Program: workload}.Args()
	require.NoError(t, err)
	assert.Equal(t, []string{"--target-processes", "application-only", "--replay-mode", "kernel",
		"--section", "SpeedOfLight", "--section", "Occupancy",
		"--metrics", "gpu__time_duration.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed",
		"--kernel-id", "::regex:gemm:1", "-o", "a", "python3", "wl.py"}, args)

	assert.Equal(t, "out/a.ncu-rep", ncu.Pass{Output: "out/a"}.ReportPath())
	assert.Equal(t, "out/a.ncu-rep", ncu.Pass{Output: "out/a.ncu-rep"}.ReportPath())

	tp := ncu.TimingPass("t", []string{"decode_all/"}, []string{"warmup/"}, workload)
	assert.Equal(t, []string{ncu.TimingMetric}, tp.Metrics)
	assert.True(t, tp.NVTX)
	assert.Equal(t, []string{"warmup/"}, tp.Excludes)
	assert.Empty(t, tp.Set)
}

func TestExportArgs(t *testing.T) {
	// the commands that made fixtures/ncu/h200-llama-decode-basic
	assert.Equal(t, []string{"--import", "a.ncu-rep", "--csv", "--page", "raw"}, ncu.ExportArgs("a.ncu-rep", ncu.PageRaw, ""))
	assert.Equal(t, []string{"--import", "a.ncu-rep", "--csv", "--page", "raw", "--print-units", "base"}, ncu.ExportArgs("a.ncu-rep", ncu.PageRaw, ncu.UnitsBase))
	assert.Equal(t, []string{"--import", "dir with space/a.ncu-rep", "--csv", "--page", "details"}, ncu.ExportArgs("dir with space/a.ncu-rep", ncu.PageDetails, ""))
	assert.Equal(t, []string{"--list-sections"}, ncu.ListSectionsArgs())
	assert.Equal(t, []string{"--list-sets"}, ncu.ListSetsArgs())
}

// TestControlNote: the note says which clock and cache settings a pass's
// durations come from, ncu's defaults included, and matches the flags Args
// writes.
func TestControlNote(t *testing.T) {
	for _, c := range []struct{ clock, cache, want string }{
		{"", "", "clocks locked to base (ncu's default); caches flushed before each kernel (ncu's default)"},
		{"none", "none", "clocks the GPU's own, as in a plain run (--clock-control none); caches as the previous kernels left them (--cache-control none)"},
		{"base", "all", "clocks locked to base (--clock-control base); caches flushed before each kernel (--cache-control all)"},
		{"none", "all", "clocks the GPU's own, as in a plain run (--clock-control none); caches flushed before each kernel (--cache-control all)"},
	} {
		p := ncu.Pass{Output: "o", Program: []string{"w"}, ClockControl: c.clock, CacheControl: c.cache}
		assert.Equal(t, c.want, p.ControlNote(), "%q/%q", c.clock, c.cache)
		args, err := p.Args()
		require.NoError(t, err)
		line := strings.Join(args, " ")
		for flag, v := range map[string]string{"--clock-control": c.clock, "--cache-control": c.cache} {
			if v == "" {
				assert.NotContains(t, line, flag)
			} else {
				assert.Contains(t, line, flag+" "+v)
				assert.Contains(t, p.ControlNote(), flag+" "+v)
			}
		}
	}
}
