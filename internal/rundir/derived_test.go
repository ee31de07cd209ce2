package rundir

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDerivedOwnership (issue 53): what a rebuild may replace or remove is
// what deepprof wrote: the derived files its manifest lists as made (or
// made and absent from this copy), the files a rebuild that did not finish
// listed as pending, and what this process wrote; a file at a derived name
// that none of these names is a conflict, before anything is written.
func TestDerivedOwnership(t *testing.T) {
	r, err := Create(t.TempDir(), "run", t0)
	require.NoError(t, err)
	require.NoError(t, r.Write(KernelsMD, []byte("mine\n")))
	require.NoError(t, r.Write(RegionsDir+"/prefill/kernels.md", []byte("a table\n")))
	r.Record(ChartRoofline, StatusSkipped, "no data")
	r.Record(OperatorsMD, StatusMissing, "its source fails")
	require.NoError(t, r.WriteManifest(t0))
	// What deepprof did not write: at a skipped chart's name, at a name
	// the manifest lists as missing, beside the tables, and a folder and a
	// link at derived names.
	users := map[string]string{ChartRoofline: "<svg/>", OperatorsMD: "my operators", RegionsDir + "/NOTES.md": "notes",
		RegionsDir + "/decode_all/kernels.json": "a table of mine"}
	for rel, content := range users {
		require.NoError(t, os.MkdirAll(filepath.Dir(r.Path(rel)), 0o755))
		require.NoError(t, os.WriteFile(r.Path(rel), []byte(content), 0o644))
	}
	require.NoError(t, os.MkdirAll(r.Path(SummaryJSON), 0o755))
	require.NoError(t, os.Symlink(r.Path(KernelsMD), r.Path(ReportMD)))

	again, err := Open(r.Dir)
	require.NoError(t, err)
	planned := append(DerivedFiles(), RegionsDir+"/prefill/kernels.md", RegionsDir+"/decode_all/kernels.json")
	err = again.CheckDerived(planned)
	var dc *DerivedConflictError
	require.ErrorAs(t, err, &dc)
	assert.Equal(t, []string{ChartRoofline, RegionsDir + "/decode_all/kernels.json", OperatorsMD, ReportMD, SummaryJSON}, dc.Paths)
	assert.Contains(t, err.Error(), "files deepprof did not write (its manifest does not list them as deepprof's) where deepprof report writes its own: nothing was rebuilt, nothing removed; move them away and run deepprof report again")

	// Removals take only deepprof's.
	removed, err := again.clearDir(RegionsDir, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{RegionsDir + "/prefill/kernels.md"}, removed)
	assert.NoDirExists(t, again.Path(RegionsDir+"/prefill"), "left empty: removed")
	for _, rel := range []string{ChartRoofline, OperatorsMD} {
		ok, err := again.removeDerived(rel)
		require.NoError(t, err)
		assert.False(t, ok, rel)
	}
	for rel, content := range users {
		b, err := os.ReadFile(r.Path(rel))
		require.NoError(t, err)
		assert.Equal(t, content, string(b), rel)
	}

	// A rebuild killed after it listed what it may write: the next one
	// knows those files for deepprof's.
	for _, rel := range []string{ChartRoofline, OperatorsMD, RegionsDir + "/decode_all/kernels.json"} {
		require.NoError(t, os.Remove(r.Path(rel)))
	}
	require.NoError(t, os.Remove(r.Path(SummaryJSON)))
	require.NoError(t, os.Remove(r.Path(ReportMD)))
	require.NoError(t, again.CheckDerived(planned))
	again.ClaimPending(planned)
	require.NoError(t, again.WriteRebuildStarted())
	require.NoError(t, os.WriteFile(r.Path(ChartRoofline), []byte("the killed rebuild's"), 0o644))
	killed, err := Open(r.Dir)
	require.NoError(t, err)
	assert.Contains(t, killed.Manifest().Pending, ChartRoofline)
	require.NoError(t, killed.CheckDerived(planned))
	removed, err = killed.RemovePending()
	require.NoError(t, err)
	assert.Contains(t, removed, ChartRoofline, "listed as neither made nor absent: stale")
	assert.Empty(t, killed.Manifest().Pending)
}

// TestDerivedOwnershipWithoutManifest: in a run whose session stopped
// before its manifest, the files at derived names and the region tables
// are the session's; a manifest written before deepprof listed region
// tables (the recorded runs') has the tables of its region folders taken
// for its build's, and nothing else in them.
func TestDerivedOwnershipWithoutManifest(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, WriteMark(dir, "stopped"))
	for _, rel := range []string{TimelineTrace, RegionsDir + "/prefill/kernels.md", RegionsDir + "/prefill/process-1-device-0/kernels.json", RegionsDir + "/NOTES.md", RegionsDir + "/prefill/mine/kernels.md"} {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, rel)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, rel), []byte("x"), 0o644))
	}
	r, err := Open(dir)
	require.NoError(t, err)
	for rel, want := range map[string]bool{
		TimelineTrace:                      true,
		RegionsDir + "/prefill/kernels.md": true,
		RegionsDir + "/prefill/process-1-device-0/kernels.json": true,
		RegionsDir + "/NOTES.md":                                false,
		RegionsDir + "/prefill/mine/kernels.md":                 false,
		KernelsMD:                                               false,
	} {
		assert.Equal(t, want, r.owns(rel), rel)
	}

	// A manifest listing the region report and no table of it.
	require.NoError(t, os.WriteFile(filepath.Join(dir, ManifestJSON), []byte(`{"run_id": "old", "status": "complete", "artifacts": [
		{"path": "ncu/regions/report.md", "kind": "derived", "status": "complete"}]}`), 0o644))
	old, err := Open(dir)
	require.NoError(t, err)
	assert.True(t, old.owns(RegionsDir+"/prefill/kernels.md"))
	assert.False(t, old.owns(RegionsDir+"/NOTES.md"))
	assert.False(t, old.owns(TimelineTrace), "the manifest does not list it")

	// Once the manifest lists a table, it lists them all: no other is
	// taken.
	require.NoError(t, os.WriteFile(filepath.Join(dir, ManifestJSON), []byte(`{"run_id": "new", "status": "complete", "artifacts": [
		{"path": "ncu/regions/report.md", "kind": "derived", "status": "complete"},
		{"path": "ncu/regions/decode_all/kernels.md", "kind": "derived", "status": "complete"}]}`), 0o644))
	listed, err := Open(dir)
	require.NoError(t, err)
	assert.False(t, listed.owns(RegionsDir+"/prefill/kernels.md"))
	assert.True(t, listed.owns(RegionsDir+"/decode_all/kernels.md"))
}
