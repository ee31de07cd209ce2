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
