package render

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/llm-perf-opt/deepprof/internal/model"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"github.com/llm-perf-opt/deepprof/internal/ncu"
)

// gfmTables parses Markdown with a CommonMark + GFM renderer (goldmark with
// its GFM extensions) and returns each table's body rows as cell texts. A
// cell holding anything but literal text (emphasis, code, links, images,
// HTML, strikethrough) fails the test: the name would not read as written.
func gfmTables(t *testing.T, src []byte) [][][]string {
	t.Helper()
	doc := goldmark.New(goldmark.WithExtensions(extension.GFM)).Parser().Parse(text.NewReader(src))
	var tables [][][]string
	require.NoError(t, ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		tab, ok := n.(*extast.Table)
		if !ok || !entering {
			return ast.WalkContinue, nil
		}
		var rows [][]string
		for r := tab.FirstChild(); r != nil; r = r.NextSibling() {
			if _, ok := r.(*extast.TableRow); !ok {
				continue // the header
			}
			var cells []string
			for c := r.FirstChild(); c != nil; c = c.NextSibling() {
				cells = append(cells, literalText(t, c, src))
			}
			rows = append(rows, cells)
		}
		tables = append(tables, rows)
		return ast.WalkSkipChildren, nil
	}))
	return tables
}

func literalText(t *testing.T, cell ast.Node, src []byte) string {
	var b strings.Builder
	_ = ast.Walk(cell, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering || n == cell {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Text:
			b.Write(util.UnescapePunctuations(n.Segment.Value(src)))
		case *ast.String:
			b.Write(n.Value)
		case *ast.AutoLink: // GFM links bare URLs; the text still reads as written
			b.Write(n.Label(src))
		default:
			t.Errorf("a cell holds markup: %s", n.Kind())
		}
		return ast.WalkContinue, nil
	})
	return b.String()
}

