package model

import (
	"math"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Critical values of Student's t from published tables: P(|T| >= t) = p.
// They check gonum's distribution as this package calls it (two-sided, any
// sign of t, fractional df).
func TestStudentTwoSided(t *testing.T) {
	for _, c := range []struct{ t, df, p float64 }{
		{12.706205, 1, 0.05},
		{4.302653, 2, 0.05},
		{2.776445, 4, 0.05},
		{2.228139, 10, 0.05},
		{9.924843, 2, 0.01},
		{1.959964, 1e7, 0.05},      // the normal limit
		{2, 2, 1 - 2/math.Sqrt(6)}, // closed form for df = 2: 1 − t/√(t²+2)
		{1, 1, 0.5},                // df = 1 is Cauchy: 1 − 2·atan(t)/π
		{0, 3, 1},
		{math.Inf(1), 3, 0},
	} {
		assert.InDelta(t, c.p, StudentTwoSided(c.t, c.df), 1e-6, "t=%v df=%v", c.t, c.df)
		assert.InDelta(t, c.p, StudentTwoSided(-c.t, c.df), 1e-6, "symmetric")
	}
	// Fractional df, as Welch-Satterthwaite gives: 0.0725761 is 1 minus
	// Simpson's rule (200,000 steps) over the t density with df = 2.5 from
	// −3 to 3, in Python with math.gamma; it lies between df = 2 and 3.
	assert.InDelta(t, 0.0725761, StudentTwoSided(3, 2.5), 1e-6)
	assert.Greater(t, StudentTwoSided(3, 2), StudentTwoSided(3, 2.5))
	assert.Greater(t, StudentTwoSided(3, 2.5), StudentTwoSided(3, 3))
	// The doc's claim about a "two standard errors" rule (package compare):
	// |t| > 2 with 2 to 4 degrees of freedom is a 12% to 18% false-alarm rate.
	assert.InDelta(t, 0.1835, StudentTwoSided(2, 2), 5e-4)
	assert.InDelta(t, 0.1161, StudentTwoSided(2, 4), 5e-4)
}

func TestWelch(t *testing.T) {
	// Equal spreads and counts: Welch is Student's t with 2(n−1) df.
	a := Summary{N: 3, MeanMS: 10, SDMS: 1}
	b := Summary{N: 3, MeanMS: 10 + 2.776445*math.Sqrt(2.0/3), SDMS: 1}
	assert.InDelta(t, 0.05, Welch(a, b), 1e-6)
	assert.InDelta(t, 0.05, Welch(b, a), 1e-6, "either direction")
	assert.Equal(t, 1.0, Welch(a, a))
	z := Summary{N: 2, MeanMS: 5}
	assert.Equal(t, 1.0, Welch(z, z), "no spread, same mean")
	assert.Equal(t, 0.0, Welch(z, Summary{N: 2, MeanMS: 6}), "no spread, different means")
	// Unequal spreads: 10, 11, 12 against 14, 18, 22 is t = 2.94059 with
	// 2.24903 Welch-Satterthwaite df (Python's statistics), p = 0.0859446
	// (1 minus Simpson's rule over the t density, as above).
	x, y := Summarize([]float64{10, 11, 12}), Summarize([]float64{14, 18, 22})
	assert.InDelta(t, 0.0859446, Welch(x, y), 1e-6)
}

func TestSummarizeWarmup(t *testing.T) {
	w := func(v float64) *float64 { return &v }
	for _, c := range []struct {
		name string
		ms   []float64
		want Summary
	}{
		// SYNTHETIC inputs, as earlier H200 recordings had them before their
		// workloads warmed up (fixtures/runs has since been recorded again):
		// a first repeat far slower. Expected values: Python's statistics.
		{"earlier tiny-llama decode", []float64{118.67505100000386, 11.11253199999851, 11.272524999995426},
			Summary{N: 2, MeanMS: 11.1925285, SDMS: 0.113132135, WarmupMS: w(118.67505100000386)}},
		{"earlier llama3-8b decode", []float64{345.27424899999914, 151.95788600000526, 144.62837799999306},
			Summary{N: 2, MeanMS: 148.293132, SDMS: 5.18274481, WarmupMS: w(345.27424899999914)}},
		{"earlier tiny-llama prefill: kept", []float64{3.1995339999966177, 3.2512160000024437, 2.977770000001101},
			Summary{N: 3, MeanMS: 3.14284, SDMS: 0.145271594}},
		{"two repeats: never dropped", []float64{100, 10}, Summary{N: 2, MeanMS: 55, SDMS: 63.639610307}},
		{"1.5x exactly: kept", []float64{15, 10, 10}, Summary{N: 3, MeanMS: 11.666666667, SDMS: 2.886751346}},
		{"a slow later repeat: kept", []float64{10, 30, 10}, Summary{N: 3, MeanMS: 16.666666667, SDMS: 11.547005384}},
		{"even count of others: their median", []float64{16, 10, 10, 11, 12}, Summary{N: 4, MeanMS: 10.75, SDMS: 0.957427108, WarmupMS: w(16)}},
		{"one", []float64{7}, Summary{N: 1, MeanMS: 7}},
		{"none", nil, Summary{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := Summarize(c.ms)
			assert.Equal(t, c.want.N, got.N)
			assert.InDelta(t, c.want.MeanMS, got.MeanMS, 1e-8)
			assert.InDelta(t, c.want.SDMS, got.SDMS, 1e-6, "python statistics.stdev")
			if c.want.WarmupMS == nil {
				assert.Nil(t, got.WarmupMS)
				assert.Equal(t, c.ms, Sample{Repeats: c.ms}.Kept())
			} else {
				require.NotNil(t, got.WarmupMS)
				assert.Equal(t, *c.want.WarmupMS, *got.WarmupMS)
				assert.Equal(t, c.ms[1:], Sample{Repeats: c.ms}.Kept())
			}
		})
	}
}

func TestDropped(t *testing.T) {
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
	s := Summarize([]float64{118.67505100000386, 11.11253199999851, 11.272524999995426})
	assert.Equal(t, "first of 3 repeats, 118.675 ms, dropped: over 1.5× the median of the other repeats (warm-up)", Dropped(s, f))
	assert.Empty(t, Dropped(Summarize([]float64{1, 1, 1}), f))
	drop, med := Sample{Repeats: []float64{118.67505100000386, 11.11253199999851, 11.272524999995426}}.Warmup()
	assert.Equal(t, 1, drop)
	assert.InDelta(t, 11.1925285, med, 1e-9)
}

func TestPairedRatioIsTheMedianOfPairs(t *testing.T) {
	// The second pair ran while the machine was slow: both sides doubled.
	// The pairs' ratios are 1.1, 1.1, 1.2; the medians' ratio would be
	// 20/10 = 2.
	r, ok := PairedRatio([]float64{11, 22, 12}, []float64{10, 20, 10})
	require.True(t, ok)
	assert.InDelta(t, 1.1, r.Median, 1e-12)
	assert.Equal(t, 3, r.Pairs)
	assert.InDelta(t, 1.1, r.Q1, 1e-12)
	assert.InDelta(t, 1.125, r.Q3, 1e-12, "linear interpolation between order statistics (gonum stat.LinInterp)")

	for _, c := range []struct{ on, off []float64 }{
		{nil, nil}, {[]float64{1}, []float64{1, 2}}, {[]float64{1}, []float64{0}}, {[]float64{-1}, []float64{1}},
	} {
		_, ok := PairedRatio(c.on, c.off)
		assert.False(t, ok, "%v %v", c.on, c.off)
	}
}

// TestSummarizeHuge (issue 16): repeats so large (SYNTHETIC) that their
// squares, or their picoseconds, pass the largest float64 still give a
// finite mean and sd.
func TestSummarizeHuge(t *testing.T) {
	s := Summarize([]float64{2e200, 1e200, 3e200})
	assert.InEpsilon(t, 2e200, s.MeanMS, 1e-12)
	assert.InEpsilon(t, 1e200, s.SDMS, 1e-12)
	s = Summarize([]float64{1e300, 1e300})
	assert.Equal(t, 1e300, s.MeanMS)
	assert.Zero(t, s.SDMS)
	assert.Equal(t, 1e300, RoundMS(1e300))
	assert.Equal(t, 1.000000001, RoundMS(1.0000000012))
}

// TestWarmupPerStep: generates of different lengths are compared per step,
// and every slow leading one is dropped (the recorded hf_generate.py
// shape: a 4-token warm-up generate, a 32-token one of new shapes at 52.6
// ms a step, then steady ones at 5.4 and 6.1 ms); under the old rule only
// the first went, and the 32-token warm-up stayed in the mean.
func TestWarmupPerStep(t *testing.T) {
	s := Sample{Repeats: []float64{618, 1630, 167.4, 190.1}, Steps: []float64{3, 31, 31, 31}}
	n, med := s.Warmup()
	assert.Equal(t, 2, n)
	assert.InDelta(t, 190.1/31, med, 1e-9, "the weighted median of the others, per step")
	ms, steps := s.PerStep()
	assert.InDelta(t, (167.4+190.1)/62, ms, 1e-9)
	assert.Equal(t, 62.0, steps)
	sum := s.Summary()
	assert.Equal(t, 2, sum.WarmupN)
	assert.Equal(t, 618.0+1630, *sum.WarmupMS)
	assert.Equal(t, "first 2 of 4 repeats, 2248.000 ms in all, dropped: over 1.5× the median of the other repeats (warm-up)",
		Dropped(sum, func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }))

	// A short generate at the steady speed is not a warm-up, though its
	// wall time is far below the others'.
	n, _ = Sample{Repeats: []float64{24, 190, 180, 185}, Steps: []float64{4, 31, 31, 31}}.Warmup()
	assert.Equal(t, 0, n)
	// The repeats kept hold at least half the steps.
	n, _ = Sample{Repeats: []float64{9, 9, 1}}.Warmup()
	assert.Equal(t, 1, n, "both 9s are over 1.5x the others' median, 5, but dropping both leaves a third")
	n, _ = Sample{Repeats: []float64{90, 80, 1, 1}}.Warmup()
	assert.Equal(t, 2, n)
}

// TestBetween: the spread between runs is their least and most value, and
// a value's nearest point of it is itself inside, the edge outside.
func TestBetween(t *testing.T) {
	b := NewBetween([]float64{10.072020333, 6.471542667, 8})
	assert.Equal(t, Between{N: 3, MinMS: 6.471542667, MaxMS: 10.072020333}, b)
	for _, c := range []struct{ v, want float64 }{
		{7, 7},
		{6.471542667, 6.471542667},
		{10.072020333, 10.072020333},
		{11, 10.072020333},
		{1, 6.471542667},
	} {
		assert.Equal(t, c.want, Nearest(b, c.v), "%v", c.v)
	}
	assert.Equal(t, Between{}, NewBetween(nil))
}
