package rundir

import (
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
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
		if e.Type().IsRegular() && strings.HasPrefix(n, "cupti-") && (strings.HasSuffix(n, ".tsv") || strings.HasSuffix(n, ".tsv.gz")) {
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

// WriteRegionsDir writes files into dir, a folder inside root (the run
// directory, or dir itself), creating what is missing, then removes the
// region folders an earlier write left that this one did not write. Every
// file goes through the atomic writer of root (WriteFileAtomicIn): a folder
// on the way that is a symbolic link is an error naming it, never followed.
// Temporary files a killed writer left in dir are removed first.
func WriteRegionsDir(root, dir string, files []File) error {
	if err := MkdirIn(root, dir); err != nil {
		return err
	}
	if _, err := RemoveTemps(dir); err != nil {
		return err
	}
	written := map[string]bool{} // region folders, relative to dir
	for _, f := range files {
		sub := path.Dir(f.Rel)
		p := filepath.Join(dir, filepath.FromSlash(f.Rel))
		if sub != "." {
			if !written[sub] {
				written[sub] = true
				if err := MkdirIn(root, filepath.Dir(p)); err != nil {
					return err
				}
			}
		}
		if err := WriteFileAtomicIn(root, p, f.Data); err != nil {
			return err
		}
	}
	return pruneRegionDirs(dir, written)
}

// pruneRegionDirs removes the region folders under dir that an earlier
// export wrote and this one did not: folders holding nothing but the
// kernel tables deepprof writes (kernels.md, kernels.json) and such
// folders. A folder with anything else in it is the user's, and stays.
func pruneRegionDirs(dir string, written map[string]bool) error {
	var prune func(rel string) (bool, error)
	prune = func(rel string) (ours bool, err error) {
		entries, err := os.ReadDir(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			return false, err
		}
		ours = true
		for _, e := range entries {
			child := path.Join(rel, e.Name())
			switch {
			case e.IsDir() && e.Type()&fs.ModeSymlink == 0:
				childOurs, err := prune(child)
				if err != nil {
					return false, err
				}
				if childOurs && !written[child] && !hasWritten(written, child) {
					if err := os.RemoveAll(filepath.Join(dir, filepath.FromSlash(child))); err != nil {
						return false, err
					}
				}
				ours = ours && childOurs
			case e.Type().IsRegular() && (e.Name() == "kernels.md" || e.Name() == "kernels.json"):
			default:
				ours = false
			}
		}
		return ours, nil
	}
	_, err := prune(".")
	return err
}

// hasWritten reports whether a written folder lies under rel.
func hasWritten(written map[string]bool, rel string) bool {
	for w := range written {
		if strings.HasPrefix(w, rel+"/") {
			return true
		}
	}
	return false
}
