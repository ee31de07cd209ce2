package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/llm-perf-opt/deepprof/internal/input"

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

// TestBackslashNamesShowApart (issue 53): of two names, one holding a
// control character and one holding the backslash and letters that read
// like its escape, each renderer shows two different names: the terminal
// (Markdown rendered as text), the HTML (Markdown rendered by a GFM
// renderer), a CSV cell and a chart's label. A backslash nothing reads
// as an escape (ncu's LLM\@decode) shows as itself.
func TestBackslashNamesShowApart(t *testing.T) {
	md := goldmark.New(goldmark.WithExtensions(extension.GFM))
	html := func(name string) string {
		var out bytes.Buffer
		require.NoError(t, md.Convert([]byte("| name |\n|---|\n| "+EscapeCell(name)+" |\n"), &out))
		return out.String()
	}
	terminal := func(name string) string { return Text([]byte("| name |\n|---|\n| " + EscapeCell(name) + " |\n")) }
	for _, c := range [][2]string{
		{"bell\x07", `bell\u0007`},
		{"a\x01b", `a\u0001b`},
		{"tag\U000e0041", `tag\U000e0041`},
		{"\\\x07", `\\u0007`},
	} {
		real, literal := c[0], c[1]
		assert.NotEqual(t, html(real), html(literal), "HTML: %q and %q", real, literal)
		assert.NotEqual(t, terminal(real), terminal(literal), "terminal: %q and %q", real, literal)
		assert.NotEqual(t, csvText(real), csvText(literal), "CSV: %q and %q", real, literal)
		assert.NotEqual(t, display(real, 40), display(literal, 40), "chart: %q and %q", real, literal)
	}
	assert.Contains(t, html(`bell\u0007`), `bell\\u0007`)
	assert.Contains(t, terminal(`bell\u0007`), `bell\\u0007`)
	assert.Contains(t, terminal("bell\x07"), `bell\u0007`)
	// A line holding names already shown (package compare's regression
	// lines) renders as it reads: no shown escape doubled.
	line := "kernel " + input.EscapeName("bell\x07") + " and kernel " + input.EscapeName(`bell\u0007`)
	assert.Contains(t, Text([]byte("- "+shownCell(line)+"\n")), `kernel bell\u0007 and kernel bell\\u0007`)
	for _, name := range []string{`LLM\@decode_all`, `a\/b`} {
		assert.Contains(t, html(name), name, "shown as itself")
		assert.Contains(t, terminal(name), name, "shown as itself")
		assert.Equal(t, name, csvText(name))
		assert.Equal(t, name, display(name, 40))
	}
}
