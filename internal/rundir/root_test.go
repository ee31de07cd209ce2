package rundir

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRootErrorsByIdentity: a link out of the folder is ErrLinkOut, and a
// folder that is not empty is refused as such, each known by the error's
// identity (os.Root's own escape error, the system's errno), not by its
// words.
func TestRootErrorsByIdentity(t *testing.T) {
	require.Error(t, errEscapes(), "os.Root's escape error, taken once")

	dir, out := t.TempDir(), t.TempDir()
	require.NoError(t, os.Symlink(out, filepath.Join(dir, "charts")))
	_, err := ReadFileIn(dir, filepath.Join(dir, "charts", "a.svg"))
	require.ErrorIs(t, err, ErrLinkOut)
	assert.False(t, errors.Is(linkOut("x", errors.New(errEscapes().Error())), ErrLinkOut), "an error of the same words is not os.Root's")

	require.NoError(t, os.MkdirAll(filepath.Join(dir, "full", "sub"), 0o755))
	err = RemoveIn(dir, filepath.Join(dir, "full"))
	require.Error(t, err)
	assert.True(t, isNotEmpty(err), "%v", err)
	assert.False(t, isNotEmpty(errors.New("directory not empty")))
}
