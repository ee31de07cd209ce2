// Markdown as plain text for a terminal (Render).

package render

import (
	"bytes"
	"slices"
	"strings"

	"github.com/llm-perf-opt/deepprof/internal/input"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

var md = goldmark.New(goldmark.WithExtensions(extension.GFM))

// Render is src as plain text, TextWidth cells wide.
func Render(src []byte) string { return RenderWidth(src, TextWidth) }

// RenderWidth is src as plain text for a terminal of width cells (display
// cells: an East Asian wide rune counts two): paragraphs wrapped, tables
// fitted (fitTable).
func RenderWidth(src []byte, width int) string {
	doc := md.Parser().Parse(text.NewReader(src))
	var b strings.Builder
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		block(&b, n, src, width)
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}

func block(b *strings.Builder, n ast.Node, src []byte, cols int) {
	switch n := n.(type) {
	case *ast.Heading:
		t := inline(n, src)
		b.WriteString(t + "\n")
		if n.Level <= 2 {
			b.WriteString(strings.Repeat("=", input.Width(t)) + "\n")
		}
		b.WriteString("\n")
	case *ast.Paragraph, *ast.TextBlock:
		b.WriteString(input.Wrap(inline(n, src), cols, cols, "") + "\n\n")
	case *ast.List:
		i := n.Start
		for it := n.FirstChild(); it != nil; it = it.NextSibling() {
			mark := "- "
			if n.IsOrdered() {
				mark = itoa(i) + ". "
				i++
			}
			var item strings.Builder
			for c := it.FirstChild(); c != nil; c = c.NextSibling() {
				item.WriteString(inline(c, src))
			}
			indent := strings.Repeat(" ", input.Width(mark))
			b.WriteString(mark + input.Wrap(item.String(), cols-len(indent), cols, indent) + "\n")
		}
		b.WriteString("\n")
	case *extast.Table:
		table(b, n, src, cols)
	case *ast.HTMLBlock:
		// deepprof's own <details> wrappers: their lines carry no text.
	default:
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			block(b, c, src, cols)
		}
	}
}

// inline is the text of n's inline content, escapes resolved.
func inline(n ast.Node, src []byte) string {
	var buf bytes.Buffer
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch c := c.(type) {
		case *ast.Text:
			v := c.Segment.Value(src)
			if !c.IsRaw() {
				v = util.ResolveEntityNames(util.ResolveNumericReferences(util.UnescapePunctuations(v)))
			}
			buf.Write(v)
			if c.SoftLineBreak() || c.HardLineBreak() {
				buf.WriteByte(' ')
			}
		case *ast.String:
			buf.Write(c.Value)
		case *ast.CodeSpan:
			for t := c.FirstChild(); t != nil; t = t.NextSibling() {
				if s, ok := t.(*ast.Text); ok {
					buf.Write(s.Segment.Value(src))
				}
			}
			return ast.WalkSkipChildren, nil
		case *ast.AutoLink:
			buf.Write(c.Label(src))
			return ast.WalkSkipChildren, nil
		case *ast.RawHTML:
			for i := 0; i < c.Segments.Len(); i++ {
				seg := c.Segments.At(i)
				buf.Write(seg.Value(src))
			}
		}
		return ast.WalkContinue, nil
	})
	return strings.TrimSpace(buf.String())
}

// MaxCell is the most cells a table cell shows; a longer one (a full
// demangled kernel name) is cut (cutColumn): the Markdown and JSON have it
// whole.
const MaxCell = 100

func table(b *strings.Builder, t *extast.Table, src []byte, cols int) {
	var rows [][]string
	for r := t.FirstChild(); r != nil; r = r.NextSibling() {
		var row []string
		for c := r.FirstChild(); c != nil; c = c.NextSibling() {
			row = append(row, inline(c, src))
		}
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		return
	}
	natural := make([]int, len(t.Alignments))
	for _, r := range rows {
		for i, c := range r {
			if i < len(natural) {
				natural[i] = max(natural[i], min(MaxCell, input.Width(c)))
			}
		}
	}
	// A column whose cells read apart only past the width it was fitted to
	// keeps those cells; the others are fitted again around it.
	pinned := make([]bool, len(natural))
	var width []int
	for {
		fit := slices.Clone(natural)
		fitTable(fit, t.Alignments, cols, pinned)
		var cut [][]string
		cut, width = cutCells(rows, fit)
		grew := false
		for i := range fit {
			if width[i] > fit[i] && !pinned[i] {
				pinned[i], natural[i], grew = true, width[i], true
				for j := range rows {
					if i < len(rows[j]) {
						rows[j][i] = cut[j][i]
					}
				}
			}
		}
		if !grew {
			rows = cut
			break
		}
	}
	line := func(r []string) {
		var cells []string
		for i := range width {
			c := ""
			if i < len(r) {
				c = r[i]
			}
			pad := strings.Repeat(" ", max(0, width[i]-input.Width(c)))
			if t.Alignments[i] == extast.AlignRight {
				cells = append(cells, pad+c)
			} else {
				cells = append(cells, c+pad)
			}
		}
		b.WriteString(strings.TrimRight(strings.Join(cells, "  "), " ") + "\n")
	}
	line(rows[0])
	var rule []string
	for _, w := range width {
		rule = append(rule, strings.Repeat("-", w))
	}
	b.WriteString(strings.Join(rule, "  ") + "\n")
	for _, r := range rows[1:] {
		line(r)
	}
	b.WriteString("\n")
}

// TextWidth is the widest line of text where the terminal's width is not
// known (RenderWidth's width otherwise): a table wider than its width has
// its widest text column (a name) cut down to MinTextCell cells at the
// least.
const (
	TextWidth   = 120
	MinTextCell = 16
	// MinNarrowCell is how far a terminal narrower than TextWidth cuts a
	// text column at the most (MinTextCell in proportion to its width).
	MinNarrowCell = 8
)

// cutCells is rows with the cells of each column i cut to width[i]
// (cutColumn), and the widths the columns then take.
func cutCells(rows [][]string, width []int) ([][]string, []int) {
	out := make([][]string, len(rows))
	for j, r := range rows {
		out[j] = slices.Clone(r)
	}
	took := make([]int, len(width))
	for i := range width {
		var column []string
		for _, r := range rows {
			if i < len(r) {
				column = append(column, r[i])
			}
		}
		column = cutColumn(column, width[i])
		for _, r := range out {
			if i < len(r) {
				r[i], column = column[0], column[1:]
				took[i] = max(took[i], input.Width(r[i]))
			}
		}
	}
	return out, took
}

// fitTable narrows the widest left-aligned columns, other than the pinned
// ones, until the table, two spaces between columns, fits cols (or no
// such column is wider than MinTextCell, in proportion to cols under
// TextWidth, down to MinNarrowCell).
func fitTable(width []int, align []extast.Alignment, cols int, pinned []bool) {
	floor := min(MinTextCell, max(MinNarrowCell, cols*MinTextCell/TextWidth)) // a narrow terminal cuts deeper
	for {
		total := 2 * (len(width) - 1)
		for _, w := range width {
			total += w
		}
		col := -1
		for i, w := range width {
			if align[i] != extast.AlignRight && !pinned[i] && w > floor && (col < 0 || w > width[col]) {
				col = i
			}
		}
		if total <= cols || col < 0 {
			return
		}
		width[col] = max(floor, width[col]-(total-cols))
	}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var d []byte
	for ; i > 0; i /= 10 {
		d = append([]byte{byte('0' + i%10)}, d...)
	}
	return string(d)
}
