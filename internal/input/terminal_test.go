package input_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/input"
)

func TestIsTerminal(t *testing.T) {
	assert.False(t, input.IsTerminal(nil))
	f, err := os.Create(filepath.Join(t.TempDir(), "x"))
	require.NoError(t, err)
	defer f.Close()
	assert.False(t, input.IsTerminal(f))
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer w.Close()
	assert.False(t, input.IsTerminal(w))
	// A character device that is not a terminal: the status line written
	// there was "\r" frames into nothing, or into a log that keeps them.
	null, err := os.Open(os.DevNull)
	require.NoError(t, err)
	defer null.Close()
	assert.False(t, input.IsTerminal(null), os.DevNull)
	// A pseudo-terminal's master side answers the terminal ioctl.
	if ptm, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0); err == nil {
		defer ptm.Close()
		assert.True(t, input.IsTerminal(ptm), "/dev/ptmx")
	} else {
		t.Logf("no pseudo-terminal to check the true case: %v", err)
	}
}
