package render

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/sebdah/goldie/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot/plotter"
)

// Example chart inputs for the goldens and the tests: made-up labels and
// numbers shaped like a decode step's kernels, not measurements.
var (
	exampleBars = []Bar{
		{"void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_16x16_128x2_tn_align8>(T1::Params)", 41.7},
		{"flash_fwd_splitkv_kernel", 18.25},
		{"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, std::array<char*, 1>>(int, T2, T3)", 9.5},
		{"rms_norm_kernel", 4.125},
		{"idle", 0},
	}
	examplePoints = []Point{
		{"gemm_bf16_128x2", 180, 420e12},
		{"flash_fwd_splitkv_kernel", 12, 31e12},
		{"rms_norm_kernel", 0.9, 2.1e12},
		{"void f<float, 4>(T&, \"x\" 'y')", 0.25, 0.6e12},
	}
	// examplePeakFLOPS and examplePeakBytes are H200-like peaks (dense BF16,
	// HBM3e), chart inputs only.
	examplePeakFLOPS = 989e12
	examplePeakBytes = 4.8e12
)

// hostile are labels a profiled program may well produce.
var hostile = []string{
	`void f<float, 4>(T&, "x" 'y')`,
	`<script>alert(1)</script>`,
	`&amp;`,
	`]]><!-- --><![CDATA[`,
	strings.Repeat("very_long_template_name<", 40) + ">",
	"注意力_kernel_é_ß_😀",
	"tab\tnew\nline\r\x00nul\x01\x7f\u0085",
	"bad utf8 \xff\xfe end",
	"\uFFFE\uFFFF nonchars",
	"",
}

// tokens walks every token of svg with encoding/xml and returns the text
// content and the element names; it fails the test on any XML error.
func tokens(t *testing.T, svg []byte) (text string, elements map[string]int) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(svg))
	var b strings.Builder
	elements = map[string]int{}
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err, "SVG is not well-formed")
		switch tok := tok.(type) {
		case xml.StartElement:
			elements[tok.Name.Local]++
		case xml.CharData:
			b.Write(tok)
			b.WriteByte('\n')
		}
	}
	require.Equal(t, 1, elements["svg"])
	return b.String(), elements
}

func nBars(n int) []Bar {
	bars := make([]Bar, n)
	for i := range bars {
		bars[i] = Bar{Label: fmt.Sprintf("kernel_%02d<T%d>", i, i), Value: float64(n-i) * 1.5}
	}
	return bars
}

func nPoints(n int) []Point {
	points := make([]Point, n)
	for i := range points {
		points[i] = Point{Label: fmt.Sprintf("kernel_%02d", i), Intensity: math.Pow(2, float64(i)) / 4, FLOPS: 1e11 * math.Pow(3, float64(i))}
	}
	return points
}

func TestBarsCount(t *testing.T) {
	for _, n := range []int{1, 3, 20} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			svg, err := Bars("Top kernels", "ms", nBars(n))
			require.NoError(t, err)
			text, _ := tokens(t, svg)
			assert.Contains(t, text, "Top kernels")
			assert.Contains(t, text, "ms")
			assert.Contains(t, text, "kernel_00<T0>")
			got, err := Inspect(svg)
			require.NoError(t, err)
			assert.Equal(t, Shape{Bars: n}, got)
		})
	}
}

// A bar of value 0 is still drawn (and counted), even when all are 0.
func TestBarsZero(t *testing.T) {
	for _, bars := range [][]Bar{{{"a", 0}}, {{"a", 0}, {"b", 0}}, {{"a", 3}, {"b", 0}}} {
		svg, err := Bars("zeros", "ms", bars)
		require.NoError(t, err)
		got, err := Inspect(svg)
		require.NoError(t, err)
		assert.Equal(t, Shape{Bars: len(bars)}, got)
	}
}

