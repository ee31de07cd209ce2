package render

import (
	"io"
	"strings"

	"github.com/llm-perf-opt/deepprof/internal/input"
)

// EscapeCell makes text safe inside a GFM table cell, so that it renders as
// the literal text: a backslash goes before each character that CommonMark or
// GFM could read as markup there (cell breaks, code, emphasis, links, images,
// HTML, entities, strikethrough, math), and line breaks become spaces. Other
// punctuation, common in C++ names (: , ( ) .), is left readable. Hidden
// runes render escaped (input.EscapedRune), and a backslash that could read
// as part of such an escape renders as two (input.EscapesBackslash), as a
// name shows on a terminal (input.EscapeName): no name renders as another.
func EscapeCell(text string) string { return escapeCell(text, true) }

// shownCell is EscapeCell for text that holds names already shown
// (input.EscapeName: package compare's lines): their escapes render as they
// read, no backslash doubled.
func shownCell(text string) string { return escapeCell(text, false) }

// escapeCell is EscapeCell, or with backslashes rendered as they are,
// shownCell.
func escapeCell(text string, backslashes bool) string {
	var b strings.Builder
	b.Grow(len(text) + len(text)/8)
	for i, r := range text {
		switch {
		case r == '\n' || r == '\r' || r == '\t':
			b.WriteByte(' ')
		case backslashes && r == '\\' && input.EscapesBackslash(text[i+1:]):
			b.WriteString(`\\\\`) // renders \\
		case r < 0x80 && strings.IndexByte(cellSpecials, byte(r)) >= 0:
			b.WriteByte('\\')
			b.WriteRune(r)
		case input.IsHidden(r):
			// Shown, never acted on: a NUL, a control character or a
			// bidirectional override (U+202E) from a profiled program.
			b.WriteString(input.EscapedRune(r))
		case r == ':' && strings.HasPrefix(text[i:], "://") || r == '.' && i >= 3 && strings.EqualFold(text[i-3:i], "www") && (i == 3 || !isWordByte(text[i-4])) ||
			r == '@' && i > 0 && isWordByte(text[i-1]) && domainFollows(text[i+1:]):
			// A URL or an e-mail address in a kernel or range name stays
			// text: GFM's autolinker (linkify) would make https://...,
			// www.... and a@b.c links. ("LLM@prefill", an NVTX domain, is
			// no address and is left alone.)
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// domainFollows reports whether text starts with a domain name as an
// autolinker reads one: name characters holding a dot followed by more.
func domainFollows(text string) bool {
	n := 0
	for n < len(text) && (isWordByte(text[n]) || text[n] == '.') {
		n++
	}
	d := strings.TrimRight(text[:n], ".")
	return strings.Contains(d, ".")
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// cellSpecials are the characters EscapeCell escapes.
const cellSpecials = "\\`*_[]<>|~&!$#"

// Table is a Markdown table under construction: header, alignment, rows.
type Table struct {
	Header []string
	Right  []bool // right-align column i
	Rows   [][]string
}

// String writes the table. Cells must already be escaped.
func (t Table) String() string {
	var b strings.Builder
	t.write(&b)
	return b.String()
}

// write writes the table to w.
func (t Table) write(w io.StringWriter) {
	t.writeHeader(w)
	for _, r := range t.Rows {
		writeRow(w, r)
	}
}

// writeHeader writes the table's header and alignment lines, which its
// rows follow (writeRow): a table of many rows is written a row at a time.
func (t Table) writeHeader(w io.StringWriter) {
	w.WriteString("| " + strings.Join(t.Header, " | ") + " |\n|")
	for i := range t.Header {
		if i < len(t.Right) && t.Right[i] {
			w.WriteString("---:|")
		} else {
			w.WriteString("---|")
		}
	}
	w.WriteString("\n")
}

// writeRow writes one row of a table, its cells already escaped.
func writeRow(w io.StringWriter, cells []string) {
	w.WriteString("| ")
	for i, c := range cells {
		if i > 0 {
			w.WriteString(" | ")
		}
		w.WriteString(c)
	}
	w.WriteString(" |\n")
}
