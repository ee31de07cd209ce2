package render

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestEscapeCell(t *testing.T) {
	for in, want := range map[string]string{
		"at::native::f<float>(int, T *)": `at::native::f\<float\>(int, T \*)`,
		"a|b":                            `a\|b`,
		`x\`:                             `x\\`,
		"two\nlines":                     "two lines",
		"nvjet_sm90":                     `nvjet\_sm90`,
	} {
		assert.Equal(t, want, EscapeCell(in), in)
	}
}
