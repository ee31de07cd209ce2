package nsys_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/nsys"
)

func TestNsysCapture(t *testing.T) {
	tests := []struct {
		r         model.Range
		want, err string
	}{
		{r: model.Range{Name: "decode_all"}, want: "decode_all"},
		{r: model.Range{Domain: "LLM", Name: "decode_all"}, want: "decode_all@LLM"},
		{r: model.Range{Domain: "*", Name: "decode_all"}, want: "decode_all@*"},
		{r: model.Range{Domain: "CCCL", Name: "cub::DeviceScan::InclusiveScan"}, want: "cub::DeviceScan::InclusiveScan@CCCL"},
		{r: model.Range{Name: "LLM@decode_all"}, err: "'@' that is part of a name"},
		{r: model.Range{Domain: "a@b", Name: "x"}, err: "'@' that is part of a name"},
		{r: model.Range{Domain: "LLM"}, err: "no range name"},
	}
	for _, tt := range tests {
		got, err := nsys.CaptureRange(tt.r)
		if tt.err != "" {
			require.Error(t, err, tt.r)
			assert.Contains(t, err.Error(), tt.err)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, tt.want, got)
		require.NoError(t, nsys.CheckCaptureRange(got))
	}
}

func TestCheckNsysCapture(t *testing.T) {
	for s, want := range map[string]string{
		"":                "no range",
		"LLM@decode_all/": "ncu's --nvtx-include syntax",
		"@LLM":            "no range name before '@'",
		"decode_all@":     "no domain after '@'",
	} {
		err := nsys.CheckCaptureRange(s)
		require.Error(t, err, s)
		assert.Contains(t, err.Error(), want, s)
	}
	for _, s := range []string{"decode_all", "decode_all@LLM", "decode_all@*"} {
		assert.NoError(t, nsys.CheckCaptureRange(s), s)
	}
}

func TestParseNsysRange(t *testing.T) {
	tests := []struct {
		in   string
		want model.Range
		err  string
	}{
		{in: ":decode_step", want: model.Range{Name: "decode_step"}},
		{in: ":compute_kernel:profile", want: model.Range{Name: "compute_kernel:profile"}},
		{in: "CCCL:cub::DeviceScan::InclusiveScan", want: model.Range{Domain: "CCCL", Name: "cub::DeviceScan::InclusiveScan"}},
		{in: "decode_all", want: model.Range{Name: "decode_all"}},
		{in: ":", err: "has no name"},
		{in: "", err: "has no name"},
	}
	for _, tt := range tests {
		got, err := nsys.ParseRange(tt.in)
		if tt.err != "" {
			require.Error(t, err, tt.in)
			assert.Contains(t, err.Error(), tt.err)
			continue
		}
		require.NoError(t, err, tt.in)
		assert.Equal(t, tt.want, got, tt.in)
	}
}
