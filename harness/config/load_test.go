package config

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/bounded/boundedtest"
)

func TestCommandIsTheWorkload(t *testing.T) {
	c, err := Load(LoadOptions{Dir: "../../profiles", Command: []string{"python3", "-u", "serve.py", "--port", "1"}, Overrides: []string{"model.dtype=bf16"}})
	require.NoError(t, err)
	assert.Equal(t, []string{"python3", "-u", "serve.py", "--port", "1"}, c.Workload.Command())
	assert.Equal(t, "serve", c.Workload.Name)
	assert.Equal(t, "serve", c.Model.Name)
	assert.Empty(t, c.Model.Options, "the default workload's shapes are dropped")
	assert.Equal(t, "bf16", c.Model.Dtype, "overrides apply after the command")

	_, err = Load(LoadOptions{Dir: "../../profiles", Command: []string{"./bench"}, Overrides: []string{"workload.argv=[x.py]"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the command after -- is the workload")

	// The model's facts for MFU come with the command, as overrides.
	c, err = Load(LoadOptions{Dir: "../../profiles", Command: []string{"./bench"}, Overrides: []string{
		"model.matmul_params=6979321856", "model.layers=32", "model.heads=32", "model.head_dim=128",
		"model.prompt_tokens=512", "model.generated_tokens=32", "phases.decode=[generate]"}})
	require.NoError(t, err)
	assert.Equal(t, Model{Name: "bench", MatmulParams: 6979321856, Layers: 32, Heads: 32, HeadDim: 128, PromptTokens: 512, GeneratedTokens: 32}, c.Model)
	assert.Equal(t, []string{"prefill"}, c.Phases.Prefill, "phases.prefill keeps its default")
	assert.Equal(t, []string{"generate"}, c.Phases.Decode)
	for _, bad := range []struct{ override, want string }{
		{"model.layers=-1", "model.layers: must not be negative, got -1"},
		{`phases.decode=["gen["]`, `phases.decode: "gen[": syntax error in pattern`},
		{"phases.decode=[]", "phases.decode: "},
	} {
		_, err = Load(LoadOptions{Dir: "../../profiles", Command: []string{"./bench"}, Overrides: []string{bad.override}})
		if bad.override == "phases.decode=[]" {
			assert.NoError(t, err, "decode may be left out: prefill still names one")
			continue
		}
		require.Error(t, err, bad.override)
		assert.Contains(t, err.Error(), bad.want)
	}
	_, err = Load(LoadOptions{Dir: "../../profiles", Overrides: []string{"phases.decode=[]", "phases.prefill=[]"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "phases: names no stage")

	assert.Equal(t, "bench", ProgramName([]string{"./build/bench", "-n", "3"}))
	assert.Equal(t, "run", ProgramName([]string{"bash", "scripts/run.sh"}))
}

// Issue 16: a group override is a name, not a path; keys the session sets
// cannot come from workload.env; repeats are bounded.
func TestHostileConfiguration(t *testing.T) {
	for _, c := range []struct {
		over []string
		want string
	}{
		{[]string{"ncu=../../../../tmp/x/evil"}, "ncu=../../../../tmp/x/evil: a ncu profile is a name in the profiles folder (default, full, roofline, timing), not a path"},
		{[]string{"+ncu=/etc/passwd"}, "not a path"},
		{[]string{"+workload.env.DEEPPROF_REPEATS=7"}, "workload.env.DEEPPROF_REPEATS: the session sets DEEPPROF_REPEATS itself (from workload.repeats): set that instead"},
		{[]string{"+workload.env.CUDA_VISIBLE_DEVICES=1"}, "the session sets CUDA_VISIBLE_DEVICES itself (from device)"},
		{[]string{"workload.repeats=1000000000"}, "workload.repeats: at most 1000, got 1000000000"},
	} {
		_, err := Load(LoadOptions{Dir: "../../profiles", Overrides: c.over})
		if assert.Error(t, err, "%v", c.over) {
			assert.Contains(t, err.Error(), c.want)
		}
	}
	_, err := Load(LoadOptions{Dir: "../../profiles", Profiles: []string{"../x"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "a profile name stays inside the profiles folder")
}

// TestParseBounded (issue 16): a profile file is read up to a cap; an
// endless one (SYNTHETIC zeros through a named pipe) is an error naming it.
func TestParseBounded(t *testing.T) {
	boundedtest.Limit(t, 1<<20)
	p := filepath.Join(t.TempDir(), "config.yaml")
	boundedtest.FIFO(t, p)
	_, err := Parse(p)
	require.ErrorContains(t, err, p+": larger than 1 MiB: not a deepprof file?")
}
