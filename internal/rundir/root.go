// Every file of a folder deepprof owns (a run directory, the folder of
// regions --out) is opened, written, renamed and removed through that
// folder as an os.Root: each path is resolved one name at a time under it,
// so no link placed in the folder, before or while deepprof works, leads a
// read or a write out of it.

package rundir

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/llm-perf-opt/deepprof/internal/input"
)

// ErrLinkOut is the error of a path that a symbolic link leads out of the
// folder it belongs to: nothing is read, written or removed through it.
var ErrLinkOut = errors.New("a symbolic link on the way leads out of the folder: nothing is read, written or removed through it")

// NotRegularError is a path that is not a regular file where deepprof
// reads one (a named pipe, a device, a socket): refused before any read,
// so that it cannot hang a rebuild.
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s: not a regular file (%s): deepprof reads only plain files", e.Path, kindOf(e.Mode))
}

func kindOf(m fs.FileMode) string {
	switch t := m.Type(); {
	case t&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case t&fs.ModeDevice != 0 || t&fs.ModeCharDevice != 0:
		return "a device"
	case t&fs.ModeSocket != 0:
		return "a socket"
	case t&fs.ModeDir != 0:
		return "a folder"
	default:
		return t.String()
	}
}

// relIn is path relative to root, slash-free of "..": an error when path
// is not inside root ("." is root itself).
func relIn(root, path string, verb string) (string, error) {
	rel, err := filepath.Rel(root, path)
	if err != nil || !filepath.IsLocal(rel) && rel != "." {
		return "", fmt.Errorf("%s: not inside %s: deepprof %s only there", path, root, verb)
	}
	return rel, nil
}

// linkOut names path in err, and makes os.Root's escape error ErrLinkOut.
func linkOut(path string, err error) error {
	if err == nil {
		return nil
	}
	if e := errEscapes(); e != nil && errors.Is(err, e) {
		return fmt.Errorf("%s: %w", path, ErrLinkOut)
	}
	return err
}

// errEscapes is os.Root's error for a name that leads out of its folder,
// which package os does not export: the one an os.Root gives for "..",
// refused before any system call on it. Nil where no folder can be opened
// as a root (none of the temporary folder, /, the current folder).
var errEscapes = sync.OnceValue(func() error {
	for _, dir := range []string{os.TempDir(), "/", "."} {
		r, err := os.OpenRoot(dir)
		if err != nil {
			continue
		}
		_, err = r.Stat("..")
		r.Close()
		if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
			return pe.Err
		}
	}
	return nil
})

// held are the folders held open while a writer holds them (LockRun), by
// their absolute path (rootKey): each operation inside one goes through the
// folder already open instead of opening it again.
var held = struct {
	sync.Mutex
	m map[string]*heldRoot
}{m: map[string]*heldRoot{}}

// heldRoot is one held folder and its users: its holder and the
// operations in flight.
type heldRoot struct {
	r     *os.Root
	users int
}

// openRoot opens the folder root as an os.Root for one operation, or takes
// the one its holder keeps open (holdRoot); done ends the operation.
func openRoot(root string) (r *os.Root, done func(), err error) {
	key := rootKey(root)
	held.Lock()
	if h := held.m[key]; h != nil {
		h.users++
		held.Unlock()
		return h.r, func() { h.leave(key) }, nil
	}
	held.Unlock()
	r, err = os.OpenRoot(root)
	if err != nil {
		return nil, nil, err
	}
	return r, func() { r.Close() }, nil
}

// holdRoot keeps the folder root open until release: the operations inside
// it meanwhile go through that one os.Root. The folder is opened anew, at
// its path now: an operation still in flight from an earlier holder keeps
// the root it took.
func holdRoot(root string) (release func(), err error) {
	key := rootKey(root)
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	h := &heldRoot{r: r, users: 1}
	held.Lock()
	held.m[key] = h
	held.Unlock()
	return func() { h.leave(key) }, nil
}

// rootKey is the folder root's key in held: its absolute path, so that one
// folder named relative or absolute is one entry.
func rootKey(root string) string {
	if abs, err := filepath.Abs(root); err == nil {
		return abs
	}
	return filepath.Clean(root)
}

// isHeld reports whether the folder root is held open (holdRoot).
func isHeld(root string) bool {
	held.Lock()
	defer held.Unlock()
	return held.m[rootKey(root)] != nil
}

