package render

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/phases"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/machine"

	"github.com/llm-perf-opt/deepprof/internal/summary"
	"github.com/llm-perf-opt/deepprof/internal/workload"
)

// TestSummaryMarkdownHostileNames: kernel, operator and stage names from a
// profiled program stay inside their cells, whatever they hold.
func TestSummaryMarkdownHostileNames(t *testing.T) {
	tab := model.KernelTable{Source: "synthetic", TotalMS: float64(len(hostileNames))}
	var ops []workload.Operator
	for _, n := range hostileNames {
		tab.Kernels = append(tab.Kernels, model.KernelStats{KernelTotals: model.KernelTotals{Name: n, TotalMS: 1, Calls: 1}})
		ops = append(ops, workload.Operator{Name: n, Calls: 1, TotalMS: 1, CUDAMS: 1})
	}
	rep := &workload.Report{Model: workload.Model{Name: hostileNames[0]}, Stages: map[string]workload.ReportStage{
		"prefill": {MS: []float64{1}}, "decode": {MS: []float64{2}}, "decode/" + hostileNames[1]: {MS: []float64{1}, Parent: "decode"}},
		Operators: ops}
	s := summary.Build(summary.Inputs{RunID: hostileNames[2], Workload: rep, Kernels: &tab, MetricsMissing: "none"},
		summary.Options{TopN: len(hostileNames)})
	var b bytes.Buffer
	require.NoError(t, SummaryMarkdown(&b, s, nil))
	var rows []int
	for _, tb := range gfmTables(t, b.Bytes()) {
		rows = append(rows, len(tb))
	}
	// stages, sub-stages, kernels, categories, serving figures (TTFT and
	// TPOT only: no tokens, no peak), operators, environment (no MFU: no
	// peak; no regions)
	n := len(hostileNames)
	assert.Equal(t, []int{2, 1, n, len(s.Kernels.ByCategory), 2, n, 7}, rows)
	tabs := gfmTables(t, b.Bytes())
	require.Len(t, tabs, 7)
	var kernelCells, opCells []string
	for _, r := range tabs[2] {
		kernelCells = append(kernelCells, r[1])
	}
	for _, r := range tabs[5] {
		opCells = append(opCells, r[0])
	}
	// Each name reads as written, its line breaks and tabs as spaces
	// (operators are sorted by time, then name).
	var want []string
	for _, n := range hostileNames {
		want = append(want, strings.TrimSpace(strings.NewReplacer("\n", " ", "\t", " ").Replace(n)))
	}
	assert.ElementsMatch(t, want, opCells)
	// The kernel table shows each by its display name, unique in the
	// report, and lists the full names below it.
	var shown []string
	for _, r := range s.Kernels.Rows {
		shown = append(shown, strings.TrimSpace(strings.NewReplacer("\n", " ", "\t", " ").Replace(r.Shown())))
	}
	assert.Equal(t, shown, kernelCells)
	for i, n := range hostileNames {
		assert.Contains(t, b.String(), fmt.Sprintf("%d. %s\n", i+1, EscapeCell(n)), "the full name of #%d", i+1)
	}
}

