package diff

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Critical values of Student's t from published tables: P(|T| >= t) = p.
func TestStudentTwoSided(t *testing.T) {
	for _, c := range []struct{ t, df, p float64 }{
		{12.706205, 1, 0.05},
		{4.302653, 2, 0.05},
		{2.776445, 4, 0.05},
		{2.228139, 10, 0.05},
		{9.924843, 2, 0.01},
		{1.959964, 1e7, 0.05},      // the normal limit
		{2, 2, 1 - 2/math.Sqrt(6)}, // closed form for df = 2: 1 − t/√(t²+2)
		{0, 3, 1},
		{math.Inf(1), 3, 0},
	} {
		assert.InDelta(t, c.p, studentTwoSided(c.t, c.df), 1e-6, "t=%v df=%v", c.t, c.df)
		assert.InDelta(t, c.p, studentTwoSided(-c.t, c.df), 1e-6, "symmetric")
	}
	// The doc's claim about a "two standard errors" rule: |t| > 2 with 2 to
	// 4 degrees of freedom is a 12% to 18% false-alarm rate.
	assert.InDelta(t, 0.1835, studentTwoSided(2, 2), 5e-4)
	assert.InDelta(t, 0.1161, studentTwoSided(2, 4), 5e-4)
}

func TestWelch(t *testing.T) {
	// Equal spreads and counts: Welch is Student's t with 2(n−1) df.
	a := StageStat{N: 3, MeanMS: 10, SDMS: 1}
	b := StageStat{N: 3, MeanMS: 10 + 2.776445*math.Sqrt(2.0/3), SDMS: 1}
	assert.InDelta(t, 0.05, Welch(a, b), 1e-6)
	assert.Equal(t, 1.0, Welch(a, a))
	z := StageStat{N: 2, MeanMS: 5}
	assert.Equal(t, 1.0, Welch(z, z), "no spread, same mean")
	assert.Equal(t, 0.0, Welch(z, StageStat{N: 2, MeanMS: 6}), "no spread, different means")
}

func TestSummarizeWarmup(t *testing.T) {
	w := func(v float64) *float64 { return &v }
	for _, c := range []struct {
		name string
		ms   []float64
		want StageStat
	}{
		// SYNTHETIC inputs, as earlier H200 recordings had them before their
		// workloads warmed up (fixtures/runs has since been recorded again):
		// a first repeat far slower. Expected values: Python's statistics.
		{"earlier tiny-llama decode", []float64{118.67505100000386, 11.11253199999851, 11.272524999995426},
			StageStat{N: 2, MeanMS: 11.1925285, SDMS: 0.113132135, WarmupMS: w(118.67505100000386)}},
		{"earlier llama3-8b decode", []float64{345.27424899999914, 151.95788600000526, 144.62837799999306},
			StageStat{N: 2, MeanMS: 148.293132, SDMS: 5.18274481, WarmupMS: w(345.27424899999914)}},
		{"earlier tiny-llama prefill: kept", []float64{3.1995339999966177, 3.2512160000024437, 2.977770000001101},
			StageStat{N: 3, MeanMS: 3.14284, SDMS: 0.145271594}},
		{"two repeats: never dropped", []float64{100, 10}, StageStat{N: 2, MeanMS: 55, SDMS: 63.639610307}},
		{"1.5x exactly: kept", []float64{15, 10, 10}, StageStat{N: 3, MeanMS: 11.666666667, SDMS: 2.886751346}},
		{"one", []float64{7}, StageStat{N: 1, MeanMS: 7}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := Summarize(c.ms)
			assert.Equal(t, c.want.N, got.N)
			assert.InDelta(t, c.want.MeanMS, got.MeanMS, 1e-8)
			assert.InDelta(t, c.want.SDMS, got.SDMS, 1e-6, "python statistics.stdev")
			if c.want.WarmupMS == nil {
				assert.Nil(t, got.WarmupMS)
			} else {
				require.NotNil(t, got.WarmupMS)
				assert.Equal(t, *c.want.WarmupMS, *got.WarmupMS)
			}
		})
	}
}
