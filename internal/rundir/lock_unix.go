//go:build unix

package rundir

import (
	"os"
	"syscall"
)

const noFollow = syscall.O_NOFOLLOW

func lockFile(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			return err
		}
	}
}

func unlockFile(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }

// nonBlock opens a named pipe without waiting for its writer.
const nonBlock = syscall.O_NONBLOCK
