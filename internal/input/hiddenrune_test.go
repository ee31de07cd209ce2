package input

import "testing"

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
