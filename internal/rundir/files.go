package rundir

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/llm-perf-opt/deepprof/internal/input"
)

// ReadStats reads a stats CSV of the run (nsys's), plain or gzipped, named rel
// in errors.
func ReadStats[T any](run *Run, rel string, read func(io.Reader, string) ([]T, error)) ([]T, error) {
	f, err := run.OpenFile(rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return read(f, rel)
}

// CuptiFileAnomalies are the run's CUPTI record files that cannot be read
// as its own, each a line: a name in timeline/cupti that is not a plain
// file (a symbolic link is not followed: a run's records are its own
// files), and a record file the manifest lists that is not in the run.
// Either leaves a process out of the timeline.
func CuptiFileAnomalies(run *Run) []string {
	var out []string
	ents, err := ReadDirIn(run.Dir, run.Path(TimelineCupti))
	if errors.Is(err, ErrLinkOut) {
		out = append(out, fmt.Sprintf("%s is a symbolic link out of the run: not read, so the processes it holds are missing from the timeline", TimelineCupti))
	}
	for _, e := range ents {
		n := e.Name()
		if isCuptiRecord(n) && !e.Type().IsRegular() {
			what := "not a plain file"
			if e.Type()&fs.ModeSymlink != 0 {
				what = "a symbolic link"
			}
			out = append(out, fmt.Sprintf("%s is %s: not read, so its process is missing from the timeline", path.Join(TimelineCupti, n), what))
		}
	}
	seen := map[string]bool{}
	for _, a := range run.Manifest().Artifacts {
		rel := strings.TrimSuffix(a.Path, ".gz")
		if a.Status != StatusAbsent || !strings.HasPrefix(rel, TimelineCupti+"/") || !isCuptiRecord(path.Base(a.Path)) || seen[rel] {
			continue
		}
		if _, ok := run.Stored(rel); ok {
			continue // there, plain or gzipped (a recorded copy gunzipped)
		}
		seen[rel] = true
		out = append(out, fmt.Sprintf("%s: the session recorded it (the manifest lists it) and it is not in the run: its process is missing from the timeline", rel))
	}
	return out
}

// isCuptiRecord reports whether name is a CUPTI record file's:
// cupti-<pid>.tsv, or .tsv.gz in a recorded copy.
func isCuptiRecord(name string) bool {
	return strings.HasPrefix(name, "cupti-") && (strings.HasSuffix(name, ".tsv") || strings.HasSuffix(name, ".tsv.gz"))
}

// CuptiFiles lists the run's CUPTI record files (cupti-<pid>.tsv, or .gz
// in a recorded copy), relative to MAIN, sorted.
func CuptiFiles(run *Run) []string {
	ents, err := ReadDirIn(run.Dir, run.Path(TimelineCupti))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		n := e.Name()
		if e.Type().IsRegular() && isCuptiRecord(n) {
			out = append(out, path.Join(TimelineCupti, n))
		}
	}
	slices.Sort(out)
	return out
}

// File is one file of a folder that is written whole: its path relative to
// the folder (slash-separated) and its bytes, or Write, which writes them
// as they are made (a large file is then never held whole).
type File struct {
	Rel   string
	Data  []byte
	Write func(io.Writer) error // when not nil, the file's bytes (Data unused)
}

// WriteTo writes the file's bytes to w: Data, or what Write writes.
func (f File) WriteTo(w io.Writer) (int64, error) {
	if f.Write == nil {
		n, err := w.Write(f.Data)
		return int64(n), err
	}
	c := &countingWriter{w: w}
	err := f.Write(c)
	return c.n, err
}

// writeIn writes the file to path, a file of the folder root, through an
// AtomicFile (WriteAtomicIn): no half-written file is left on an error.
func (f File) writeIn(root, path string) error {
	return WriteAtomicIn(root, path, func(w io.Writer) error {
		_, err := f.WriteTo(w)
		return err
	})
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// WriteFilesIn writes files into dir, a folder inside root (the run
// directory, or dir itself), creating what is missing, and returns the
// folders under dir it wrote into (slash-separated, "." not listed). Every
// file goes through the atomic writer of root (WriteFileAtomicIn): a folder
// on the way that is a symbolic link is an error naming it, never
// followed.
func WriteFilesIn(root, dir string, files []File) (map[string]bool, error) {
	if err := MkdirIn(root, dir); err != nil {
		return nil, err
	}
	written := map[string]bool{}
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f.Rel))
		if sub := path.Dir(f.Rel); sub != "." && !written[sub] {
			for d := sub; d != "."; d = path.Dir(d) {
				written[d] = true
			}
			if err := MkdirIn(root, filepath.Dir(p)); err != nil {
				return written, err
			}
		}
		if err := f.writeIn(root, p); err != nil {
			return written, err
		}
	}
	return written, nil
}

