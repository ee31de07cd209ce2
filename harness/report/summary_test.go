package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/harness/gpu"
	"github.com/llm-perf-opt/deepprof/harness/kernels"

	"github.com/llm-perf-opt/deepprof/harness/summary"
	"github.com/llm-perf-opt/deepprof/harness/workload"
)

// TestSummaryMarkdownHostileNames: kernel, operator and stage names from a
// profiled program stay inside their cells, whatever they hold.
func TestSummaryMarkdownHostileNames(t *testing.T) {
	tab := kernels.Table{Source: "synthetic", TotalMS: float64(len(hostileNames))}
	var ops []workload.Operator
	for _, n := range hostileNames {
		tab.Kernels = append(tab.Kernels, kernels.Record{Name: n, TotalMS: 1, Calls: 1})
		ops = append(ops, workload.Operator{Name: n, Calls: 1, TotalMS: 1, CUDAMS: 1})
	}
	rep := &workload.Report{Model: workload.Model{Name: hostileNames[0]}, Stages: map[string]workload.Stage{
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
	// environment, aggregates, stages, sub-stages, operators, kernels,
	// categories, bottlenecks (no MFU: no peak; no regions)
	n := len(hostileNames)
	assert.Equal(t, []int{7, 2, 2, 1, n, n, len(s.Kernels.ByCategory), 3}, rows)
	tabs := gfmTables(t, b.Bytes())
	require.Len(t, tabs, 8)
	var kernelCells, opCells []string
	for _, r := range tabs[5] {
		kernelCells = append(kernelCells, r[1])
	}
	for _, r := range tabs[4] {
		opCells = append(opCells, r[0])
	}
	// Each name reads as written, its line breaks and tabs as spaces
	// (operators are sorted by time, then name).
	var want []string
	for _, n := range hostileNames {
		want = append(want, strings.TrimSpace(strings.NewReplacer("\n", " ", "\t", " ").Replace(n)))
	}
	assert.Equal(t, want, kernelCells)
	assert.ElementsMatch(t, want, opCells)
}

// TestSummaryMarkdownWarmup: every table of the stakeholder summary that
// shows a mean over repeats says which repeat the warm-up rule dropped and
// why. SYNTHETIC repeats: decode as an earlier tiny-llama recording had it
// (118.7, 11.1, 11.3 ms), a sub-stage with a slow first repeat too.
func TestSummaryMarkdownWarmup(t *testing.T) {
	h200 := gpu.GPU{Name: "NVIDIA H200"}
	rep := &workload.Report{
		Model:  workload.Model{Name: "m", Dtype: "bfloat16", MatmulParams: 1e9, Layers: 16, Heads: 32, HeadDim: 128},
		Tokens: workload.Tokens{Prompt: 64, Generated: 8},
		Stages: map[string]workload.Stage{
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
	agg, stages, subs := tabs[1], tabs[2], tabs[3]
	assert.Equal(t, []string{"decode", "11.193", "0.113", "2 of 3", "8", "714.8"}, agg[1])
	assert.Equal(t, []string{"prefill", "3.143", "0.145", "3", "64", "20363.7"}, agg[0], "no warm-up: all repeats")
	assert.Contains(t, sections["Aggregates"], decodeNote)
	assert.Contains(t, sections["Aggregates"], "with 3 or more repeats, a first repeat over 1.5× the median of the others is dropped as warm-up, as deepprof diff and baselines do")
	assert.NotContains(t, sections["Aggregates"], "- prefill:")

	assert.Equal(t, []string{"decode", "11.193", "0.113", "2 of 3", "118.675 (warm-up, dropped), 11.113, 11.273"}, stages[1])
	assert.Equal(t, "9.000 (warm-up, dropped), 1.000, 1.200", subs[0][4])
	assert.Contains(t, sections["Per-Stage Timings"], decodeNote)
	assert.Contains(t, sections["Per-Stage Timings"], "- decode/attn0: first of 3 repeats, 9.000 ms, "+why+"; the mean and sd use the other 2.")

	assert.Contains(t, sections["MFU"], "Mean times are Per-Stage Timings' means: the first repeat of decode is dropped there as warm-up.")
	assert.Contains(t, sections["Summary"], "mean over 2 repeats, its warm-up dropped")

	// Without a warm-up, nothing is said of one.
	rep.Stages = map[string]workload.Stage{"prefill": {MS: []float64{3, 3.1, 2.9}}, "decode": {MS: []float64{11, 11.1, 11.2}}}
	b.Reset()
	require.NoError(t, SummaryMarkdown(&b, summary.Build(summary.Inputs{RunID: "r", GPU: &h200, Workload: rep}, summary.Options{}), nil))
	assert.NotContains(t, b.String(), "warm-up")
}