func TestRooflineCount(t *testing.T) {
	for _, n := range []int{1, 10} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			svg, err := Roofline("Decode roofline", nPoints(n), examplePeakFLOPS, examplePeakBytes)
			require.NoError(t, err)
			text, _ := tokens(t, svg)
			assert.Contains(t, text, "Decode roofline")
			assert.Contains(t, text, xAxisTitle)
			assert.Contains(t, text, yAxisTitle)
			assert.Contains(t, text, "kernel_00")
			got, err := Inspect(svg)
			require.NoError(t, err)
			assert.Equal(t, Shape{Points: n}, got)
		})
	}
}

// Points far past either roof, on either side of the ridge, are all drawn.
func TestRooflineRanges(t *testing.T) {
	cases := map[string][]Point{
		"above compute roof": {{"a", 1000, 5e15}},
		"far left":           {{"a", 1e-6, 1e3}},
		"far right":          {{"a", 1e7, 1e9}},
		"at ridge":           {{"a", examplePeakFLOPS / examplePeakBytes, examplePeakFLOPS}},
		"same point twice":   {{"a", 2, 3e12}, {"a", 2, 3e12}},
	}
	for name, points := range cases {
		t.Run(name, func(t *testing.T) {
			svg, err := Roofline(name, points, examplePeakFLOPS, examplePeakBytes)
			require.NoError(t, err)
			got, err := Inspect(svg)
			require.NoError(t, err)
			assert.Equal(t, Shape{Points: len(points)}, got)
		})
	}
}

func TestHostileLabels(t *testing.T) {
	bars := make([]Bar, len(hostile))
	points := make([]Point, len(hostile))
	for i, l := range hostile {
		bars[i] = Bar{Label: l, Value: float64(i + 1)}
		points[i] = Point{Label: l, Intensity: float64(i + 1), FLOPS: float64(i+1) * 1e12}
	}
	check := func(t *testing.T, svg []byte, max int, want Shape) {
		text, elements := tokens(t, svg)
		assert.Zero(t, elements["script"], "a label became an element")
		for _, l := range hostile {
			assert.Contains(t, text, display(l, max), "label %q not shown as text", l)
		}
		got, err := Inspect(svg)
		require.NoError(t, err)
		assert.Equal(t, want, got)
	}
	t.Run("bars", func(t *testing.T) {
		svg, err := Bars(hostile[0], hostile[1], bars)
		require.NoError(t, err)
		check(t, svg, MaxBarLabel, Shape{Bars: len(bars)})
	})
	t.Run("roofline", func(t *testing.T) {
		svg, err := Roofline(hostile[2], points, examplePeakFLOPS, examplePeakBytes)
		require.NoError(t, err)
		check(t, svg, MaxPointLabel, Shape{Points: len(points)})
	})
	t.Run("titles", func(t *testing.T) {
		for _, l := range hostile {
			svg, err := Bars(l, l, bars[:1])
			require.NoError(t, err)
			text, _ := tokens(t, svg)
			if l != "" {
				assert.Contains(t, text, display(l, MaxTitle))
			}
		}
	})
}

