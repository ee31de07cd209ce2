package harness_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/rundir"
	"github.com/llm-perf-opt/deepprof/internal/synth"
)

// TestServingFiguresByHand (issue 26): on the recorded Llama-3-8B run (an
// H200), TTFT, TPOT, decode throughput, the decode's bytes, its step floor
// and MBU are what a hand computation from the workload report's own facts
// and the H200's datasheet bandwidth (4.8 TB/s) gives.
func TestServingFiguresByHand(t *testing.T) {
	t.Parallel()
	dir := synth.RawRun(t, "../fixtures/runs/llama3-8b-roofline")
	rebuilt(t, dir)
	var rep struct {
		Model struct {
			Dtype        string
			MatmulParams float64 `json:"matmul_params"`
			Layers       float64
		}
		Tokens struct{ Prompt, Generated float64 }
	}
	raw := readFile(t, filepath.Join(dir, rundir.Stage1Report))
	require.NoError(t, json.Unmarshal([]byte(raw), &rep))
	var kv struct {
		Model struct {
			KVHeads float64 `json:"kv_heads"`
			HeadDim float64 `json:"head_dim"`
		}
	}
	require.NoError(t, json.Unmarshal([]byte(raw), &kv))
	var s struct {
		Stages struct {
			Batch float64
			Rows  []struct {
				Name   string
				MeanMS float64 `json:"mean_ms"`
				SDMS   float64 `json:"sd_ms"`
			}
		}
		Environment struct{ GPU string }
		Serving     struct {
			TTFT       float64 `json:"ttft_ms"`
			TPOT       float64 `json:"tpot_ms"`
			TPOTSD     float64 `json:"tpot_sd_ms"`
			TokensPerS float64 `json:"decode_tokens_per_s"`
			Bytes      float64 `json:"decode_bytes"`
			Floor      float64 `json:"step_floor_ms"`
			MBU        float64 `json:"mbu"`
		}
	}
	require.NoError(t, json.Unmarshal([]byte(readFile(t, filepath.Join(dir, rundir.SummaryJSON))), &s))
	require.Contains(t, s.Environment.GPU, "H200")
	require.Equal(t, "bfloat16", rep.Model.Dtype)
	mean := map[string][2]float64{}
	for _, r := range s.Stages.Rows {
		mean[r.Name] = [2]float64{r.MeanMS, r.SDMS}
	}
	const bf16, h200 = 2.0, 4.8e12                  // bytes per weight; NVIDIA H200 SXM datasheet, bytes/s
	g, p := rep.Tokens.Generated, rep.Tokens.Prompt // batch 1
	require.Equal(t, 1.0, max(s.Stages.Batch, 1))
	weights := g * rep.Model.MatmulParams * bf16
	cache := 2 * rep.Model.Layers * kv.Model.KVHeads * kv.Model.HeadDim * bf16 * (g*p + g*(g+1)/2)
	decodeS := mean["decode"][0] / 1e3
	assert.InDelta(t, mean["prefill"][0], s.Serving.TTFT, 1e-9)
	assert.InDelta(t, mean["decode"][0]/g, s.Serving.TPOT, 1e-9)
	assert.InDelta(t, mean["decode"][1]/g, s.Serving.TPOTSD, 1e-9)
	assert.InDelta(t, g/decodeS, s.Serving.TokensPerS, 1e-6)
	assert.InDelta(t, weights+cache, s.Serving.Bytes, 1)
	assert.InDelta(t, (weights+cache)/g/h200*1e3, s.Serving.Floor, 1e-9)
	assert.InDelta(t, (weights+cache)/decodeS/h200, s.Serving.MBU, 1e-12)
	// 15.0 GB of weights a step, 0.54 GB of cache over the decode
	assert.InDelta(t, 15.01e9, rep.Model.MatmulParams*bf16, 0.01e9)
	summary := readFile(t, filepath.Join(dir, rundir.StakeholderSummary))
	assert.Contains(t, summary, "| model bandwidth utilization (MBU), decode | 15.5% |")
}
