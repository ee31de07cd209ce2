package rundir

import (
	"fmt"
	"os"
	"path/filepath"
)

// LockFile is the file in a run directory that one writer at a time holds
// (a deepprof report, a session): two rebuilds of one run at once would
// remove each other's files.
const LockFile = ".deepprof.lock"

// Lock is a run directory held by this process (LockRun). While it is
// held, the run's folder stays open (holdRoot): the reads and writes inside
// it do not open it again each.
type Lock struct {
	f       *os.File
	release func()
}

// LockRun holds the run directory dir for this process, waiting while
// another holds it. The lock file is opened without following a link.
func LockRun(dir string) (*Lock, error) {
	f, err := os.OpenFile(filepath.Join(dir, LockFile), os.O_RDWR|os.O_CREATE|noFollow, 0o644)
	if err != nil {
		return nil, fmt.Errorf("%s: the run directory's lock: %w", dir, err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: the run directory's lock: %w", dir, err)
	}
	release, err := holdRoot(dir)
	if err != nil {
		unlockFile(f)
		f.Close()
		return nil, fmt.Errorf("%s: the run directory: %w", dir, err)
	}
	return &Lock{f, release}, nil
}

// Unlock lets another writer have the run directory.
func (l *Lock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	l.release()
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
