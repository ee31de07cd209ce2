// What deepprof wrote into a run, and so may replace or remove there: the
// derived files its last build listed in the manifest, and what this
// process wrote since. Nothing else of a run is ever replaced or removed.

package rundir

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// DerivedFiles are the derived files of the layout whose names are fixed
// (a derived folder's own files, such as ncu/regions/'s kernel tables, are
// named by what the run holds): each is a name only deepprof writes in a
// run.
func DerivedFiles() []string {
	var out []string
	for _, s := range layout {
		if s.Kind == Derived && !s.Dir {
			out = append(out, s.Path)
		}
	}
	return out
}

// ownedAtOpen is what the run's manifest says deepprof wrote into it, and
// may replace or remove: each derived file its last build made (complete,
// partial, or made and absent from this copy) under the name it is kept
// by, and what a build that did not finish may have written (Pending).
// Without a manifest (its session stopped before it wrote one), the files
// at the layout's derived names and the kernel tables of the region
// folders are taken for the session's: no one but the session has written
// into a run before its manifest. A manifest written before deepprof
// listed the kernel tables of a region folder (it lists the folder's
// report and nothing else in it: the recorded runs' manifests) has the
// tables there taken for its build's.
func (r *Run) ownedAtOpen(m Manifest, hasManifest bool) {
	r.owned = map[string]bool{}
	if !hasManifest {
		for _, rel := range DerivedFiles() {
			if st, err := lstatIn(r.Dir, rel); err == nil && !st.IsDir() {
				r.owned[rel] = true
			}
		}
		for _, dir := range []string{RegionsDir, RegionsSampleDir} {
			r.ownTables(dir)
		}
		return
	}
	for _, dir := range []struct{ dir, report string }{{RegionsDir, RegionsMD}, {RegionsSampleDir, RegionsSampleMD}} {
		a, made := m.Find(dir.report)
		made = made && (a.Present() || a.Status == StatusAbsent)
		if made && !slices.ContainsFunc(m.Artifacts, func(a Artifact) bool {
			return strings.HasPrefix(a.Path, dir.dir+"/") && strings.Count(a.Path, "/") > strings.Count(dir.dir, "/")+1
		}) {
			r.ownTables(dir.dir)
		}
	}
	for _, a := range m.Artifacts {
		if artifactKind(a) != Derived {
			continue
		}
		switch a.Status {
		case StatusComplete, StatusPartial, StatusAbsent:
			r.owned[a.Path] = true
			if a.StoredAs != "" {
				r.owned[a.StoredAs] = true
			}
		}
	}
	for _, rel := range m.Pending {
		if fs.ValidPath(rel) && !strings.Contains(rel, `\`) && IsDerived(rel) {
			r.owned[rel] = true
		}
	}
}

// ownTables takes the kernel tables of the region folder dir for
// deepprof's: kernels.md and kernels.json, plain files, in each folder
// directly under dir (render.RegionTableDir's names), and in the
// process-P-device-D folders of several processes under those.
func (r *Run) ownTables(dir string) {
	var walk func(d string, depth int)
	walk = func(d string, depth int) {
		subs, _ := ReadDirIn(r.Dir, r.Path(d))
		for _, sub := range subs {
			if !sub.IsDir() || depth == 1 && !strings.HasPrefix(sub.Name(), "process-") {
				continue
			}
			for _, name := range []string{"kernels.md", "kernels.json"} {
				rel := path.Join(d, sub.Name(), name)
				if st, err := lstatIn(r.Dir, rel); err == nil && st.Mode().IsRegular() {
					r.owned[rel] = true
				}
			}
			if depth == 0 {
				walk(path.Join(d, sub.Name()), 1)
			}
		}
	}
	walk(dir, 0)
}

// artifactKind is an artifact's kind by the layout, else as the manifest
// gives it.
func artifactKind(a Artifact) Kind {
	if s, ok := Lookup(a.Path); ok {
		return s.Kind
	}
	return a.Kind
}

// lstatIn is the file info of rel, a path of the run directory dir,
// through dir as an os.Root, a link not followed.
func lstatIn(dir, rel string) (fs.FileInfo, error) {
	r, done, err := openRoot(dir)
	if err != nil {
		return nil, err
	}
	defer done()
	st, err := r.Lstat(filepath.FromSlash(rel))
	return st, linkOut(filepath.Join(dir, filepath.FromSlash(rel)), err)
}

// owns reports whether deepprof wrote the file rel of the run (ownedAtOpen,
// claim).
func (r *Run) owns(rel string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.owned[rel]
}

// claim records that this process writes the files rels into the run: its
// own, to replace or remove.
func (r *Run) claim(rels ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.owned == nil {
		r.owned = map[string]bool{}
	}
	for _, rel := range rels {
		r.owned[rel] = true
	}
}

// DerivedConflictError is a rebuild refused before it wrote anything: where
// it writes derived files there are files (or folders, or links) that
// deepprof did not write, and it neither replaces nor removes them.
type DerivedConflictError struct {
	Dir   string   // the run directory
	Paths []string // relative to it, slash form
}

func (e *DerivedConflictError) Error() string {
	names := make([]string, len(e.Paths))
	for i, p := range e.Paths {
		names[i] = filepath.Join(e.Dir, filepath.FromSlash(p))
	}
	what := "a file"
	if len(names) > 1 {
		what = "files"
	}
	return fmt.Sprintf("%s: %s deepprof did not write (its manifest does not list %s as deepprof's) where deepprof report writes its own: nothing was rebuilt, nothing removed; move %s away and run deepprof report again",
		strings.Join(names, ", "), what, map[bool]string{true: "them", false: "it"}[len(names) > 1], map[bool]string{true: "them", false: "it"}[len(names) > 1])
}

// CheckDerived is a *DerivedConflictError naming every path of planned
// (derived files a rebuild is about to write, relative to MAIN) that holds
// something deepprof did not write: it is to be called before anything is
// written. A path that is not there, or one deepprof wrote, is free; one
// behind a link out of the run is left to the write, which fails there and
// says so.
func (r *Run) CheckDerived(planned []string) error {
	var bad []string
	for _, rel := range planned {
		if r.owns(rel) {
			continue
		}
		if _, err := lstatIn(r.Dir, rel); err == nil {
			bad = append(bad, rel)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	slices.Sort(bad)
	return &DerivedConflictError{Dir: r.Dir, Paths: slices.Compact(bad)}
}

// removeDerived removes the file rel of the run if deepprof wrote it
// (owns), through the run as an os.Root; a file it did not write is left
// where it is. removed says whether a file went.
func (r *Run) removeDerived(rel string) (removed bool, err error) {
	if !r.owns(rel) {
		return false, nil
	}
	st, err := lstatIn(r.Dir, rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, err
	case st.IsDir():
		return false, nil // a folder is never a file deepprof wrote
	}
	if err := r.Remove(rel); err != nil {
		return false, err
	}
	return true, nil
}

// ownedUnder lists the files under the folder dir of the run that deepprof
// wrote (owns), sorted.
func (r *Run) ownedUnder(dir string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for rel := range r.owned {
		if strings.HasPrefix(rel, dir+"/") {
			out = append(out, rel)
		}
	}
	slices.Sort(out)
	return out
}

// writeDir writes files into the folder dir of the run, one by one, each
// atomically, through the run as an os.Root (no link followed out of it);
// then removes the files an earlier build wrote there and this one did not
// write, and the folders they leave empty. Nothing else in dir is touched:
// a file of the user's beside deepprof's stays. It returns the files
// written (relative to MAIN) and the ones removed.
func (r *Run) writeDir(dir string, files []File) (written, removed []string, err error) {
	if err := MkdirIn(r.Dir, r.Path(dir)); err != nil {
		return nil, nil, err
	}
	made := map[string]bool{}
	for _, f := range files {
		rel := path.Join(dir, f.Rel)
		if !fs.ValidPath(f.Rel) || !strings.HasPrefix(rel, dir+"/") {
			return written, nil, fmt.Errorf("%s: not a file of %s", f.Rel, dir)
		}
		if sub := path.Dir(rel); sub != dir && !made[sub] {
			if err := MkdirIn(r.Dir, r.Path(sub)); err != nil {
				return written, nil, err
			}
			made[sub] = true
		}
		r.claim(rel)
		if err := f.writeIn(r.Dir, r.Path(rel)); err != nil {
			return written, nil, err
		}
		written = append(written, rel)
	}
	removed, err = r.clearDir(dir, written)
	return written, removed, err
}

// clearDir removes the files under dir that deepprof wrote (owns) and that
// keep does not list, then each folder they leave empty (dir included),
// deepest first; it returns the files removed.
func (r *Run) clearDir(dir string, keep []string) (removed []string, err error) {
	var errs []error
	folders := map[string]bool{}
	for _, rel := range r.ownedUnder(dir) {
		if slices.Contains(keep, rel) {
			continue
		}
		ok, err := r.removeDerived(rel)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if ok {
			removed = append(removed, rel)
		}
		for d := path.Dir(rel); d != dir && strings.HasPrefix(d, dir+"/"); d = path.Dir(d) {
			folders[d] = true
		}
		folders[dir] = true
	}
	ds := slices.Collect(func(yield func(string) bool) {
		for d := range folders {
			if !yield(d) {
				return
			}
		}
	})
	slices.SortFunc(ds, byDepth)
	for _, d := range ds {
		if st, err := lstatIn(r.Dir, d); err == nil && st.IsDir() {
			// only when empty: a file of the user's in it keeps it
			if err := r.Remove(d); err != nil && !isNotEmpty(err) {
				errs = append(errs, err)
			}
		}
	}
	return removed, errors.Join(errs...)
}

// isNotEmpty reports whether err is a folder's removal refused because
// something is in it (the system's ENOTEMPTY, or EEXIST where a system
// says that instead).
func isNotEmpty(err error) bool {
	return errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, fs.ErrExist)
}

// ClaimPending marks the paths planned as the run's own while a rebuild
// writes them: in memory at once, and in the manifest WriteRebuildStarted
// writes (Manifest.Pending), so that a rebuild killed before its end leaves
// a run whose next rebuild knows them for deepprof's. Call it once
// CheckDerived has found them free.
func (r *Run) ClaimPending(planned []string) {
	r.mu.Lock()
	var add []string
	for _, rel := range planned {
		if !r.owned[rel] && !slices.Contains(r.manifest.Pending, rel) {
			add = append(add, rel)
		}
	}
	r.manifest.Pending = append(r.manifest.Pending, add...)
	slices.Sort(r.manifest.Pending)
	r.mu.Unlock()
	r.claim(planned...)
}

// RemovePending removes the files of Pending that the manifest now lists as
// neither made nor absent (what a rebuild that did not finish wrote and
// this one did not make again), and clears Pending: every file deepprof
// wrote is then in the manifest's list of artifacts.
func (r *Run) RemovePending() ([]string, error) {
	m := r.Manifest()
	var removed []string
	var errs []error
	for _, rel := range m.Pending {
		if a, ok := m.Find(rel); ok && (a.Present() || a.Status == StatusAbsent) {
			continue
		}
		ok, err := r.removeDerived(rel)
		if err != nil && !errors.Is(err, ErrLinkOut) {
			errs = append(errs, err)
		}
		if ok {
			removed = append(removed, rel)
		}
	}
	r.mu.Lock()
	r.manifest.Pending = nil
	r.mu.Unlock()
	return removed, errors.Join(errs...)
}