// leave ends one user of h; the last closes the folder.
func (h *heldRoot) leave(key string) {
	held.Lock()
	defer held.Unlock()
	if h.users--; h.users > 0 {
		return
	}
	if held.m[key] == h {
		delete(held.m, key)
	}
	h.r.Close()
}

// openRegular opens rel of r for reading. Anything but a regular file is a
// *NotRegularError at once: the open does not wait for a pipe's writer.
func openRegular(r *os.Root, rel, name string) (*os.File, error) {
	f, err := r.OpenFile(rel, os.O_RDONLY|nonBlock, 0)
	if err != nil {
		return nil, linkOut(name, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, &NotRegularError{Path: name, Mode: st.Mode()}
	}
	return f, nil
}

// OpenIn opens path, a file inside the folder root, for reading through
// root as an os.Root (a link out of root is ErrLinkOut; anything but a
// regular file a *NotRegularError).
func OpenIn(root, path string) (*os.File, error) { return openIn(root, path, path) }

// openIn is OpenIn, naming the file name in errors.
func openIn(root, path, name string) (*os.File, error) {
	rel, err := relIn(root, path, "reads")
	if err != nil {
		return nil, err
	}
	r, done, err := openRoot(root)
	if err != nil {
		return nil, err
	}
	defer done()
	return openRegular(r, rel, name)
}

// ReadFileIn reads path, a file inside the folder root, whole (at most
// input.MaxBytes), through root (OpenIn).
func ReadFileIn(root, path string) ([]byte, error) {
	f, err := OpenIn(root, path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > input.MaxBytes {
		return nil, &input.TooLargeError{Name: path, Max: input.MaxBytes}
	}
	return input.ReadAll(f, path)
}

// ReadDirIn lists dir, a folder inside root, through root: a folder that a
// link out of root stands for is ErrLinkOut, never listed.
func ReadDirIn(root, dir string) ([]fs.DirEntry, error) {
	rel, err := relIn(root, dir, "reads")
	if err != nil {
		return nil, err
	}
	r, done, err := openRoot(root)
	if err != nil {
		return nil, err
	}
	defer done()
	f, err := r.Open(rel)
	if err != nil {
		return nil, linkOut(dir, err)
	}
	defer f.Close()
	return f.ReadDir(-1)
}

// StatIn is the file info of path inside root, through root (links inside
// root followed, one out of it ErrLinkOut).
func StatIn(root, path string) (fs.FileInfo, error) {
	rel, err := relIn(root, path, "reads")
	if err != nil {
		return nil, err
	}
	r, done, err := openRoot(root)
	if err != nil {
		return nil, err
	}
	defer done()
	fi, err := r.Stat(rel)
	return fi, linkOut(path, err)
}

// StagingDir is the folder, at the top of a folder deepprof writes into,
// that holds its temporary files while they are written: each is renamed
// into place whole, and what a killed writer left there is removed by the
// next writer that holds the folder (SweepStaging). deepprof creates and
// removes temporary files nowhere else.
const StagingDir = ".deepprof-tmp"

// stagingMarker is the file inside StagingDir whose content proves the
// folder deepprof's: a folder of that name without it is never emptied.
const stagingMarker = "DEEPPROF-STAGING"

const stagingText = "deepprof's temporary files: each is renamed into place when whole; the next deepprof writer of this folder removes what is left here\n"

// staging returns StagingDir of r, creating it (with its marker) when
// missing. A StagingDir that is not a folder, or holds no marker of
// deepprof's, is an error: deepprof does not write into what it cannot
// show it made. Writers may make it at the same moment (a session's ranks,
// two reports): the marker is created by one only (O_EXCL), and a writer
// that finds it unfinished gives its writer up to stagingWait before it
// takes the folder for one a killed writer left half made (and finishes
// the marker) or for one deepprof did not make.
func staging(r *os.Root, root string) error {
	fi, err := r.Lstat(StagingDir)
	if errors.Is(err, fs.ErrNotExist) {
		if err := r.Mkdir(StagingDir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		fi, err = r.Lstat(StagingDir)
	}
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s: not a folder deepprof made (it keeps its temporary files in one of that name): move it away", filepath.Join(root, StagingDir))
	}
	for waited := time.Duration(0); ; waited += stagingPoll {
		if isStaging(r) {
			return nil
		}
		if emptyDir(r, StagingDir) {
			err := writeMarker(r, os.O_EXCL)
			if !errors.Is(err, fs.ErrExist) {
				return err // made here, or a failure to say
			}
			// Another writer is making it.
		} else if waited >= stagingWait {
			if halfMade(r) {
				return writeMarker(r, os.O_TRUNC)
			}
			return fmt.Errorf("%s: a folder deepprof did not make (no %s in it): deepprof keeps its temporary files in one of that name; move it away", filepath.Join(root, StagingDir), stagingMarker)
		}
		time.Sleep(stagingPoll)
	}
}

const (
	stagingWait = 200 * time.Millisecond
	stagingPoll = 2 * time.Millisecond
)

// writeMarker writes StagingDir's marker, opened with flag besides
// O_WRONLY|O_CREATE: O_EXCL where no other writer may have begun it,
// O_TRUNC to finish one a killed writer began.
func writeMarker(r *os.Root, flag int) error {
	f, err := r.OpenFile(filepath.Join(StagingDir, stagingMarker), os.O_WRONLY|os.O_CREATE|flag, 0o644)
	if err != nil {
		return err
	}
	_, werr := io.WriteString(f, stagingText)
	return errors.Join(werr, f.Close())
}

// emptyDir reports whether dir, in r, is a folder with nothing in it.
func emptyDir(r *os.Root, dir string) bool {
	f, err := r.Open(dir)
	if err != nil {
		return false
	}
	defer f.Close()
	ents, err := f.ReadDir(1)
	return err == io.EOF && len(ents) == 0
}

// halfMade reports whether r's StagingDir is one a writer killed while it
// made it left: empty, or holding nothing but the start of its marker.
func halfMade(r *os.Root) bool {
	f, err := r.Open(StagingDir)
	if err != nil {
		return false
	}
	ents, err := f.ReadDir(-1)
	f.Close()
	if err != nil || len(ents) > 1 || len(ents) == 1 && (ents[0].Name() != stagingMarker || !ents[0].Type().IsRegular()) {
		return false
	}
	if len(ents) == 0 {
		return true
	}
	m, err := openRegular(r, filepath.Join(StagingDir, stagingMarker), stagingMarker)
	if err != nil {
		return false
	}
	defer m.Close()
	b, err := markerText(m)
	return err == nil && strings.HasPrefix(stagingText, string(b))
}

// isStaging reports whether r's StagingDir holds deepprof's marker.
func isStaging(r *os.Root) bool {
	f, err := openRegular(r, filepath.Join(StagingDir, stagingMarker), stagingMarker)
	if err != nil {
		return false
	}
	defer f.Close()
	b, err := markerText(f)
	return err == nil && string(b) == stagingText
}

// markerText is what f holds, read up to one byte past stagingText's
// length: enough to tell the marker from any other file.
func markerText(f io.Reader) ([]byte, error) {
	b := make([]byte, len(stagingText)+1)
	n, err := io.ReadFull(f, b)
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		err = nil
	}
	return b[:n], err
}

// stageName is a new temporary name in StagingDir for a file called base.
func stageName(base string) string {
	var b [8]byte
	rand.Read(b[:])
	if len(base) > 64 {
		base = base[:64]
	}
	return filepath.Join(StagingDir, base+"."+hex.EncodeToString(b[:]))
}

// SweepStaging removes what killed writers left in root's StagingDir, and
// the folder itself; a StagingDir without deepprof's marker is left as it
// is. Call it only while holding root (LockRun): another writer's files in
// flight are there too. It returns the names removed (marker left out).
func SweepStaging(root string) ([]string, error) {
	r, done, err := openRoot(root)
	if err != nil {
		return nil, err
	}
	defer done()
	fi, err := r.Lstat(StagingDir)
	if err != nil || !fi.IsDir() || !isStaging(r) && !halfMade(r) {
		return nil, nil
	}
	f, err := r.Open(StagingDir)
	if err != nil {
		return nil, err
	}
	ents, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return nil, err
	}
	// The marker goes last: a sweep killed on the way leaves a folder
	// that still shows itself deepprof's.
	var removed []string
	for _, e := range ents {
		if e.Name() == stagingMarker {
			continue
		}
		if err := r.RemoveAll(filepath.Join(StagingDir, e.Name())); err != nil {
			return removed, err
		}
		removed = append(removed, e.Name())
	}
	if err := r.Remove(filepath.Join(StagingDir, stagingMarker)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return removed, err
	}
	return removed, r.Remove(StagingDir)
}
