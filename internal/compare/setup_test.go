package compare_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/llm-perf-opt/deepprof/internal/compare"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
)

// TestSetupDifferences: runs of two models, GPUs, workload shapes or kernel
// sources differ, each named; an unknown side differs in nothing.
func TestSetupDifferences(t *testing.T) {
	every := rundir.Source{Path: "timeline/cupti", EveryLaunch: true}
	a := &compare.Summary{Model: "m", Device: "NVIDIA H200", Shape: "prompt 64, generated 4, batch 1", KernelsFrom: every}
	assert.Empty(t, compare.SetupDifferences(a, &compare.Summary{Model: "m", Device: "NVIDIA H200", Shape: a.Shape, KernelsFrom: every}))
	assert.Empty(t, compare.SetupDifferences(a, &compare.Summary{}))
	diffs := compare.SetupDifferences(a, &compare.Summary{Model: "n", Device: "NVIDIA H100 80GB HBM3", Shape: "prompt 128, generated 4, batch 1",
		KernelsFrom: rundir.Source{Path: "ncu/raw.csv"}})
	got := strings.Join(diffs, "; ")
	assert.Contains(t, got, "run A is of m and run B of n; run A ran on NVIDIA H200 and run B on NVIDIA H100 80GB HBM3")
	assert.Contains(t, got, "run A's workload is prompt 64, generated 4, batch 1 and run B's prompt 128, generated 4, batch 1")
	assert.Contains(t, got, "run A's kernels count every launch (timeline/cupti) and run B's are the deep pass's sample (ncu/raw.csv)")
}
