//go:build unix

package rundir

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

const noFollow = syscall.O_NOFOLLOW

// tryLockFile takes f's exclusive lock if no other open file holds it,
// and reports whether it did.
func tryLockFile(f *os.File) (bool, error) {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, syscall.EWOULDBLOCK):
			return false, nil
		case err != syscall.EINTR:
			return false, err
		}
	}
}

func unlockFile(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }

// fileOwner is the uid that owns the file of st.
func fileOwner(st fs.FileInfo) (int, bool) {
	s, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(s.Uid), true
}

// nonBlock opens a named pipe without waiting for its writer.
const nonBlock = syscall.O_NONBLOCK
