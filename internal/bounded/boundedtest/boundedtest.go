// Package boundedtest makes SYNTHETIC oversize inputs for the tests of
// readers capped by package bounded: endless zeros, as /dev/zero gives,
// from an io.Reader or through a named pipe where a reader takes a path,
// never a large file on disk.
package boundedtest

import (
	"io"
	"testing"

	"github.com/llm-perf-opt/deepprof/internal/bounded"
)

// Limit lowers bounded.MaxBytes to n for the test (so that an oversize
// input is quick to make), and puts it back after. MaxBytes is the
// package's, so such a test cannot run in parallel: t.Setenv makes one that
// tries fail at once.
func Limit(t testing.TB, n int64) {
	t.Setenv("DEEPPROF_BOUNDED_MAX_BYTES_LOWERED", "1")
	old := bounded.MaxBytes
	bounded.MaxBytes = n
	t.Cleanup(func() { bounded.MaxBytes = old })
}

// Over is bounded.MaxBytes+1 zero bytes: the smallest input over the cap.
func Over() io.Reader { return io.LimitReader(zeros{}, bounded.MaxBytes+1) }

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
