//go:build unix

package input

import (
	"io"
	"os"
	"syscall"
	"time"
)

// FIFOForTest makes path a named pipe that gives OverLimit() to the first reader that
// opens it: an oversize file that is not on disk, for readers that take a
// path.
func FIFOForTest(t TB, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skipf("no named pipe: %v", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		io.Copy(f, OverLimit()) // EPIPE when the reader stops at the cap
		f.Close()
	}()
	t.Cleanup(func() {
		// A reader that never came: open the pipe, and close it, until
		// the writer has gone (its open returns, its write fails).
		for {
			r, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
			select {
			case <-done:
			case <-time.After(10 * time.Millisecond):
			}
			if err == nil {
				r.Close()
			}
			select {
			case <-done:
				return
			default:
			}
		}
	})
}
