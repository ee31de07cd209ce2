// The model facts a program's own framework gives (workload.auto_ranges:
// deepprof's sitecustomize reads them from a transformers model's config
// at its generate() call), for a program that writes no workload report.

package workload

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/llm-perf-opt/deepprof/internal/input"
)

// EnvModelFacts is where the automatic ranges write the model facts of the
// program's last generate() (ModelFacts).
const EnvModelFacts = "DEEPPROF_MODEL_FACTS"

// ModelFactsFormat is the facts file's format key.
const ModelFactsFormat = "deepprof-model-facts/1"

// ModelFacts are what the program's model and its last generate() call
// say: the model's shape, and the tokens one prefill reads and one decode
// stage writes, for the whole batch.
type ModelFacts struct {
	Format string `json:"format"`
	// From names where the facts were read: "the transformers config of
	// LlamaForCausalLM".
	From   string `json:"from"`
	Model  Model  `json:"model"`
	Tokens Tokens `json:"tokens"`
	Batch  int64  `json:"batch"`
}

// ReadModelFacts reads and checks a facts file. Errors name the file and,
// for JSON that does not parse or has a wrong type or an unknown key, the
// line.
func ReadModelFacts(r io.Reader, name string) (*ModelFacts, error) {
	data, err := input.ReadAll(r, name)
	if err != nil {
		return nil, err
	}
	var f ModelFacts
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		var key string
		if _, scanErr := fmt.Sscanf(err.Error(), "json: unknown field %q", &key); scanErr == nil {
			// decoding stops at the key's value: its line is the last one
			// that names it before the decoder's offset
			at := bytes.LastIndex(data[:dec.InputOffset()], []byte(strconv.Quote(key)))
			return nil, fmt.Errorf("%s:%d: unknown key %q", name, input.Line(data, int64(max(at, 0))), key)
		}
		return nil, positioned(name, data, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%s:%d: more after the facts' one JSON object", name, input.Line(data, dec.InputOffset()))
	}
	if f.Format != ModelFactsFormat {
		return nil, fmt.Errorf("%s: format %q: want %q", name, f.Format, ModelFactsFormat)
	}
	m := f.Model
	for _, n := range []struct {
		key string
		v   int64
	}{{"model.params", m.Params}, {"model.matmul_params", m.MatmulParams}, {"model.layers", m.Layers},
		{"model.hidden_size", m.HiddenSize}, {"model.heads", m.Heads}, {"model.kv_heads", m.KVHeads},
		{"model.head_dim", m.HeadDim}, {"model.vocab_size", m.VocabSize},
		{"tokens.prompt", f.Tokens.Prompt}, {"tokens.generated", f.Tokens.Generated}, {"batch", f.Batch}} {
		if n.v < 0 {
			return nil, fmt.Errorf("%s: %s = %d: must not be negative", name, n.key, n.v)
		}
	}
	return &f, nil
}
