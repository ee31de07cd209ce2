package rundir

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNoteKinds: a rebuild's notes are dropped by their kind, whatever
// their words; a note with no kind stays even when its words read like a
// rebuild's. manifest.json keeps the notes as strings, with their kinds
// beside them only where a note has one.
func TestNoteKinds(t *testing.T) {
	r, err := Create(t.TempDir(), "run", t0)
	require.NoError(t, err)
	r.Note("timeline: the session's own note")
	r.Note("recording: a program's line that reads like an anomaly")
	require.NoError(t, r.WriteManifest(t0))
	b, err := os.ReadFile(r.Path(ManifestJSON))
	require.NoError(t, err)
	assert.NotContains(t, string(b), "note_kinds", "no kind, no field: the bytes of a manifest before kinds")

	r.AddNote(Note{Kind: NoteAnomaly, Text: "an anomaly"})
	r.AddNote(Note{Kind: NoteAnomaly, Text: "an anomaly"})
	r.AddNote(Note{Kind: NoteRemoved, Text: "removed kernels.md"})
	m := r.Manifest()
	assert.Equal(t, []string{"timeline: the session's own note", "recording: a program's line that reads like an anomaly", "an anomaly", "removed kernels.md"}, m.Notes, "once each")
	assert.Equal(t, []NoteKind{"", "", NoteAnomaly, NoteRemoved}, m.NoteKinds)

	require.NoError(t, r.WriteManifest(t0))
	back, err := Open(r.Dir)
	require.NoError(t, err)
	assert.Equal(t, m.AllNotes(), back.Manifest().AllNotes(), "the kinds read back; the words of a manifest with kinds are not read")

	back.DropNotes(NoteAnomaly, NoteRemoved)
	m = back.Manifest()
	assert.Equal(t, []string{"timeline: the session's own note", "recording: a program's line that reads like an anomaly"}, m.Notes)
	assert.Nil(t, m.NoteKinds, "no kind left, no field")
}

// TestOpenUpgradesOldNotes: a manifest written before note_kinds and
// partial_by gets them from the words deepprof wrote then, once, where it
// is opened; the note about ncu/regions/ that no longer holds goes.
func TestOpenUpgradesOldNotes(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, WriteMark(dir, "run"))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ManifestJSON), []byte(`{"run_id": "run", "status": "partial",
  "reason": "rebuild: derived files not made from their sources",
  "notes": ["timeline: a session's note",
    "ncu/regions/ summarizes the deep pass, which profiled a sample of launches (old)",
    "recording: timeline/cupti/cupti-1.tsv: cut short",
    "rebuild: removed kernels.md, made earlier from a source that now fails"],
  "artifacts": []}`), 0o644))
	r, err := Open(dir)
	require.NoError(t, err)
	m := r.Manifest()
	assert.Equal(t, PartialByRebuild, m.PartialBy)
	assert.Equal(t, []Note{{Text: "timeline: a session's note"},
		{Kind: NoteAnomaly, Text: "recording: timeline/cupti/cupti-1.tsv: cut short"},
		{Kind: NoteRemoved, Text: "rebuild: removed kernels.md, made earlier from a source that now fails"}}, m.AllNotes())
}
