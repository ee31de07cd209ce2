package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/term"

	"github.com/llm-perf-opt/deepprof/harness"
)

// formatHelp is the --format flag's help of kernels and regions.
const formatHelp = "output `format`: text (aligned plain text as wide as the terminal, 120 columns when it does not say, long names cut; the default), md (Markdown, names whole; the default into a file named *.md), json (the %s contract) or csv (RFC 4180, a header row, names whole, numbers unrounded: for pandas)"

// tableFormat checks a --format value ("" picks by stdout: text on a
// terminal, md otherwise) and returns the one to use; csv only where the
// command writes one (csv).
func tableFormat(format string, stdout io.Writer, csv ...bool) (string, error) {
	formats := []string{"text", "md", "json"}
	if len(csv) > 0 && csv[0] {
		formats = append(formats, "csv")
	}
	if format == "" {
		// Markdown where it is asked for, or into a file named *.md; a
		// plain table everywhere else, a pipe included.
		if f, ok := stdout.(*os.File); ok && strings.EqualFold(filepath.Ext(fileName(f)), ".md") && !isTerminal(f) {
			return "md", nil
		}
		return "text", nil
	}
	if slices.Contains(formats, format) {
		return format, nil
	}
	msg := fmt.Sprintf("--format %q: must be %s or %s", format, strings.Join(formats[:len(formats)-1], ", "), formats[len(formats)-1])
	if c := harness.Suggest(format, formats); c != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", c)
	}
	return "", &usageError{msg}
}

// isTerminal reports whether f is a terminal (golang.org/x/term's ioctl
// for its settings): /dev/null, a pipe and a file are none.
func isTerminal(f *os.File) bool { return f != nil && term.IsTerminal(int(f.Fd())) }

// fileName is the name of the file f is open on: where the shell's
// redirection put stdout (os.Stdout is named /dev/stdout whatever it is),
// else the name f was opened with.
func fileName(f *os.File) string {
	if p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd()))); err == nil {
		return p
	}
	return f.Name()
}

// tableOptions are the harness's table options of format f written to
// stdout: plain text as wide as stdout's terminal.
func tableOptions(f string, stdout io.Writer) harness.TableOptions {
	return harness.TableOptions{Format: f, Width: terminalWidth(stdout)}
}

// MinTextWidth is the narrowest a terminal's width is taken to be: below
// it, tables would be all cut names.
const MinTextWidth = 60

// terminalWidth is the width of the terminal stdout is, in cells
// (golang.org/x/term's ioctl, already the progress line's), at least
// MinTextWidth; harness.DefaultWidth when stdout is not a terminal or
// does not say.
func terminalWidth(stdout io.Writer) int {
	f, ok := stdout.(*os.File)
	if !ok || !isTerminal(f) {
		return harness.DefaultWidth
	}
	w, _, err := term.GetSize(int(f.Fd()))
	if err != nil || w <= 0 {
		return harness.DefaultWidth
	}
	return max(w, MinTextWidth)
}
