package rundir

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// LockFile is the file in a run directory that one writer at a time holds
// (a deepprof report, a session): two rebuilds of one run at once would
// remove each other's files.
const LockFile = ".deepprof.lock"

// LockWait is how long a writer waits for another to let go of a run's
// lock before it gives up with a *LockHeldError.
const LockWait = 2 * time.Minute

// Lock is a run directory held by this process (LockRun). While it is
// held, the run's folder stays open (holdRoot): the reads and writes inside
// it do not open it again each.
type Lock struct {
	f       *os.File
	release func()
}

// lockOptions are how LockRun waits; tests give their own.
type lockOptions struct {
	wait   time.Duration // at most this long for another holder; LockWait
	notice io.Writer     // told once who holds it, when it waits; os.Stderr
	uid    int           // the user taking it; os.Geteuid()
}

func defaultLockOptions() lockOptions {
	return lockOptions{wait: LockWait, notice: os.Stderr, uid: os.Geteuid()}
}

// LockRun holds the run directory dir for this process. The lock file is
// the user's own: created 0600, opened without following a link, and
// refused (*LockOwnerError) when another user owns it, so that no one else
// can hold it. While another process holds it, LockRun says once on
// stderr who (what the lock file records: pid, user, since when, the
// command), waits at most LockWait, then gives up (*LockHeldError). While
// it holds the lock, the file records this process.
func LockRun(dir string) (*Lock, error) {
	return lockRun(dir, defaultLockOptions())
}

func lockRun(dir string, o lockOptions) (*Lock, error) {
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|noFollow, 0o600)
	if err != nil {
		if st, serr := os.Lstat(path); serr == nil {
			if owner, ok := fileOwner(st); ok && owner != o.uid {
				return nil, &LockOwnerError{Path: path, Owner: owner, User: o.uid}
			}
		}
		return nil, fmt.Errorf("%s: the run directory's lock: %w", dir, err)
	}
	if err := o.acquire(f, path); err != nil {
		f.Close()
		return nil, err
	}
	release, err := holdRoot(dir)
	if err != nil {
		unlockFile(f)
		f.Close()
		return nil, fmt.Errorf("%s: the run directory: %w", dir, err)
	}
	return &Lock{f, release}, nil
}

// acquire takes the lock of f, the lock file at path, as lockRun says.
func (o lockOptions) acquire(f *os.File, path string) error {
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file, where deepprof keeps a run's lock: remove it", path)
	}
	if owner, ok := fileOwner(st); ok && owner != o.uid {
		return &LockOwnerError{Path: path, Owner: owner, User: o.uid}
	}
	if st.Mode().Perm() != 0o600 {
		f.Chmod(0o600) // the user's own, made 0644 by an earlier deepprof
	}
	got, err := tryLockFile(f)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if !got {
		fmt.Fprintf(o.notice, "deepprof: %s is held by %s: waiting for it, %s at most\n", path, holder(f), o.wait)
		deadline := time.Now().Add(o.wait)
		for delay := 10 * time.Millisecond; !got; delay = min(2*delay, 250*time.Millisecond) {
			left := time.Until(deadline)
			if left <= 0 {
				return &LockHeldError{Path: path, Holder: holder(f), Waited: o.wait}
			}
			time.Sleep(min(delay, left))
			if got, err = tryLockFile(f); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
		}
	}
	rec := fmt.Sprintf("%spid %d, uid %d, since %s, %s\n", lockRecord, os.Getpid(), o.uid,
		time.Now().Format(time.RFC3339), strconv.QuoteToASCII(strings.Join(os.Args, " ")))
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(rec), 0) // who holds it: for a writer that waits
	}
	return nil
}

// lockRecord starts what a lock file records of its holder.
const lockRecord = "deepprof lock held by "

// holder is who holds the lock file f, as it records it.
func holder(f *os.File) string {
	b := make([]byte, 512)
	n, _ := f.ReadAt(b, 0)
	line, _, _ := strings.Cut(string(b[:n]), "\n")
	rec, ok := strings.CutPrefix(line, lockRecord)
	if !ok || !utf8.ValidString(rec) || strings.ContainsFunc(rec, unicode.IsControl) {
		return "another process (the lock file records none: a deepprof older than this one, or one just starting)"
	}
	return rec
}

// LockOwnerError is a run's lock file that another user owns: deepprof
// takes no lock that another user could hold.
type LockOwnerError struct {
	Path        string
	Owner, User int // uids
}

func (e *LockOwnerError) Error() string {
	return fmt.Sprintf("%s: the lock file belongs to uid %d, not to you (uid %d), and deepprof takes no lock another user can hold: write elsewhere, or have its owner remove it",
		e.Path, e.Owner, e.User)
}

// LockHeldError is a run's lock that another process held all the while
// LockRun waited.
type LockHeldError struct {
	Path, Holder string
	Waited       time.Duration
}

func (e *LockHeldError) Error() string {
	return fmt.Sprintf("%s: still held after %s by %s: run again once it has ended, or end it (a stopped process holds its lock too)",
		e.Path, e.Waited, e.Holder)
}

// Unlock lets another writer have the run directory.
func (l *Lock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	l.release()
	l.f.Truncate(0) // no longer its holder
	err := unlockFile(l.f)
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f, l.release = nil, nil
	return err
}

// lockOwned holds dir, a folder deepprof writes into for a user, and the
// run directory dir is in (a folder above it that Open takes for a run:
// one holding its RunMark), outer first: a session or a rebuild of that
// run and another writer into dir wait their turn. unlock lets both go.
func lockOwned(dir string) (unlock func(), err error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	var locks []*Lock
	unlock = func() {
		for i := len(locks) - 1; i >= 0; i-- {
			locks[i].Unlock()
		}
	}
	for d := filepath.Dir(abs); ; d = filepath.Dir(d) {
		if isRunDir(d) {
			// Its lock only if it has one: nothing is created outside
			// the folder given.
			if l, err := lockExisting(d); err != nil {
				return nil, err
			} else if l != nil {
				locks = append(locks, l)
			}
			break
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	l, err := LockRun(abs)
	if err != nil {
		unlock()
		return nil, err
	}
	locks = append(locks, l)
	return unlock, nil
}

// isRunDir reports whether dir is a run directory to lock: Open takes it
// (it holds its RunMark).
func isRunDir(dir string) bool {
	_, err := Open(dir)
	return err == nil
}

// lockExisting is LockRun of a run directory that has its lock file; nil
// when it has none (it is not created).
func lockExisting(dir string) (*Lock, error) {
	if st, err := os.Lstat(filepath.Join(dir, LockFile)); err != nil || !st.Mode().IsRegular() {
		return nil, nil
	}
	return LockRun(dir)
}