// TestSummaryMarkdownWarmup: every table of the stakeholder summary that
// shows a mean over repeats says which repeat the warm-up rule dropped and
// why. SYNTHETIC repeats: decode as an earlier tiny-llama recording had it
// (118.7, 11.1, 11.3 ms), a sub-stage with a slow first repeat too.
func TestSummaryMarkdownWarmup(t *testing.T) {
	h200 := machine.GPU{Name: "NVIDIA H200"}
	rep := &workload.Report{
		Model:  workload.Model{Name: "m", Dtype: "bfloat16", MatmulParams: 1e9, Layers: 16, Heads: 32, HeadDim: 128},
		Tokens: workload.Tokens{Prompt: 64, Generated: 8},
		Stages: map[string]workload.ReportStage{
			"prefill":      {MS: []float64{3.1995339999966177, 3.2512160000024437, 2.977770000001101}},
			"decode":       {MS: []float64{118.67505100000386, 11.11253199999851, 11.272524999995426}},
			"decode/attn0": {MS: []float64{9, 1, 1.2}, Parent: "decode"},
		}}
	s := summary.Build(summary.Inputs{RunID: "r", GPU: &h200, Workload: rep}, summary.Options{})
	var b bytes.Buffer
	require.NoError(t, SummaryMarkdown(&b, s, nil))
	sections := map[string]string{}
	for _, sec := range strings.Split(b.String(), "\n## ")[1:] {
		title, body, _ := strings.Cut(sec, "\n")
		sections[title] = body
	}
	why := "dropped: over 1.5× the median of the other repeats (warm-up)"
	decodeNote := "- decode: first of 3 repeats, 118.675 ms, " + why + "; the mean, sd and tokens/s use the other 2."

	tabs := gfmTables(t, b.Bytes())
	stages, subs := tabs[0], tabs[1]
	assert.Equal(t, []string{"decode", "decode", "11.193", "0.113", "2 of 3", "118.675 (warm-up, dropped), 11.113, 11.273", "8", "714.8"}, stages[1])
	assert.Equal(t, []string{"prefill", "prefill", "3.143", "0.145", "3", "3.200, 3.251, 2.978", "64", "20363.7"}, stages[0], "no warm-up: all repeats")
	assert.Equal(t, 1, strings.Count(b.String(), decodeNote), "said once")
	assert.Contains(t, sections["Stages"], decodeNote)
	assert.Contains(t, sections["Stages"], "with 3 or more repeats, the first repeats over 1.5× the median of the others (per step, for repeats of several) are dropped as warm-up, as deepprof diff and baselines do")
	assert.NotContains(t, sections["Stages"], "- prefill:")
	assert.Equal(t, "9.000 (warm-up, dropped), 1.000, 1.200", subs[0][4])
	assert.Contains(t, sections["Stages"], "- decode/attn0: first of 3 repeats, 9.000 ms, "+why+"; the mean and sd use the other 2.")

	assert.Contains(t, sections["MFU"], "Mean times are the Stages table's means: the first repeat of decode is dropped there as warm-up.")
	assert.Contains(t, sections["Findings"], "mean of 2 repeats, warm-up dropped")

	// Without a warm-up, nothing is said of one.
	rep.Stages = map[string]workload.ReportStage{"prefill": {MS: []float64{3, 3.1, 2.9}}, "decode": {MS: []float64{11, 11.1, 11.2}}}
	b.Reset()
	require.NoError(t, SummaryMarkdown(&b, summary.Build(summary.Inputs{RunID: "r", GPU: &h200, Workload: rep}, summary.Options{}), nil))
	assert.NotContains(t, b.String(), "warm-up")
}

