package report

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"github.com/llm-perf-opt/deepprof/harness/kernels"
	"github.com/llm-perf-opt/deepprof/harness/ncu"
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
			t.Errorf("cell %q holds markup: %s", cell.Text(src), n.Kind())
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
		tab, err := kernels.FromReader(ncu.NewReader(f, p, ncu.Options{}), p)
		f.Close()
		require.NoError(t, err)
		for _, k := range tab.Kernels {
			names = append(names, k.Name)
		}
	}
	names = append(names, hostileNames...)
	var tab kernels.Table
	tab.Source = "synthetic | <table>"
	for i, n := range names {
		tab.Kernels = append(tab.Kernels, kernels.Record{Name: n, Device: i % 2, TotalMS: float64(i + 1), Calls: int64(i), MeanMS: 1})
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