// OwnedMarker is the file deepprof regions --out writes into DIR and into
// each folder it makes there, listing what it wrote: its content is the
// only proof that a file or a folder is deepprof's. A folder without one
// is the user's: deepprof neither writes into it nor removes it.
const OwnedMarker = ".deepprof-made"

const ownedHeader = "# deepprof regions --out wrote the files below (a name ending in / is a folder it made); a later write replaces or removes only these\n"

// owned is what an OwnedMarker lists: files, and folders (relative to the
// marker's folder, slash-separated).
type owned struct {
	files, folders []string
}

// readOwned reads the OwnedMarker of the folder rel of r: ok is false when
// there is none, or it is not deepprof's (it does not open with
// ownedHeader). Lines that are not a local path below the folder are left
// out.
func readOwned(r *os.Root, rel string) (owned, bool) {
	f, err := openRegular(r, path.Join(rel, OwnedMarker), OwnedMarker)
	if err != nil {
		return owned{}, false
	}
	defer f.Close()
	b, err := input.ReadAll(f, OwnedMarker)
	if err != nil || !strings.HasPrefix(string(b), ownedHeader) {
		return owned{}, false
	}
	var o owned
	for _, l := range strings.Split(strings.TrimPrefix(string(b), ownedHeader), "\n") {
		name, folder := strings.CutSuffix(l, "/")
		if name == "" || name == "." || !fs.ValidPath(name) || strings.Contains(name, `\`) {
			continue
		}
		if folder {
			o.folders = append(o.folders, name)
		} else {
			o.files = append(o.files, name)
		}
	}
	return o, true
}

func (o owned) text() []byte {
	var b strings.Builder
	b.WriteString(ownedHeader)
	for _, f := range o.files {
		b.WriteString(f + "\n")
	}
	for _, f := range o.folders {
		b.WriteString(f + "/\n")
	}
	return []byte(b.String())
}

// OwnedConflictError is a path where deepprof regions --out would write and
// that it cannot show it wrote: the user's, kept.
type OwnedConflictError struct {
	Path   string
	Folder bool
	Link   string // where the path is a symbolic link: its target
}

func (e *OwnedConflictError) Error() string {
	switch {
	case e.Link != "":
		return fmt.Sprintf("%s: a symbolic link (to %s), where deepprof regions --out writes: it never writes through a link, nor replaces one it did not make; remove it or choose another --out", e.Path, e.Link)
	case e.Folder:
		return fmt.Sprintf("%s: a folder deepprof did not make (no %s in it) where it writes a region's tables: it neither writes into it nor removes it; move it away or choose another --out", e.Path, OwnedMarker)
	}
	return fmt.Sprintf("%s: a file deepprof did not write (the %s of its folder does not list it): it will not replace it; move it away or choose another --out", e.Path, OwnedMarker)
}

// WriteOwnedDir writes files into dir, a user's folder, holding dir's lock
// and the lock of the run directory it is in, if any: concurrent writers
// into one folder take turns. It writes only where it can show the path is
// its own: a file it would replace must be listed in its folder's
// OwnedMarker, and a folder it writes into must hold an OwnedMarker (dir
// itself excepted); anything else, a link included, is an
// *OwnedConflictError before anything is written. Folders an earlier write
// made (dir's OwnedMarker lists them) and this one does not write are
// removed, deepest first, where they hold their OwnedMarker: the files it
// lists, then the marker, then the folder if it is then empty (a file of
// the user's in it keeps it). Temporary files are only in dir's
// StagingDir.
func WriteOwnedDir(dir string, files []File) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	unlock, err := lockOwned(dir)
	if err != nil {
		return err
	}
	defer unlock()
	r, done, err := openRoot(dir)
	if err != nil {
		return err
	}
	defer done()
	top, _ := readOwned(r, ".")
	inFolder := map[string][]string{} // folder ("." for dir) -> its files
	var folders []string              // below dir, outermost first
	for _, f := range files {
		if !fs.ValidPath(f.Rel) || f.Rel == "." || path.Base(f.Rel) == OwnedMarker || strings.SplitN(f.Rel, "/", 2)[0] == StagingDir {
			return fmt.Errorf("%s: not a file regions --out writes", f.Rel)
		}
		sub, name := path.Dir(f.Rel), path.Base(f.Rel)
		for d := sub; d != "." && !slices.Contains(folders, d); d = path.Dir(d) {
			folders = append(folders, d)
		}
		inFolder[sub] = append(inFolder[sub], name)
	}
	slices.SortFunc(folders, byDepth)
	slices.Reverse(folders)
	for _, d := range folders {
		if err := ownedPath(r, dir, d, true); err != nil && !emptyListed(r, top, d) {
			return err
		}
	}
	for sub, names := range inFolder {
		mine := top
		if sub != "." {
			mine, _ = readOwned(r, sub)
		}
		for _, n := range names {
			if p := path.Join(sub, n); !slices.Contains(mine.files, n) {
				if err := ownedPath(r, dir, p, false); err != nil {
					return err
				}
			}
		}
	}
	if _, err := SweepStaging(dir); err != nil {
		return err
	}
	record := owned{files: inFolder["."], folders: slices.Clone(folders)}
	for _, d := range top.folders {
		if !slices.Contains(record.folders, d) {
			record.folders = append(record.folders, d) // until removed below
		}
	}
	if err := WriteFileAtomicIn(dir, filepath.Join(dir, OwnedMarker), record.text()); err != nil {
		return err
	}
	for _, d := range folders {
		if err := MkdirIn(dir, filepath.Join(dir, filepath.FromSlash(d))); err != nil {
			return err
		}
		// What an earlier write put here and this one does not write goes:
		// left, it would look current, and then be the user's.
		if old, ok := readOwned(r, d); ok {
			for _, f := range old.files {
				p := path.Join(d, f)
				if st, err := r.Lstat(p); err == nil && st.Mode().IsRegular() && !slices.Contains(inFolder[d], f) {
					if err := r.Remove(p); err != nil {
						return err
					}
				}
			}
		}
		// the marker first: a write killed after it leaves a folder
		// that the next write knows as deepprof's
		if err := WriteFileAtomicIn(dir, filepath.Join(dir, filepath.FromSlash(d), OwnedMarker), owned{files: inFolder[d]}.text()); err != nil {
			return err
		}
	}
	for _, f := range files {
		if err := f.writeIn(dir, filepath.Join(dir, filepath.FromSlash(f.Rel))); err != nil {
			return err
		}
	}
	stale := slices.DeleteFunc(slices.Clone(top.folders), func(d string) bool { return slices.Contains(folders, d) })
	slices.SortFunc(stale, byDepth)
	kept := folders
	for _, d := range stale {
		if !removeOwned(r, d) {
			kept = append(kept, d) // something of the user's is in it
		}
	}
	if err := WriteFileAtomicIn(dir, filepath.Join(dir, OwnedMarker), owned{files: inFolder["."], folders: kept}.text()); err != nil {
		return err
	}
	_, err = SweepStaging(dir)
	return err
}

// emptyListed reports whether rel is an empty folder that dir's own
// marker lists: one a write killed before the folder's marker made.
func emptyListed(r *os.Root, top owned, rel string) bool {
	if !slices.Contains(top.folders, rel) {
		return false
	}
	st, err := r.Lstat(rel)
	if err != nil || !st.IsDir() {
		return false
	}
	f, err := r.Open(rel)
	if err != nil {
		return false
	}
	defer f.Close()
	ents, err := f.ReadDir(1)
	return err == io.EOF || err == nil && len(ents) == 0
}

// byDepth orders slash-separated paths deepest first, then by name.
func byDepth(a, b string) int {
	return cmp.Or(cmp.Compare(strings.Count(b, "/"), strings.Count(a, "/")), strings.Compare(a, b))
}

// ownedPath checks that rel, a path of r where regions --out writes a
// folder (folder) or a file its folder's marker does not list, is either
// not there or, for a folder, one deepprof made: else an
// *OwnedConflictError naming it under dir.
func ownedPath(r *os.Root, dir, rel string, folder bool) error {
	st, err := r.Lstat(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return linkOut(filepath.Join(dir, rel), err)
	}
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if st.Mode()&fs.ModeSymlink != 0 {
		to, _ := r.Readlink(rel)
		return &OwnedConflictError{Path: p, Link: to}
	}
	if folder && st.IsDir() {
		if _, ok := readOwned(r, rel); ok {
			return nil
		}
	}
	return &OwnedConflictError{Path: p, Folder: folder}
}

// exists reports whether rel is in r (a link counts, not followed).
func exists(r *os.Root, rel string) bool {
	_, err := r.Lstat(rel)
	return err == nil
}

// removeOwned removes the folder rel of r that an earlier regions --out
// made, where its OwnedMarker shows it: the files the marker lists (plain
// files only), the marker, then the folder when nothing else is in it. It
// reports whether the folder is gone; nothing is removed through a link.
func removeOwned(r *os.Root, rel string) bool {
	st, err := r.Lstat(rel)
	if err != nil {
		return true // gone already
	}
	if !st.IsDir() {
		return false
	}
	mine, ok := readOwned(r, rel)
	if !ok {
		return false
	}
	for _, f := range mine.files {
		p := path.Join(rel, f)
		if st, err := r.Lstat(p); err == nil && st.Mode().IsRegular() {
			r.Remove(p)
		}
	}
	r.Remove(path.Join(rel, OwnedMarker))
	if err := r.Remove(rel); err != nil {
		// not empty: put the marker back for what is still ours
		var left []string
		for _, f := range mine.files {
			if exists(r, path.Join(rel, f)) {
				left = append(left, f)
			}
		}
		if f, err := r.OpenFile(path.Join(rel, OwnedMarker), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644); err == nil {
			f.Write(owned{files: left}.text())
			f.Close()
		}
		return false
	}
	return true
}

// RemoveIn removes the file or empty folder at path, inside root, through
// root as an os.Root: a symbolic link on the way that leads out of root is
// an error, and nothing outside root is removed.
func RemoveIn(root, path string) error { return inRoot(root, path, (*os.Root).Remove) }

// RemoveAllIn is RemoveIn of a folder and everything in it; a path that is
// not there is no error (os.RemoveAll's rule).
func RemoveAllIn(root, path string) error { return inRoot(root, path, (*os.Root).RemoveAll) }

func inRoot(root, path string, op func(*os.Root, string) error) error {
	rel, err := filepath.Rel(root, path)
	if err != nil || !filepath.IsLocal(rel) {
		return fmt.Errorf("%s: not inside %s: deepprof removes only there", path, root)
	}
	r, done, err := openRoot(root)
	if err != nil {
		return err
	}
	defer done()
	return linkOut(path, op(r, rel))
}

// ExportFiles are the files of the export rel: rel itself, or for a deep
// pass of several ranks (ncu/ranks/rank<R>/, workload.launcher) each rank's
// file of that name, by rank. None: [rel], whose open says it is missing.
func (r *Run) ExportFiles(rel string) []string {
	if r.Exists(rel) {
		return []string{rel}
	}
	if files := r.rankFiles(rel); len(files) > 0 {
		return files
	}
	return []string{rel}
}

// HasExport reports whether the run has the export rel, in one file or per
// rank.
func (r *Run) HasExport(rel string) bool {
	return r.Exists(rel) || len(r.rankFiles(rel)) > 0
}

// rankFiles lists each rank's file named like rel that the run has
// (RankPath), by rank.
func (r *Run) rankFiles(rel string) []string {
	var out []string
	for _, rank := range Ranks(r.Dir) {
		if f := RankPath(rank, rel); r.Exists(f) {
			out = append(out, f)
		}
	}
	return out
}

// The names a diff gives the file a run's stages were read from
// (facts.DiffSide.Read), besides Stage1Report: the CUPTI run's report for
// its program-alone repeats (timed after the library detached), and
// summary.json for its stages.
const (
	ReadAloneStages   = TimelineReport + " (alone: repeats after the library detached)"
	ReadSummaryStages = SummaryJSON + " (stages)"
)

// SourceCuptiKernels is how the manifest and the summary name the CUPTI timeline as
// a source.
const SourceCuptiKernels = "the CUPTI run's timeline, every launch"

// SourceCuptiReport is the stage source of a program that wrote a
// workload report in its CUPTI run (beside stage 1's, where there is
// one), as the manifest and report.md say it.
const SourceCuptiReport = "the workload's report of the CUPTI run, its own timers with the CUPTI library recording: the run the phases and kernels come from"

// SourceAloneDetached is where the program-alone figures come from when
// no separate plain run was made: the CUPTI run's repeats after the
// library detached CUPTI from the process (the workload report's
// "alone"), as the summary says it.
const SourceAloneDetached = "the CUPTI run's own process, its repeats after the library detached CUPTI (no profiler attached, no NVTX range)"

// SourceInferredStages is the stage source of a program that opened no
// range of its domain, whose phases were inferred from its kernel stream
// (phases.InferPhases), as the manifest and report.md say it.
const SourceInferredStages = "phases INFERRED from the kernel stream, the program having opened no NVTX range of its domain: prefill, decode_all and decode_step ranges placed where one launch sequence repeats (the decode steps) and before it (the prefill); the manifest's notes say how; each instance from its first launch call to its last kernel's end, a step to the next step's first launch, profiler running"

// SourceCuptiStages is the stage source of a program that wrote no workload
// report, as the manifest and report.md say it.
const SourceCuptiStages = "the NVTX push/pop ranges of the CUPTI timeline in the program's domain (nvtx.domain; libraries' domains left out): each range instance from its push (or the end of the range before it on its thread, where later) to its pop, or to the end of the last kernel or copy launched inside it where that is later, profiler running (the program wrote no workload report)"
