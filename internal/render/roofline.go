package render

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Point is one marker of a Roofline chart.
type Point struct {
	Label     string  // shown beside the marker, shortened to MaxPointLabel runes
	Intensity float64 // arithmetic intensity, FLOP per DRAM byte, > 0
	FLOPS     float64 // achieved FLOP/s, > 0
}

// Roofline geometry and colours.
const (
	roofWidth   = 8 * vg.Inch
	roofHeight  = 5.5 * vg.Inch
	markerSize  = vg.Length(3.5) // marker radius, in points
	markerGap   = vg.Length(5.0) // between a marker's centre and its label
	roofLineW   = vg.Length(1.5)
	xAxisTitle  = "arithmetic intensity (FLOP/byte)"
	yAxisTitle  = "achieved FLOP/s"
	roofPadding = 2 // data ranges are widened by this factor, then to whole decades
)

var roofColor = color.RGBA{R: 0x40, G: 0x40, B: 0x40, A: 0xFF}

// Roofline draws a log-log roofline: the memory roof (peakBytesPerSec *
// intensity) up to the ridge point, the compute roof (peakFLOPS) after it, and
// one marker per point with its label beside it. Both axes span whole decades
// around the points and the ridge point; a legend states both peaks and the
// ridge point.
//
// Points with non-positive, NaN or infinite coordinates are an error naming
// the point's index and label (never silently dropped), as are no points and
// peaks that are not finite positive numbers.
func Roofline(title string, points []Point, peakFLOPS, peakBytesPerSec float64) ([]byte, error) {
	p, w, h, err := rooflinePlot(title, points, peakFLOPS, peakBytesPerSec)
	if err != nil {
		return nil, err
	}
	svg, err := render(p, w, h)
	if err != nil {
		return nil, fmt.Errorf("roofline %q: %w", title, err)
	}
	return svg, nil
}

// rooflinePlot lays out the chart Roofline draws and says its size.
func rooflinePlot(title string, points []Point, peakFLOPS, peakBytesPerSec float64) (p *plot.Plot, w, h vg.Length, err error) {
	if len(points) == 0 {
		return nil, 0, 0, fmt.Errorf("roofline %q: no points to draw", title)
	}
	if !finite(peakFLOPS) || peakFLOPS <= 0 {
		return nil, 0, 0, fmt.Errorf("roofline %q: peak FLOP/s %v is not a finite number > 0", title, peakFLOPS)
	}
	if !finite(peakBytesPerSec) || peakBytesPerSec <= 0 {
		return nil, 0, 0, fmt.Errorf("roofline %q: peak bytes/s %v is not a finite number > 0", title, peakBytesPerSec)
	}
	ridge := peakFLOPS / peakBytesPerSec
	xlo, xhi, ylo, yhi := ridge, ridge, peakFLOPS, peakFLOPS
	for i, pt := range points {
		if !finite(pt.Intensity) || pt.Intensity <= 0 {
			return nil, 0, 0, fmt.Errorf("roofline %q: point %d (%q): intensity %v is not a finite number > 0", title, i, pt.Label, pt.Intensity)
		}
		if !finite(pt.FLOPS) || pt.FLOPS <= 0 {
			return nil, 0, 0, fmt.Errorf("roofline %q: point %d (%q): FLOP/s %v is not a finite number > 0", title, i, pt.Label, pt.FLOPS)
		}
		xlo, xhi = math.Min(xlo, pt.Intensity), math.Max(xhi, pt.Intensity)
		ylo, yhi = math.Min(ylo, pt.FLOPS), math.Max(yhi, pt.FLOPS)
	}
	xmin, xmax := decadeBelow(xlo/roofPadding), decadeAbove(xhi*roofPadding)
	ymin, ymax := decadeBelow(ylo/roofPadding), decadeAbove(yhi*roofPadding)
	for _, v := range []float64{xmin, xmax, ymin, ymax} {
		if !finite(v) || v <= 0 {
			return nil, 0, 0, fmt.Errorf("roofline %q: intensities %g to %g FLOP/byte and rates %g to %g FLOP/s are too far apart to draw",
				title, xlo, xhi, ylo, yhi)
		}
	}

	// The memory roof enters the chart at its left or its bottom edge.
	x0 := math.Max(xmin, ymin/peakBytesPerSec)
	roof, err := plotter.NewLine(plotter.XYs{{X: x0, Y: x0 * peakBytesPerSec}, {X: ridge, Y: peakFLOPS}, {X: xmax, Y: peakFLOPS}})
	if err != nil {
		return nil, 0, 0, fmt.Errorf("roofline %q: %w", title, err)
	}
	roof.LineStyle.Color = roofColor
	roof.LineStyle.Width = roofLineW

	notes := plotter.XYLabels{XYs: make(plotter.XYs, len(points)), Labels: make([]string, len(points))}
	for i, pt := range points {
		notes.XYs[i] = plotter.XY{X: pt.Intensity, Y: pt.FLOPS}
		notes.Labels[i] = display(pt.Label, MaxPointLabel)
	}
	notes.Labels = mergeCloseLabels(notes.XYs, notes.Labels, xmin, xmax, ymin, ymax)
	markers, err := plotter.NewScatter(notes.XYs)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("roofline %q: %w", title, err)
	}
	markers.GlyphStyle = draw.GlyphStyle{Color: pointColor, Radius: markerSize, Shape: draw.CircleGlyph{}}
	labels, err := plotter.NewLabels(notes)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("roofline %q: %w", title, err)
	}
	for i := range labels.TextStyle {
		labels.TextStyle[i] = noteStyle()
	}
	labels.Offset = vg.Point{X: markerGap}

	p = newPlot(title)
	p.X.Label.Text = xAxisTitle
	p.Y.Label.Text = yAxisTitle
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker = decadeTicks{label: plainLabel}
	p.Y.Tick.Marker = decadeTicks{label: siLabel}
	grid := plotter.NewGrid()
	grid.Vertical.Color = color.Gray{Y: 0xE0}
	grid.Horizontal.Color = color.Gray{Y: 0xE0}
	p.Add(grid, roof, markers, labels)
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = xmin, xmax, ymin, ymax
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(8), vg.Points(-8)
	p.Legend.Add(fmt.Sprintf("roof: %sB/s memory, %sFLOP/s compute, ridge at %s FLOP/byte",
		si(peakBytesPerSec), si(peakFLOPS), sig3(ridge)), roof)

	return p, roofWidth, roofHeight, nil
}

