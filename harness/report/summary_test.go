package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