// TestSummaryMarkdownPhases: the section "GPU busy and idle per phase" is
// one table with a row per phase and the whole run, names from the profiled
// program escaped (a phase per hostile name, SYNTHETIC numbers), and one note
// with the rule; a launch-bound phase is named in the Summary.
func TestSummaryMarkdownPhases(t *testing.T) {
	sc := facts.PhaseScope{ProcessID: 1, Device: 0, Run: facts.Phase{SpanNS: 1e7, BusyNS: 1e6, IdleNS: 9e6, IdleShare: 0.9, LaunchBound: true}}
	for i, n := range hostileNames {
		p := facts.Phase{Name: n, Instances: 2, SpanNS: 1e6, KernelNS: 4e5, BusyNS: 4e5, IdleNS: 6e5, IdleShare: 0.6, LaunchBound: true, Kernels: 3,
			Gaps:    facts.GapStats{Count: 2, SumNS: 5e5, Largest: []facts.Gap{{NS: 3e5, Before: n, After: hostileNames[(i+1)%len(hostileNames)], Instance: 2}}},
			Latency: facts.Latency{Count: 3, MedianNS: 12345}}
		if i == 0 {
			p.IdleShare, p.IdleNS, p.BusyNS, p.KernelNS, p.LaunchBound, p.Latency, p.Gaps = 0.2, 2e5, 8e5, 8e5, false, facts.Latency{}, facts.GapStats{}
		}
		sc.Phases = append(sc.Phases, p)
	}
	rep := &facts.PhaseReport{Depth: 1, LaunchBoundIdleShare: phases.LaunchBoundIdleShare, Scopes: []facts.PhaseScope{sc}}
	s := summary.Build(summary.Inputs{RunID: "r", Phases: rep}, summary.Options{})
	var b bytes.Buffer
	require.NoError(t, SummaryMarkdown(&b, s, nil))
	sec := section(t, b.String(), "GPU busy and idle per phase")
	tabs := gfmTables(t, []byte(sec))
	require.Len(t, tabs, 1, "one table")
	rows := tabs[0]
	require.Len(t, rows, len(hostileNames)+1)
	for i, n := range hostileNames {
		want := strings.TrimSpace(strings.NewReplacer("\n", " ", "\t", " ").Replace(n))
		assert.Equal(t, want, rows[i][0], "phase %d reads as written", i)
		require.Len(t, rows[i], 12, "phase %d stays in its cells", i)
	}
	assert.Equal(t, []string{"2", "1.000", "0.800", "80.0%", "20.0%", "0", "0.000", "none", "n/a", "0.000", "no"}, rows[0][1:])
	assert.Equal(t, []string{"2", "1.000", "0.400", "40.0%", "60.0%", "2", "0.500"}, rows[1][1:8])
	assert.Equal(t, "0.300 ms after a\\|b, before `tick` (instance 2)", rows[1][8], "the largest gap with its kernels")
	assert.Equal(t, []string{"12.3", "0.000", "yes"}, rows[1][9:])
	assert.Equal(t, "(whole run)", rows[len(rows)-1][0])
	assert.Equal(t, 1, strings.Count(sec, "is launch-bound where"), "one note for the rule")
	assert.Contains(t, sec, "A phase with kernels idle more than 50.0% of its wall time is launch-bound where the gaps between its kernels make at least half of the idle time")

	sum := section(t, b.String(), "Findings")
	assert.Equal(t, 1, strings.Count(sum, "are launch-bound: in the CUPTI timeline"), "the launch-bound phases said in one finding")
	assert.NotContains(t, sum, "the whole run", "its phases are named instead")
	try := section(t, b.String(), "What to try")
	assert.Equal(t, len(hostileNames)-1, strings.Count(try, " is launch-bound: "), "and each one's advice once, with its saving")
	assert.Contains(t, try, "could save up to 0.300 ms (60%) an instance")

	// No timeline: one line says what gives the section.
	b.Reset()
	require.NoError(t, SummaryMarkdown(&b, summary.Build(summary.Inputs{RunID: "r"}, summary.Options{}), nil))
	sec = section(t, b.String(), "GPU busy and idle per phase")
	assert.Equal(t, "Not available: "+summary.NoTimeline+".", strings.TrimSpace(sec))
}

// TestSummaryMarkdownSpread: top kernels with a per-launch spread get a
// compact median (min–max) column; without spread the table is unchanged.
func TestSummaryMarkdownSpread(t *testing.T) {
	tab := model.KernelTable{Source: "t", TotalMS: 1, Launches: 3, Kernels: []model.KernelStats{
		{KernelTotals: model.KernelTotals{Name: "a", TotalMS: 0.9, Calls: 2}, Spread: &model.Spread{MinMS: 0.002, MedianMS: 0.0035, MaxMS: 0.45, StdDevMS: 0.001}},
		{KernelTotals: model.KernelTotals{Name: "b", TotalMS: 0.1, Calls: 1}}}}
	var b bytes.Buffer
	require.NoError(t, SummaryMarkdown(&b, summary.Build(summary.Inputs{RunID: "r", Kernels: &tab}, summary.Options{}), nil))
	sec := section(t, b.String(), "Top Kernels")
	top := gfmTables(t, []byte(sec))[0]
	assert.Equal(t, []string{"1", "a", "0.9000", "2", "0.00350 (0.00200–0.45000)", "90.0%"}, top[0][:6])
	assert.Equal(t, "", top[1][4], "a kernel without spread has an empty cell")
	assert.Contains(t, sec, "median (min–max)")

	tab.Kernels[0].Spread = nil
	b.Reset()
	require.NoError(t, SummaryMarkdown(&b, summary.Build(summary.Inputs{RunID: "r", Kernels: &tab}, summary.Options{}), nil))
	sec = section(t, b.String(), "Top Kernels")
	assert.Len(t, gfmTables(t, []byte(sec))[0][0], 9)
	assert.NotContains(t, sec, "median")
}

