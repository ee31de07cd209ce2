package input

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestWrap(t *testing.T) {
	s := "the quick brown fox jumps over the lazy dog α β"
	got := Wrap(s, 10, 14, "    ")
	assert.Equal(t, "the quick\n    brown fox\n    jumps over\n    the lazy\n    dog α β", got)
	for i, line := range strings.Split(got, "\n") {
		limit := 14
		if i == 0 {
			limit = 10
		}
		assert.LessOrEqual(t, utf8.RuneCountInString(line), limit, line)
	}
	assert.Equal(t, "a\nsupercalifragilistic\nb", Wrap("a supercalifragilistic b", 5, 5, ""), "a longer word stands alone")
	assert.Equal(t, "", Wrap("  ", 5, 5, ""))
}
