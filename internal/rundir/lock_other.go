//go:build !unix

package rundir

import (
	"io/fs"
	"os"
)

// Without flock, one writer at a time is not enforced.
const noFollow = 0

func tryLockFile(*os.File) (bool, error) { return true, nil }
func unlockFile(*os.File) error          { return nil }

// fileOwner: no owner to compare.
func fileOwner(fs.FileInfo) (int, bool) { return 0, false }

const nonBlock = 0
