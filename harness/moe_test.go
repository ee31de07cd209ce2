package harness_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/rundir"
	"github.com/llm-perf-opt/deepprof/internal/synth"
)

// recordedMoE is the recorded mixture-of-experts session (fixtures/README.md):
// its top kernel is a CUTLASS grouped GEMM whose name CUPTI left mangled.
const recordedMoE = "../fixtures/runs/moe-h100"

// TestMoEGroupedGemmNamedAndBound (issue 25): rebuilt from its recording, the
// mixture-of-experts run names its top kernel as cutlass::device_kernel
// (demangled here from the mangled name CUPTI gave), finds the deep pass's
// launches of it under ncu's spelling of that name, and gives its bound
// from them; the deep pass's kernels hold the share the plan said.
func TestMoEGroupedGemmNamedAndBound(t *testing.T) {
	t.Parallel()
	r := rebuilt(t, synth.RawRun(t, recordedMoE))
	assert.Equal(t, "complete", r.manifest.Status)
	assert.Contains(t, r.findings, "The top kernel, \\#1 cutlass::device\\_kernel (gemm), takes 39.5% of kernel time and is latency-bound")

	var s struct {
		Kernels struct {
			DeepShare float64 `json:"deep_share"`
			Rows      []struct {
				Name    string `json:"kernel_name"`
				Display string `json:"display_name"`
				Bound   struct{ Class string }
				Sampled *struct {
					Configs, Of int
					Share       float64
				}
			}
		}
	}
	dir := synth.Run(t, recordedMoE)
	rebuilt(t, dir)
	require.NoError(t, json.Unmarshal([]byte(readFile(t, filepath.Join(dir, rundir.SummaryJSON))), &s))
	require.NotEmpty(t, s.Kernels.Rows)
	top := s.Kernels.Rows[0]
	assert.True(t, strings.HasPrefix(top.Name, "void cutlass::device_kernel<at::cuda::detail::enable_3x_kernel_for_sm9x<"), top.Name)
	assert.Equal(t, "cutlass::device_kernel", top.Display)
	assert.Equal(t, "latency-bound", top.Bound.Class)
	unknown := 0
	for _, row := range s.Kernels.Rows[:10] {
		if row.Bound.Class == "unknown" {
			unknown++
		}
	}
	assert.Zero(t, unknown, "the ten kernels the deep pass profiled all have a bound")
	// What each bound stands on: every configuration of each profiled
	// kernel, as the plan asked (one launch of each), against the CUPTI
	// timeline's configurations of it.
	for _, row := range s.Kernels.Rows[:10] {
		if assert.NotNil(t, row.Sampled, row.Display) {
			assert.Equal(t, row.Sampled.Of, row.Sampled.Configs, row.Display)
			assert.InDelta(t, 1, row.Sampled.Share, 1e-9, row.Display)
		}
	}
	assert.Equal(t, 6, s.Kernels.Rows[1].Sampled.Of, "the elementwise kernel ran in 6 configurations, each profiled")
	assert.InDelta(t, 0.732, s.Kernels.DeepShare, 0.001, "the plan's 73.1% of every launch, 73.2% of the steady state's")
	assert.Contains(t, strings.Join(r.manifest.Notes, "\n"), "ncu-deep: the program was stopped once the 48 planned launches were profiled")

	// kernels.json says the same sample for each kernel as the summary.
	var kj struct {
		Kernels []struct {
			Name    string `json:"kernel_name"`
			Sampled *struct {
				Configs, Of int
				Share       float64
			}
		}
	}
	require.NoError(t, json.Unmarshal([]byte(readFile(t, filepath.Join(dir, rundir.KernelsJSON))), &kj))
	require.GreaterOrEqual(t, len(kj.Kernels), 10)
	for i, row := range s.Kernels.Rows[:10] {
		require.Equal(t, row.Name, kj.Kernels[i].Name)
		assert.Equal(t, row.Sampled, kj.Kernels[i].Sampled, row.Display)
	}
}
