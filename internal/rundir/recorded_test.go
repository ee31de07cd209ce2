package rundir

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMatchFiles: what MatchFiles says a run holds is what is there once
// the manifest is in line with the files: a gzipped input counts, a
// per-rank export lists its ranks' files by rank, a file recorded partial
// and then put back is partial again, and nothing of the derived files
// is an input.
func TestMatchFiles(t *testing.T) {
	r, err := Create(t.TempDir(), "run", t0)
	require.NoError(t, err)
	require.NoError(t, r.Write(Stage1Report, []byte("{}")))
	require.NoError(t, os.Rename(r.Path(Stage1Report), r.Path(Stage1Report+".gz")))
	for _, rank := range []string{"10", "2"} {
		require.NoError(t, r.Write(RankPath(rank, NcuRaw), []byte("raw")))
	}
	require.NoError(t, r.Write(NcuDetails, []byte("details")))
	r.Record(NsysKernSum, StatusPartial, "nsys could not read its report")
	require.NoError(t, r.Write(KernelsMD, []byte("old")))
	require.NoError(t, os.MkdirAll(r.Path(TimelineCupti), 0o755))
	require.NoError(t, os.WriteFile(r.Path(TimelineCupti+"/cupti-7.tsv"), nil, 0o644))
	require.NoError(t, os.Symlink(filepath.Join(t.TempDir(), "x"), r.Path(TimelineCupti+"/cupti-8.tsv")))

	rec, err := r.MatchFiles()
	require.NoError(t, err)
	assert.True(t, rec.Present[Stage1Report], "gzipped")
	assert.True(t, rec.Present[NcuDetails])
	assert.False(t, rec.Present[NcuRaw], "per rank only: an export, not a file")
	assert.False(t, rec.Present[KernelsMD], "derived: not an input")
	assert.False(t, rec.Present[NsysKernSum], "recorded, not there")
	assert.Equal(t, []string{RankPath("2", NcuRaw), RankPath("10", NcuRaw)}, rec.Exports[NcuRaw])
	assert.Equal(t, []string{NcuDetails}, rec.ExportFiles(NcuDetails))
	assert.Equal(t, []string{NcuTimingRaw}, rec.ExportFiles(NcuTimingRaw), "none: its name, so that reading it says it is not there")
	assert.Equal(t, []string{TimelineCupti + "/cupti-7.tsv"}, rec.CuptiFiles)
	assert.Len(t, rec.CuptiAnomalies, 1, "the link is said")
	assert.False(t, rec.Partial[NsysKernSum], "not there: absent, not partial")
	a, ok := rec.Manifest.Find(Stage1Report)
	require.True(t, ok)
	assert.Equal(t, StatusComplete, a.Status)

	require.NoError(t, os.MkdirAll(filepath.Dir(r.Path(NsysKernSum)), 0o755))
	require.NoError(t, os.WriteFile(r.Path(NsysKernSum), []byte("sums"), 0o644))
	rec, err = r.MatchFiles()
	require.NoError(t, err)
	assert.True(t, rec.Partial[NsysKernSum], "put back: partial as made")
	assert.True(t, rec.Present[NsysKernSum])
}

// TestStage: a staged file is nowhere at its path until Publish puts it
// there whole; a write that fails leaves the path as it was; Discard ends
// the write at its next Write and leaves the run as it was, the staging
// folder swept.
func TestStage(t *testing.T) {
	r, err := Create(t.TempDir(), "run", t0)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(r.Path(TimelineDir), 0o755))

	release := make(chan struct{})
	s := r.Stage(TimelineTrace, func(w io.Writer) error {
		if _, err := w.Write([]byte("part one, ")); err != nil {
			return err
		}
		<-release
		_, err := w.Write([]byte("part two"))
		return err
	})
	assert.NoFileExists(t, r.Path(TimelineTrace), "not there while written")
	close(release)
	require.NoError(t, s.Publish())
	b, err := os.ReadFile(r.Path(TimelineTrace))
	require.NoError(t, err)
	assert.Equal(t, "part one, part two", string(b))

	failed := r.Stage(TimelineTrace, func(w io.Writer) error {
		w.Write([]byte("half"))
		return errors.New("SYNTHETIC: the render failed")
	})
	require.EqualError(t, failed.Publish(), "SYNTHETIC: the render failed")
	ents, err := os.ReadDir(filepath.Join(r.Dir, StagingDir))
	require.NoError(t, err)
	for _, e := range ents {
		assert.Equal(t, stagingMarker, e.Name(), "no temporary file left of the failed write")
	}
	b, err = os.ReadFile(r.Path(TimelineTrace))
	require.NoError(t, err)
	assert.Equal(t, "part one, part two", string(b), "the one before, untouched")

	require.NoError(t, os.Remove(r.Path(TimelineTrace)))
	require.NoError(t, r.Sweep())
	before := treeOf(t, r.Dir)
	writes := make(chan error, 1)
	started := make(chan struct{})
	d := r.Stage(TimelineTrace, func(w io.Writer) error {
		close(started)
		for {
			if _, err := w.Write([]byte("more")); err != nil {
				writes <- err
				return err
			}
		}
	})
	<-started
	require.NoError(t, d.Discard())
	assert.ErrorIs(t, <-writes, errDiscarded, "the write ends at its next Write")
	assert.Equal(t, before, treeOf(t, r.Dir), "the run as it was")
}