// section is the body of the summary's section titled title.
func section(t *testing.T, md, title string) string {
	t.Helper()
	for _, sec := range strings.Split(md, "\n## ")[1:] {
		if h, body, _ := strings.Cut(sec, "\n"); h == title {
			return body
		}
	}
	t.Fatalf("no section %q", title)
	return ""
}

// TestSummaryMarkdownCommunication: the section "Communication" is absent
// from a single-process summary with no collectives, and a balance line
// says when there is nothing to compare or no ratio (SYNTHETIC numbers).
func TestSummaryMarkdownCommunication(t *testing.T) {
	phase := func(name string, compute int64) facts.Phase {
		return facts.Phase{Name: name, Kernels: 1, SpanNS: 1e7, BusyNS: compute,
			Communication: &facts.CommunicationSplit{ComputeNS: compute}}
	}
	single := &facts.PhaseReport{Depth: 1, Scopes: []facts.PhaseScope{{ProcessID: 1, Run: facts.Phase{SpanNS: 1, BusyNS: 1, Kernels: 1}}}}
	s := summary.Build(summary.Inputs{RunID: "r", Phases: single}, summary.Options{})
	assert.Nil(t, s.Communication)
	assert.Equal(t, Sections, SectionsOf(s))
	var b bytes.Buffer
	require.NoError(t, SummaryMarkdown(&b, s, nil))
	assert.NotContains(t, b.String(), "## Communication")

	rep := &facts.PhaseReport{Depth: 1,
		Scopes: []facts.PhaseScope{
			{ProcessID: 1, Device: 0, Phases: []facts.Phase{phase("a|b", 2e6)}, Run: phase("", 2e6)},
			{ProcessID: 2, Device: 1, Run: phase("", 0)},
		},
		Balance: []facts.RankBalance{
			{Phase: "a|b", Ranks: 1, MaxComputeNS: 2e6, MinComputeNS: 2e6},
			{Phase: "", Ranks: 2, MaxBusyNS: 2e6, MaxComputeNS: 2e6, MinComputeNS: 0, Straggler: &facts.Rank{ProcessID: 1}, StragglerBy: phases.StragglerComputesMost},
		}}
	s = summary.Build(summary.Inputs{RunID: "r", Phases: rep}, summary.Options{})
	require.NotNil(t, s.Communication)
	assert.Equal(t, []string{"Findings", "What to try", "Stages", "GPU busy and idle per phase", "Communication", "Top Kernels",
		"Per-Region Breakdown", "MFU", "Top Operators", "Environment"}, SectionsOf(s))
	b.Reset()
	require.NoError(t, SummaryMarkdown(&b, s, nil))
	sec := section(t, b.String(), "Communication")
	assert.Contains(t, sec, "| a\\|b | 1 | 0 | 2.000 | 0.000 | 0.000 | 0.000 | 0 |\n")
	assert.Contains(t, sec, "- a\\|b: one rank, nothing to compare.\n")
	assert.Contains(t, sec, "- The whole run: GPU busy 2.000 ms max / 0.000 ms min across 2 ranks (a rank ran no kernel); compute 2.000 / 0.000 ms. The straggler is process 1 (GPU 0): it computes longest.\n")
	assert.NotContains(t, section(t, b.String(), "Findings"), "Communication takes", "no communication time, no finding")
}

// TestSummaryMarkdownGPUsUsed: with several GPUs, the environment names
// them in CUDA order and says how each pair is linked, a row each; with one
// GPU it says neither. SYNTHETIC GPUs.
func TestSummaryMarkdownGPUsUsed(t *testing.T) {
	g0, g1 := machine.GPU{Index: 0, Name: "NVIDIA H200"}, machine.GPU{Index: 1, Name: "NVIDIA H200"}
	in := summary.Inputs{RunID: "r", GPU: &g1, Used: []machine.GPU{g1, g0}, Links: []string{"GPU 0 – GPU 1: 18 NVLinks (NV18)"}}
	s := summary.Build(in, summary.Options{})
	assert.Equal(t, []string{"GPU 1 NVIDIA H200", "GPU 0 NVIDIA H200"}, s.Environment.GPUsUsed)
	assert.Equal(t, []string{"GPU 0 – GPU 1: 18 NVLinks (NV18)"}, s.Environment.GPULinks)
	var b bytes.Buffer
	require.NoError(t, SummaryMarkdown(&b, s, nil))
	env := gfmTables(t, b.Bytes())
	rows := env[len(env)-1]
	assert.Contains(t, rows, []string{"GPUs used (CUDA order)", "GPU 1 NVIDIA H200, GPU 0 NVIDIA H200"})
	assert.Contains(t, rows, []string{"GPU link", "GPU 0 – GPU 1: 18 NVLinks (NV18)"})

	in.Used, in.Links = []machine.GPU{g1}, nil
	s = summary.Build(in, summary.Options{})
	assert.Nil(t, s.Environment.GPUsUsed)
	b.Reset()
	require.NoError(t, SummaryMarkdown(&b, s, nil))
	assert.NotContains(t, b.String(), "GPUs used")
	assert.NotContains(t, b.String(), "GPU link")
}

