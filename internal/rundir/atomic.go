package rundir

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// AtomicFile is a file written as a stream and published whole: the bytes go
// to a temporary file beside the target (".NAME.tmp-*", in the same
// directory so the rename cannot cross filesystems), and Commit syncs it and
// renames it over the target. Until Commit succeeds the target is untouched
// (absent, or its previous contents); after Abort, or a failed Commit, no
// temporary file is left. A reader never sees half a file, whatever
// interrupts the writer. An AtomicFile is for one goroutine.
type AtomicFile struct {
	f    *os.File
	path string
	err  error // the first write error: Commit refuses to publish after one
	done bool
}

// tempMark is in the name of every temporary file of an AtomicFile:
// ".NAME.tmp-DIGITS" (os.CreateTemp's random digits).
const tempMark = ".tmp-"

var tempName = regexp.MustCompile(`^\..+` + regexp.QuoteMeta(tempMark) + `[0-9]+$`)

// IsTemp reports whether a file name is an AtomicFile's temporary file: one
// a writer killed before Commit or Abort left behind.
func IsTemp(name string) bool { return tempName.MatchString(name) }

// RemoveTemps removes the temporary files and folders that killed writers
// left under dir (symlinks are not followed), and returns their paths
// relative to dir.
func RemoveTemps(dir string) ([]string, error) {
	var removed []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == dir || !IsTemp(d.Name()) || !d.Type().IsRegular() && !d.IsDir() {
			return nil
		}
		if d.IsDir() {
			// a folder a killed ReplaceDirIn left: the new one half
			// written, or the old one on its way out
			if err := RemoveAllIn(dir, p); err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			removed = append(removed, filepath.ToSlash(rel))
			return filepath.SkipDir
		}
		if err := os.Remove(p); err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		removed = append(removed, filepath.ToSlash(rel))
		return nil
	})
	return removed, err
}

// CreateAtomic starts writing path, creating its directory when needed.
// Write to it, then Commit; defer Abort to clean up on every error path (it
// does nothing after a Commit). It is for a file that belongs to no run or
// output folder (a cache, a golden file); a file of one is written with
// CreateAtomicIn, which never writes through a link.
func CreateAtomic(path string) (*AtomicFile, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	return createTemp(path)
}

// CreateAtomicIn is CreateAtomic for a file of the folder root (a run
// directory, the folder of regions --out): path must be inside root, and
// each directory below root on the way to it must be a directory, not a
// symbolic link (MkdirIn). The file itself may be a link: Commit replaces
// the link, never writes through it.
func CreateAtomicIn(root, path string) (*AtomicFile, error) {
	if err := MkdirIn(root, filepath.Dir(path)); err != nil {
		return nil, err
	}
	return createTemp(path)
}

// MkdirIn creates dir, a folder inside root, and the folders between them,
// as MkdirAll does, but one at a time and without following links: a
// symbolic link (or a file) where a folder below root should be is an
// error that names it. Nothing deepprof writes leaves root through a link
// placed in it. root itself is taken as it is (it may be a link).
func MkdirIn(root, dir string) error {
	rel, err := filepath.Rel(root, dir)
	if err != nil || !filepath.IsLocal(rel) && rel != "." {
		return fmt.Errorf("%s: not inside %s: deepprof writes only there", dir, root)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	cur := root
	for _, name := range strings.Split(rel, string(filepath.Separator)) {
		if name == "." {
			continue
		}
		cur = filepath.Join(cur, name)
		fi, err := os.Lstat(cur)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if err := os.Mkdir(cur, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
				return err
			}
			if fi, err = os.Lstat(cur); err != nil {
				return err
			}
		case err != nil:
			return err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			to, _ := os.Readlink(cur)
			return fmt.Errorf("%s: a symbolic link (to %s), where deepprof writes a folder of %s: it never writes through a link; remove it", cur, to, root)
		}
		if !fi.IsDir() {
			return fmt.Errorf("%s: not a folder, where deepprof writes one of %s", cur, root)
		}
	}
	return nil
}

func createTemp(path string) (*AtomicFile, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+tempMark+"*")
	if err != nil {
		return nil, err
	}
	return &AtomicFile{f: f, path: path}, nil
}

// Name is the target path.
func (a *AtomicFile) Name() string { return a.path }

// Write writes to the temporary file. After an error every later Write
// returns it, and Commit does too.
func (a *AtomicFile) Write(p []byte) (int, error) {
	if a.done {
		return 0, fmt.Errorf("%s: write after Commit or Abort", a.path)
	}
	if a.err != nil {
		return 0, a.err
	}
	n, err := a.f.Write(p)
	if err != nil {
		a.err = err
	}
	return n, err
}

// Commit syncs the temporary file and renames it over the target (mode
// 0644). On any error, an earlier Write's included, the temporary file is
// removed and the target left as it was.
func (a *AtomicFile) Commit() error {
	if a.done {
		return fmt.Errorf("%s: Commit after Commit or Abort", a.path)
	}
	a.done = true
	tmp := a.f.Name()
	err := a.err
	if err == nil {
		err = a.f.Sync()
	}
	if cerr := a.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, a.path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// Abort closes and removes the temporary file, leaving the target as it
// was. It does nothing after Commit or a previous Abort.
func (a *AtomicFile) Abort() error {
	if a.done {
		return nil
	}
	a.done = true
	tmp := a.f.Name()
	cerr := a.f.Close()
	if err := os.Remove(tmp); err != nil {
		return err
	}
	return cerr
}

// WriteAtomic streams what write writes into path through an AtomicFile:
// committed when write returns nil, aborted (no file, no temporary file,
// a previous target untouched) when it returns an error.
func WriteAtomic(path string, write func(io.Writer) error) error {
	a, err := CreateAtomic(path)
	if err != nil {
		return err
	}
	return stream(a, write)
}

// WriteAtomicIn is WriteAtomic for a file of the folder root
// (CreateAtomicIn).
func WriteAtomicIn(root, path string, write func(io.Writer) error) error {
	a, err := CreateAtomicIn(root, path)
	if err != nil {
		return err
	}
	return stream(a, write)
}

// WriteFileAtomicIn writes data to path, a file of the folder root,
// through an AtomicFile (CreateAtomicIn).
func WriteFileAtomicIn(root, path string, data []byte) error {
	return WriteAtomicIn(root, path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

func stream(a *AtomicFile, write func(io.Writer) error) error {
	if err := write(a); err != nil {
		a.Abort()
		return err
	}
	return a.Commit()
}
