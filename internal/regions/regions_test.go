package regions

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/ncu"
)

// All launches in this file are synthetic, built in Go.

// launch builds a synthetic launch: stack levels are written as one level
// of a range path ("name", "Domain@name", `a\@b`).
func launch(pid int64, dev model.DeviceID, kernel string, ns float64, levels ...string) *model.Launch {
	l := &model.Launch{ProcessID: pid, Device: dev, Kernel: kernel,
		Duration: model.Value{Base: ns, Unit: "ns", Valid: true}}
	st := &model.Stack{Thread: 1}
	for _, lv := range levels {
		r, err := model.ParsePath(lv)
		if err != nil || len(r) != 1 {
			panic(fmt.Sprintf("test level %q: %v", lv, err))
		}
		st.Levels = append(st.Levels, r[0])
	}
	l.NVTX = st
	return l
}

func metric(l *model.Launch, name, text, unit string) *model.Launch {
	v, err := model.Parse(text, unit)
	if err != nil {
		panic(err)
	}
	l.Metrics = append(l.Metrics, model.Metric{Name: name, Value: v})
	return l
}

func build(t *testing.T, cfg Config, ls ...*model.Launch) *facts.RegionReport {
	t.Helper()
	a, err := New(cfg)
	require.NoError(t, err)
	for _, l := range ls {
		require.NoError(t, a.Add("synthetic", l, false))
	}
	return a.Report("synthetic")
}

func find(t *testing.T, regs []facts.Region, name string) facts.Region {
	t.Helper()
	for _, r := range regs {
		if r.Name == name {
			return r
		}
	}
	t.Fatalf("no region %q", name)
	return facts.Region{}
}

func names(regs []facts.Region) []string {
	var out []string
	for _, r := range regs {
		out = append(out, r.Name)
	}
	return out
}

// reconcile checks parent inclusive = exclusive + children inclusive within
// 1e-9 relative, for time and counts.
func reconcile(t *testing.T, regs []facts.Region) {
	t.Helper()
	for _, p := range regs {
		ms, n := p.ExclusiveMS, p.ExclusiveKernelCount
		for _, c := range regs {
			if c.Parent == p.Name && c.Depth == p.Depth+1 && strings.HasPrefix(c.Name, p.Name+"/") {
				ms += c.TotalMS
				n += c.KernelCount
			}
		}
		assert.LessOrEqual(t, math.Abs(p.TotalMS-ms), 1e-9*p.TotalMS, p.Name)
		assert.Equal(t, p.KernelCount, n, p.Name)
	}
}

func TestNestingInclusiveExclusive(t *testing.T) {
	rep := build(t, DefaultConfig(),
		launch(1, 0, "k1", 1000),
		launch(1, 0, "k1", 100.5, "prefill"),
		launch(1, 0, "k2", 200.25, "prefill", "layer0"),
		launch(1, 0, "k2", 300, "prefill", "layer0", "attn"),
		launch(1, 0, "k3", 1, "prefill", "layer1"),
		launch(1, 0, "k1", 7, "decode_all", "decode_step"),
		launch(1, 0, "k1", 9, "decode_all", "decode_step"),
	)
	require.True(t, rep.RegionProfiling)
	regs := rep.Scopes[0].Regions
	assert.Equal(t, []string{"prefill", "prefill/layer0", "prefill/layer0/attn", "prefill/layer1",
		"decode_all", "decode_all/decode_step"}, names(regs), "depth first, first appearance")
	p := find(t, regs, "prefill")
	assert.InDelta(t, 601.75e-6, p.TotalMS, 1e-15)
	assert.EqualValues(t, 4, p.KernelCount)
	assert.InDelta(t, 100.5e-6, p.ExclusiveMS, 1e-15)
	assert.EqualValues(t, 1, p.ExclusiveKernelCount)
	l0 := find(t, regs, "prefill/layer0")
	assert.Equal(t, "prefill", l0.Parent)
	assert.Equal(t, 2, l0.Depth)
	assert.Equal(t, []facts.Range{{Name: "prefill"}, {Name: "layer0"}}, l0.Levels)
	d := find(t, regs, "decode_all")
	assert.Zero(t, d.ExclusiveMS)
	assert.EqualValues(t, 2, d.KernelCount)
	assert.InDelta(t, (601.75+16)/(601.75+16+1000), p.Share+d.Share, 1e-12, "share of the scope's profiled time")
	assert.EqualValues(t, 1, rep.OutsideLaunches, "launches outside every range belong to no region")
	reconcile(t, regs)
	reconcile(t, rep.Aggregate)
	// Top kernels: inclusive, most time first.
	assert.Equal(t, []facts.RegionKernel{{Name: "k2", TotalMS: 500.25e-6, Calls: 2}, {Name: "k1", TotalMS: 100.5e-6, Calls: 1},
		{Name: "k3", TotalMS: 1e-6, Calls: 1}}, p.Kernels)
}

