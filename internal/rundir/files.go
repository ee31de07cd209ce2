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
	"strconv"
	"strings"
	"time"
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
	ents, _ := os.ReadDir(run.Path(TimelineCupti))
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
	ents, err := os.ReadDir(run.Path(TimelineCupti))
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
// the folder (slash-separated) and its bytes.
type File struct {
	Rel  string
	Data []byte
}

// WriteFilesIn writes files into dir, a folder inside root (the run
// directory, or dir itself), creating what is missing, and returns the
// folders under dir it wrote into (slash-separated, "." not listed). Every
// file goes through the atomic writer of root (WriteFileAtomicIn): a folder
// on the way that is a symbolic link is an error naming it, never
// followed. Temporary files that a killed writer left in dir are removed
// first.
func WriteFilesIn(root, dir string, files []File) (map[string]bool, error) {
	if err := MkdirIn(root, dir); err != nil {
		return nil, err
	}
	if _, err := RemoveTemps(dir); err != nil {
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
		if err := WriteFileAtomicIn(root, p, f.Data); err != nil {
			return written, err
		}
	}
	return written, nil
}

// ReplaceDirIn replaces the folder dir, inside root, by one holding files:
// they are written into a temporary folder beside it, which then takes
// dir's name, so that until then dir keeps what it held (a rebuild killed
// meanwhile leaves the old folder, and RemoveTemps the temporary one).
func ReplaceDirIn(root, dir string, files []File) error {
	if err := MkdirIn(root, filepath.Dir(dir)); err != nil {
		return err
	}
	n := strconv.FormatInt(time.Now().UnixNano(), 10)
	tmp := filepath.Join(filepath.Dir(dir), "."+filepath.Base(dir)+tempMark+n)
	if _, err := WriteFilesIn(root, tmp, files); err != nil {
		RemoveAllIn(root, tmp)
		return err
	}
	old := filepath.Join(filepath.Dir(dir), "."+filepath.Base(dir)+".old"+tempMark+n)
	st, err := os.Lstat(dir)
	switch {
	case err == nil && st.IsDir():
		if err := os.Rename(dir, old); err != nil {
			RemoveAllIn(root, tmp)
			return err
		}
	case err == nil:
		RemoveAllIn(root, tmp)
		return fmt.Errorf("%s: not a folder, where deepprof writes one of %s", dir, root)
	case !errors.Is(err, fs.ErrNotExist):
		RemoveAllIn(root, tmp)
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		return err
	}
	return RemoveAllIn(root, old)
}

// FoldersRecord is the file, in a folder deepprof writes into for a user
// (deepprof regions --out DIR), that lists the folders deepprof made
// there: the only folders a later write may remove.
const FoldersRecord = ".deepprof-folders"

// keptFiles are the files deepprof writes into the folders FoldersRecord
// lists: a folder holding anything else is the user's.
var keptFiles = []string{"kernels.md", "kernels.json"}

// WriteOwnedDir writes files into dir, a user's folder, as WriteFilesIn
// does, then removes the folders that an earlier write listed in dir's
// FoldersRecord and this one did not write, where they hold nothing but
// the files deepprof writes there (kernels.md, kernels.json): a folder
// deepprof did not record making, or one with anything of the user's in
// it, stays. Removal goes through dir as an os.Root: it never follows a
// link out of dir. The record is rewritten with the folders written now.
func WriteOwnedDir(dir string, files []File) error {
	earlier, err := readFoldersRecord(dir)
	if err != nil {
		return err
	}
	written, err := WriteFilesIn(dir, dir, files)
	if err != nil {
		return err
	}
	var stale []string
	for _, d := range earlier {
		if !written[d] {
			stale = append(stale, d)
		}
	}
	if err := removeOwnedFolders(dir, stale); err != nil {
		return err
	}
	now := make([]string, 0, len(written))
	for d := range written {
		now = append(now, d)
	}
	slices.Sort(now)
	var b strings.Builder
	b.WriteString("# the folders deepprof regions --out made here; a later write removes only these\n")
	for _, d := range now {
		b.WriteString(d + "\n")
	}
	return WriteFileAtomicIn(dir, filepath.Join(dir, FoldersRecord), []byte(b.String()))
}

// readFoldersRecord is the folders dir's FoldersRecord lists: none when it
// has none. Lines that are not one local, slash-separated path are not
// folders deepprof made, and are left out.
func readFoldersRecord(dir string) ([]string, error) {
	b, err := os.ReadFile(filepath.Join(dir, FoldersRecord))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if l == "" || strings.HasPrefix(l, "#") || !fs.ValidPath(l) || l == "." || strings.Contains(l, `\`) {
			continue
		}
		out = append(out, l)
	}
	return out, nil
}

// removeOwnedFolders removes each of folders (relative to dir), deepest
// first, where it holds nothing but keptFiles and folders removed before
// it. Nothing is removed through a link out of dir.
func removeOwnedFolders(dir string, folders []string) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	slices.SortFunc(folders, func(a, b string) int {
		return cmp.Or(cmp.Compare(strings.Count(b, "/"), strings.Count(a, "/")), strings.Compare(a, b))
	})
	for _, d := range folders {
		st, err := root.Lstat(d)
		if err != nil || !st.IsDir() {
			continue // gone, or no longer a folder deepprof made
		}
		f, err := root.Open(d)
		if err != nil {
			return err
		}
		ents, err := f.ReadDir(-1)
		f.Close()
		if err != nil {
			return err
		}
		ours := true
		for _, e := range ents {
			if !e.Type().IsRegular() || !slices.Contains(keptFiles, e.Name()) {
				ours = false
			}
		}
		if !ours {
			continue
		}
		for _, e := range ents {
			if err := root.Remove(path.Join(d, e.Name())); err != nil {
				return err
			}
		}
		if err := root.Remove(d); err != nil {
			return err
		}
	}
	return nil
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
	r, err := os.OpenRoot(root)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := op(r, rel); err != nil {
		if strings.Contains(err.Error(), "path escapes from parent") {
			return fmt.Errorf("%s: %w", path, ErrLinkOut)
		}
		return err
	}
	return nil
}

// ErrLinkOut is RemoveIn's error for a path a symbolic link leads out of
// root.
var ErrLinkOut = errors.New("a symbolic link on the way leads out of the folder: nothing is removed through it")

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

// SourceCuptiKernels is how the manifest and the summary name the CUPTI timeline as
// a source.
const SourceCuptiKernels = "the CUPTI timeline of the plain run, every launch"

// SourceCuptiStages is the stage source of a program that wrote no workload
// report, as the manifest and report.md say it.
const SourceCuptiStages = "the NVTX push/pop ranges of the CUPTI timeline in the program's domain (nvtx.domain; libraries' domains left out): each range instance's CPU time, profiler running (the program wrote no workload report)"
