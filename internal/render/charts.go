package render

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/llm-perf-opt/deepprof/internal/input"
)

// Longest strings shown, in runes, ellipsis included. Longer ones are cut.
const (
	MaxBarLabel   = 56  // a bar's label beside the bar
	MaxPointLabel = 32  // a roofline marker's label beside the marker
	MaxTitle      = 100 // titles, units and axis labels
)

// The fill colours that mark this package's shapes; nothing else is filled
// with them. The strings are what vgsvg writes for the colours (tested).
var (
	barColor   = color.RGBA{R: 0x1F, G: 0x77, B: 0xB4, A: 0xFF}
	pointColor = color.RGBA{R: 0xD6, G: 0x27, B: 0x28, A: 0xFF}
)

const (
	barFill   = "#1F77B4"
	pointFill = "#D62728"
)

// sans is the typeface of every text in a chart.
var sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

// margin is the blank border around every chart.
const margin = vg.Length(8)

// Font sizes, in points.
const (
	titleSize = 13
	axisSize  = 11
	tickSize  = 10
	noteSize  = 9
)

// Shape is what a test can count in a chart this package drew.
type Shape struct {
	Bars   int // bars of a Bars chart
	Points int // markers of a Roofline chart
}

// Inspect parses svg as XML (an error if it is not well-formed) and counts the
// bars or points this package drew: <path> elements filled with the bar colour
// (#1F77B4) or the marker colour (#D62728). It reads any SVG; one not drawn by
// this package counts whatever paths happen to use those fills.
func Inspect(svg []byte) (Shape, error) {
	var s Shape
	d := xml.NewDecoder(bytes.NewReader(svg))
	root := true
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return Shape{}, fmt.Errorf("not well-formed SVG: %w", err)
		}
		el, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if root {
			if el.Name.Local != "svg" {
				return Shape{}, fmt.Errorf("root element is <%s>, not <svg>", el.Name.Local)
			}
			root = false
		}
		if el.Name.Local != "path" {
			continue
		}
		switch fill(el) {
		case barFill:
			s.Bars++
		case pointFill:
			s.Points++
		}
	}
	if root {
		return Shape{}, errors.New("not an SVG document: no root element")
	}
	return s, nil
}

// fill returns the fill property of el's style attribute, or "".
func fill(el xml.StartElement) string {
	for _, a := range el.Attr {
		if a.Name.Local != "style" {
			continue
		}
		for decl := range strings.SplitSeq(a.Value, ";") {
			k, v, ok := strings.Cut(decl, ":")
			if ok && strings.TrimSpace(k) == "fill" {
				return strings.ToUpper(strings.TrimSpace(v))
			}
		}
	}
	return ""
}

// display makes s fit to show: one line of characters XML can carry, at most
// max runes. Invalid UTF-8 and characters outside XML 1.0's Char production
// become U+FFFD, control characters a space; hidden runes are escaped
// (input.EscapedRune) and a backslash that could read as part of an escape
// doubled (input.EscapesBackslash); a longer string keeps its first max-1
// runes and ends in "…". Escaping < > & " ' is left to the backend.
func display(s string, max int) string {
	var b strings.Builder
	n := 0
	for i, r := range s {
		backslash := r == '\\' && input.EscapesBackslash(s[i+1:])
		if n >= max-1 && utf8.RuneCountInString(s[i:]) > 1 || input.IsHidden(r) && n+len(input.EscapedRune(r)) > max-1 || backslash && n+2 > max-1 {
			b.WriteRune('…')
			break
		}
		switch {
		case backslash:
			b.WriteString(`\\`)
			n += 2
			continue
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			r = '\uFFFD' // invalid UTF-8
		case r == '\n' || r == '\r' || r == '\t':
			r = ' '
		case input.IsHidden(r):
			// shown, never acted on (a bidi override would reorder the label)
			e := input.EscapedRune(r)
			b.WriteString(e)
			n += len(e)
			continue
		case unicode.IsControl(r):
			r = ' '
		case !xmlChar(r):
			r = '\uFFFD'
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

// xmlChar reports whether r is in XML 1.0's Char production (control
// characters aside, which display replaces first).
func xmlChar(r rune) bool {
	return (r >= 0x20 && r <= 0xD7FF) || (r >= 0xE000 && r <= 0xFFFD) || (r >= 0x10000 && r <= 0x10FFFF)
}

// finite reports whether v is neither NaN nor infinite.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// newPlot returns a plot with every text set in sans at this package's sizes.
func newPlot(title string) *plot.Plot {
	p := plot.New()
	p.Title.Text = display(title, MaxTitle)
	p.Title.TextStyle.Font = font.From(sans, titleSize)
	p.Title.Padding = vg.Points(8)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(sans, axisSize)
		a.Tick.Label.Font = font.From(sans, tickSize)
	}
	p.Legend.TextStyle.Font = font.From(sans, noteSize)
	return p
}

// noteStyle is the style of text drawn beside a bar or a marker.
func noteStyle() text.Style {
	return text.Style{
		Color:   color.Black,
		Font:    font.From(sans, noteSize),
		YAlign:  text.YCenter,
		Handler: plot.DefaultTextHandler,
	}
}

// drawPage draws p on c, white, with a margin all around.
func drawPage(p *plot.Plot, c vg.CanvasSizer) {
	page := draw.New(c)
	page.SetColor(color.White)
	page.Fill(page.Rectangle.Path())
	p.BackgroundColor = nil
	p.Draw(draw.Crop(page, margin, -margin, margin, -margin))
}

// render draws p on a w×h SVG canvas and returns the document, checked to be
// well-formed XML. A panic inside gonum/plot becomes an error: a chart that
// cannot be drawn must not take the report down with it.
func render(p *plot.Plot, w, h vg.Length) (svg []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			svg, err = nil, fmt.Errorf("gonum/plot could not draw the chart: %v", r)
		}
	}()
	c := vgsvg.NewWith(vgsvg.UseWH(w, h))
	drawPage(p, c)
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, err
	}
	if _, err := Inspect(buf.Bytes()); err != nil {
		return nil, fmt.Errorf("drew an invalid chart (a bug in package render): %w", err)
	}
	return buf.Bytes(), nil
}
