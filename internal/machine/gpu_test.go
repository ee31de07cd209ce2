//go:build gpu

package machine

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCollectOnGPU runs Collect against the machine's NVML and logs the
// provenance; it skips where there is no NVIDIA driver. With
// DEEPPROF_GPU_RECORD=DIR it also writes DIR/provenance.json, the recording
// the mocks in provenance_test.go are checked against.
func TestCollectOnGPU(t *testing.T) {
	p, err := Collect(Open(), Selection{})
	if errors.Is(err, ErrNoGPU) {
		t.Skip(err)
	}
	require.NoError(t, err)
	b, err := json.MarshalIndent(p, "", "  ")
	require.NoError(t, err)
	t.Logf("%s", b)
	if dir := os.Getenv("DEEPPROF_GPU_RECORD"); dir != "" {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "provenance.json"), append(b, '\n'), 0o644))
	}
}
