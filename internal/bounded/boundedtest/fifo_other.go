//go:build !unix

package boundedtest

import "testing"

// FIFO skips the test: named pipes are a Unix thing.
func FIFO(t testing.TB, path string) { t.Skip("no named pipes on this system") }
