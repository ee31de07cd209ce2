package input

import (
	"io"
)

// The helpers below make SYNTHETIC oversize inputs for the tests of capped
// readers: endless zeros, as /dev/zero gives, from an io.Reader or through a
// named pipe where a reader takes a path, never a large file on disk.

// TB is the part of testing.TB the test helpers use (this package links no
// testing into the binaries).
type TB interface {
	Helper()
	Setenv(key, value string)
	Cleanup(func())
	Skipf(format string, args ...any)
	Skip(args ...any)
}

// LimitForTest lowers MaxBytes to n for the test (so that an oversize
// input is quick to make), and puts it back after. MaxBytes is the
// package's, so such a test cannot run in parallel: t.Setenv makes one that
// tries fail at once.
func LimitForTest(t TB, n int64) {
	t.Setenv("DEEPPROF_BOUNDED_MAX_BYTES_LOWERED", "1")
	old := MaxBytes
	MaxBytes = n
	t.Cleanup(func() { MaxBytes = old })
}

// OverLimit is MaxBytes+1 zero bytes: the smallest input over the cap.
func OverLimit() io.Reader { return io.LimitReader(zeros{}, MaxBytes+1) }

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