// hostileNames are SYNTHETIC kernel names made to break a Markdown table.
var hostileNames = []string{
	"a|b", `a\|b`, "`tick`", "``double``", "*em* _em_ **strong**", "<script>alert(1)</script>",
	"[link](http://x)", "![img](x)", "&amp; &lt;", "~~strike~~", `back\slash\`, `trailing\`, "$x$",
	"# not a heading", "line\nbreak", "tab\there", "-", "|", "void f<T*, int>(T *, int &) [with T = float|int]",
}

func TestKernelsMarkdownRendersOneRowPerKernel(t *testing.T) {
	// Real kernel names: every kernel of two recorded exports.
	var names []string
	for _, p := range []string{"../../fixtures/ncu/h200-llama-decode-basic/raw.csv", "../../fixtures/ncu/cuda-nvtx-domains/raw.csv"} {
		f, err := os.Open(p)
		require.NoError(t, err)
		tab, err := ncu.KernelTable(ncu.NewReader(f, p, ncu.Options{}), p)
		f.Close()
		require.NoError(t, err)
		for _, k := range tab.Kernels {
			names = append(names, k.Name)
		}
	}
	names = append(names, hostileNames...)
	var tab model.KernelTable
	tab.Source = "synthetic | <table>"
	for i, n := range names {
		tab.Kernels = append(tab.Kernels, model.KernelStats{KernelTotals: model.KernelTotals{Name: n, Device: model.DeviceID(i % 2), TotalMS: float64(i + 1), Calls: int64(i)}, MeanMS: 1})
	}
	tab.Count = len(tab.Kernels)

	var md bytes.Buffer
	require.NoError(t, KernelsMarkdown(&md, tab))
	tables := gfmTables(t, md.Bytes())
	require.Len(t, tables, 1, "exactly one table")
	require.Len(t, tables[0], len(names), "one row per kernel")
	for i, row := range tables[0] {
		require.Len(t, row, 5, "five cells in row %d (%q)", i, names[i])
		want := strings.TrimSpace(strings.NewReplacer("\n", " ", "\t", " ").Replace(names[i]))
		assert.Equal(t, want, row[0], "kernel name reads as written")
	}
}

func TestKernelsSpread(t *testing.T) {
	tab := model.KernelTable{Source: "synthetic", Launches: 3, TotalMS: 0.0065, Count: 2, Kernels: []model.KernelStats{
		{KernelTotals: model.KernelTotals{Name: "gemm", TotalMS: 0.006, Calls: 2}, MeanMS: 0.003,
			Spread: &model.Spread{MinMS: 0.002, MedianMS: 0.003, MaxMS: 0.004, StdDevMS: 0.0014142135623730952}},
		{KernelTotals: model.KernelTotals{Name: "norm", TotalMS: 0.0005, Calls: 1}, MeanMS: 0.0005,
			Spread: &model.Spread{MinMS: 0.0005, MedianMS: 0.0005, MaxMS: 0.0005}},
	}}
	var md bytes.Buffer
	require.NoError(t, KernelsMarkdown(&md, tab))
	tables := gfmTables(t, md.Bytes())
	require.Len(t, tables, 1)
	assert.Equal(t, []string{"gemm", "0.006000", "2", "0.003000", "0", "0.003000 (0.002000–0.004000)"}, tables[0][0])
	assert.Equal(t, []string{"norm", "0.000500", "1", "0.000500", "0", "0.000500 (0.000500–0.000500)"}, tables[0][1])

	var js bytes.Buffer
	require.NoError(t, KernelsJSON(&js, tab, nil, nil))
	var doc map[string][]map[string]any
	require.NoError(t, json.Unmarshal(js.Bytes(), &doc))
	assert.Equal(t, map[string]any{"kernel_name": "gemm", "display_name": "gemm", "device": 0.0, "total_ms": 0.006, "calls": 2.0, "mean_ms": 0.003,
		"min_ms": 0.002, "median_ms": 0.003, "max_ms": 0.004, "stddev_ms": 0.0014142135623730952}, doc["kernels"][0])

	// Without spread, kernels.json keeps the contract's five fields and the
	// display name, and kernels.md its five columns.
	for i := range tab.Kernels {
		tab.Kernels[i].Spread = nil
	}
	js.Reset()
	require.NoError(t, KernelsJSON(&js, tab, nil, nil))
	require.NoError(t, json.Unmarshal(js.Bytes(), &doc))
	assert.Len(t, doc["kernels"][0], 6)
	md.Reset()
	require.NoError(t, KernelsMarkdown(&md, tab))
	assert.Len(t, gfmTables(t, md.Bytes())[0][0], 5)
	assert.NotContains(t, md.String(), "spread")
}

// TestKernelsScope (issue 54): a run's kernels.md names its table's scope
// in the words every table uses, and for a table of ranges the whole
// run's kernel time outside them and where the whole run is; the table is
// the same.
func TestKernelsScope(t *testing.T) {
	tab := model.KernelTable{Source: "timeline/cupti", Launches: 3, TotalMS: 2, Count: 1, Kernels: []model.KernelStats{
		{KernelTotals: model.KernelTotals{Name: "gemm", TotalMS: 2, Calls: 3}, MeanMS: 2.0 / 3}}}
	var plain, whole, ranged bytes.Buffer
	require.NoError(t, KernelsMarkdown(&plain, tab))
	require.NoError(t, KernelsMarkdownIn(&whole, tab, KernelScope{Text: "in the whole run"}))
	outside := 6.0
	require.NoError(t, KernelsMarkdownIn(&ranged, tab, KernelScope{Text: "in the profiled ranges (prefill, decode_all: inferred from the kernel stream)", OutsideMS: &outside, Whole: "ncu/regions/report.md"}))
	assert.Contains(t, plain.String(), "timeline/cupti: 3 launches, 1 kernel, 2.000 ms of GPU time.")
	assert.Contains(t, whole.String(), "timeline/cupti, in the whole run: 3 launches, 1 kernel, 2.000 ms of GPU time.\n")
	assert.Contains(t, ranged.String(), "timeline/cupti, in the profiled ranges (prefill, decode\\_all: inferred from the kernel stream): 3 launches, 1 kernel, 2.000 ms of GPU time. The whole run's kernel time is 8.000 ms: 6.000 ms (75.0%) lies outside these ranges (ncu/regions/report.md has the whole run).")
	for _, md := range []*bytes.Buffer{&whole, &ranged} {
		assert.Equal(t, gfmTables(t, plain.Bytes()), gfmTables(t, md.Bytes()))
	}
}
