package rundir

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
)

// AtomicFile is a file written as a stream and published whole: the bytes go
// to a temporary file (in the StagingDir of the folder deepprof owns, or
// beside the target for a file of no such folder), and Commit syncs it and
// renames it over the target. Until Commit succeeds the target is untouched
// (absent, or its previous contents); after Abort, or a failed Commit, no
// temporary file is left. A reader never sees half a file, whatever
// interrupts the writer. An AtomicFile is for one goroutine.
type AtomicFile struct {
	f    *os.File
	path string
	// root, tmp and rel are an AtomicFile of a folder deepprof owns
	// (CreateAtomicIn): its temporary file and target, relative to root.
	root     *os.Root
	rootDone func() // ends the use of root (openRoot)
	tmp, rel string
	err      error // the first write error: Commit refuses to publish after one
	done     bool
}

// tempMark is in the name of the temporary file of an AtomicFile that
// belongs to no folder deepprof owns (CreateAtomic): ".NAME.tmp-DIGITS".
const tempMark = ".tmp-"

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
// every name on the way is resolved through root as an os.Root, so no link
// leads the write out of root, even one swapped in while it is written.
// A folder below root on the way that is a link is an error (MkdirIn).
// The temporary file is in root's StagingDir; Commit renames it over the
// target (which may be a link: the link is replaced, never written
// through).
func CreateAtomicIn(root, path string) (*AtomicFile, error) {
	rel, err := relIn(root, path, "writes")
	if err != nil {
		return nil, err
	}
	if err := MkdirIn(root, filepath.Dir(path)); err != nil {
		return nil, err
	}
	r, done, err := openRoot(root)
	if err != nil {
		return nil, err
	}
	if err := staging(r, root); err != nil {
		done()
		return nil, err
	}
	tmp := stageName(filepath.Base(path))
	f, err := r.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		done()
		return nil, linkOut(path, err)
	}
	return &AtomicFile{f: f, path: path, root: r, rootDone: done, tmp: tmp, rel: rel}, nil
}

// MkdirIn creates dir, a folder inside root, and the folders between them,
// as MkdirAll does, but one at a time through root as an os.Root and
// without following links: a symbolic link (or a file) where a folder
// below root should be is an error that names it. Nothing deepprof writes
// leaves root through a link placed in it. root itself is taken as it is
// (it may be a link); while it is held (LockRun), it is the folder that was
// locked, whatever its path leads to since.
func MkdirIn(root, dir string) error {
	_, err := mkdirIn(root, dir)
	return err
}

// mkdirIn is MkdirIn, returning the folders it created (relative to root,
// slash-separated, outermost first).
func mkdirIn(root, dir string) ([]string, error) {
	rel, err := relIn(root, dir, "writes")
	if err != nil {
		return nil, err
	}
	// A held folder is the one that was locked, even if its path has gone
	// or leads elsewhere since: nothing is made at the path then.
	if !isHeld(root) {
		if err := os.MkdirAll(root, 0o755); err != nil {
			return nil, err
		}
	}
	if rel == "." {
		return nil, nil
	}
	r, done, err := openRoot(root)
	if err != nil {
		return nil, err
	}
	defer done()
	var made []string
	cur := ""
	for _, name := range strings.Split(rel, string(filepath.Separator)) {
		cur = filepath.Join(cur, name)
		fi, err := r.Lstat(cur)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if err := r.Mkdir(cur, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
				return made, linkOut(filepath.Join(root, cur), err)
			} else if err == nil {
				made = append(made, filepath.ToSlash(cur))
			}
			if fi, err = r.Lstat(cur); err != nil {
				return made, err
			}
		case err != nil:
			return made, linkOut(filepath.Join(root, cur), err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			to, _ := r.Readlink(cur)
			return made, fmt.Errorf("%s: a symbolic link (to %s), where deepprof writes a folder of %s: it never writes through a link; remove it", filepath.Join(root, cur), to, root)
		}
		if !fi.IsDir() {
			return made, fmt.Errorf("%s: not a folder, where deepprof writes one of %s", filepath.Join(root, cur), root)
		}
	}
	return made, nil
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
	err := a.err
	if err == nil {
		err = a.f.Sync()
	}
	if err == nil {
		err = a.f.Chmod(0o644)
	}
	if cerr := a.f.Close(); err == nil {
		err = cerr
	}
	if a.root != nil {
		defer a.rootDone()
		if err == nil {
			err = linkOut(a.path, a.root.Rename(a.tmp, a.rel))
		}
		if err != nil {
			a.root.Remove(a.tmp)
		}
		return err
	}
	if err == nil {
		err = os.Rename(a.f.Name(), a.path)
	}
	if err != nil {
		os.Remove(a.f.Name())
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
	cerr := a.f.Close()
	if a.root != nil {
		defer a.rootDone()
		return errors.Join(a.root.Remove(a.tmp), cerr)
	}
	if err := os.Remove(a.f.Name()); err != nil {
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

// Staged is a file of a run being written in the run's staging folder
// while other work goes on (Run.Stage): nothing is at its path until
// Publish, and Discard leaves no trace of it.
type Staged struct {
	run     *Run
	rel     string
	done    chan struct{}
	discard atomic.Bool // set by Discard: the write's next Write fails
	a       *AtomicFile // nil when the temporary file could not be made
	err     error       // the write's error (or the creation's)
}

// Stage starts writing the file rel of the run as write streams it, in a
// goroutine, into a temporary file of the staging folder; the file at rel
// is untouched until Publish. It is for a file whose write may begin
// before the run is checked for the right to write it (Run.CheckDerived).
func (r *Run) Stage(rel string, write func(io.Writer) error) *Staged {
	s := &Staged{run: r, rel: rel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		if s.a, s.err = CreateAtomicIn(r.Dir, r.Path(rel)); s.err == nil {
			s.err = write(stagedWriter{s})
		}
	}()
	return s
}

// Publish waits for the write and puts the file in place (AtomicFile
// Commit); the write's error, if it failed, leaving the path as it was.
func (s *Staged) Publish() error {
	<-s.done
	if s.a == nil {
		return s.err
	}
	if s.err != nil {
		s.a.Abort()
		return s.err
	}
	s.run.claim(s.rel)
	return s.a.Commit()
}

// errDiscarded ends the write of a Staged that was discarded.
var errDiscarded = errors.New("discarded")

// stagedWriter writes to a Staged's temporary file until it is discarded.
type stagedWriter struct{ s *Staged }

func (w stagedWriter) Write(p []byte) (int, error) {
	if w.s.discard.Load() {
		return 0, errDiscarded
	}
	return w.s.a.Write(p)
}

// Discard ends the write at its next Write, waits for it, removes its
// temporary file and sweeps the staging folder (Run.Sweep): a write that
// is not to be leaves the run as it was. It is for a writer that holds
// the run's lock and has no other write under way.
func (s *Staged) Discard() error {
	s.discard.Store(true)
	<-s.done
	var err error
	if s.a != nil {
		err = s.a.Abort()
	}
	return errors.Join(err, s.run.Sweep())
}
