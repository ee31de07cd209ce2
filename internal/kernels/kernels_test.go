package kernels_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/model"
)

// launch is a SYNTHETIC launch of kernel k on device dev lasting ns.
func launch(k string, dev model.DeviceID, ns float64) *model.Launch {
	return &model.Launch{Kernel: k, Device: dev, Line: 7, ID: 3,
		Duration: model.Value{Base: ns, Unit: "ns", Valid: true}}
}

func TestAggregateSortTop(t *testing.T) {
	a := model.NewKernelAggregator()
	for _, l := range []*model.Launch{
		launch("gemm", 0, 3000), launch("gemm", 0, 1000), // 4 us in 2 calls
		launch("gemm", 1, 4000), // same name, other device: its own row
		launch("add", 0, 4000),  // ties gemm on device 0: name decides
		launch("norm", 0, 500),
	} {
		require.NoError(t, a.Add("s", l))
	}
	tab := a.Table("s")
	assert.Equal(t, int64(5), tab.Launches)
	assert.InDelta(t, 0.0125, tab.TotalMS, 1e-15)
	assert.Equal(t, []model.KernelStats{
		{KernelTotals: model.KernelTotals{Name: "add", Device: 0, TotalMS: 0.004, Calls: 1}, MeanMS: 0.004},
		{KernelTotals: model.KernelTotals{Name: "gemm", Device: 0, TotalMS: 0.004, Calls: 2}, MeanMS: 0.002},
		{KernelTotals: model.KernelTotals{Name: "gemm", Device: 1, TotalMS: 0.004, Calls: 1}, MeanMS: 0.004},
		{KernelTotals: model.KernelTotals{Name: "norm", Device: 0, TotalMS: 0.0005, Calls: 1}, MeanMS: 0.0005},
	}, tab.Kernels)

	top := tab.Top(2)
	assert.Len(t, top.Kernels, 2)
	assert.Equal(t, 4, top.Count, "the count before the cut is kept")
	assert.Len(t, tab.Top(0).Kernels, 4, "0 keeps all")
	assert.Len(t, tab.Top(10).Kernels, 4)
}

func TestAddRejects(t *testing.T) {
	a := model.NewKernelAggregator()
	noDur := launch("k", 0, 0)
	noDur.Duration.Valid = false
	err := a.Add("f.csv", noDur)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "f.csv:7: launch 3 has no duration")

	assert.Equal(t, 0, a.Table("f.csv").Count, "rejected launches are not counted")
}

func TestCovering(t *testing.T) {
	a := model.NewKernelAggregator()
	for i, ns := range []float64{50, 20, 15, 10, 5} { // SYNTHETIC: 100 ns in all
		require.NoError(t, a.Add("s", launch(string(rune('a'+i)), 0, ns*1e6)))
	}
	tab := a.Table("s")
	for _, tt := range []struct {
		share       float64
		least, most int
		want        int
	}{
		{0.5, 1, 0, 1},  // a alone is exactly half
		{0.51, 1, 0, 2}, // just past a boundary
		{0.9, 1, 0, 4},
		{0.9, 1, 3, 3}, // capped
		{0.1, 3, 0, 3}, // at least
		{1, 1, 0, 5},
	} {
		got := tab.Covering(tt.share, tt.least, tt.most)
		assert.Len(t, got.Kernels, tt.want, "%+v", tt)
	}
	assert.InDelta(t, 0.85, tab.Covering(0.8, 1, 0).Share(), 1e-12)
}

func TestSpread(t *testing.T) {
	a := model.NewKernelAggregator()
	a.KeepSpread()
	for _, ns := range []float64{4000, 1000, 3000, 2000} { // 1..4 us, out of order
		require.NoError(t, a.Add("s", launch("gemm", 0, ns)))
	}
	require.NoError(t, a.Add("s", launch("norm", 0, 500)))
	tab := a.Table("s")
	require.Len(t, tab.Kernels, 2)
	g := tab.Kernels[0]
	require.NotNil(t, g.Spread)
	assert.InDelta(t, 0.001, g.MinMS, 1e-15)
	assert.InDelta(t, 0.0025, g.MedianMS, 1e-15, "even count: the mean of the two middle launches")
	assert.InDelta(t, 0.004, g.MaxMS, 1e-15)
	// Sample standard deviation of 1,2,3,4 us: sqrt(5/3) us.
	assert.InDelta(t, 0.0012909944487358056, g.StdDevMS, 1e-15)
	n := tab.Kernels[1]
	assert.Equal(t, &model.Spread{MinMS: 0.0005, MedianMS: 0.0005, MaxMS: 0.0005, StdDevMS: 0}, n.Spread, "one launch: no deviation")

	// Without KeepSpread there is none.
	b := model.NewKernelAggregator()
	require.NoError(t, b.Add("s", launch("gemm", 0, 1000)))
	assert.Nil(t, b.Table("s").Kernels[0].Spread)
}

// TestAddSumOverflow (issue 16): durations each in range whose sum is not
// (SYNTHETIC: four launches of 1e308 ns) are a positioned error at the
// launch that overflows, never a table of +Inf ms.
func TestAddSumOverflow(t *testing.T) {
	a := model.NewKernelAggregator()
	a.KeepSpread()
	var err error
	for i := 0; i < 4 && err == nil; i++ {
		l := launch("k", 0, 1e308)
		l.Line, l.ID, l.DurationMetric = 3+i, int64(i), model.DurationMetric
		l.Duration.Orig, l.Duration.OrigUnit = "1e308", "ns"
		err = a.Add("f.csv", l)
	}
	require.EqualError(t, err, `f.csv:4: launch 1: gpu__time_duration.sum: "1e308" ns brings the total GPU time of the launches past the largest number a float64 holds (1.8e+308): not a real value`)
	tab := a.Table("f.csv")
	assert.Equal(t, int64(1), tab.Launches, "the launch that overflows is not counted")
	assert.Equal(t, 1e302, tab.TotalMS)
	require.NoError(t, a.Add("f.csv", launch("k", 0, 0)))
	sp := a.Table("f.csv").Kernels[0].Spread
	assert.InDelta(t, 1e302/math.Sqrt2, sp.StdDevMS, 1e288, "a spread of huge durations is finite")
}
