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

// Lock is a run directory held by this process (LockRun).
type Lock struct{ f *os.File }

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
	return &Lock{f}, nil
}

// Unlock lets another writer have the run directory.
func (l *Lock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := unlockFile(l.f)
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	return err
}

// lockOwned holds dir, a folder deepprof writes into for a user, and the
// run directory dir is in (dir itself or a folder above it that holds a
// manifest.json or a LockFile), outer first: a session or a rebuild of that
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
			l, err := LockRun(d)
			if err != nil {
				return nil, err
			}
			locks = append(locks, l)
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

// isRunDir reports whether dir looks like a run directory to lock: it
// holds a manifest.json or a LockFile.
func isRunDir(dir string) bool {
	for _, n := range []string{ManifestJSON, LockFile} {
		if st, err := os.Lstat(filepath.Join(dir, n)); err == nil && st.Mode().IsRegular() {
			return true
		}
	}
	return false
}