func TestErrors(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	ok := []Point{{"ok", 1, 1e12}}
	tests := []struct {
		name string
		draw func() ([]byte, error)
		err  string
	}{
		{"no bars", func() ([]byte, error) { return Bars("T", "ms", nil) }, `bar chart "T": no bars to draw`},
		{"negative bar", func() ([]byte, error) { return Bars("T", "ms", []Bar{{"a", 1}, {"<neg>", -1}}) },
			`bar chart "T": bar 1 ("<neg>"): value -1 is not a finite number >= 0`},
		{"NaN bar", func() ([]byte, error) { return Bars("T", "ms", []Bar{{"nan", nan}}) }, `bar 0 ("nan"): value NaN`},
		{"Inf bar", func() ([]byte, error) { return Bars("T", "ms", []Bar{{"inf", inf}}) }, `bar 0 ("inf"): value +Inf`},
		{"no points", func() ([]byte, error) { return Roofline("R", nil, 1e12, 1e12) }, `roofline "R": no points to draw`},
		{"zero intensity", func() ([]byte, error) { return Roofline("R", []Point{{"k&z", 0, 1e12}}, 1e12, 1e12) },
			`roofline "R": point 0 ("k&z"): intensity 0 is not a finite number > 0`},
		{"negative FLOPS", func() ([]byte, error) { return Roofline("R", append(ok, Point{"k", 1, -5}), 1e12, 1e12) },
			`point 1 ("k"): FLOP/s -5 is not a finite number > 0`},
		{"NaN intensity", func() ([]byte, error) { return Roofline("R", []Point{{"k", nan, 1}}, 1e12, 1e12) }, `point 0 ("k"): intensity NaN`},
		{"Inf FLOPS", func() ([]byte, error) { return Roofline("R", []Point{{"k", 1, inf}}, 1e12, 1e12) }, `point 0 ("k"): FLOP/s +Inf`},
		{"zero peak FLOPS", func() ([]byte, error) { return Roofline("R", ok, 0, 1e12) }, `peak FLOP/s 0 is not a finite number > 0`},
		{"NaN peak bytes", func() ([]byte, error) { return Roofline("R", ok, 1e12, nan) }, `peak bytes/s NaN is not a finite number > 0`},
		{"huge range", func() ([]byte, error) { return Roofline("R", []Point{{"k", 1e308, 1e12}}, 1e12, 1e12) }, "too far apart to draw"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svg, err := tt.draw()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.err)
			assert.Nil(t, svg)
		})
	}
}

func TestInspectErrors(t *testing.T) {
	tests := []struct{ name, svg, err string }{
		{"empty", "", "no root element"},
		{"not xml", "hello", "no root element"},
		{"truncated", `<svg><g><path style="fill:#1F77B4"/>`, "not well-formed"},
		{"bad escape", `<svg><text>a & b</text></svg>`, "not well-formed"},
		{"not svg", `<html><path style="fill:#1F77B4"/></html>`, "root element is <html>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Inspect([]byte(tt.svg))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.err)
		})
	}
	// Text that looks like a bar is not one.
	got, err := Inspect([]byte(`<svg><text>&lt;path style="fill:#1F77B4"/&gt;</text><path style="fill:#1f77b4;fill-opacity:0.5"/><path style="stroke:#D62728"/></svg>`))
	require.NoError(t, err)
	assert.Equal(t, Shape{Bars: 1}, got)
}

func TestDeterministic(t *testing.T) {
	draws := map[string]func() ([]byte, error){
		"bars":     func() ([]byte, error) { return Bars("T", "ms", exampleBars) },
		"roofline": func() ([]byte, error) { return Roofline("R", examplePoints, examplePeakFLOPS, examplePeakBytes) },
	}
	for name, draw := range draws {
		a, err := draw()
		require.NoError(t, err, name)
		b, err := draw()
		require.NoError(t, err, name)
		assert.True(t, bytes.Equal(a, b), "%s: two renders differ", name)
	}
}

func TestGolden(t *testing.T) {
	g := goldie.New(t, goldie.WithFixtureDir("../../golden/charts"), goldie.WithNameSuffix(""))
	t.Run("bars", func(t *testing.T) {
		svg, err := Bars("Decode step: GPU time by kernel (example input)", "ms", exampleBars)
		require.NoError(t, err)
		got, err := Inspect(svg)
		require.NoError(t, err)
		assert.Equal(t, Shape{Bars: len(exampleBars)}, got)
		g.Assert(t, "bars-example-5-kernels.svg", svg)
	})
	t.Run("roofline", func(t *testing.T) {
		svg, err := Roofline("Decode step roofline (example input)", examplePoints, examplePeakFLOPS, examplePeakBytes)
		require.NoError(t, err)
		got, err := Inspect(svg)
		require.NoError(t, err)
		assert.Equal(t, Shape{Points: len(examplePoints)}, got)
		g.Assert(t, "roofline-example-4-points.svg", svg)
	})
}