// TestAttributionByStack: ncu gives each launch its own thread's push/pop
// stack, so ranges of different threads that overlap in time are attributed
// by each launch's stack, and a range met at two depths is two regions.
func TestAttributionByStack(t *testing.T) {
	a := launch(1, 0, "k", 10, "A")
	b := launch(1, 0, "k", 20, "B")
	b.NVTX.Thread = 2 // another thread, its range B open while A is
	rep := build(t, DefaultConfig(),
		a, b,
		launch(1, 0, "k", 30, "x"),
		launch(1, 0, "k", 40, "y", "x"),
		launch(1, 0, "k", 50, "LLM@decode"),
		launch(1, 0, "k", 60, "LLM@decode"), // default-domain name "LLM@decode"
	)
	regs := rep.Scopes[0].Regions
	assert.InDelta(t, 10e-6, find(t, regs, "A").TotalMS, 1e-15)
	assert.InDelta(t, 20e-6, find(t, regs, "B").TotalMS, 1e-15)
	assert.InDelta(t, 30e-6, find(t, regs, "x").TotalMS, 1e-15)
	assert.InDelta(t, 40e-6, find(t, regs, "y/x").TotalMS, 1e-15)
	assert.Equal(t, []string{"A", "B", "x", "y", "y/x", "LLM@decode"}, names(regs))

	// The default-domain range literally named "LLM@x" and range "x" of
	// domain LLM are two regions, in two directories; the literal '@' is
	// written "\@", as ncu's NVTX filters write it.
	lit := launch(1, 0, "k", 5)
	lit.NVTX.Levels = []model.Range{{Name: "LLM@x"}}
	dom := launch(1, 0, "k", 7, "LLM@x")
	rep = build(t, DefaultConfig(), lit, dom)
	regs = rep.Scopes[0].Regions
	require.Len(t, regs, 2)
	assert.Equal(t, `LLM\@x`, regs[0].Name)
	assert.Equal(t, "LLM@x", regs[1].Name)
	assert.NotEqual(t, regs[0].Levels, regs[1].Levels)
	assert.NotEqual(t, regs[0].Dir, regs[1].Dir)
}

func TestStartStopRangesNotUsed(t *testing.T) {
	l := launch(1, 0, "k", 10)
	l.StartStop = `1 "<default domain>:warmup:none:none:none:none:none:none"`
	rep := build(t, DefaultConfig(), l)
	assert.False(t, rep.RegionProfiling)
	assert.Empty(t, rep.Scopes[0].Regions)
	assert.True(t, hasNote(rep, "start/end NVTX ranges"))
}

func hasNote(rep *facts.RegionReport, sub string) bool {
	for _, n := range rep.Notes {
		if strings.Contains(n, sub) {
			return true
		}
	}
	return false
}

