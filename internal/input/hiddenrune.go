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

// EscapeHidden is s with each hidden rune escaped (EscapedRune) and each byte that
// is not UTF-8 written \xff: text for a terminal or a log, where a name
// can neither hide, reorder nor break the line of the message around it.
func EscapeHidden(s string) string {
	clean := true
	for _, r := range s {
		if IsHidden(r) || r == utf8.RuneError {
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
