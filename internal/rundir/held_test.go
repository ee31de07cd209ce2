package rundir

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLockedRunStaysTheFolderLocked: while a run is locked, its reads and
// writes go through the folder that was locked, even when a link to
// another folder is put in its place meanwhile; once unlocked, the path is
// opened again.
func TestLockedRunStaysTheFolderLocked(t *testing.T) {
	base := t.TempDir()
	dir, moved, other := filepath.Join(base, "run"), filepath.Join(base, "run.moved"), filepath.Join(base, "other")
	require.NoError(t, os.Mkdir(dir, 0o755))
	require.NoError(t, os.Mkdir(other, 0o755))
	lock, err := LockRun(dir)
	require.NoError(t, err)
	require.NoError(t, os.Rename(dir, moved))
	require.NoError(t, os.Symlink(other, dir))

	require.NoError(t, WriteFileAtomicIn(dir, filepath.Join(dir, "a.txt"), []byte("a")))
	assert.FileExists(t, filepath.Join(moved, "a.txt"))
	assert.NoFileExists(t, filepath.Join(other, "a.txt"))
	got, err := ReadFileIn(dir, filepath.Join(dir, "a.txt"))
	require.NoError(t, err)
	assert.Equal(t, "a", string(got))

	require.NoError(t, lock.Unlock())
	require.NoError(t, WriteFileAtomicIn(dir, filepath.Join(dir, "b.txt"), []byte("b")))
	assert.FileExists(t, filepath.Join(other, "b.txt"))
	assert.NoFileExists(t, filepath.Join(moved, "b.txt"))
	held.Lock()
	assert.Empty(t, held.m, "no folder stays open once its lock is let go")
	held.Unlock()
}

// TestHeldByAnyName: a folder locked by a relative name is held for its
// absolute name too; one renamed while it is locked gets nothing made at
// its old path (the writes go to the folder where it now is).
func TestHeldByAnyName(t *testing.T) {
	base := t.TempDir()
	t.Chdir(base)
	require.NoError(t, os.Mkdir("run", 0o755))
	lock, err := LockRun("run")
	require.NoError(t, err)
	defer lock.Unlock()
	assert.True(t, isHeld(filepath.Join(base, "run")))

	require.NoError(t, os.Rename("run", "moved"))
	require.NoError(t, WriteFileAtomicIn(filepath.Join(base, "run"), filepath.Join(base, "run", "sub", "a.txt"), []byte("a")))
	assert.FileExists(t, filepath.Join(base, "moved", "sub", "a.txt"))
	assert.NoDirExists(t, filepath.Join(base, "run"), "nothing made at the old path")
}
