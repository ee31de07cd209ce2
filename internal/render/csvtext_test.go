package render

import (
	"bytes"
	"encoding/csv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/model"
)

// TestCSVNamesAreData (issue 53): names from a profiled program reach a CSV
// cell as text: no escape sequence for the terminal the table is printed
// on (a window-title change, a screen clear), no formula for a
// spreadsheet, no invisible character that makes two names print alike.
// SYNTHETIC names; the numbers stay numbers, a negative one included.
func TestCSVNamesAreData(t *testing.T) {
	tab := model.KernelTable{Kernels: []model.KernelStats{
		{KernelTotals: model.KernelTotals{Name: "=HYPERLINK(\"http://x\",\"gemm\")", Calls: 1, TotalMS: 2}, MeanMS: 2},
		{KernelTotals: model.KernelTotals{Name: "\x1b]0;owned\x07k\x1b[2J", Calls: 1, TotalMS: 1}, MeanMS: 1},
		{KernelTotals: model.KernelTotals{Name: "gemm\u2061\u00ad\U000e0041", Calls: 1, TotalMS: 0.5}, MeanMS: 0.5},
		{KernelTotals: model.KernelTotals{Name: "@sum", Calls: 1, TotalMS: 0.25}, MeanMS: 0.25},
		{KernelTotals: model.KernelTotals{Name: "-2+3", Calls: 1, TotalMS: 0.125}, MeanMS: 0.125},
	}}
	var b bytes.Buffer
	require.NoError(t, KernelsCSV(&b, tab))
	assert.NotContains(t, b.String(), "\x1b")
	assert.NotContains(t, b.String(), "\x07")
	rows, err := csv.NewReader(&b).ReadAll()
	require.NoError(t, err)
	var names []string
	for _, r := range rows[1:] {
		names = append(names, r[0])
		assert.NotContains(t, "=+-@\t\r", r[0][:1], "a formula: %q", r[0])
	}
	assert.Equal(t, []string{
		`'=HYPERLINK("http://x","gemm")`,
		`\u001b]0;owned\u0007k\u001b[2J`,
		`gemm\u2061\u00ad\U000e0041`,
		`'@sum`,
		`'-2+3`,
	}, names)
	assert.Equal(t, "2", rows[1][4], "numbers are written as they are")
	assert.Equal(t, "-5", csvText("-5")[1:], "a name that looks like a number is still a name")
}
