package rundir

import (
	"slices"
	"strings"
)

// Note is one note of the manifest: its words, for the reader, and its
// kind, for code (a rebuild replaces the notes of the kinds it says
// again). Code never reads a note's words. The manifest keeps the words
// in Notes and the kinds beside them in NoteKinds, so that a reader of
// manifest.json finds the notes where they always were.
type Note struct {
	Kind NoteKind
	Text string
}

// NoteKind is what a note is, for code; "" for a note kept as written (a
// session's, or one a rebuild only adds).
type NoteKind string

// The kinds of notes a rebuild says again: it drops those of an earlier
// rebuild first.
const (
	NoteAnomaly NoteKind = "anomaly" // an anomaly of the recording
	NoteRemoved NoteKind = "removed" // the derived files a rebuild removed
)

// AllNotes are the manifest's notes with their kinds, in order.
func (m Manifest) AllNotes() []Note {
	out := make([]Note, len(m.Notes))
	for i, t := range m.Notes {
		out[i] = Note{Kind: m.kindOf(i), Text: t}
	}
	return out
}

// kindOf is the kind of the i-th note.
func (m Manifest) kindOf(i int) NoteKind {
	if i < len(m.NoteKinds) {
		return m.NoteKinds[i]
	}
	return ""
}

// setNotes makes notes the manifest's: NoteKinds only where a note has a
// kind.
func (m *Manifest) setNotes(notes []Note) {
	m.Notes, m.NoteKinds = nil, nil
	for i, n := range notes {
		m.Notes = append(m.Notes, n.Text)
		if n.Kind != "" && m.NoteKinds == nil {
			m.NoteKinds = make([]NoteKind, i, len(notes))
		}
		if m.NoteKinds != nil {
			m.NoteKinds = append(m.NoteKinds, n.Kind)
		}
	}
}

// addNote adds n, unless the manifest has it already.
func (m *Manifest) addNote(n Note) {
	notes := m.AllNotes()
	if !slices.Contains(notes, n) {
		m.setNotes(append(notes, n))
	}
}

// dropNotes removes the notes for which drop is true.
func (m *Manifest) dropNotes(drop func(Note) bool) {
	m.setNotes(slices.DeleteFunc(m.AllNotes(), drop))
}

// legacyNotes are the words that began each kind of note before notes had
// kinds, as deepprof report wrote them then: upgrade gives such a note its
// kind.
var legacyNotes = []struct {
	words string
	kind  NoteKind
}{
	{"recording: ", NoteAnomaly},
	{"rebuild: removed ", NoteRemoved},
}

// legacyRegionsNote began a note of the sessions made before the
// manifest's sources, about ncu/regions/: the sources say it now, and it no
// longer holds. upgrade drops it.
const legacyRegionsNote = "ncu/regions/ summarizes the deep pass, which profiled a sample of launches"

// upgrade brings a manifest as read to what this deepprof writes: one kind
// a note at most, and, for one that may be written before partial_by and
// note_kinds (it has neither), the fields its words stood for: a run a
// rebuild marked partial is PartialBy it, and a rebuild's notes have their
// kinds. Those words are read here, once, and nowhere else.
func (m *Manifest) upgrade() {
	old := m.NoteKinds == nil
	if m.Status == StatusPartial && m.PartialBy == "" && strings.HasPrefix(m.Reason, RebuildPartial) {
		m.PartialBy = PartialByRebuild
	}
	notes := m.AllNotes()
	if old {
		notes = slices.DeleteFunc(notes, func(n Note) bool { return strings.HasPrefix(n.Text, legacyRegionsNote) })
		for i, n := range notes {
			for _, l := range legacyNotes {
				if strings.HasPrefix(n.Text, l.words) {
					notes[i].Kind = l.kind
				}
			}
		}
	}
	m.setNotes(notes)
}
