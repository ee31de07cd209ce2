package render

import (
	"fmt"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// Bar is one bar of a Bars chart.
type Bar struct {
	Label string  // shown beside the bar; may be a long C++ kernel name with < > & " ' characters
	Value float64 // >= 0
}

// Bar chart geometry.
const (
	barsWidth     = 10 * vg.Inch
	barsMinHeight = 2.4 * vg.Inch
	barsFrame     = 1.1 * vg.Inch  // title, value axis and margins
	barsRow       = 0.3 * vg.Inch  // height given to each bar
	barsThickness = 0.2 * vg.Inch  // drawn thickness of a bar
	barsNoteGap   = vg.Length(3.0) // between a bar's end and its value, in points
)

// Bars draws a horizontal bar chart, one bar per element in the given order
// (first at the top), value axis labelled with unit (e.g. "ms", "% of GPU
// time"). Each bar's label stands left of it, shortened to MaxBarLabel runes,
// and its value right of it, with as many decimals for every bar as the
// largest value needs to show three significant digits (at most 2 once it is
// 1 or more, none from 100).
//
// No bars, or a value that is NaN, infinite or negative (an error naming the
// bar's index and label), is an error.
func Bars(title, unit string, bars []Bar) ([]byte, error) {
	p, w, h, err := barsPlot(title, unit, bars)
	if err != nil {
		return nil, err
	}
	svg, err := render(p, w, h)
	if err != nil {
		return nil, fmt.Errorf("bar chart %q: %w", title, err)
	}
	return svg, nil
}

// barsPlot lays out the chart Bars draws and says its size.
func barsPlot(title, unit string, bars []Bar) (p *plot.Plot, w, h vg.Length, err error) {
	if len(bars) == 0 {
		return nil, 0, 0, fmt.Errorf("bar chart %q: no bars to draw", title)
	}
	top := 0.0
	for i, b := range bars {
		if !finite(b.Value) || b.Value < 0 {
			return nil, 0, 0, fmt.Errorf("bar chart %q: bar %d (%q): value %v is not a finite number >= 0", title, i, b.Label, b.Value)
		}
		top = math.Max(top, b.Value)
	}

	// plotter puts value 0 at the bottom; the first bar goes at the top.
	n := len(bars)
	values := make(plotter.Values, n)
	names := make([]string, n)
	notes := plotter.XYLabels{XYs: make(plotter.XYs, n), Labels: make([]string, n)}
	prec := decimals(top)
	for i, b := range bars {
		j := n - 1 - i
		values[j] = b.Value
		names[j] = display(b.Label, MaxBarLabel)
		notes.XYs[j] = plotter.XY{X: b.Value, Y: float64(j)}
		notes.Labels[j] = strconv.FormatFloat(b.Value, 'f', prec, 64)
	}

	p = newPlot(title)
	p.X.Label.Text = display(unit, MaxTitle)
	grid := plotter.NewGrid()
	grid.Horizontal.Color = nil
	chart, err := plotter.NewBarChart(values, barsThickness)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("bar chart %q: %w", title, err)
	}
	chart.Horizontal = true
	chart.Color = barColor
	chart.LineStyle.Width = 0
	labels, err := plotter.NewLabels(notes)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("bar chart %q: %w", title, err)
	}
	for i := range labels.TextStyle {
		labels.TextStyle[i] = noteStyle()
	}
	labels.Offset = vg.Point{X: barsNoteGap}
	p.Add(grid, chart, labels)
	p.NominalY(names...)
	p.X.Min = 0
	if top == 0 {
		p.X.Max = 1
	}

	return p, barsWidth, max(barsMinHeight, barsFrame+vg.Length(n)*barsRow), nil
}

// decimals is the number of decimals shown for every value of a chart whose
// largest value is top: enough for three significant digits of top, at most
// 2 from 1 up and none from 100.
func decimals(top float64) int {
	switch {
	case top >= 100:
		return 0
	case top >= 10:
		return 1
	case top >= 1 || top == 0:
		return 2
	}
	return min(2-int(math.Floor(math.Log10(top))), 12)
}
