package workload

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadModelFacts(t *testing.T) {
	good := `{"format": "deepprof-model-facts/1", "from": "the transformers config of LlamaForCausalLM",
 "model": {"name": "llama", "arch": "LlamaForCausalLM", "params": 10, "dtype": "bf16", "matmul_params": 8,
  "layers": 2, "hidden_size": 64, "heads": 4, "kv_heads": 2, "head_dim": 16, "vocab_size": 100},
 "tokens": {"prompt": 512, "generated": 128}, "batch": 4}`
	f, err := ReadModelFacts(strings.NewReader(good), "model.json")
	require.NoError(t, err)
	assert.Equal(t, int64(8), f.Model.MatmulParams)
	assert.Equal(t, int64(2), f.Model.KVHeads)
	assert.Equal(t, Tokens{Prompt: 512, Generated: 128}, f.Tokens)
	assert.Equal(t, int64(4), f.Batch)

	for _, c := range []struct{ in, want string }{
		{`{"format": "deepprof-model-facts/1", "model": {"layers": "two"}}`, "model.json:1:"},
		{"{\"format\": \"deepprof-model-facts/1\",\n \"extra\": 1}", "model.json:2:"},
		{`{"format": "other/1"}`, `format "other/1"`},
		{`{"format": "deepprof-model-facts/1", "batch": -1}`, "batch = -1: must not be negative"},
		{`{"format": "deepprof-model-facts/1"`, "model.json"},
		{"{\"format\": \"deepprof-model-facts/1\"}\n{\"format\": \"deepprof-model-facts/1\"}", "model.json:2: more after"},
	} {
		_, err := ReadModelFacts(strings.NewReader(c.in), "model.json")
		require.Error(t, err, c.in)
		assert.Contains(t, err.Error(), c.want, c.in)
	}
}