// Label boxes, in points on the page, for telling overlapping labels.
const (
	labelCharW = 6.5 // a character of the note font, wide enough
	labelH     = 12.0
)

// mergeCloseLabels joins the labels of points whose label boxes would
// overlap on the chart into the first one's ("#1, #2"), blanking the
// others: neighbouring points otherwise print their labels over each other.
// Positions are estimated on the log axes over the plot's size.
func mergeCloseLabels(xys plotter.XYs, labels []string, xmin, xmax, ymin, ymax float64) []string {
	out := slices.Clone(labels)
	pos := func(i int) (float64, float64) {
		fx := math.Log10(xys[i].X/xmin) / math.Log10(xmax/xmin)
		fy := math.Log10(xys[i].Y/ymin) / math.Log10(ymax/ymin)
		return fx * float64(roofWidth), fy * float64(roofHeight)
	}
	owner := make([]int, len(labels)) // the label each point's text went to
	for i := range labels {
		owner[i] = i
		xi, yi := pos(i)
		for j := 0; j < i; j++ {
			if owner[j] != j || out[j] == "" {
				continue
			}
			xj, yj := pos(j)
			wj := float64(markerGap) + labelCharW*float64(len([]rune(out[j])))
			wi := float64(markerGap) + labelCharW*float64(len([]rune(out[i])))
			if xi < xj+wj && xj < xi+wi && math.Abs(yi-yj) < labelH {
				out[j] += ", " + out[i]
				out[i] = ""
				owner[i] = j
				break
			}
		}
	}
	return out
}

func decadeBelow(v float64) float64 { return math.Pow(10, math.Floor(math.Log10(v))) }
func decadeAbove(v float64) float64 { return math.Pow(10, math.Ceil(math.Log10(v))) }

// decadeTicks marks a log axis: a labelled tick at each power of ten and
// unlabelled ones at 2..9 times it.
type decadeTicks struct {
	label func(exp int) string
}

func (t decadeTicks) Ticks(min, max float64) []plot.Tick {
	var ticks []plot.Tick
	for e := int(math.Floor(math.Log10(min))); math.Pow10(e) <= max; e++ {
		ticks = append(ticks, plot.Tick{Value: math.Pow10(e), Label: t.label(e)})
		for k := 2; k <= 9; k++ {
			if v := float64(k) * math.Pow10(e); v <= max {
				ticks = append(ticks, plot.Tick{Value: v})
			}
		}
	}
	return ticks
}

// plainLabel writes 10^exp as a plain number from 0.0001 to 100000, as 1e<exp>
// beyond.
func plainLabel(exp int) string {
	if exp < -4 || exp > 5 {
		return "1e" + strconv.Itoa(exp)
	}
	return strconv.FormatFloat(math.Pow10(exp), 'f', -1, 64)
}

// siPrefixes are the decimal prefixes of si and siLabel, by power of 1000.
var siPrefixes = []string{"", "k", "M", "G", "T", "P", "E"}

// siLabel writes 10^exp with a decimal prefix ("100G", "1T"), as a plain
// number below 1 and as 1e<exp> beyond the prefixes.
func siLabel(exp int) string {
	if exp < 0 {
		return plainLabel(exp)
	}
	if exp/3 >= len(siPrefixes) {
		return "1e" + strconv.Itoa(exp)
	}
	return strconv.Itoa(int(math.Pow10(exp%3))) + siPrefixes[exp/3]
}

// si writes v to three significant digits with a decimal prefix and a
// trailing space: "4.8 T", "989 T", "12 ".
func si(v float64) string {
	i := 0
	for i < len(siPrefixes)-1 && v >= 1000 {
		v /= 1000
		i++
	}
	return sig3(v) + " " + siPrefixes[i]
}

// sig3 writes v to three significant digits, without trailing zeros and
// without an exponent from 0.001 up to 999 999.
func sig3(v float64) string {
	v, _ = strconv.ParseFloat(strconv.FormatFloat(v, 'g', 3, 64), 64)
	if v != 0 && (math.Abs(v) < 1e-3 || math.Abs(v) >= 1e6) {
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}
