package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
)

// Issue 16: names from a profiled program (SYNTHETIC here) rendered by a
// GFM renderer with its autolinker: no link, no raw control or bidi
// character, the text still readable.
func TestHostileNamesRenderAsText(t *testing.T) {
	md := goldmark.New(goldmark.WithExtensions(extension.GFM))
	for _, c := range []struct{ name, shown string }{
		{"kernel_https://evil.example/x", "kernel_https://evil.example/x"},
		{"see www.evil.example now", "see www.evil.example now"},
		{"mail me@evil.example", ""}, // checked for <a only
		{"rev\u202eersed", `rev\u202eersed`},
		{"nul\x00byte", `nul\u0000byte`},
		{"bell\x07", `bell\u0007`},
		{"iso\u2066late\u2069", `iso\u2066late\u2069`},
		{"sm90_xmma_gemm_bf16 (www-like, not a URL)", "sm90_xmma_gemm_bf16 (www-like, not a URL)"},
	} {
		src := "| name |\n|---|\n| " + EscapeCell(c.name) + " |\n"
		var out bytes.Buffer
		require.NoError(t, md.Convert([]byte(src), &out))
		html := out.String()
		assert.NotContains(t, html, "<a ", "%q became a link: %s", c.name, html)
		for _, r := range "\u202e\u2066\u2069\x00\x07" {
			assert.False(t, strings.ContainsRune(html, r), "%q: a raw %U in %s", c.name, r, html)
		}
		if c.shown != "" {
			assert.Contains(t, html, c.shown, "%q reads as itself", c.name)
		}
	}
}
