package rundir_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/rundir"
)

// TestReplaceDirIn: the folder keeps what it held until the new one is
// whole (a rebuild killed on the way left ncu/regions/ absent while the
// manifest said complete); a write that fails leaves the old folder as it
// was and no temporary folder; what a killed replace left beside it,
// SweepStaging removes.
func TestReplaceDirIn(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "ncu", "regions")
	require.NoError(t, rundir.ReplaceDirIn(root, dir, []rundir.File{{Rel: "report.md", Data: []byte("old")}, {Rel: "a/kernels.md", Data: []byte("a")}}))
	require.NoError(t, rundir.ReplaceDirIn(root, dir, []rundir.File{{Rel: "report.md", Data: []byte("new")}}))
	b, err := os.ReadFile(filepath.Join(dir, "report.md"))
	require.NoError(t, err)
	assert.Equal(t, "new", string(b))
	assert.NoDirExists(t, filepath.Join(dir, "a"), "nothing of the old folder is left")
	ents, err := os.ReadDir(filepath.Dir(dir))
	require.NoError(t, err)
	assert.Len(t, ents, 1, "no temporary folder beside it")

	// A write that fails (a file where a folder goes): the old folder stays.
	err = rundir.ReplaceDirIn(root, dir, []rundir.File{{Rel: "x", Data: []byte("1")}, {Rel: "x/kernels.md", Data: []byte("2")}})
	require.Error(t, err)
	b, err = os.ReadFile(filepath.Join(dir, "report.md"))
	require.NoError(t, err)
	assert.Equal(t, "new", string(b))
	ents, err = os.ReadDir(filepath.Dir(dir))
	require.NoError(t, err)
	assert.Len(t, ents, 1, "the half-written folder is removed")

	// What a killed replace leaves (its folders in the staging folder)
	// goes with the next SweepStaging; nothing beside the folder.
	require.NoError(t, rundir.ReplaceDirIn(root, dir, []rundir.File{{Rel: "report.md", Data: []byte("new")}}))
	st, err := os.ReadDir(filepath.Join(root, rundir.StagingDir))
	require.NoError(t, err)
	assert.Len(t, st, 1, "only the staging marker is left")
	_, err = rundir.SweepStaging(root)
	require.NoError(t, err)
	assert.NoDirExists(t, filepath.Join(root, rundir.StagingDir))
	assert.FileExists(t, filepath.Join(dir, "report.md"))
}