func TestIncludeExclude(t *testing.T) {
	ls := func() []*model.Launch {
		return []*model.Launch{
			launch(1, 0, "gemm_bf16", 100, "p"),
			launch(1, 0, "gemm_fp32", 200, "p"),
			launch(1, 0, "softmax", 300, "p"),
		}
	}
	cases := []struct {
		name             string
		include, exclude []string
		want             []string
		note             string
	}{
		{"no patterns: all", nil, nil, []string{"softmax", "gemm_fp32", "gemm_bf16"}, ""},
		{"include", []string{"gemm"}, nil, []string{"gemm_fp32", "gemm_bf16"}, ""},
		{"exclude", nil, []string{"fp32"}, []string{"softmax", "gemm_bf16"}, ""},
		{"exclude wins", []string{"gemm"}, []string{"gemm_fp32"}, []string{"gemm_bf16"}, ""},
		{"unmatched pattern is a note", []string{"gemm", "^nvjet"}, nil, []string{"gemm_fp32", "gemm_bf16"},
			`include pattern "^nvjet" matched no kernel name`},
		{"unmatched exclude", nil, []string{"flash"}, []string{"softmax", "gemm_fp32", "gemm_bf16"},
			`exclude pattern "flash" matched no kernel name`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Include, cfg.Exclude = c.include, c.exclude
			rep := build(t, cfg, ls()...)
			p := find(t, rep.Scopes[0].Regions, "p")
			var got []string
			for _, k := range p.Kernels {
				got = append(got, k.Name)
			}
			assert.Equal(t, c.want, got)
			assert.InDelta(t, 600e-6, rep.Scopes[0].ProfiledMS, 1e-15, "left-out launches still count as profiled")
			if c.note != "" {
				assert.True(t, hasNote(rep, c.note), rep.Notes)
			}
		})
	}
	_, err := New(Config{Include: []string{"gemm("}})
	var pe *PatternError
	require.True(t, errors.As(err, &pe))
	assert.Equal(t, "gemm(", pe.Pattern)
	assert.Contains(t, err.Error(), `"gemm("`)
}

func TestScopes(t *testing.T) {
	ls := func() []*model.Launch {
		return []*model.Launch{
			launch(578, 0, "k", 10, "prefill"),
			launch(577, 0, "k", 20, "prefill"),
			launch(577, 0, "k", 30, "prefill", "layer0"),
			launch(577, 1, "k", 40, "decode_all"),
			launch(577, 0, "k", 50),
		}
	}
	rep := build(t, DefaultConfig(), ls()...)
	require.Len(t, rep.Scopes, 3)
	assert.Equal(t, []int64{577, 577, 578}, []int64{rep.Scopes[0].ProcessID, rep.Scopes[1].ProcessID, rep.Scopes[2].ProcessID})
	assert.Equal(t, []model.DeviceID{0, 1, 0}, []model.DeviceID{rep.Scopes[0].Device, rep.Scopes[1].Device, rep.Scopes[2].Device})
	assert.True(t, rep.AggregateEnabled)
	assert.Equal(t, []string{"prefill", "prefill/layer0", "decode_all"}, names(rep.Aggregate))
	pre := find(t, rep.Aggregate, "prefill")
	assert.InDelta(t, 60e-6, pre.TotalMS, 1e-15)
	assert.EqualValues(t, 3, pre.KernelCount)
	assert.InDelta(t, 60.0/150, pre.Share, 1e-12)
	assert.InDelta(t, 50.0/100, find(t, rep.Scopes[0].Regions, "prefill").Share, 1e-12)
	assert.Equal(t, find(t, rep.Scopes[0].Regions, "prefill").Dir, pre.Dir, "one directory per region across scopes")

	cfg := DefaultConfig()
	cfg.Aggregate = false
	rep = build(t, cfg, ls()...)
	assert.False(t, rep.AggregateEnabled)
	assert.Empty(t, rep.Aggregate)
	require.Len(t, rep.Scopes, 3, "scopes are always there")
}

func TestNoRanges(t *testing.T) {
	noCol := launch(1, 0, "k", 10)
	noCol.NVTX = nil
	rep := build(t, DefaultConfig(), noCol)
	assert.False(t, rep.RegionProfiling)
	assert.True(t, hasNote(rep, "No region profiling took place: the export has no NVTX column"))
	require.Len(t, rep.Scopes, 1)
	assert.Empty(t, rep.Scopes[0].Regions)

	rep = build(t, DefaultConfig(), launch(1, 0, "k", 10))
	assert.False(t, rep.RegionProfiling)
	assert.True(t, hasNote(rep, "No region profiling took place: no launch was inside"))
}

