package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSummaryHTMLCellsWrap (issue 50): report.html lets a long name in a
// cell break anywhere, so that a table fits its box, and keeps a number
// whole: the rule for numbers selects the cells the Markdown renderer
// right-aligns. The layout itself is checked in a browser by the module's
// TestReportHTMLTablesFit.
func TestSummaryHTMLCellsWrap(t *testing.T) {
	md := Table{
		Header: []string{"phase", "gap ms (sum)", "largest gap"},
		Right:  []bool{false, true, false},
		Rows: [][]string{{"decode", "175.392", EscapeCell("0.095 ms after at::native::elementwise_kernel, before " +
			strings.Repeat("cudnn_generated_fort_native_sdpa_sm80_flash_fprop_wmma", 2))}},
	}.String()
	var b bytes.Buffer
	require.NoError(t, SummaryHTML(&b, "run", []byte("## Phases\n\n"+md), nil))
	page := b.String()
	assert.Contains(t, page, "td { overflow-wrap: anywhere; }", "a long name breaks anywhere")
	assert.NotContains(t, page, "overflow-wrap: break-word", "break-word leaves a long name's whole width to its column")
	const numbers = `td[style*="text-align:right"] { overflow-wrap: normal; }`
	assert.Contains(t, page, numbers, "a number stays whole")
	assert.Contains(t, page, `<td style="text-align:right">175.392</td>`, "the rule for numbers selects the right-aligned cells as rendered")
	assert.Contains(t, page, `<td>0.095 ms after`, "a left-aligned cell has no style the rule for numbers selects")
}
