package workload

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llm-perf-opt/deepprof/internal/input"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const good = `{
  "model": {"name": "tiny-llama", "arch": "LlamaForCausalLM", "params": 12345, "dtype": "bfloat16"},
  "tokens": {"prompt": 64, "generated": 4},
  "stages": {"prefill": {"ms": [1.5, 1.25]}, "decode": {"ms": [3.0, 2.5]}},
  "operators": [{"name": "aten::mm", "calls": 10, "total_ms": 0.5, "cuda_ms": 0.4}],
  "versions": {"torch": "2.11.0"},
  "gpu_memory_mb": 812
}`

// Reports here are SYNTHETIC: typed to test the checks.
func TestReadReport(t *testing.T) {
	rep, err := ReadReport(strings.NewReader(good), "r.json")
	require.NoError(t, err)
	assert.Equal(t, "tiny-llama", rep.Model.Name)
	assert.Equal(t, []float64{3.0, 2.5}, rep.Stages["decode"].MS)
	assert.Equal(t, "2.11.0", rep.Versions["torch"])
	assert.JSONEq(t, "812", string(rep.Extra["gpu_memory_mb"]), "more keys are kept")

	for _, tt := range []struct{ in, err string }{
		{"", "r.json:1: empty report"},
		{"{\n  \"model\": {\"name\": 3}\n}", "r.json:2: json: cannot unmarshal number"},
		{"{\n\n  \"model\": [}", "r.json:3: invalid character"},
		{`{"stages": {"decode": {"ms": [1]}}}`, "r.json: model.name is missing"},
		{`{"model": {"name": "m"}}`, "r.json: stages is empty"},
		{`{"model": {"name": "m"}, "stages": {"decode": {"ms": [-1]}}}`, "stages.decode.ms[0] = -1"},
		{`{"model": {"name": "m"}, "stages": {"decode": {"ms": []}}}`, "stages.decode.ms is empty"},
		{`{"model": {"name": "m"}, "stages": {"decode": {"ms": [1e308, 1e308]}}}`, "r.json: stages.decode.ms: the times sum past the largest number a float64 holds (1.8e+308): not times in ms"},
		{`{"model": {"name": "m"}, "stages": {"d": {"ms": [1]}}, "operators": [{"name": "a", "total_ms": 1e308}, {"name": "b", "total_ms": 1e308}]}`, "r.json: operators: total_ms and cuda_ms sum past"},
		{`{"model": {"name": "m"}, "stages": {"d": {"ms": [1]}}, "operators": [{"calls": 1}]}`, "operators[0]"},
		{`{"model": {"name": "m"}, "stages": {"d/a": {"ms": [1], "parent": "p"}}}`, `stages.d/a.parent = "p": not another stage`},
		{`{"model": {"name": "m"}, "stages": {"d": {"ms": [1], "parent": "d"}}}`, `stages.d.parent = "d": not another stage`},
	} {
		_, err := ReadReport(strings.NewReader(tt.in), "r.json")
		require.Error(t, err, tt.in)
		assert.Contains(t, err.Error(), tt.err, tt.in)
	}
}

func TestEnviron(t *testing.T) {
	s := Spec{Argv: []string{"python3", "wl.py"}, Env: map[string]string{"HF_HOME": "/x", EnvPhase: "ignored"},
		Repeats: 3, Visible: "1", NVTXDomain: "LLM", Model: map[string]any{"hidden_size": 512}}
	env, err := s.Environ(PhaseNcu, "/run/stage1/report.json")
	require.NoError(t, err)
	assert.Equal(t, []string{
		"CUDA_VISIBLE_DEVICES=1",
		`DEEPPROF_MODEL={"hidden_size":512}`,
		"DEEPPROF_NVTX_DOMAIN=LLM",
		"DEEPPROF_PHASE=ncu",
		"DEEPPROF_REPEATS=3",
		"DEEPPROF_REPORT=/run/stage1/report.json",
		"HF_HOME=/x",
	}, env, "sorted; the harness's variables win")
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "prompt.txt")
	require.NoError(t, os.WriteFile(in, []byte("hi"), 0o644))
	assert.NoError(t, Spec{Argv: []string{"x"}, Inputs: []string{in}}.Check())
	err := Spec{Inputs: []string{filepath.Join(dir, "missing.txt")}}.Check()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "workload.argv is empty")
	assert.Contains(t, err.Error(), "missing.txt")
}

// TestReadBounded (issue 16): the workload report and runs.json are read
// up to a cap; an endless input (SYNTHETIC zeros) is an error naming it.
func TestReadBounded(t *testing.T) {
	input.LimitForTest(t, 1<<20)
	_, err := ReadReport(input.OverLimit(), "stage1/report.json")
	require.EqualError(t, err, "stage1/report.json: larger than 1 MiB: not a deepprof file?")
	_, err = ReadRuns(input.OverLimit(), "stage1/runs.json")
	require.EqualError(t, err, "stage1/runs.json: larger than 1 MiB: not a deepprof file?")
}

// TestReportRanks: the report's "ranks" give each rank's times of the
// report's stages; a rank twice, a negative time or a rank that is no
// number is a clear error naming the element.
func TestReportRanks(t *testing.T) {
	doc := `{"model": {"name": "m"}, "tokens": {"prompt": 1, "generated": 1},
 "stages": {"prefill": {"ms": [1, 2]}, "decode": {"ms": [3, 4]}},
 "ranks": [{"rank": 1, "device": 0, "prefill_ms": [1.5, 2.5], "decode_ms": [3.5, 4.5]}, {"rank": 0, "prefill_ms": [1, 2]}]}`
	rep, err := ReadReport(strings.NewReader(doc), "r.json")
	require.NoError(t, err)
	require.Len(t, rep.Ranks, 2)
	assert.Equal(t, 0, rep.Ranks[0].Rank, "sorted by rank")
	assert.Equal(t, map[string][]float64{"prefill": {1, 2}}, rep.Ranks[0].Stages)
	assert.Equal(t, []float64{3.5, 4.5}, rep.Ranks[1].Stages["decode"])

	for old, want := range map[string]string{
		`{"rank": 0, "prefill_ms"`: `r.json: ranks: [1]: rank 1 appears twice`,
		`"decode_ms": [3.5, 4.5]`:  `r.json: ranks: [0].decode_ms[0] = -1: want a time in ms`,
		`{"rank": 1, "device": 0,`: `r.json: ranks: [0].rank: want a rank >= 0`,
	} {
		bad := map[string]string{
			`{"rank": 0, "prefill_ms"`: `{"rank": 1, "prefill_ms"`,
			`"decode_ms": [3.5, 4.5]`:  `"decode_ms": [-1, 4.5]`,
			`{"rank": 1, "device": 0,`: `{"rank": "one", "device": 0,`,
		}[old]
		_, err := ReadReport(strings.NewReader(strings.Replace(doc, old, bad, 1)), "r.json")
		require.Error(t, err, old)
		assert.Contains(t, err.Error(), want)
	}
}

// Reports here are SYNTHETIC: typed to test the checks.
func TestReportPausedStages(t *testing.T) {
	doc := `{"model": {"name": "m"}, "stages": {"prefill": {"ms": [1.1, 1.2]}, "decode": {"ms": [3.3, 3.4]}, "decode/mlp": {"ms": [1, 1], "parent": "decode"}},
 "ranks": [{"rank": 0, "prefill_ms": [1.1, 1.2]}],
 "overhead": {"method": "m", "recording_ms": [4.4, 4.6], "paused_ms": [4.0, 4.2],
  "paused_stages": {"prefill": {"ms": [1.0, 1.1]}, "decode": {"ms": [3.0, 3.1]}, "decode/mlp": {"ms": [0.9, 0.9], "parent": "decode"}}}}`
	rep, err := ReadReport(strings.NewReader(doc), "r.json")
	require.NoError(t, err)
	o, ok := rep.Overhead()
	require.True(t, ok)
	assert.Equal(t, []float64{1.0, 1.1}, o.Stages["prefill"].MS)
	assert.Equal(t, "decode", o.Stages["decode/mlp"].Parent)
	assert.Equal(t, []float64{1.1, 1.2}, rep.Stages["prefill"].MS, "the report's stages are the recorded repeats'")

	for old, want := range map[string]string{
		`"prefill": {"ms": [1.0, 1.1]}, `:          `r.json: overhead.paused_stages has no "prefill"`,
		`"decode": {"ms": [3.0, 3.1]}`:             `r.json: overhead.paused_stages.decode.ms[0] = -3`,
		`"parent": "decode"}}}}`:                   `r.json: overhead.paused_stages.decode/mlp.parent = "x"`,
		`"paused_stages": {"prefill": {"ms": [1.0`: `r.json:5: overhead.paused_stages.prefill: want a stage as "stages" holds them`,
	} {
		bad := map[string]string{
			`"prefill": {"ms": [1.0, 1.1]}, `:          ``,
			`"decode": {"ms": [3.0, 3.1]}`:             `"decode": {"ms": [-3, 3.1]}`,
			`"parent": "decode"}}}}`:                   `"parent": "x"}}}}`,
			`"paused_stages": {"prefill": {"ms": [1.0`: "\n  \"paused_stages\": {\"prefill\": {\"ms\": [\"a\"",
		}[old]
		_, err := ReadReport(strings.NewReader(strings.Replace(doc, old, bad, 1)), "r.json")
		require.Error(t, err, old)
		assert.Contains(t, err.Error(), want)
	}
}

// Reports here are SYNTHETIC: typed to test the checks.
func TestReportAlone(t *testing.T) {
	doc := `{"model": {"name": "m"}, "stages": {"prefill": {"ms": [1.1, 1.2]}, "decode": {"ms": [3.3, 3.4]}, "decode/mlp": {"ms": [1, 1], "parent": "decode"}},
 "ranks": [{"rank": 0, "prefill_ms": [1.1, 1.2]}],
 "alone": {"method": "m",
  "stages": {"prefill": {"ms": [1.0, 1.05]}, "decode": {"ms": [3.0, 3.1]}, "decode/mlp": {"ms": [0.9, 0.9], "parent": "decode"}}}}`
	rep, err := ReadReport(strings.NewReader(doc), "r.json")
	require.NoError(t, err)
	a, ok := rep.Alone()
	require.True(t, ok)
	assert.Equal(t, []float64{1.0, 1.05}, a.Stages["prefill"].MS)
	alone, ok := rep.AloneReport()
	require.True(t, ok)
	assert.Equal(t, []float64{3.0, 3.1}, alone.Stages["decode"].MS, "the alone report's stages are the alone repeats'")
	assert.Nil(t, alone.Ranks, "the ranks are the recorded repeats'")
	assert.Equal(t, "m", alone.Model.Name)
	assert.Equal(t, []float64{3.3, 3.4}, rep.Stages["decode"].MS, "the report's own stages unchanged")
	_, ok = (&Report{}).AloneReport()
	assert.False(t, ok, "a report with no alone repeats")

	for old, want := range map[string]string{
		`"prefill": {"ms": [1.0, 1.05]}, `:  `r.json: alone.stages has no "prefill"`,
		`"decode": {"ms": [3.0, 3.1]}`:      `r.json: alone.stages.decode.ms[0] = -3`,
		`"parent": "decode"}}}}`:            `r.json: alone.stages.decode/mlp.parent = "x"`,
		`"stages": {"prefill": {"ms": [1.0`: `r.json:4: alone.stages.prefill: want a stage as "stages" holds them`,
		`"alone": {"method": "m",`:          `r.json:3: alone: want {"method": "...", "stages"`,
		`"stages": {"prefill": {"ms": [1.0, 1.05]}, "decode": {"ms": [3.0, 3.1]}, "decode/mlp": {"ms": [0.9, 0.9], "parent": "decode"}}}}`: `r.json: alone.stages is empty`,
	} {
		bad := map[string]string{
			`"prefill": {"ms": [1.0, 1.05]}, `:  ``,
			`"decode": {"ms": [3.0, 3.1]}`:      `"decode": {"ms": [-3, 3.1]}`,
			`"parent": "decode"}}}}`:            `"parent": "x"}}}}`,
			`"stages": {"prefill": {"ms": [1.0`: `"stages": {"prefill": {"ms": ["a"`,
			`"alone": {"method": "m",`:          `"alone": {"method": 7,`,
			`"stages": {"prefill": {"ms": [1.0, 1.05]}, "decode": {"ms": [3.0, 3.1]}, "decode/mlp": {"ms": [0.9, 0.9], "parent": "decode"}}}}`: `"stages": {}}}`,
		}[old]
		_, err := ReadReport(strings.NewReader(strings.Replace(doc, old, bad, 1)), "r.json")
		require.Error(t, err, old)
		assert.Contains(t, err.Error(), want)
	}
}