// TestMetricAggregation: how a metric is summarized follows from its unit.
func TestMetricAggregation(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Groups = []Group{{Name: "g", Metrics: []MetricSpec{
		{Label: "bytes", Raw: "dram__bytes_read.sum"},
		{Label: "pct", Raw: "sm__throughput.avg.pct_of_peak_sustained_elapsed"},
		{Label: "freq", Raw: "gpc__cycles_elapsed.avg.per_second"},
		{Label: "cycles", Raw: "gpc__cycles_elapsed.max"},
		{Label: "rate", Raw: "dram__bytes_read.sum.per_second"},
		{Label: "absent", Raw: "nope"},
		{Label: "sol", Raw: "sm__missing", Section: "GPU Speed Of Light Throughput", Details: "Compute (SM) Throughput"},
	}}}
	l1 := launch(1, 0, "k", 100, "r")
	metric(l1, "dram__bytes_read.sum", "1.5", "Kbyte")
	metric(l1, "sm__throughput.avg.pct_of_peak_sustained_elapsed", "10", "%")
	metric(l1, "gpc__cycles_elapsed.avg.per_second", "1", "Ghz")
	metric(l1, "gpc__cycles_elapsed.max", "1,000", "cycle")
	metric(l1, "dram__bytes_read.sum.per_second", "2", "Gbyte/s")
	l2 := launch(1, 0, "k", 300, "r")
	metric(l2, "dram__bytes_read.sum", "500", "byte")
	metric(l2, "sm__throughput.avg.pct_of_peak_sustained_elapsed", "50", "%")
	metric(l2, "gpc__cycles_elapsed.avg.per_second", "2", "Ghz")
	metric(l2, "gpc__cycles_elapsed.max", "n/a", "cycle")
	metric(l2, "dram__bytes_read.sum.per_second", "4", "Gbyte/s")
	l3 := launch(1, 0, "k", 100, "r")
	v, _ := model.Parse("20", "%")
	l3.Metrics = append(l3.Metrics, model.Metric{Section: "GPU Speed Of Light Throughput", Name: "Compute (SM) Throughput", Value: v})
	rep := build(t, cfg, l1, l2, l3)
	r := find(t, rep.Scopes[0].Regions, "r")
	got := map[string]facts.RegionMetric{}
	for _, m := range r.Metrics {
		got[m.Name] = m
	}
	assert.Equal(t, facts.RegionMetric{Group: "g", Name: "bytes", Source: "dram__bytes_read.sum", Unit: "byte", Aggregation: facts.Sum, Value: 2000, Launches: 2}, got["bytes"])
	assert.Equal(t, facts.WeightedMean, got["pct"].Aggregation)
	assert.InDelta(t, (10*100+50*300)/400.0, got["pct"].Value, 1e-12)
	assert.InDelta(t, (1e9*100+2e9*300)/400.0, got["freq"].Value, 1e-3)
	assert.Equal(t, facts.WeightedMean, got["freq"].Aggregation)
	assert.Equal(t, facts.Sum, got["cycles"].Aggregation)
	assert.InDelta(t, 1000, got["cycles"].Value, 0, "n/a is left out")
	assert.EqualValues(t, 1, got["cycles"].Launches)
	assert.Equal(t, facts.WeightedMean, got["rate"].Aggregation)
	assert.InDelta(t, 20, got["sol"].Value, 1e-12)
	assert.Equal(t, "GPU Speed Of Light Throughput: Compute (SM) Throughput", got["sol"].Source)
	assert.NotContains(t, got, "absent")
	assert.True(t, hasNote(rep, `Metric "absent" of group "g" is in no launch`))

	for d, want := range map[model.Dimension]facts.Aggregation{model.Bytes: facts.Sum, model.Count: facts.Sum, model.Cycles: facts.Sum,
		model.Time: facts.Sum, model.Percent: facts.WeightedMean, model.Rate: facts.WeightedMean, model.Frequency: facts.WeightedMean} {
		assert.Equal(t, want, AggregationOf(d), d)
	}
}

