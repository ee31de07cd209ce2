// What a command line needs beside the commands: the wording of names,
// suggestions and help.

package harness

import "github.com/llm-perf-opt/deepprof/internal/input"

// Suggest is the one of candidates a mistyped s was most likely meant to
// be ("" when none is close): the did-you-mean of flags, commands and
// formats, the same as the profile's keys get.
func Suggest(s string, candidates []string) string { return input.Suggest(s, candidates) }

// Wrap breaks s at spaces into lines of a terminal: the first holds at
// most first display cells, each later one starts with indent and holds
// at most width cells.
func Wrap(s string, first, width int, indent string) string {
	return input.Wrap(s, first, width, indent)
}

// EscapeHidden is s with each rune that would hide or reorder text on a
// terminal escaped (\u202e) and each byte that is not UTF-8 written \xff:
// for a message that holds a name from a profiled program or a file.
func EscapeHidden(s string) string { return input.EscapeHidden(s) }
