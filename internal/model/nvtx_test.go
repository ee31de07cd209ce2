package model_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/model"
)

func TestPath(t *testing.T) {
	tests := []struct {
		name   string
		levels []model.Range
		path   string
	}{
		{"nested default domain", []model.Range{{Name: "decode_all"}, {Name: "decode_step"}}, "decode_all/decode_step"},
		{"named domain on every level", []model.Range{{Domain: "LLM", Name: "decode_all"}, {Domain: "LLM", Name: "decode_step"}}, "LLM@decode_all/LLM@decode_step"},
		{"library domain inside default ranges", []model.Range{{Name: "outer"}, {Name: "inner:with:colons"}, {Domain: "CCCL", Name: "cub::DeviceScan::InclusiveScan"}},
			"outer/inner:with:colons/CCCL@cub::DeviceScan::InclusiveScan"},
		{"@ in a default-domain name", []model.Range{{Name: "LLM@decode_all"}}, `LLM\@decode_all`},
		{"@ in a named domain's name", []model.Range{{Domain: "LLM", Name: "a@b"}}, "LLM@a@b"},
		{"slash and quotes", []model.Range{{Name: `step: 1 "quoted" / a@b`}}, `step: 1 "quoted" \/ a\@b`},
		{"backslash", []model.Range{{Name: `a\b`}, {Domain: `d\@/`, Name: `x\`}}, `a\\b/d\\\@\/@x\\`},
		{"none", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.path, model.Path(tt.levels))
			if len(tt.levels) == 0 {
				return
			}
			back, err := model.ParsePath(tt.path)
			require.NoError(t, err)
			assert.Equal(t, tt.levels, back)
		})
	}
}

func TestParsePath(t *testing.T) {
	tests := []struct {
		path string
		want []model.Range
		err  string
	}{
		{path: "prefill", want: []model.Range{{Name: "prefill"}}},
		{path: "LLM@decode_all/decode_step", want: []model.Range{{Domain: "LLM", Name: "decode_all"}, {Name: "decode_step"}}},
		{path: `LLM\@decode_all`, want: []model.Range{{Name: "LLM@decode_all"}}},
		{path: `a\b`, want: []model.Range{{Name: `a\b`}}}, // a '\' before another character is itself
		{path: `a\`, want: []model.Range{{Name: `a\`}}},
		{path: "", err: "empty"},
		{path: "decode_all/", err: "level 2 has no range name"},
		{path: "a//b", err: "level 2 has no range name"},
		{path: "@x", err: "level 1 has an '@' with no domain"},
		{path: "LLM@", err: "level 1 has no range name"},
	}
	for _, tt := range tests {
		got, err := model.ParsePath(tt.path)
		if tt.err != "" {
			require.Error(t, err, tt.path)
			assert.Contains(t, err.Error(), tt.err, tt.path)
			continue
		}
		require.NoError(t, err, tt.path)
		assert.Equal(t, tt.want, got, tt.path)
	}
}

// FuzzPath: a path ParsePath accepts is read back the same after Path
// writes it, and every stack Path writes is read back as itself.
func FuzzPath(f *testing.F) {
	for _, s := range []string{"decode_all/decode_step", `LLM\@decode_all`, "outer/CCCL@cub::DeviceScan::InclusiveScan", `a\\b/d\\\@\/@x\\`, `a\b@c@d`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		levels, err := model.ParsePath(p)
		if err != nil {
			return
		}
		again, err := model.ParsePath(model.Path(levels))
		require.NoError(t, err, p)
		require.Equal(t, levels, again, p)
		// The levels as names, each in a domain made of the name: any bytes.
		var raw []model.Range
		for _, l := range levels {
			raw = append(raw, model.Range{Name: p}, model.Range{Domain: l.Name + "@/\\", Name: p})
		}
		back, err := model.ParsePath(model.Path(raw))
		require.NoError(t, err, p)
		require.Equal(t, raw, back, p)
	})
}