func TestRangeResults(t *testing.T) {
	assert.True(t, RangeReplay([]string{"ID", "Kernel Name", "gpu__time_duration.sum"}))
	assert.False(t, RangeReplay([]string{"ID", "Kernel Name", "Block Size"}))
	l := launch(1, 0, "range", 1000, "A", "A1")
	assert.True(t, IsRangeResult(true, l))
	assert.False(t, IsRangeResult(false, l))
	assert.False(t, IsRangeResult(true, launch(1, 0, "gemm", 1, "A")))

	a, err := New(DefaultConfig())
	require.NoError(t, err)
	require.NoError(t, a.Add("synthetic", l, true))
	rep := a.Report("synthetic")
	assert.Equal(t, facts.ResultsRanges, rep.Results)
	a1 := find(t, rep.Scopes[0].Regions, "A/A1")
	assert.Equal(t, "A/A1", a1.Kernels[0].Name, "a range result is named by its NVTX path")
	assert.Equal(t, "range", l.Kernel, "the launch itself is not changed")
}

func TestSelectGroups(t *testing.T) {
	g, err := SelectGroups(DefaultGroups(), []string{"sol", "dram"})
	require.NoError(t, err)
	assert.Equal(t, "sol,dram", GroupNames(g))
	_, err = SelectGroups(DefaultGroups(), []string{"roofline"})
	assert.ErrorContains(t, err, `unknown metric group "roofline" (known: duration,sol,occupancy,dram,instructions)`)
	assert.Contains(t, RawMetrics(DefaultGroups()), "dram__bytes_read.sum")
}

// TestRegionFilter: region patterns choose the regions listed, in every
// scope and the aggregate; a listed region's numbers are the unfiltered
// report's.
func TestRegionFilter(t *testing.T) {
	ls := func() []*model.Launch {
		return []*model.Launch{
			launch(1, 0, "gemm", 100, "prefill"),
			launch(1, 0, "gemm", 200, "decode_all", "decode_step"),
			launch(1, 0, "softmax", 300, "decode_all"),
			launch(2, 0, "gemm", 400, "decode_all", "decode_step"),
			launch(2, 0, "gemm", 500, "LLM@decode_all"),
		}
	}
	all := build(t, DefaultConfig(), ls()...)
	cases := []struct {
		name             string
		include, exclude []string
		want             []string // the aggregate's regions
		missed           []FilterMiss
	}{
		{"no patterns: all", nil, nil, []string{"prefill", "decode_all", "decode_all/decode_step", "LLM@decode_all"}, nil},
		{"include", []string{"^decode_all"}, nil, []string{"decode_all", "decode_all/decode_step"}, nil},
		{"a parent without its children", []string{"^decode_all$"}, nil, []string{"decode_all"}, nil},
		{"named domain", []string{"^LLM@"}, nil, []string{"LLM@decode_all"}, nil},
		{"exclude wins", []string{"decode"}, []string{"step"}, []string{"decode_all", "LLM@decode_all"}, nil},
		{"unmatched", []string{"prefil$", "^prefill"}, []string{"layer"}, []string{"prefill"},
			[]FilterMiss{{TargetRegion, "include", "prefil$"}, {TargetRegion, "exclude", "layer"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.RegionInclude, cfg.RegionExclude = c.include, c.exclude
			a, err := New(cfg)
			require.NoError(t, err)
			for _, l := range ls() {
				require.NoError(t, a.Add("synthetic", l, false))
			}
			rep := a.Report("synthetic")
			assert.Equal(t, c.want, names(rep.Aggregate))
			for _, regs := range [][]facts.Region{rep.Aggregate, rep.Scopes[0].Regions, rep.Scopes[1].Regions} {
				for _, r := range regs {
					assert.Contains(t, c.want, r.Name)
				}
			}
			for _, r := range rep.Aggregate {
				whole := find(t, all.Aggregate, r.Name)
				assert.Equal(t, whole, r, "a listed region is the same as without the filter")
			}
			assert.Equal(t, all.Scopes[0].ProfiledMS, rep.Scopes[0].ProfiledMS)
			err = a.unmatched("synthetic")
			if c.missed == nil {
				assert.NoError(t, err)
				return
			}
			var ue *UnmatchedError
			require.ErrorAs(t, err, &ue)
			assert.Equal(t, c.missed, ue.Misses)
			assert.Equal(t, []string{"prefill", "decode_all", "decode_all/decode_step", "LLM@decode_all"}, ue.Regions)
			assert.True(t, hasNote(rep, `region include pattern "prefil$" matched no region`), rep.Notes)
		})
	}
	_, err := New(Config{RegionExclude: []string{"decode("}})
	var pe *PatternError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, PatternError{Target: TargetRegion, Flag: "exclude", Pattern: "decode("}, PatternError{Target: pe.Target, Flag: pe.Flag, Pattern: pe.Pattern})
}

