//go:build !unix

package rundir

import "os"

// Without flock, one writer at a time is not enforced.
const noFollow = 0

func lockFile(*os.File) error   { return nil }
func unlockFile(*os.File) error { return nil }

const nonBlock = 0
