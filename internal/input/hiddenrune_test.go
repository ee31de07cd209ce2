package input

import (
	"strconv"
	"strings"
	"testing"
)

func TestIs(t *testing.T) {
	for _, r := range []rune{0, 7, 0x1b, 0x7f, 0x85, 0x202e, 0x2066, 0x200f, 0x200b, 0x200d, 0x2060, 0xfeff, 0x2028, 0x2029} {
		if !IsHidden(r) {
			t.Errorf("%U is hidden", r)
		}
	}
	for _, r := range []rune{' ', 'a', 'é', '…', 0xfffd, 0x2070} {
		if IsHidden(r) {
			t.Errorf("%U is not hidden", r)
		}
	}
	for r, want := range map[rune]string{0x202e: `\u202e`, 0: `\u0000`, 0xe0041: `\U000e0041`, 0xe01ef: `\U000e01ef`} {
		if got := EscapedRune(r); got != want {
			t.Errorf("EscapedRune(%U) = %s, want %s", r, got, want)
		}
	}
}

func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
		"gemm_bf16":             "gemm_bf16",
		"rev\u202eersed":        `rev\u202eersed`,
		"nul\x00\nline":         `nul\u0000\u000aline`,
		"bad\xffutf8":           `bad\xffutf8`,
		"replacement \ufffd ok": "replacement \ufffd ok",
		"é…":                    "é…",
	} {
		if got := EscapeHidden(in); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestEscapeTellsBackslashesApart (issue 53): a name holding a backslash
// and letters that read like an escape (typed as text: \u0007, \n, \xff,
// \\) never shows as a name holding the character it reads as; a backslash
// that nothing could read as an escape is shown as it is.
func TestEscapeTellsBackslashesApart(t *testing.T) {
	for _, c := range []struct{ real, literal, realShown, literalShown string }{
		{"bell\x07", `bell\u0007`, `bell\u0007`, `bell\\u0007`},
		{"a\nb", `a\u000ab`, `a\u000ab`, `a\\u000ab`},
		{"my\U000e0041name", `my\U000e0041name`, `my\U000e0041name`, `my\\U000e0041name`},
		{"bad\xff", `bad\xff`, `bad\xff`, `bad\\xff`},
		{"\\\x07", `\\u0007`, `\\\u0007`, `\\\\u0007`}, // a backslash before a hidden rune, and two before letters
	} {
		real, literal := EscapeName(c.real), EscapeName(c.literal)
		if real != c.realShown || literal != c.literalShown {
			t.Errorf("EscapeName(%q), EscapeName(%q) = %s, %s; want %s, %s", c.real, c.literal, real, literal, c.realShown, c.literalShown)
		}
		if real == literal {
			t.Errorf("%q and %q show alike: %s", c.real, c.literal, real)
		}
		// A message holding the shown names keeps them as they read.
		if EscapeHidden(real) != real || EscapeHidden(literal) != literal {
			t.Errorf("EscapeHidden changes the shown names %s, %s", real, literal)
		}
	}
	for _, s := range []string{`LLM\@decode_all`, `step: 1 "quoted" \/ a\@b`, `C:\dir\name`, `trailing\`} {
		if got := EscapeName(s); got != s {
			t.Errorf("EscapeName(%q) = %q: a backslash nothing reads as an escape is shown as it is", s, got)
		}
	}
}

// FuzzEscapeNameReadsBack (issue 53): every shown name reads back as the
// name, so no two names show alike.
func FuzzEscapeNameReadsBack(f *testing.F) {
	for _, s := range []string{"gemm_bf16", "rev\u202eersed", `a\u0007`, "a\x07", "\\\x07", `\\`, `\`, "bad\xff", `\xff`, "\\\xff", "x\\\ufffd", `LLM\@decode`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		shown := EscapeName(s)
		if back := unescapeShown(t, shown); back != s {
			t.Fatalf("%q shows as %s, which reads back as %q", s, shown, back)
		}
	})
}

// unescapeShown reads a text EscapeName wrote back: \\ a backslash,
// \uXXXX and \UXXXXXXXX a rune, \xXX a byte, any other backslash itself.
func unescapeShown(t *testing.T, s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			i++
			continue
		}
		width := map[byte]int{'u': 4, 'U': 8, 'x': 2}[s[i+1]]
		switch {
		case s[i+1] == '\\':
			b.WriteByte('\\')
			i += 2
		case width > 0:
			if i+2+width > len(s) {
				t.Fatalf("%s: an escape cut short at %d", s, i)
			}
			v, err := strconv.ParseUint(s[i+2:i+2+width], 16, 32)
			if err != nil {
				t.Fatalf("%s: %v", s, err)
			}
			if s[i+1] == 'x' {
				b.WriteByte(byte(v))
			} else {
				b.WriteRune(rune(v))
			}
			i += 2 + width
		default:
			b.WriteByte('\\')
			i++
		}
	}
	return b.String()
}