// TestRequireMatches: with RequireMatches, a pattern that matched nothing
// in a recorded export is FromReader's error, naming what the export has;
// without it, a note.
func TestRequireMatches(t *testing.T) {
	const path = "../../fixtures/ncu/h200-llama-decode-basic/raw.csv"
	read := func(cfg Config) (*facts.RegionReport, error) {
		f, err := os.Open(path)
		require.NoError(t, err)
		defer f.Close()
		return FromReader(ncu.NewReader(f, path, ncu.Options{Metrics: RawMetrics(cfg.Groups)}), path, cfg)
	}
	cfg := DefaultConfig()
	cfg.Include, cfg.RegionInclude = []string{"^nvjet", "no_such_kernel"}, []string{"prefill"}
	rep, err := read(cfg)
	require.NoError(t, err)
	assert.True(t, hasNote(rep, `include pattern "no_such_kernel" matched no kernel name`), rep.Notes)
	assert.Empty(t, rep.Aggregate, "no region is named prefill in a decode-only export")

	cfg.RequireMatches = true
	_, err = read(cfg)
	var ue *UnmatchedError
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, []FilterMiss{{TargetKernel, "include", "no_such_kernel"}, {TargetRegion, "include", "prefill"}}, ue.Misses)
	assert.Equal(t, path+`: kernel include pattern "no_such_kernel" matched none of the 27 kernel names; `+
		`region include pattern "prefill" matched no region (regions: decode_all, decode_all/decode_step)`, err.Error())

	cfg.Include, cfg.RegionInclude = []string{"^nvjet"}, []string{"step$"}
	rep, err = read(cfg)
	require.NoError(t, err)
	assert.Equal(t, []string{"decode_all/decode_step"}, names(rep.Aggregate))
}

// TestSumOverflow (issue 16): durations, and metric values, each in range
// whose sum over launches is not are a positioned error at the launch that
// overflows, never a region of +Inf.
func TestSumOverflow(t *testing.T) {
	add := func(cfg Config, ls ...*model.Launch) error {
		a, err := New(cfg)
		require.NoError(t, err)
		for i, l := range ls {
			l.Line, l.ID = 3+i, int64(i)
			if err := a.Add("f.csv", l, false); err != nil {
				return err
			}
		}
		return nil
	}
	var ls []*model.Launch
	for range 4 {
		l := launch(1, 0, "k", 1e308, "r")
		l.DurationMetric, l.Duration.Orig, l.Duration.OrigUnit = model.DurationMetric, "1e308", "ns"
		ls = append(ls, l)
	}
	require.EqualError(t, add(DefaultConfig(), ls...), `f.csv:4: launch 1: gpu__time_duration.sum: "1e308" ns brings the total GPU time of the launches past the largest number a float64 holds (1.8e+308): not a real value`)

	cfg := DefaultConfig()
	cfg.Groups = []Group{{Name: "g", Metrics: []MetricSpec{{Label: "bytes", Raw: "dram__bytes_read.sum"}}}}
	big := func() *model.Launch {
		return metric(launch(1, 0, "k", 1, "r"), "dram__bytes_read.sum", "1e308", "byte")
	}
	require.EqualError(t, add(cfg, big(), big()), `f.csv:4: launch 1: dram__bytes_read.sum: "1e308" byte brings the sum of bytes over the launches past the largest number a float64 holds (1.8e+308): not a real value`)
	cfg.Groups[0].Metrics = append(cfg.Groups[0].Metrics, MetricSpec{Label: "pct", Raw: "sm__throughput.avg.pct_of_peak_sustained_elapsed"})
	heavy := func(bytes, pct string) *model.Launch {
		l := launch(1, 0, "k", 1e10, "r")
		l.DurationMetric, l.Duration.Orig, l.Duration.OrigUnit = model.DurationMetric, "10,000,000", "usecond"
		metric(l, "dram__bytes_read.sum", bytes, "byte")
		return metric(l, "sm__throughput.avg.pct_of_peak_sustained_elapsed", pct, "%")
	}
	require.ErrorContains(t, add(cfg, heavy("1", "1e300")), `f.csv:3: launch 0: sm__throughput.avg.pct_of_peak_sustained_elapsed: "1e300" % times the launch's duration (gpu__time_duration.sum: "10,000,000" usecond) brings the duration-weighted sum of pct`)
	require.NoError(t, add(cfg, heavy("1e300", "1")), "a summed metric's weighted sum is not used, nor checked")
}