func TestDisplay(t *testing.T) {
	long := strings.Repeat("x", MaxBarLabel+1)
	tests := []struct{ in, want string }{
		{"", ""},
		{"plain", "plain"},
		{`<a & "b">`, `<a & "b">`}, // escaping is the backend's
		{"a\tb\nc\r\x00d\x7f\u0085e", `a b c \u0000d\u007f\u0085e`},
		{"rev\u202eersed", `rev\u202eersed`}, // a bidi override is shown, not obeyed
		{"x\xffy", "x\uFFFDy"},
		{"x\uFFFDy", "x\uFFFDy"},
		{"\uFFFE\uFFFF", "\uFFFD\uFFFD"},
		{"注意力😀", "注意力😀"},
		{long[:MaxBarLabel], long[:MaxBarLabel]},
		{long, long[:MaxBarLabel-1] + "…"},
		{strings.Repeat("注", MaxBarLabel+5), strings.Repeat("注", MaxBarLabel-1) + "…"},
	}
	for _, tt := range tests {
		got := display(tt.in, MaxBarLabel)
		assert.Equal(t, tt.want, got, "display(%q)", tt.in)
		assert.LessOrEqual(t, len([]rune(got)), MaxBarLabel)
	}
}

func TestChartDecimals(t *testing.T) {
	tests := []struct {
		top  float64
		want int
	}{
		{0, 2}, {1e-9, 11}, {0.000999, 6}, {0.001, 5}, {0.0999, 4}, {0.1, 3}, {0.999, 3},
		{1, 2}, {9.99, 2}, {10, 1}, {99.9, 1}, {100, 0}, {1e9, 0}, {1e-300, 12},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, decimals(tt.top), "decimals(%g)", tt.top)
	}
}

func TestNumberLabels(t *testing.T) {
	prefixed := map[int]string{-2: "0.01", 0: "1", 1: "10", 2: "100", 3: "1k", 9: "1G", 12: "1T", 14: "100T", 15: "1P", 20: "100E", 21: "1e21"}
	for exp, want := range prefixed {
		assert.Equal(t, want, siLabel(exp), "siLabel(%d)", exp)
	}
	plain := map[int]string{-5: "1e-5", -4: "0.0001", -1: "0.1", 0: "1", 5: "100000", 6: "1e6"}
	for exp, want := range plain {
		assert.Equal(t, want, plainLabel(exp), "plainLabel(%d)", exp)
	}
	sig := map[float64]string{206.04: "206", 4.8: "4.8", 0.25: "0.25", 999.6: "1000", 1234567: "1.23e+06", 0.0001234: "0.000123", 1.5e-4: "0.00015"}
	for v, want := range sig {
		assert.Equal(t, want, sig3(v), "sig3(%g)", v)
	}
	assert.Equal(t, "989 T", si(989e12))
	assert.Equal(t, "4.8 T", si(4.8e12))
	assert.Equal(t, "12 ", si(12))
	assert.Equal(t, "1000 E", si(1e21))
}

func TestDecadeTicks(t *testing.T) {
	ticks := decadeTicks{label: plainLabel}.Ticks(0.1, 10)
	var labelled []string
	for _, tk := range ticks {
		if tk.Label != "" {
			labelled = append(labelled, tk.Label)
		}
	}
	assert.Equal(t, []string{"0.1", "1", "10"}, labelled)
	assert.Len(t, ticks, 3+8+8)
}

// TestRooflineLabelsDoNotOverlap: points close on the chart share one label
// ("#1, #2"), the others keep theirs (SYNTHETIC points: #1 and #2 a few
// percent apart, #3 far away).
func TestRooflineLabelsDoNotOverlap(t *testing.T) {
	xys := plotter.XYs{{X: 10, Y: 1e12}, {X: 10.5, Y: 1.05e12}, {X: 1000, Y: 1e14}}
	got := mergeCloseLabels(xys, []string{"#1", "#2", "#3"}, 0.1, 1e4, 1e9, 1e16)
	if want := []string{"#1, #2", "", "#3"}; !slices.Equal(got, want) {
		t.Errorf("labels = %q, want %q", got, want)
	}
}
