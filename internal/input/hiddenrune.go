// The characters of a profiled program's names that a reader cannot see
// or that reorder the text around them, and how they are shown.

package input

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// IsHidden reports C0 and C1 control characters, DEL, the bidirectional marks,
// embeddings, overrides and isolates (U+061C, U+200E, U+200F,
// U+202A–U+202E, U+2066–U+2069), the zero-width and invisible characters
// that make two names print alike or carry hidden text (U+200B–U+200D,
// U+2060–U+2064, U+FEFF, the soft hyphen U+00AD, the combining grapheme
// joiner U+034F, the Mongolian vowel separator U+180E, the variation
// selectors U+FE00–U+FE0F and U+E0100–U+E01EF, the Hangul fillers U+115F,
// U+1160, U+3164 and U+FFA0, the tag characters U+E0000–U+E007F) and the
// line and paragraph separators (U+2028, U+2029).
func IsHidden(r rune) bool {
	switch {
	case r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0:
		return true
	case r == 0x061c || r == 0x200e || r == 0x200f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069:
		return true
	case r >= 0x200b && r <= 0x200d || r >= 0x2060 && r <= 0x2064 || r == 0xfeff || r == 0x2028 || r == 0x2029:
		return true
	case r == 0x00ad || r == 0x034f || r == 0x180e || r >= 0xfe00 && r <= 0xfe0f || r >= 0xe0100 && r <= 0xe01ef:
		return true
	case r == 0x115f || r == 0x1160 || r == 0x3164 || r == 0xffa0 || r >= 0xe0000 && r <= 0xe007f:
		return true
	}
	return false
}

// EscapedRune is how a hidden rune is shown, as a Go string literal
// escapes it: \u202e, and past U+FFFF \U000e0041 (a tag character), never
// \ue0041, which reads as U+E004 and a "1".
func EscapedRune(r rune) string {
	if r > 0xffff {
		return fmt.Sprintf(`\U%08x`, r)
	}
	return fmt.Sprintf(`\u%04x`, r)
}

// EscapesBackslash reports whether a backslash that rest follows is shown
// escaped, \\: where what follows it could read as the rest of an escape
// (u, U, x, another backslash) or is shown escaped itself (a hidden rune,
// a byte that is not UTF-8). Then every shown text reads back one way: a
// name holding the six characters \u0007 never shows as one holding
// U+0007. Elsewhere a backslash is shown as it is (a name such as
// LLM\@decode, ncu's spelling of an @ in a range name, is unchanged).
func EscapesBackslash(rest string) bool {
	if rest == "" {
		return false
	}
	switch rest[0] {
	case '\\', 'u', 'U', 'x':
		return true
	}
	r, _ := utf8.DecodeRuneInString(rest)
	return r == utf8.RuneError || IsHidden(r)
}

// EscapeName is how a name from a profiled program (a kernel's, a range's,
// a process's) is shown on a terminal, in a log or a CSV cell: each hidden
// rune escaped (EscapedRune), each byte that is not UTF-8 written \xff and
// a backslash that could read as part of an escape written \\
// (EscapesBackslash). A name can neither hide, reorder nor break the line
// of the message around it, nor show as another name. A name with none of
// these is returned as it is.
func EscapeName(s string) string { return escape(s, true) }

// EscapeHidden is s with each hidden rune escaped (EscapedRune) and each
// byte that is not UTF-8 written \xff, its backslashes as they are: text
// for a terminal or a log that may hold names already shown (EscapeName)
// or quoted (%q), such as a message, whose escapes it keeps as they read.
func EscapeHidden(s string) string { return escape(s, false) }

// escape is EscapeName, or with backslashes left as they are,
// EscapeHidden.
func escape(s string, backslashes bool) string {
	clean := true
	for i, r := range s {
		if IsHidden(r) || r == utf8.RuneError || backslashes && r == '\\' && EscapesBackslash(s[i+1:]) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case IsHidden(r):
			b.WriteString(EscapedRune(r))
		case backslashes && r == '\\' && EscapesBackslash(s[i+1:]):
			b.WriteString(`\\`)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// ValidName is a name read from a tool's output as valid UTF-8: each byte
// that is not UTF-8 written as the text \xff, so that names differing in
// such a byte stay distinct (encoding/json and the renderers would make
// each one U+FFFD, and two names one). Valid UTF-8 is returned as it is.
func ValidName(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			fmt.Fprintf(&b, `\x%02x`, s[i])
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}
