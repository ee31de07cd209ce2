package input

import "strings"

// Wrap breaks s at spaces into lines for a terminal: the first line holds
// at most first display cells (an East Asian wide rune counts two), each
// later one starts with indent and holds at most width cells, indent
// included; a word longer than its line stands alone on it. Runs of spaces
// become one.
func Wrap(s string, first, width int, indent string) string {
	var b strings.Builder
	limit, n := first, 0
	for i, word := range strings.Fields(s) {
		w := Width(word)
		if i > 0 {
			if n+1+w > limit {
				b.WriteString("\n" + indent)
				limit, n = width, Width(indent)
			} else {
				b.WriteByte(' ')
				n++
			}
		}
		b.WriteString(word)
		n += w
	}
	return b.String()
}
