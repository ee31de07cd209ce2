package rundir_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/rundir"
)

// dirNames lists a directory, hidden temporary files included.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestAtomicFileCommit(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "trace.json.gz")
	a, err := rundir.CreateAtomic(path)
	require.NoError(t, err)
	defer a.Abort()
	assert.Equal(t, path, a.Name())
	for range 3 {
		_, err := a.Write([]byte("part "))
		require.NoError(t, err)
	}
	_, err = os.Stat(path)
	assert.ErrorIs(t, err, os.ErrNotExist, "nothing at the target before Commit")
	require.Len(t, dirNames(t, filepath.Dir(path)), 1, "the temporary file, beside the target")
	require.NoError(t, a.Commit())
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "part part part ", string(got))
	assert.Equal(t, []string{"trace.json.gz"}, dirNames(t, filepath.Dir(path)), "no temporary file left")
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), fi.Mode().Perm())

	require.NoError(t, a.Abort(), "Abort after Commit does nothing")
	_, err = os.Stat(path)
	require.NoError(t, err, "and leaves the committed file")
	_, err = a.Write([]byte("x"))
	assert.Error(t, err)
	assert.Error(t, a.Commit())
}

func TestAtomicFileAbort(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.txt")
	require.NoError(t, os.WriteFile(path, []byte("previous"), 0o644))
	a, err := rundir.CreateAtomic(path)
	require.NoError(t, err)
	_, err = a.Write([]byte("half a fi"))
	require.NoError(t, err)
	require.NoError(t, a.Abort())
	assert.Equal(t, []string{"out.txt"}, dirNames(t, dir), "no temporary file left")
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "previous", string(got), "the target untouched")
	require.NoError(t, a.Abort(), "a second Abort does nothing")
}

// A writer that fails part way (here the producer, as a trace writer whose
// input turns out bad) leaves no file and no temporary file.
func TestWriteAtomicFailedWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "trace.json.gz")
	boom := errors.New("boom")
	err := rundir.WriteAtomic(path, func(w io.Writer) error {
		if _, err := w.Write([]byte("{\"traceEvents\":[")); err != nil {
			return err
		}
		return boom
	})
	require.ErrorIs(t, err, boom)
	assert.Empty(t, dirNames(t, dir), "no file and no temporary file")

	require.NoError(t, rundir.WriteAtomic(path, func(w io.Writer) error {
		_, err := io.WriteString(w, "whole")
		return err
	}))
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "whole", string(got))
}

// A Commit that cannot rename (the target is a non-empty directory) fails
// and removes its temporary file.
func TestAtomicFileFailedCommit(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "taken")
	require.NoError(t, os.MkdirAll(filepath.Join(path, "inside"), 0o755))
	a, err := rundir.CreateAtomic(path)
	require.NoError(t, err)
	_, err = a.Write([]byte("data"))
	require.NoError(t, err)
	require.Error(t, a.Commit())
	assert.Equal(t, []string{"taken"}, dirNames(t, dir), "no temporary file left")
	assert.Equal(t, []string{"inside"}, dirNames(t, path))
}

// TestWriteInRefusesLinkedFolder (issue 16): a folder below the root that
// is a symbolic link (out/decode_all -> ../outside) is an error naming the
// link: nothing is written through it. A link that is the file itself is
// replaced, and a root that is a link is the user's choice.
func TestWriteInRefusesLinkedFolder(t *testing.T) {
	base := t.TempDir()
	root, outside := filepath.Join(base, "out"), filepath.Join(base, "outside")
	require.NoError(t, os.Mkdir(root, 0o755))
	require.NoError(t, os.Mkdir(outside, 0o755))
	require.NoError(t, os.Symlink("../outside", filepath.Join(root, "decode_all")))

	for _, p := range []string{filepath.Join(root, "decode_all", "kernels.md"), filepath.Join(root, "decode_all", "sub", "kernels.md")} {
		err := rundir.WriteFileAtomicIn(root, p, []byte("x"))
		require.Error(t, err, p)
		assert.Contains(t, err.Error(), filepath.Join(root, "decode_all")+": a symbolic link (to ../outside)")
	}
	assert.Empty(t, dirNames(t, outside), "nothing written outside the root")
	require.Error(t, rundir.MkdirIn(root, filepath.Join(root, "decode_all", "x")))
	require.ErrorContains(t, rundir.WriteFileAtomicIn(root, filepath.Join(base, "elsewhere.md"), []byte("x")), "not inside")

	require.NoError(t, os.WriteFile(filepath.Join(root, "file"), nil, 0o644))
	require.ErrorContains(t, rundir.WriteFileAtomicIn(root, filepath.Join(root, "file", "k.md"), []byte("x")), "not a folder")

	// The file a link: replaced, not followed.
	victim := filepath.Join(outside, "victim.json")
	require.NoError(t, os.WriteFile(victim, []byte("theirs"), 0o644))
	require.NoError(t, os.Symlink(victim, filepath.Join(root, "report.json")))
	require.NoError(t, rundir.WriteFileAtomicIn(root, filepath.Join(root, "report.json"), []byte("ours")))
	b, err := os.ReadFile(victim)
	require.NoError(t, err)
	assert.Equal(t, "theirs", string(b))

	// The root a link: written into, with its folders made.
	linked := filepath.Join(base, "linked-root")
	require.NoError(t, os.Symlink("out", linked))
	require.NoError(t, rundir.WriteFileAtomicIn(linked, filepath.Join(linked, "a", "b", "k.md"), []byte("x")))
	assert.FileExists(t, filepath.Join(root, "a", "b", "k.md"))
}

// TestStagingMadeByManyAtOnce: writers that start together in a run with
// no staging folder yet (a session's ranks exporting at once, two reports)
// each find the folder one of them made, even when another has already put
// its temporary file there.
func TestStagingMadeByManyAtOnce(t *testing.T) {
	t.Parallel()
	for round := range 200 {
		root := t.TempDir()
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for i := range errs {
			wg.Go(func() {
				a, err := rundir.CreateAtomicIn(root, filepath.Join(root, fmt.Sprintf("f%d", i)))
				if err == nil {
					_, err = a.Write([]byte("x"))
					err = errors.Join(err, a.Commit())
				}
				errs[i] = err
			})
		}
		wg.Wait()
		for i, err := range errs {
			require.NoError(t, err, "round %d, writer %d", round, i)
		}
	}
}
