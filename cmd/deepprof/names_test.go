package main

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/input"
)

// hiddenInNames are the invisible characters that make two names print
// alike, each with how deepprof shows it (issue 53).
var hiddenInNames = []struct{ r, shown string }{
	{"\u2061", `\u2061`}, {"\u2062", `\u2062`}, {"\u2063", `\u2063`}, {"\u2064", `\u2064`},
	{"\u00ad", `\u00ad`}, {"\u034f", `\u034f`}, {"\u180e", `\u180e`}, {"\ufe0f", `\ufe0f`},
	{"\u3164", `\u3164`}, {"\u200b", `\u200b`}, {"\u202e", `\u202e`},
	{"\U000e0041", `\U000e0041`}, {"\U000e007f", `\U000e007f`}, {"\U000e0100", `\U000e0100`},
}

// TestNamesPrintApart (issue 53): kernel and NVTX range names that differ
// only by an invisible character print differently on the terminal, in
// deepprof kernels and deepprof regions (text and Markdown), and names
// holding terminal escape sequences (a window title, a screen clear, an
// OSC 8 link, a C1 CSI) reach it as text: no ESC byte, no hidden rune.
// The input is SYNTHETIC: a recorded export with kernels and ranges
// renamed.
func TestNamesPrintApart(t *testing.T) {
	t.Parallel()
	kernels := []string{"gemm_kernel"}
	for _, h := range hiddenInNames {
		kernels = append(kernels, "gemm"+h.r+"_kernel")
	}
	kernels = append(kernels, "\x1b]0;owned\x07k\x1b[2J", "\x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\", "k\u009b2J", "k\x1b[31m")
	ranges := []string{"decodestep", "decode\x1b]0;t\x07step", "decode\x1b[2Jstep"}
	for _, h := range hiddenInNames[:6] {
		ranges = append(ranges, "decode"+h.r+"step")
	}

	rows := readCSV(t, "../../fixtures/ncu/h200-llama-decode-basic/raw.csv")
	kcol := slices.Index(rows[0], "Kernel Name")
	ncol := slices.Index(rows[0], "thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg")
	require.True(t, kcol >= 0 && ncol >= 0)
	renamed := map[string]string{}
	for i, r := range rows[2:] {
		if _, ok := renamed[r[kcol]]; !ok && len(renamed) < len(kernels) {
			renamed[r[kcol]] = kernels[len(renamed)]
		}
		if n, ok := renamed[r[kcol]]; ok {
			r[kcol] = n
		}
		require.Contains(t, r[ncol], ":decode_step:")
		r[ncol] = strings.Replace(r[ncol], ":decode_step:", ":"+ranges[i%len(ranges)]+":", 1)
	}
	require.Len(t, renamed, len(kernels), "the export has a kernel for each name")
	export := filepath.Join(t.TempDir(), "raw.csv")
	writeCSV(t, export, rows)

	for _, args := range [][]string{{"kernels"}, {"kernels", "--format", "md"}, {"regions"}, {"regions", "--format", "md"}} {
		out, _, err := runCmd(append(args, export), "")
		require.NoError(t, err, "%v", args)
		what := strings.Join(args, " ")
		assert.NotContains(t, out, "\x1b", what)
		assert.NotContains(t, out, "\x07", what)
		for _, r := range out {
			if r != '\n' && input.IsHidden(r) {
				t.Errorf("%s: %U reaches the terminal", what, r)
			}
		}
		if len(args) > 1 {
			continue // Markdown: held to the same escaping by the above
		}
		tables := textTables(out)
		require.NotEmpty(t, tables, what)
		for _, tab := range tables {
			seen := map[string]int{}
			for i, name := range tab.names {
				if j, dup := seen[name]; dup {
					t.Errorf("%s: rows %d and %d of the %q table print alike: %q", what, j+1, i+1, tab.header, name)
				}
				seen[name] = i
			}
		}
		names := tables[0].names
		if args[0] == "kernels" {
			assert.Contains(t, names, "gemm_kernel")
			for _, h := range hiddenInNames {
				assert.Contains(t, names, "gemm"+h.shown+"_kernel", "%s: U+%X shown", what, []rune(h.r)[0])
			}
			assert.Contains(t, names, `\u001b]0;owned\u0007k\u001b[2J`)
			assert.Contains(t, names, `k\u009b2J`)
			continue
		}
		want := []string{"decode_all/decodestep", `decode_all/decode\u001b]0;t\u0007step`, `decode_all/decode\u001b[2Jstep`}
		for _, h := range hiddenInNames[:6] {
			want = append(want, "decode_all/decode"+h.shown+"step")
		}
		var regionNames []string
		for _, tab := range tables {
			if tab.header == "region" {
				regionNames = append(regionNames, tab.names...)
			}
		}
		for _, w := range want {
			assert.Contains(t, regionNames, w, what)
		}
	}
}

// textTable is a table of deepprof's plain text whose first column names
// something (a kernel, a region): its header and that column, row by row.
type textTable struct {
	header string
	names  []string
}

var dashes = regexp.MustCompile(`^-+(  -+)*$`)

// textTables are the tables in out whose first column's header is
// kernel_name, kernel or region, each first cell as printed (within the
// column's width in cells, trailing spaces dropped).
func textTables(out string) []textTable {
	lines := strings.Split(out, "\n")
	var tabs []textTable
	for i := 1; i < len(lines); i++ {
		if !dashes.MatchString(lines[i]) {
			continue
		}
		width := strings.Index(lines[i]+" ", " ")
		header := strings.TrimSpace(cells(lines[i-1], width))
		if header != "kernel_name" && header != "kernel" && header != "region" {
			continue
		}
		tab := textTable{header: header}
		for _, l := range lines[i+1:] {
			if l == "" {
				break
			}
			tab.names = append(tab.names, strings.TrimRight(cells(l, width), " "))
		}
		tabs = append(tabs, tab)
	}
	return tabs
}

// cells is the start of line that fills width terminal cells.
func cells(line string, width int) string {
	n := 0
	for i, r := range line {
		if n += input.Width(string(r)); n > width {
			return line[:i]
		}
	}
	return line
}
