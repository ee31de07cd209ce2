package input

import (
	"os"

	"golang.org/x/term"
)

// IsTerminal reports whether f is a terminal: a status line that rewrites
// itself ("\r") is only for those. It asks golang.org/x/term (an ioctl for
// the terminal's settings), so /dev/null and other character devices that
// are not terminals count as none, as do nil, a pipe and a regular file.
func IsTerminal(f *os.File) bool {
	return f != nil && term.IsTerminal(int(f.Fd()))
}
