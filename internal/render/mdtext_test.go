package render

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
