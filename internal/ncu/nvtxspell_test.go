package ncu_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/ncu"
)

func TestParseNcuEntry(t *testing.T) {
	tests := []struct {
		name  string
		entry string
		want  model.Range
		err   string
	}{
		// Entries copied from the recorded exports (fixtures/ncu/...).
		{"plain default domain", "<default domain>:decode_all:none:none:none:none:none:none", model.Range{Name: "decode_all"}, ""},
		{"colons in a plain name (h200-cccl-library-domain)", "<default domain>:inner:with:colons:none:none:none:none:none:none",
			model.Range{Name: "inner:with:colons"}, ""},
		{"registered string in domain CCCL (h200-cccl-library-domain)",
			"CCCL:cub::DeviceScan::InclusiveScan:none:none:none:none:REGISTERED:cub::DeviceScan::InclusiveScan",
			model.Range{Domain: "CCCL", Name: "cub::DeviceScan::InclusiveScan"}, ""},
		{"registered string, one colon pair (h200-cccl-library-domain)",
			"CCCL:cub::DeviceRadixSort:none:none:none:none:REGISTERED:cub::DeviceRadixSort",
			model.Range{Domain: "CCCL", Name: "cub::DeviceRadixSort"}, ""},
		{"ASCII message in domain LLM (cuda-nvtx-domains)", "LLM:decode_all:none:none:none:none:ASCII:decode_all",
			model.Range{Domain: "LLM", Name: "decode_all"}, ""},
		{"slash, quotes, spaces, @ (cuda-nvtx-domains)", `<default domain>:step: 1 "quoted" / a@b:none:none:none:none:none:none`,
			model.Range{Name: `step: 1 "quoted" / a@b`}, ""},
		{"literal LLM@ in the default domain (cuda-nvtx-domains)", "<default domain>:LLM@decode_all:none:none:none:none:none:none",
			model.Range{Name: "LLM@decode_all"}, ""},
		// SYNTHETIC entries in the shapes above, for what the recordings lack.
		{"registered name with colons, quotes, slash, @", `CCCL:a::"b"/c@d:none:none:none:none:REGISTERED:a::"b"/c@d`,
			model.Range{Domain: "CCCL", Name: `a::"b"/c@d`}, ""},
		{"registered name ending like none attributes", "CCCL:x:none:none:none:none:none:none:REGISTERED:x:none:none",
			model.Range{Domain: "CCCL", Name: "x:none:none"}, ""},
		{"registered name that is none", "CCCL:none:none:none:none:none:REGISTERED:none", model.Range{Domain: "CCCL", Name: "none"}, ""},
		{"payload and colour set, plain message", "<default domain>:a:b:INT64:42:ARGB:ff00ff00:none:none",
			model.Range{Name: "a:b"}, ""},
		{"payload and colour set, registered", "CCCL:a:b:UINT64:7:ARGB:ff00ff00:REGISTERED:a:b",
			model.Range{Domain: "CCCL", Name: "a:b"}, ""},
		{"empty name", "<default domain>::none:none:none:none:none:none", model.Range{}, ""},
		{"no colon", "nodomain", model.Range{}, "no domain:name:attributes form"},
		{"too few attributes", "<default domain>:x:none:none", model.Range{}, "fewer than 6 attributes"},
		{"message is not the name", "CCCL:a:b:none:none:none:none:REGISTERED:c:d", model.Range{}, "neither none nor its name repeated"},
		{"message type none with a message", "CCCL:a:none:none:none:none:none:b", model.Range{}, "neither none nor its name repeated"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ncu.ParseStackEntry(tt.entry)
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestIncludeExpr(t *testing.T) {
	tests := []struct {
		name   string
		levels []model.Range
		want   string
		err    string
	}{
		// The real cases recorded on the H200 (fixtures/README.md).
		{"default domain range", []model.Range{{Name: "decode_all"}}, "decode_all/", ""},
		{"nested", []model.Range{{Name: "decode_all"}, {Name: "decode_step"}}, "decode_all/decode_step/", ""},
		{"nested cuda fixture", []model.Range{{Name: "A"}, {Name: "A1"}}, "A/A1/", ""},
		{"named domain", []model.Range{{Domain: "LLM", Name: "decode_all"}}, "LLM@decode_all/", ""},
		{"named domain nested", []model.Range{{Domain: "LLM", Name: "decode_all"}, {Domain: "LLM", Name: "decode_step"}}, "LLM@decode_all/decode_step/", ""},
		// matched 412 kernels: fixtures/logs/ncu-escaped-at-sign-match.txt
		{"default-domain name with @", []model.Range{{Name: "LLM@decode_all"}}, `LLM\@decode_all/`, ""},
		// The awkward name of fixtures/ncu/cuda-nvtx-domains (escaping per the
		// NVTX filtering docs; not recorded as a filter).
		{"slash, quotes, spaces, @", []model.Range{{Name: `step: 1 "quoted" / a@b`}}, `step: 1 "quoted" \/ a\@b/`, ""},
		{"every quantifier", []model.Range{{Name: "a[0]+b*c,d"}}, `a\[0\]\+b\*c\,d/`, ""},
		{"spaces kept", []model.Range{{Name: "Range A"}, {Name: "B range"}}, "Range A/B range/", ""},
		{"backslash", []model.Range{{Name: `a\b`}}, `a\\\\b/`, ""},
		{"domain with @ and space", []model.Range{{Domain: "my dom@x", Name: "r"}}, `my dom\@x@r/`, ""},
		{"colons need nothing", []model.Range{{Domain: "CCCL", Name: "cub::DeviceScan::InclusiveScan"}}, "CCCL@cub::DeviceScan::InclusiveScan/", ""},
		{"mixed domains", []model.Range{{Name: "outer"}, {Domain: "CCCL", Name: "cub::DeviceRadixSort"}}, "",
			`its levels are in the default domain and domain "CCCL"`},
		{"empty name", []model.Range{{Name: ""}}, "", "no range name"},
		{"no levels", nil, "", "no range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ncu.IncludeExpr(tt.levels)
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// A region's name, given back as nvtx.include, filters on that region.
func TestIncludeOfRegionNames(t *testing.T) {
	for _, tt := range []struct {
		levels []model.Range
		want   string
	}{
		{[]model.Range{{Name: "decode_all"}}, "decode_all/"},
		{[]model.Range{{Name: "LLM@decode_all"}}, `LLM\@decode_all/`},
		{[]model.Range{{Domain: "LLM", Name: "decode_all"}, {Domain: "LLM", Name: "decode_step"}}, "LLM@decode_all/decode_step/"},
		{[]model.Range{{Name: `step: 1 "quoted" / a@b`}}, `step: 1 "quoted" \/ a\@b/`},
		{[]model.Range{{Domain: "CCCL", Name: "cub::DeviceScan::InclusiveScan"}}, "CCCL@cub::DeviceScan::InclusiveScan/"},
	} {
		got, err := ncu.Include(model.Path(tt.levels), "")
		require.NoError(t, err)
		assert.Equal(t, tt.want, got)
	}
}

func TestInclude(t *testing.T) {
	tests := []struct {
		path, domain, want, err string
	}{
		{path: "decode_all", want: "decode_all/"},
		{path: "decode_all", domain: "LLM", want: "LLM@decode_all/"},
		{path: "decode_all/decode_step", domain: "LLM", want: "LLM@decode_all/decode_step/"},
		{path: "LLM@decode_all/LLM@decode_step", want: "LLM@decode_all/decode_step/"},
		{path: `LLM\@decode_all`, want: `LLM\@decode_all/`},
		{path: "LLM@decode_all", domain: "LLM", want: "LLM@decode_all/"},
		{path: "LLM@decode_all/decode_step", err: "its levels are in domain \"LLM\" and the default domain"},
		{path: "prefill/CCCL@cub::DeviceScan::InclusiveScan", err: "ncu matches the ranges of one domain"},
		{path: "decode_all/", err: "level 2 has no range name"},
	}
	for _, tt := range tests {
		got, err := ncu.Include(tt.path, tt.domain)
		if tt.err != "" {
			require.Error(t, err, tt.path)
			assert.Contains(t, err.Error(), tt.err, tt.path)
			continue
		}
		require.NoError(t, err, tt.path)
		assert.Equal(t, tt.want, got, tt.path)
	}
}
