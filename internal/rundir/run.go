package rundir

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/llm-perf-opt/deepprof/internal/input"
)

// NewRunID returns "<UTC timestamp>-<short random>", e.g.
// "20261121T223000Z-3f9a1c": sortable by time, unique across hosts.
func NewRunID(now time.Time, random io.Reader) (string, error) {
	var b [3]byte
	if _, err := io.ReadFull(random, b[:]); err != nil {
		return "", fmt.Errorf("run id: %w", err)
	}
	return now.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:]), nil
}

// Run is one run directory being written.
type Run struct {
	ID  string
	Dir string // MAIN

	mu       sync.Mutex
	manifest Manifest
	// owned are the files deepprof wrote into the run, by path relative
	// to it: the derived files its manifest lists (ownedAtOpen) and what
	// this process wrote since (claim). Only these are replaced or
	// removed by a rebuild.
	owned map[string]bool
}

// ErrRunExists is returned by Create when MAIN already exists.
var ErrRunExists = errors.New("run directory exists")

// Create makes MAIN = root/id; id "" picks NewRunID. An existing MAIN is
// never reused: its results would be mixed with the new run's. MAIN gets
// its mark (RunMark, WriteMark) at once, listed in the manifest: it is
// what makes MAIN a run directory.
func Create(root, id string, now time.Time) (*Run, error) {
	if id == "" {
		var err error
		if id, err = NewRunID(now, rand.Reader); err != nil {
			return nil, err
		}
	}
	if !filepath.IsLocal(id) || strings.ContainsAny(id, `/\`) {
		return nil, fmt.Errorf("run id %q: want one plain directory name", id)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, err
	}
	dir := filepath.Join(root, id)
	if err := os.Mkdir(dir, 0o755); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("%s: %w: choose another run.id, or remove it", dir, ErrRunExists)
		}
		return nil, err
	}
	if err := WriteMark(dir, id); err != nil {
		return nil, err
	}
	r := &Run{ID: id, Dir: dir, manifest: Manifest{RunID: id, Status: StatusComplete, Started: now.UTC().Format(time.RFC3339)}}
	r.Record(RunMark, StatusComplete, "")
	return r, nil
}

// ErrNotRun is what every *NotRunDirError is (errors.Is).
var ErrNotRun = errors.New("not a run directory")

// NotRunDirError is a directory that Open refuses: it is not a run
// directory, and nothing was written into it.
type NotRunDirError struct {
	Dir     string
	Missing string // what it lacks, for the one line printed
}

func (e *NotRunDirError) Error() string {
	return fmt.Sprintf("%s: %v: %s", e.Dir, ErrNotRun, e.Missing)
}

// Is makes a *NotRunDirError ErrNotRun.
func (e *NotRunDirError) Is(target error) bool { return target == ErrNotRun }

// Open returns the Run of an existing MAIN, with its manifest (for
// rebuilding derived files). A run directory is what deepprof made: it
// holds the mark Create writes (RunMark), and, once its session ended,
// manifest.json with a run id; a session stopped before it wrote its
// manifest leaves the mark without one. A folder without the mark is a
// *NotRunDirError, before anything else in it is read: deepprof report,
// baseline, diff, merge and deepproftest all ask Open.
func Open(dir string) (*Run, error) {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, &NotRunDirError{Dir: dir, Missing: "no such directory"}
	case err != nil:
		return nil, err
	case !st.IsDir():
		return nil, &NotRunDirError{Dir: dir, Missing: "a file, not a directory"}
	}
	mark, err := ReadMark(dir)
	if err != nil {
		return nil, err
	}
	r := &Run{ID: mark.RunID, Dir: dir, manifest: Manifest{RunID: mark.RunID, Status: StatusComplete}}
	b, err := ReadFileIn(dir, filepath.Join(dir, ManifestJSON))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		r.ownedAtOpen(r.manifest, false) // the session stopped before its manifest
		return r, nil
	case err != nil:
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		name := filepath.Join(dir, ManifestJSON)
		if off, ok := input.Offset(err); ok {
			return nil, fmt.Errorf("%s:%d: %w", name, input.Line(b, off), err)
		}
		if errors.Is(err, io.ErrUnexpectedEOF) || len(bytes.TrimSpace(b)) == 0 {
			return nil, fmt.Errorf("%s:%d: the file ends before its JSON does (cut short?): %w", name, input.Line(b, int64(len(b))), err)
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if m.RunID == "" {
		return nil, fmt.Errorf("%s: no run_id: it is not a manifest deepprof writes", filepath.Join(dir, ManifestJSON))
	}
	if m.Status == "" {
		m.Status = StatusComplete
	}
	m.upgrade()
	r.ID, r.manifest = m.RunID, m
	r.ownedAtOpen(m, true)
	return r, nil
}

// Stored returns the name under which rel is kept in MAIN: rel itself, or
// rel.gz (recorded runs keep their large exports gzipped); ok is false when
// neither is there.
func (r *Run) Stored(rel string) (name string, ok bool) {
	for _, q := range []string{rel, rel + ".gz"} {
		if fi, err := StatIn(r.Dir, r.Path(q)); err == nil && !fi.IsDir() {
			return q, true
		}
	}
	return "", false
}

// CheckOneCopy is an error when rel is there both plain and gzipped: they
// may differ (a plain copy of one launch beside the recorded export of
// fifty), and deepprof will not choose one silently.
func (r *Run) CheckOneCopy(rel string) error {
	for _, q := range []string{rel, rel + ".gz"} {
		if fi, err := StatIn(r.Dir, r.Path(q)); err != nil || fi.IsDir() {
			return nil
		}
	}
	return fmt.Errorf("%s: both %s and %s.gz are in %s: they may differ, and deepprof will not choose one; remove the one that is not the run's",
		rel, rel, rel, r.Dir)
}

// Exists reports whether the file path is there, plain or gzipped (as
// path.gz).
func Exists(path string) bool {
	for _, q := range []string{path, path + ".gz"} {
		if fi, err := os.Stat(q); err == nil && !fi.IsDir() {
			return true
		}
	}
	return false
}

// OpenFile opens rel for reading: the plain file, else rel.gz
// decompressed, through the run as an os.Root (OpenIn: never through a link
// out of the run, never anything but a regular file). Errors name rel as
// stored.
func (r *Run) OpenFile(rel string) (io.ReadCloser, error) {
	if err := r.CheckOneCopy(rel); err != nil {
		return nil, err
	}
	name, ok := r.Stored(rel)
	if !ok {
		return nil, fmt.Errorf("%s: %w", rel, fs.ErrNotExist)
	}
	f, err := openIn(r.Dir, r.Path(name), name)
	if err != nil || name == rel {
		return f, err
	}
	zr, err := input.NewReader(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return gzipFile{zr, f, name}, nil
}

type gzipFile struct {
	*input.Reader
	f    *os.File
	name string
}

// Read names the file of a gzip stream cut short.
func (g gzipFile) Read(p []byte) (int, error) {
	n, err := g.Reader.Read(p)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		err = fmt.Errorf("%s: %w", g.name, err)
	}
	return n, err
}

func (g gzipFile) Close() error { return errors.Join(g.Reader.Close(), g.f.Close()) }

// Open opens the file rel of the run as it is stored (no decompression),
// through the run as an os.Root (OpenIn).
// Errors name rel.
func (r *Run) Open(rel string) (io.ReadCloser, error) { return openIn(r.Dir, r.Path(rel), rel) }

// Parse reads the file rel of the run, plain or gzipped (OpenFile), with
// read, which names it rel in its errors.
func Parse[T any](r *Run, rel string, read func(io.Reader, string) (T, error)) (T, error) {
	return parse(r.OpenFile, rel, read)
}

// ParsePlain is Parse of a file the run keeps only plain (Open).
func ParsePlain[T any](r *Run, rel string, read func(io.Reader, string) (T, error)) (T, error) {
	return parse(r.Open, rel, read)
}

func parse[T any](open func(string) (io.ReadCloser, error), rel string, read func(io.Reader, string) (T, error)) (T, error) {
	f, err := open(rel)
	if err != nil {
		var zero T
		return zero, err
	}
	defer f.Close()
	return read(f, rel)
}

// ReadFile reads the file rel of the run whole, plain or gzipped
// (OpenFile), at most input.MaxBytes.
func (r *Run) ReadFile(rel string) ([]byte, error) {
	f, err := r.OpenFile(rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return input.ReadAll(f, rel)
}

// Exists reports whether rel is kept in MAIN, plain or gzipped.
func (r *Run) Exists(rel string) bool {
	_, ok := r.Stored(rel)
	return ok
}

// Path is the absolute path of a file of the run, rel in slash form.
func (r *Run) Path(rel string) string { return filepath.Join(r.Dir, filepath.FromSlash(rel)) }

// Write writes one artifact atomically and records it in the manifest as
// complete (or as the status given).
func (r *Run) Write(rel string, data []byte) error {
	r.claim(rel)
	if err := WriteFileAtomicIn(r.Dir, r.Path(rel), data); err != nil {
		r.Record(rel, StatusMissing, err.Error())
		return err
	}
	r.Record(rel, StatusComplete, "")
	return nil
}

// WriteStream writes one artifact atomically as write streams it, inside
// MAIN only (WriteAtomicIn); it records nothing in the manifest.
func (r *Run) WriteStream(rel string, write func(io.Writer) error) error {
	r.claim(rel)
	return WriteAtomicIn(r.Dir, r.Path(rel), write)
}

// WriteFileAtomic writes data to a temporary file beside path, syncs it and
// renames it over path, so a reader never sees half a file, whatever
// interrupts the writer.
func WriteFileAtomic(path string, data []byte) error {
	return WriteAtomic(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// Sweep removes the run's StagingDir: what writers killed before they
// finished left there, and the folder itself (SweepStaging). Call it only
// while holding the run (LockRun).
func (r *Run) Sweep() error {
	_, err := SweepStaging(r.Dir)
	return err
}

// Status says what an artifact is.
type Status string

// Artifact and run statuses.
const (
	StatusComplete Status = "complete"
	StatusPartial  Status = "partial" // present, but holds less than asked for
	StatusSkipped  Status = "skipped" // not made, on purpose
	StatusMissing  Status = "missing" // not made, because something failed
	StatusFailed   Status = "failed"  // (run) nothing usable
	// StatusAbsent is an artifact that was made but is not in this copy
	// of the run directory (recorded runs leave large reports out).
	StatusAbsent Status = "absent"
)

// absentReason is an absent artifact's reason; the reason it had before
// follows it.
const absentReason = "not kept in this copy of the run directory"

// Artifact is one manifest entry.
type Artifact struct {
	Path   string `json:"path"`
	Kind   Kind   `json:"kind,omitempty"` // from the layout
	Status Status `json:"status"`
	Reason string `json:"reason,omitempty"`
	// Was is an absent artifact's status when it was made.
	Was   Status `json:"was,omitempty"`
	Bytes int64  `json:"bytes,omitempty"` // when it was written
	// StoredAs is the file's name when it is kept under another (FILE.gz).
	StoredAs string `json:"stored_as,omitempty"`
}

// Present reports whether the artifact's file is in the run directory (as
// far as the manifest knows: see CheckPresence).
func (a Artifact) Present() bool {
	return a.Status == StatusComplete || a.Status == StatusPartial
}

// File is the name of the artifact's file in MAIN (StoredAs, else Path).
func (a Artifact) File() string {
	if a.StoredAs != "" {
		return a.StoredAs
	}
	return a.Path
}

// Manifest lists every artifact of a run and what became of the run.
type Manifest struct {
	RunID  string `json:"run_id"`
	Status Status `json:"status"`
	Reason string `json:"reason,omitempty"`
	// PartialBy says who marked the run partial: PartialByRebuild for a
	// rebuild (the next one clears it), "" for the session.
	PartialBy string `json:"partial_by,omitempty"`
	Started   string `json:"started,omitempty"`
	Finished  string `json:"finished,omitempty"`
	// Rebuilt is when deepprof report last remade the derived files.
	Rebuilt string   `json:"rebuilt,omitempty"`
	Notes   []string `json:"notes,omitempty"`
	// NoteKinds are the notes' kinds, one a note, for code (AddNote,
	// DropNotes); absent where no note has one.
	NoteKinds []NoteKind `json:"note_kinds,omitempty"`
	Steps     []StepTime `json:"steps,omitempty"`
	// Sources are the inputs the derived files were made from, as the last
	// rebuild chose them.
	Sources   *Sources   `json:"sources,omitempty"`
	Artifacts []Artifact `json:"artifacts"`
	// Pending are the derived files a rebuild under way may write, listed
	// before it writes any (ClaimPending): a rebuild killed before its end
	// leaves them here, deepprof's to replace or remove; the next rebuild
	// that ends lists each as an artifact or removes it, and clears this.
	Pending []string `json:"pending,omitempty"`
}

// Sources are the inputs of the derived files, chosen once per rebuild.
type Sources struct {
	Kernels Source `json:"kernels"` // kernels.md, the summary's kernels
	Regions Source `json:"regions"` // ncu/regions/, the summary's regions
	Stages  Source `json:"stages"`  // the summary's stages, MFU, operators
}

// Source is one input: the file and what it holds; Path "" when the run
// has none, with Why.
type Source struct {
	Path string `json:"path,omitempty"`
	What string `json:"what,omitempty"`
	// EveryLaunch is true when the file counts every launch of the run,
	// false for a sample (the deep pass).
	EveryLaunch bool   `json:"every_launch"`
	Why         string `json:"why,omitempty"`
}

// StepTime is how long one program of the session ran, and how it ended.
type StepTime struct {
	Name     string  `json:"name"`
	Seconds  float64 `json:"seconds"`
	ExitCode int     `json:"exit_code"`
	// Stopped says why the session stopped the program before it ended by
	// itself; absent when it was not stopped.
	Stopped Stop `json:"stopped,omitempty"`
}

// Stop is why the session stopped a step.
type Stop string

// Why a step was stopped.
const (
	StopInterrupted Stop = "interrupted" // the session was interrupted (Ctrl-C)
	StopTimedOut    Stop = "timed_out"   // the step reached its deadline
)

// RecordStep adds a step's wall time to the manifest, in the order run.
func (r *Run) RecordStep(name string, seconds float64, exitCode int) {
	r.RecordStepTime(StepTime{Name: name, Seconds: seconds, ExitCode: exitCode})
}

// RecordStepTime adds a step's record to the manifest, in the order run.
func (r *Run) RecordStepTime(st StepTime) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.manifest.Steps = append(r.manifest.Steps, st)
}

// Record sets an artifact's status; a later record of the same path
// (or of it gzipped, path.gz) replaces the earlier one.
func (r *Run) Record(rel string, st Status, reason string) { r.recordMany([]string{rel}, st, reason) }

// recordMany is Record of each of rels, with one pass over the manifest.
func (r *Run) recordMany(rels []string, st Status, reason string) {
	as := make([]Artifact, len(rels))
	for i, rel := range rels {
		as[i] = Artifact{Path: rel, Status: st, Reason: reason}
		if s, ok := Lookup(rel); ok {
			as[i].Kind = s.Kind
		}
		if fi, err := StatIn(r.Dir, r.Path(rel)); err == nil && !fi.IsDir() {
			as[i].Bytes = fi.Size()
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	gz := make(map[string]bool, len(rels))
	for _, rel := range rels {
		gz[rel+".gz"] = true
	}
	// An entry of rel.gz is the same file, gzipped in a recorded copy:
	// rel's record replaces it (CheckPresence finds it stored as .gz).
	r.manifest.Artifacts = slices.DeleteFunc(r.manifest.Artifacts, func(x Artifact) bool { return gz[x.Path] })
	at := make(map[string]int, len(r.manifest.Artifacts))
	for i, x := range r.manifest.Artifacts {
		at[x.Path] = i
	}
	for _, a := range as {
		if i, ok := at[a.Path]; ok {
			r.manifest.Artifacts[i] = a
			continue
		}
		at[a.Path] = len(r.manifest.Artifacts)
		r.manifest.Artifacts = append(r.manifest.Artifacts, a)
	}
}

// Note adds a line to the manifest's notes (what the session decided, such
// as using an ncu timing pass for lack of nsys).
func (r *Run) Note(format string, args ...any) {
	r.AddNote(Note{Text: fmt.Sprintf(format, args...)})
}

// AddNote adds n to the manifest's notes, once: a rebuild says again what
// it said before.
func (r *Run) AddNote(n Note) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.manifest.addNote(n)
}

// SetSources records the inputs of the derived files.
func (r *Run) SetSources(s Sources) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.manifest.Sources = &s
}

// DropNotes removes the notes of the kinds given (the kinds a rebuild says
// again).
func (r *Run) DropNotes(kinds ...NoteKind) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.manifest.dropNotes(func(n Note) bool { return n.Kind != "" && slices.Contains(kinds, n.Kind) })
}

// Remove removes the file rel of the run through the run directory as an
// os.Root: a symbolic link on the way out of the run is an error, and
// nothing outside the run is removed.
func (r *Run) Remove(rel string) error { return RemoveIn(r.Dir, r.Path(rel)) }

// RemoveStale deletes the file of every derived artifact the manifest
// calls missing: what an earlier rebuild made from a source that now fails
// must not stay beside the manifest's "missing", for a reader (deepprof
// diff, a person) to take as this run's. Only a file deepprof wrote goes
// (owns): one of the user's at that name stays. It returns the paths
// removed.
func (r *Run) RemoveStale() ([]string, error) {
	var stale []string
	for _, a := range r.Manifest().Artifacts {
		if s, ok := Lookup(a.Path); ok && s.Kind == Derived && a.Status == StatusMissing {
			stale = append(stale, a.Path)
		}
	}
	var removed []string
	var errs []error
	for _, rel := range stale {
		for _, q := range []string{rel, rel + ".gz"} {
			ok, err := r.removeDerived(q)
			switch {
			case ok:
				removed = append(removed, q)
				r.mu.Lock()
				for i := range r.manifest.Artifacts {
					if r.manifest.Artifacts[i].Path == rel {
						r.manifest.Artifacts[i].Bytes = 0 // the size was the removed file's
					}
				}
				r.mu.Unlock()
			case err != nil && !errors.Is(err, ErrLinkOut):
				// (behind a link out of the run, the file is not the
				// run's: the write that failed there said so)
				errs = append(errs, err)
			}
		}
	}
	return removed, errors.Join(errs...)
}

// CheckPresence makes the manifest say what is in MAIN now: an artifact
// listed as made (complete or partial) whose file is in neither plain nor
// gzipped form becomes absent, with its former status in Was; one kept
// gzipped gets StoredAs; an absent one that is back gets its status again.
// Each entry's kind is set from the layout (manifests written before kinds
// existed have none).
func (r *Run) CheckPresence() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range r.manifest.Artifacts {
		a := &r.manifest.Artifacts[i]
		if s, ok := Lookup(a.Path); ok {
			a.Kind = s.Kind
		}
		if !a.Present() && a.Status != StatusAbsent {
			continue
		}
		name, ok := r.Stored(a.Path)
		switch {
		case ok && a.Status == StatusAbsent:
			a.Status, a.Was = a.Was, ""
			a.Reason = strings.TrimPrefix(strings.TrimPrefix(a.Reason, absentReason), "; when made: ")
		case !ok && a.Status != StatusAbsent:
			a.Was, a.Status = a.Status, StatusAbsent
			if a.Reason != "" {
				a.Reason = absentReason + "; when made: " + a.Reason
			} else {
				a.Reason = absentReason
			}
		}
		a.StoredAs = ""
		if ok && name != a.Path {
			a.StoredAs = name
		}
	}
}

// Forget removes rel from the manifest: a derived file that a rebuild no
// longer makes (its input is gone) is neither made nor missing.
func (r *Run) Forget(rel string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.manifest.Artifacts = slices.DeleteFunc(r.manifest.Artifacts, func(a Artifact) bool { return a.Path == rel })
}

// MarkPartial marks the whole run partial, keeping the first reason.
func (r *Run) MarkPartial(reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.manifest.Status == StatusComplete {
		r.manifest.Status, r.manifest.Reason = StatusPartial, reason
	}
}

// RebuildPartial starts the reason of a run that a rebuild (deepprof
// report) marked partial, for the reader; PartialBy says it for code: the
// next rebuild clears that mark (ClearRebuild) and says again what still
// fails; a session's own reason stays.
const RebuildPartial = "rebuild: "

// PartialByRebuild is Manifest.PartialBy of a run a rebuild marked partial.
const PartialByRebuild = "rebuild"

// MarkRebuildPartial marks a complete run partial for the rebuild under
// way, with why (RebuildPartial is put before it).
func (r *Run) MarkRebuildPartial(why string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.manifest.Status == StatusComplete {
		r.manifest.Status, r.manifest.Reason, r.manifest.PartialBy = StatusPartial, RebuildPartial+why, PartialByRebuild
	}
}

// ClearRebuild makes a run that an earlier rebuild marked partial
// (PartialByRebuild) complete again.
func (r *Run) ClearRebuild() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.manifest.Status == StatusPartial && r.manifest.PartialBy == PartialByRebuild {
		r.manifest.Status, r.manifest.Reason, r.manifest.PartialBy = StatusComplete, "", ""
	}
}

// RebuildMarked reports whether a rebuild marked m partial, and why, its
// RebuildPartial left out.
func (m Manifest) RebuildMarked() (why string, ok bool) {
	if m.Status != StatusPartial || m.PartialBy != PartialByRebuild {
		return "", false
	}
	return strings.TrimPrefix(m.Reason, RebuildPartial), true
}

// MarkFailed marks the whole run failed.
func (r *Run) MarkFailed(reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.manifest.Status, r.manifest.Reason = StatusFailed, reason
}

// Find returns the entry of path.
func (m Manifest) Find(path string) (Artifact, bool) {
	for _, a := range m.Artifacts {
		if a.Path == path {
			return a, true
		}
	}
	return Artifact{}, false
}

// Manifest returns a copy of the manifest, artifacts sorted by path.
func (r *Run) Manifest() Manifest {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.manifest
	m.Artifacts = slices.Clone(m.Artifacts)
	m.Notes = slices.Clone(m.Notes)
	m.NoteKinds = slices.Clone(m.NoteKinds)
	m.Steps = slices.Clone(m.Steps)
	m.Pending = slices.Clone(m.Pending)
	slices.SortFunc(m.Artifacts, func(a, b Artifact) int { return strings.Compare(a.Path, b.Path) })
	return m
}

// WriteManifest writes manifest.json (atomically), stamping finished.
func (r *Run) WriteManifest(now time.Time) error {
	r.mu.Lock()
	r.manifest.Finished = now.UTC().Format(time.RFC3339)
	r.mu.Unlock()
	return r.writeManifest()
}

// WriteRebuiltManifest writes manifest.json after deepprof report remade
// the derived files: it stamps rebuilt and keeps the session's own
// started and finished times (finished is stamped only when the session
// never wrote it).
func (r *Run) WriteRebuiltManifest(now time.Time) error {
	r.mu.Lock()
	t := now.UTC().Format(time.RFC3339)
	r.manifest.Rebuilt = t
	if r.manifest.Finished == "" {
		r.manifest.Finished = t
	}
	r.mu.Unlock()
	return r.writeManifest()
}

// RebuildStarted is the reason WriteRebuildStarted gives a run while its
// rebuild is under way, after RebuildPartial.
const RebuildStarted = "a rebuild began and did not finish (it was killed, or crashed): each derived file is the one from before it or the one it wrote; run deepprof report again"

// WriteRebuildStarted writes manifest.json as it stands while a rebuild
// replaces the derived files one by one: the run partial (RebuildStarted),
// no size claimed for a derived or index file, the files the rebuild may
// write in Pending (ClaimPending). A rebuild killed before its
// end leaves this manifest, which stays true of the files whichever of
// them were replaced; the next rebuild clears it (ClearRebuild). The run
// in memory is unchanged.
func (r *Run) WriteRebuildStarted() error {
	m := r.Manifest()
	if m.Status == StatusComplete || m.Status == StatusPartial && m.PartialBy == PartialByRebuild {
		m.Status, m.Reason, m.PartialBy = StatusPartial, RebuildPartial+RebuildStarted, PartialByRebuild
	}
	for i := range m.Artifacts {
		if a := &m.Artifacts[i]; a.Kind == Derived || a.Kind == Index {
			a.Bytes = 0
		}
	}
	return r.writeManifestAs(m)
}

func (r *Run) writeManifest() error { return r.writeManifestAs(r.Manifest()) }

// writeManifestAs writes m as the run's manifest.json, atomically.
func (r *Run) writeManifestAs(m Manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomicIn(r.Dir, r.Path(ManifestJSON), append(b, '\n'))
}