// TestUnmatchedHiddenRunes (issue 16): the region names an UnmatchedError
// lists come from the profiled program (SYNTHETIC here) and reach a
// terminal: shown escaped, never raw.
func TestUnmatchedHiddenRunes(t *testing.T) {
	cfg := DefaultConfig()
	cfg.RegionInclude, cfg.RequireMatches = []string{"nothing"}, true
	a, err := New(cfg)
	require.NoError(t, err)
	require.NoError(t, a.Add("f.csv", launch(1, 0, "k", 1, "rev\u202eersed\x00"), false))
	_, err = a.Finish("f.csv")
	require.EqualError(t, err, `f.csv: region include pattern "nothing" matched no region (regions: rev\u202eersed\u0000)`)
}

// TestAggregateOfOneScope: with one scope, the aggregate is that scope's
// regions, held once; once a second scope is met, the aggregate counts
// apart from the first scope, its regions the sums over both, metrics and
// kernel tables included, the first scope's its own.
func TestAggregateOfOneScope(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Groups = []Group{{Name: "g", Metrics: []MetricSpec{{Label: "pct", Raw: "sm__throughput.avg.pct_of_peak_sustained_elapsed"}}}}
	pct := func(l *model.Launch, v string) *model.Launch {
		return metric(l, "sm__throughput.avg.pct_of_peak_sustained_elapsed", v, "%")
	}
	first := []*model.Launch{
		pct(launch(1, 0, "a", 100, "decode", "step"), "10"),
		pct(launch(1, 0, "b", 300, "decode"), "50"),
		launch(1, 0, "a", 50),
	}
	one := build(t, cfg, first...)
	require.Len(t, one.Scopes, 1)
	assert.Equal(t, one.Aggregate, one.Scopes[0].Regions)
	assert.Same(t, &one.Aggregate[0], &one.Scopes[0].Regions[0], "held once")

	second := []*model.Launch{
		pct(launch(2, 0, "a", 200, "decode", "step"), "40"),
		launch(1, 0, "c", 400, "decode", "step"),
	}
	two := build(t, cfg, append(first, second...)...)
	require.Len(t, two.Scopes, 2)
	agg, own := find(t, two.Aggregate, "decode/step"), find(t, two.Scopes[0].Regions, "decode/step")
	assert.InDelta(t, 700e-6, agg.TotalMS, 1e-15)
	assert.EqualValues(t, 3, agg.KernelCount)
	assert.InDelta(t, 700.0/1050, agg.Share, 1e-12)
	assert.InDelta(t, (10*100+40*200)/300.0, agg.Metrics[0].Value, 1e-12)
	assert.Equal(t, []facts.RegionKernel{{Name: "c", TotalMS: 400e-6, Calls: 1}, {Name: "a", TotalMS: 300e-6, Calls: 2}}, agg.Kernels)
	assert.Equal(t, 2, agg.Table.Count)
	assert.InDelta(t, 500e-6, own.TotalMS, 1e-15, "the first scope's own")
	assert.EqualValues(t, 2, own.KernelCount)
	assert.InDelta(t, 10, own.Metrics[0].Value, 1e-12)
	assert.Equal(t, []facts.RegionKernel{{Name: "c", TotalMS: 400e-6, Calls: 1}, {Name: "a", TotalMS: 100e-6, Calls: 1}}, own.Kernels)
	assert.InDelta(t, 800e-6, find(t, two.Scopes[0].Regions, "decode").TotalMS, 1e-15)
	assert.InDelta(t, 200e-6, find(t, two.Scopes[1].Regions, "decode/step").TotalMS, 1e-15)
	assert.Equal(t, agg.Dir, own.Dir)
}
