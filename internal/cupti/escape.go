package cupti

import (
	"errors"
	"strings"
)

// unescape decodes a string field: \\ \t \n \r, nothing else. A raw CR, a
// backslash before any other byte, or a lone backslash at the end is an
// error.
func unescape(b []byte) (string, error) {
	i := indexEscape(b)
	if i < 0 {
		return string(b), nil
	}
	var sb strings.Builder
	sb.Grow(len(b))
	sb.Write(b[:i])
	for ; i < len(b); i++ {
		c := b[i]
		switch c {
		case '\r':
			return "", errors.New("raw CR in a string field (CR is written \\r; CRLF line endings are not the format's)")
		case '\\':
			if i+1 >= len(b) {
				return "", errors.New("string field ends in a lone backslash")
			}
			i++
			switch b[i] {
			case '\\':
				sb.WriteByte('\\')
			case 't':
				sb.WriteByte('\t')
			case 'n':
				sb.WriteByte('\n')
			case 'r':
				sb.WriteByte('\r')
			default:
				return "", errors.New("bad escape \\" + printable(b[i]) + " in a string field (only \\\\ \\t \\n \\r are escapes)")
			}
		default:
			sb.WriteByte(c)
		}
	}
	return sb.String(), nil
}

// indexEscape is the index of the first '\\' or '\r' in b, or -1.
func indexEscape(b []byte) int {
	for i, c := range b {
		if c == '\\' || c == '\r' {
			return i
		}
	}
	return -1
}

func printable(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return string(rune(c))
	}
	return "x" + string("0123456789abcdef"[c>>4]) + string("0123456789abcdef"[c&15])
}

// appendEscaped appends s escaped as a string field.
func appendEscaped(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			dst = append(dst, '\\', '\\')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		default:
			dst = append(dst, c)
		}
	}
	return dst
}