// TestSummaryMarkdownRegionsCapped (issue 53): a program with a range per
// iteration gets the MaxRegionRows largest regions in the Per-Region
// Breakdown, in their order, and one line below the table saying how many
// are left out and their time, each counted once where they nest; a run
// with fewer regions lists them all and says nothing of it.
func TestSummaryMarkdownRegionsCapped(t *testing.T) {
	const steps = 250
	regs := facts.Regions{Source: "timeline/cupti", TotalMS: 1000, Launches: 4 * steps,
		Rows: []facts.RegionRow{{Name: "decode_all", Depth: 1, TotalMS: 1000, Launches: 4 * steps, Share: 1}}}
	for i := range steps {
		// step i takes 1+i ms; the smaller ones hold a nested range of
		// 0.5 ms, left out with them and not counted twice
		name := fmt.Sprintf("decode_all/decode_step %d", i)
		regs.Rows = append(regs.Rows, facts.RegionRow{Name: name, Depth: 2, TotalMS: float64(1 + i), Launches: 4})
		if i < 10 {
			regs.Rows = append(regs.Rows, facts.RegionRow{Name: name + "/attention", Depth: 3, TotalMS: 0.5, Launches: 1})
		}
	}
	md := func(r facts.Regions) string {
		s := summary.Build(summary.Inputs{RunID: "r"}, summary.Options{})
		s.Regions = r
		var b bytes.Buffer
		require.NoError(t, SummaryMarkdown(&b, s, nil))
		return section(t, b.String(), "Per-Region Breakdown")
	}
	sec := md(regs)
	tabs := gfmTables(t, []byte(sec))
	require.Len(t, tabs, 1)
	rows := tabs[0]
	require.Len(t, rows, MaxRegionRows+1, "the largest, then outside every range")
	assert.Equal(t, "decode_all", rows[0][0], "the parent, the largest, first")
	assert.Equal(t, "decode_all/decode_step 151", rows[1][0], "then the largest steps, in their order")
	assert.Equal(t, "decode_all/decode_step 249", rows[MaxRegionRows-1][0])
	// left out: steps 0 to 150, (1+151)*151/2 ms, and their nested ranges
	assert.Contains(t, sec, "Left out of the table: the 161 smaller regions, 11476.000 ms of GPU time (604 launches) in all, each counted once where they nest; ncu/regions/report.md and summary.json list every region.")

	regs.Rows = regs.Rows[:50]
	sec = md(regs)
	assert.Len(t, gfmTables(t, []byte(sec))[0], 51, "every region")
	assert.NotContains(t, sec, "Left out")
}

// TestInstancesLeftOut: a phase row says which of its left-out instances
// the warm-up rule dropped and which held one of the library's
// measurements.
func TestInstancesLeftOut(t *testing.T) {
	for _, tc := range []struct {
		w        *facts.PhaseWarmup
		measured int
		want     string
	}{
		{nil, 0, "3"},
		{&facts.PhaseWarmup{Instances: 1}, 0, "3 (+1 warm-up)"},
		{nil, 1, "3 (+1 measured)"},
		{&facts.PhaseWarmup{Instances: 2}, 1, "3 (+2 warm-up, 1 measured)"},
	} {
		var m *facts.PhaseMeasured
		if tc.measured > 0 {
			m = &facts.PhaseMeasured{Instances: tc.measured}
		}
		assert.Equal(t, tc.want, instancesCell(facts.PhaseRow{Phase: "decode", Instances: 3, Warmup: tc.w, Measured: m}))
	}
}
