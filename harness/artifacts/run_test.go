package artifacts

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2026, 11, 21, 22, 30, 0, 0, time.UTC)

func TestNewRunID(t *testing.T) {
	id, err := NewRunID(t0, bytes.NewReader([]byte{0x3f, 0x9a, 0x1c}))
	require.NoError(t, err)
	assert.Equal(t, "20261121T223000Z-3f9a1c", id)
	_, err = NewRunID(t0, bytes.NewReader(nil))
	assert.Error(t, err)
}

func TestCreateNeverReuses(t *testing.T) {
	root := filepath.Join(t.TempDir(), "tmp", "stage2")
	r, err := Create(root, "run1", t0)
	require.NoError(t, err)
	assert.DirExists(t, r.Dir)
	_, err = Create(root, "run1", t0)
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrRunExists))
	assert.Contains(t, err.Error(), "choose another run.id")
	for _, bad := range []string{"../x", "a/b", "/abs", ".."} {
		_, err := Create(root, bad, t0)
		assert.Error(t, err, bad)
	}
	r2, err := Create(root, "", t0)
	require.NoError(t, err)
	assert.Regexp(t, `^20261121T223000Z-[0-9a-f]{6}$`, r2.ID)
}

func TestWriteAtomicAndManifest(t *testing.T) {
	r, err := Create(t.TempDir(), "run", t0)
	require.NoError(t, err)
	require.NoError(t, r.Write(KernelsMD, []byte("# Kernels\n")))
	require.NoError(t, r.Write("ncu/raw.csv", []byte("x")))
	r.Record(NcuDetails, StatusSkipped, "no details page asked for")
	r.Record("ncu/raw.csv", StatusPartial, "the workload crashed after 10 launches")
	r.MarkPartial("the workload crashed")
	r.MarkPartial("a second reason is not kept")
	r.Note("timeline: ncu timing pass (no usable nsys)")
	require.NoError(t, r.WriteManifest(t0.Add(time.Minute)))

	entries, err := os.ReadDir(filepath.Join(r.Dir, "ncu"))
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary file is left behind")

	var m Manifest
	b, err := os.ReadFile(r.Path(ManifestJSON))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &m))
	assert.Equal(t, StatusPartial, m.Status)
	assert.Equal(t, "the workload crashed", m.Reason)
	assert.Equal(t, "2026-11-21T22:31:00Z", m.Finished)
	assert.Equal(t, []Artifact{
		{Path: "kernels.md", Status: StatusComplete, Bytes: 10},
		{Path: "ncu/details.csv", Status: StatusSkipped, Reason: "no details page asked for"},
		{Path: "ncu/raw.csv", Status: StatusPartial, Reason: "the workload crashed after 10 launches", Bytes: 1},
	}, m.Artifacts)

	again, err := Open(r.Dir)
	require.NoError(t, err)
	assert.Equal(t, m, again.Manifest())
}

func TestWriteFileAtomicReplaces(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a", "b.txt")
	require.NoError(t, WriteFileAtomic(p, []byte("one")))
	require.NoError(t, WriteFileAtomic(p, []byte("two")))
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "two", string(b))
	require.Error(t, WriteFileAtomic(filepath.Join(p, "under-a-file"), nil), "a file is not a directory")
}

// TestRebuiltManifestKeepsSessionTimes: deepprof report stamps rebuilt and
// leaves the session's started and finished alone.
func TestRebuiltManifestKeepsSessionTimes(t *testing.T) {
	r, err := Create(t.TempDir(), "run", t0)
	require.NoError(t, err)
	require.NoError(t, r.WriteManifest(t0.Add(time.Minute)))
	again, err := Open(r.Dir)
	require.NoError(t, err)
	require.NoError(t, again.WriteRebuiltManifest(t0.Add(time.Hour)))
	m := again.Manifest()
	assert.Equal(t, "2026-11-21T22:30:00Z", m.Started)
	assert.Equal(t, "2026-11-21T22:31:00Z", m.Finished)
	assert.Equal(t, "2026-11-21T23:30:00Z", m.Rebuilt)

	bare, err := Open(t.TempDir()) // a directory no session wrote a manifest into
	require.NoError(t, err)
	require.NoError(t, bare.WriteRebuiltManifest(t0))
	assert.Equal(t, "2026-11-21T22:30:00Z", bare.Manifest().Finished)
}
