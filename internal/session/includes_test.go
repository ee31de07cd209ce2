package session

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The configured range paths become the passes' --nvtx-include and
// --nvtx-exclude expressions; one that ncu cannot take stops the plan
// before any step, naming its key.
func TestIncludes(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, "/runs")
	cfg.NVTX.Include = []string{"decode_all", `LLM\@decode_all`, "outer/inner:with:colons"}
	got, err := includes(cfg, "nvtx.include", cfg.NVTX.Include)
	require.NoError(t, err)
	assert.Equal(t, []string{"decode_all/", `LLM\@decode_all/`, "outer/inner:with:colons/"}, got)

	cfg.NVTX.Domain = "LLM"
	got, err = includes(cfg, "nvtx.include", []string{"decode_all/decode_step", "CCCL@cub::DeviceRadixSort"})
	require.NoError(t, err)
	assert.Equal(t, []string{"LLM@decode_all/decode_step/", "CCCL@cub::DeviceRadixSort/"}, got)

	cfg.NVTX.Domain = ""
	cfg.NVTX.Exclude = []string{"prefill/CCCL@cub::DeviceScan::InclusiveScan"}
	_, err = (&Session{Cfg: cfg}).Plan("/runs/run-1", nil)
	require.ErrorContains(t, err, `nvtx.exclude: NVTX filter prefill/CCCL@cub::DeviceScan::InclusiveScan: its levels are in the default domain and domain "CCCL"`)

	cfg.NVTX.Exclude = nil
	cfg.NVTX.Include = []string{"decode_all/"}
	_, err = (&Session{Cfg: cfg}).Plan("/runs/run-1", nil)
	require.ErrorContains(t, err, `nvtx.include: range path "decode_all/": level 2 has no range name`)
}
