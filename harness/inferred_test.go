package harness_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
	"github.com/llm-perf-opt/deepprof/internal/synth"
)

// TestInferredPhasesScopeTheKernels (issue 54): a recorded JAX program with
// no NVTX range of the default domain (an H200, fixtures/runs/corpus-jax),
// rebuilt: its phases are inferred from its kernel stream, and the kernel
// table, its categories and the summary's top kernels cover them, not
// XLA's autotuning before the first (DelayKernel, 1.76 s of the run's
// 1.84 s of kernel time, and RedzoneAllocatorKernelImpl). The scope is
// said in the words of every table; the whole run's kernel time stays in
// the summary's sentence and in the region report, which holds every
// launch.
func TestInferredPhasesScopeTheKernels(t *testing.T) {
	t.Parallel()
	dir := synth.RawRun(t, "../fixtures/runs/corpus-jax")
	r := rebuilt(t, dir)
	var k struct {
		Kernels []struct {
			Name    string  `json:"kernel_name"`
			TotalMS float64 `json:"total_ms"`
		} `json:"kernels"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.kernels), &k))
	require.NotEmpty(t, k.Kernels)
	assert.True(t, strings.HasPrefix(k.Kernels[0].Name, "gemm_fusion_dot"), "the top kernel is one of the decode's: %s", k.Kernels[0].Name)
	total := 0.0
	for _, row := range k.Kernels {
		assert.NotContains(t, row.Name, "stream_executor::gpu::", "no autotuning kernel in the inferred phases")
		total += row.TotalMS
	}
	assert.InDelta(t, 17.096, total, 0.001)

	var s facts.Summary
	require.NoError(t, json.Unmarshal([]byte(readFile(t, filepath.Join(dir, rundir.SummaryJSON))), &s))
	assert.Equal(t, facts.ScopeRanges, s.Kernels.Scope)
	assert.Equal(t, []string{"prefill", "decode_all"}, s.Kernels.Ranges)
	assert.True(t, s.Kernels.Inferred)
	require.NotNil(t, s.Kernels.OutsideMS)
	assert.InDelta(t, 85.362-17.096, *s.Kernels.OutsideMS, 0.002, "the whole run's kernel time outside the phases")
	require.NotEmpty(t, s.Kernels.Rows)
	assert.Equal(t, k.Kernels[0].Name, s.Kernels.Rows[0].Name)
	for _, c := range s.Kernels.ByCategory {
		assert.LessOrEqual(t, c.TotalMS, 17.096, c.Category)
	}
	assert.Contains(t, r.summary, "in the profiled ranges (prefill, decode\\_all: inferred from the kernel stream), in steady state (the warm-up's 0.284 ms left out): 5415 launches, 16.812 ms of GPU time; share is of that time. "+
		"The warm-up instances' 57 launches are left out, as from every figure of the phases; kernels.md lists every launch in the ranges. The whole run's kernel time is 85.362 ms: 68.266 ms (80.0%) lies outside these ranges")
	assert.Contains(t, strings.Join(r.manifest.Notes, "\n"), "kernels: the program opened no NVTX range to profile; the kernel table covers the phases inferred from its kernel stream (prefill, decode_all)")
	assert.Contains(t, readFile(t, filepath.Join(dir, rundir.RegionsMD)), "8544 kernel launches, 85.362 ms of GPU time", "the region report keeps the whole run")
}
