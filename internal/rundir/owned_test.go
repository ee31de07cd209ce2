package rundir_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/rundir"
)

func regionFiles(regions ...string) []rundir.File {
	files := []rundir.File{{Rel: "report.md", Data: []byte("md")}, {Rel: "report.json", Data: []byte("{}")}}
	for _, r := range regions {
		files = append(files, rundir.File{Rel: r + "/kernels.md", Data: []byte(r)}, rundir.File{Rel: r + "/kernels.json", Data: []byte("{}")})
	}
	return files
}

// TestWriteOwnedDirProvesOwnership: regions --out owns what its markers
// show it wrote, never what a name suggests. A user's folder named like a
// region is refused, not written into; a user's file in a folder deepprof
// made keeps that folder; names like temporary files are the user's.
func TestWriteOwnedDirProvesOwnership(t *testing.T) {
	dir := t.TempDir()
	mine := map[string]string{
		".notes.tmp-1":               "a",
		"Docs/.drafts.tmp-2024/x.md": "b",
		".deepprof-folders":          "# an older deepprof's record\ndecode_all\n",
	}
	for p, c := range mine {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644))
	}
	require.NoError(t, rundir.WriteOwnedDir(dir, regionFiles("prefill", "decode_all")))
	assert.FileExists(t, filepath.Join(dir, "decode_all", rundir.OwnedMarker))
	// a user's file dropped into a folder deepprof made
	require.NoError(t, os.WriteFile(filepath.Join(dir, "prefill", "notes.txt"), []byte("c"), 0o644))
	require.NoError(t, rundir.WriteOwnedDir(dir, regionFiles()))
	assert.NoDirExists(t, filepath.Join(dir, "decode_all"), "deepprof's own folder, no longer written")
	assert.FileExists(t, filepath.Join(dir, "prefill", "notes.txt"))
	assert.NoFileExists(t, filepath.Join(dir, "prefill", "kernels.md"), "deepprof's file in it goes")
	for p, c := range mine {
		b, err := os.ReadFile(filepath.Join(dir, p))
		require.NoError(t, err, p)
		assert.Equal(t, c, string(b), p)
	}
	assert.NoDirExists(t, filepath.Join(dir, rundir.StagingDir))

	// The user's own folder named like a region: refused, untouched.
	other := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(other, "decode_all"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(other, "decode_all", "kernels.md"), []byte("theirs"), 0o644))
	err := rundir.WriteOwnedDir(other, regionFiles("decode_all"))
	var ce *rundir.OwnedConflictError
	require.ErrorAs(t, err, &ce)
	assert.True(t, ce.Folder)
	b, _ := os.ReadFile(filepath.Join(other, "decode_all", "kernels.md"))
	assert.Equal(t, "theirs", string(b))
	assert.NoFileExists(t, filepath.Join(other, "report.md"), "nothing written before the refusal")

	// A report.md of the user's where deepprof writes its own: refused.
	third := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(third, "report.md"), []byte("theirs"), 0o644))
	require.ErrorAs(t, rundir.WriteOwnedDir(third, regionFiles()), &ce)
	assert.False(t, ce.Folder)
}

// TestWriteOwnedDirConcurrent: writers into one folder take turns; every
// write succeeds and leaves a whole, consistent folder.
func TestWriteOwnedDirConcurrent(t *testing.T) {
	dir := t.TempDir()
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = rundir.WriteOwnedDir(dir, regionFiles(fmt.Sprintf("r%d", i%3)))
		}()
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	var folders int
	for _, e := range ents {
		if e.IsDir() {
			folders++
		}
	}
	assert.Equal(t, 1, folders, "only the last write's region folder is left")
	assert.NoDirExists(t, filepath.Join(dir, rundir.StagingDir))
}

// TestWriteThroughSwappedLink: a folder of the run replaced by a link out
// of it, after the check that it is a folder, leads no write out: the
// rename into place is refused, and nothing lands outside.
func TestWriteThroughSwappedLink(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	a, err := rundir.CreateAtomicIn(root, filepath.Join(root, "charts", "a.svg"))
	require.NoError(t, err)
	_, err = a.Write([]byte("<svg/>"))
	require.NoError(t, err)
	require.NoError(t, os.Remove(filepath.Join(root, "charts")))
	require.NoError(t, os.Symlink(outside, filepath.Join(root, "charts")))
	err = a.Commit()
	require.ErrorIs(t, err, rundir.ErrLinkOut)
	ents, err := os.ReadDir(outside)
	require.NoError(t, err)
	assert.Empty(t, ents, "nothing written outside the run")

	// reads too: a linked folder is not read through
	require.NoError(t, os.WriteFile(filepath.Join(outside, "cupti-1.tsv"), []byte("x"), 0o644))
	_, err = rundir.ReadDirIn(root, filepath.Join(root, "charts"))
	require.ErrorIs(t, err, rundir.ErrLinkOut)
	_, err = rundir.ReadFileIn(root, filepath.Join(root, "charts", "cupti-1.tsv"))
	require.ErrorIs(t, err, rundir.ErrLinkOut)
}

// TestWriteOwnedDirKeptFolders (review): a folder written again loses the
// files of deepprof's that this write does not make (left, they looked
// current and then counted as the user's); a folder a killed write made
// before its marker is still deepprof's.
func TestWriteOwnedDirKeptFolders(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, rundir.WriteOwnedDir(dir, regionFiles("decode_all")))
	only := []rundir.File{{Rel: "report.md", Data: []byte("md")}, {Rel: "report.json", Data: []byte("{}")},
		{Rel: "decode_all/p1/kernels.md", Data: []byte("p1")}}
	require.NoError(t, rundir.WriteOwnedDir(dir, only))
	assert.NoFileExists(t, filepath.Join(dir, "decode_all", "kernels.md"), "the earlier write's table, not made now")
	require.NoError(t, rundir.WriteOwnedDir(dir, regionFiles("decode_all")), "its own folder, written again")

	// killed after the top marker listed a new folder and made it, before
	// the folder's own marker
	require.NoError(t, os.Remove(filepath.Join(dir, "decode_all", "kernels.md")))
	require.NoError(t, os.Remove(filepath.Join(dir, "decode_all", "kernels.json")))
	require.NoError(t, os.RemoveAll(filepath.Join(dir, "decode_all", "p1")))
	require.NoError(t, os.Remove(filepath.Join(dir, "decode_all", rundir.OwnedMarker)))
	require.NoError(t, rundir.WriteOwnedDir(dir, regionFiles("decode_all")), "an empty folder the marker lists")
}
