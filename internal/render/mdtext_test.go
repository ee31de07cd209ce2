package render

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/input"
)

// TestKernelsMarkdown: a recorded run's kernels.md as a terminal shows it:
// names as the program wrote them (no Markdown escapes), columns aligned.
func TestKernelsMarkdown(t *testing.T) {
	src, err := os.ReadFile("../../fixtures/runs/llama3-8b-roofline/kernels.md")
	require.NoError(t, err)
	out := Render(src)
	assert.NotContains(t, out, `\_`)
	assert.NotContains(t, out, `\<`)
	assert.NotContains(t, out, "|")
	assert.Contains(t, out, "void at::elementwise_kernel<128, 4,")
	lines := strings.Split(out, "\n")
	var head, rule string
	for i, l := range lines {
		if strings.HasPrefix(l, "kernel_name") {
			head, rule = l, lines[i+1]
			break
		}
	}
	require.NotEmpty(t, head)
	assert.Regexp(t, `^-+  -+  -+  -+  -+$`, rule)
	// total_ms is right-aligned: every row's value ends where the heading's column ends.
	end := strings.Index(head, "total_ms") + len("total_ms")
	for _, l := range lines {
		if strings.HasPrefix(l, "nvjet_sm90_tst_64x8_64x16_2x1_v_bz_TNT ") {
			assert.Equal(t, "16.888", strings.TrimSpace(l[end-6:end]), l)
		}
	}
}

func TestRenderBlocks(t *testing.T) {
	got := Render([]byte("# T\n\nA \\<b\\> `c`.\n\n1. one\n2. two\n\n| a | n |\n|---|---:|\n| x\\_y | 1 |\n| zz | 100 |\n"))
	assert.Equal(t, "T\n=\n\nA <b> c.\n\n1. one\n2. two\n\na      n\n---  ---\nx_y    1\nzz   100\n", got)
}

func TestLongCellsAreCut(t *testing.T) {
	long := strings.Repeat("x", 150)
	got := Render([]byte("| name | n |\n|---|---:|\n| " + long + " | 1 |\n"))
	assert.Contains(t, got, strings.Repeat("x", MaxCell-1)+"…  1")
	assert.NotContains(t, got, strings.Repeat("x", MaxCell))
}

// TestRenderWidth (issue 38): text as wide as the terminal, in display
// cells: a recorded run's kernel table fits 80 and 200 columns (a word
// longer than a line aside), its summary 200, and at 80 the summary's
// widest line is narrower than at 120 (a table of many number columns
// cannot be cut to 80: only names are cut); a name of East Asian wide
// runes takes two cells a rune, its table still aligned.
func TestRenderWidth(t *testing.T) {
	widest := func(text string) (w int) {
		for _, line := range strings.Split(text, "\n") {
			w = max(w, input.Width(line))
		}
		return w
	}
	fits := func(f string, src []byte, w int) {
		for i, line := range strings.Split(RenderWidth(src, w), "\n") {
			if input.Width(line) > w && strings.Contains(strings.TrimSpace(line), " ") {
				t.Errorf("%s at %d columns, line %d is %d cells: %q", f, w, i+1, input.Width(line), line)
			}
		}
	}
	const run = "../../fixtures/runs/h200-default-tiny-llama/"
	kernels, err := os.ReadFile(run + "kernels.md")
	require.NoError(t, err)
	fits("kernels.md", kernels, 80)
	fits("kernels.md", kernels, 200)
	sum, err := os.ReadFile(run + "stakeholder_summary.md")
	require.NoError(t, err)
	fits("stakeholder_summary.md", sum, 200)
	assert.Less(t, widest(RenderWidth(sum, 80)), widest(RenderWidth(sum, 120)))

	out := RenderWidth([]byte("| name | ms |\n| --- | ---: |\n| 注意力 | 1.5 |\n| abc | 22.5 |\n"), 80)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 4)
	assert.Equal(t, input.Width(lines[2]), input.Width(lines[3]), "the columns align in cells: %q", out)
	assert.Equal(t, 6, input.Width("注意力"))
}
