//go:build unix

package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/creack/pty"
	"github.com/mattn/go-runewidth"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWidthUnderATerminal (issue 38): printed to a terminal, kernels'
// text takes the terminal's width (golang.org/x/term's ioctl): on a
// pseudo-terminal of 80 columns no line is wider than 80 cells (the names
// column cut), and on one of 200 the table is as wide as its names need
// (113 cells here), within 200.
func TestWidthUnderATerminal(t *testing.T) {
	t.Parallel()
	const export = "../../fixtures/runs/cupti-llama3-8b-4l/ncu/raw.csv.gz"
	widest := map[int]int{}
	for _, cols := range []int{80, 200} {
		ptm, pts, err := pty.Open()
		require.NoError(t, err)
		require.NoError(t, pty.Setsize(ptm, &pty.Winsize{Rows: 50, Cols: uint16(cols)}))
		var got bytes.Buffer
		done := make(chan struct{})
		go func() {
			io.Copy(&got, ptm) // until the terminal's other end closes
			close(done)
		}()
		var errOut bytes.Buffer
		err = run([]string{"kernels", "--format", "text", export}, nil, pts, &errOut)
		pts.Close()
		<-done
		ptm.Close()
		require.NoError(t, err, errOut.String())
		out := strings.ReplaceAll(got.String(), "\r\n", "\n") // the terminal's line discipline
		require.Contains(t, out, "ms", "the kernel table")
		for i, line := range strings.Split(out, "\n") {
			w := runewidth.StringWidth(line)
			assert.LessOrEqual(t, w, cols, "%d columns: line %d is %d cells: %q", cols, i+1, w, line)
			widest[cols] = max(widest[cols], w)
		}
	}
	assert.Greater(t, widest[200], 80, "a wide terminal gets the whole table: %v", widest)
	assert.GreaterOrEqual(t, widest[80], 70, "a narrow one is filled, not left at the narrowest: %v", widest)
}

// TestDefaultFormat (issue 38): with no --format, tables are plain text,
// into a pipe too; Markdown only into a file named *.md.
func TestDefaultFormat(t *testing.T) {
	t.Parallel()
	var buf strings.Builder
	f, err := tableFormat("", &buf)
	require.NoError(t, err)
	assert.Equal(t, "text", f, "a pipe or buffer")
	for name, want := range map[string]string{"report.md": "md", "REPORT.MD": "md", "report.txt": "text", "report": "text"} {
		file, err := os.Create(filepath.Join(t.TempDir(), name))
		require.NoError(t, err)
		f, err := tableFormat("", file)
		require.NoError(t, err)
		assert.Equal(t, want, f, name)
		// as the shell hands it over: named /dev/stdout, open on the file
		if _, err := os.Stat("/proc/self/fd"); err == nil {
			fd, err := syscall.Dup(int(file.Fd()))
			require.NoError(t, err)
			stdout := os.NewFile(uintptr(fd), "/dev/stdout")
			f, err = tableFormat("", stdout)
			stdout.Close()
			require.NoError(t, err)
			assert.Equal(t, want, f, "%s as stdout", name)
		}
		file.Close()
	}
}
