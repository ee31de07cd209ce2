package rundir

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInProcessOverheadIsTheMedianOfPairs(t *testing.T) {
	o := newInProcess("m", []float64{12, 24, 30}, []float64{10, 20, 10})
	require.NotNil(t, o)
	assert.Equal(t, 24.0, o.OnMS)
	assert.Equal(t, 10.0, o.OffMS)
	assert.Equal(t, 3, o.Pairs)
	assert.InDelta(t, 1.2, o.Median, 1e-12, "pairs 1.2, 1.2, 3: median 1.2")

	assert.Nil(t, newInProcess("m", nil, []float64{1}), "no repeats on")
	assert.Nil(t, newInProcess("m", []float64{1, 2}, []float64{1}), "not pairs")
	assert.Nil(t, newInProcess("m", []float64{1}, []float64{0}), "a zero time")
}

func TestOverheadTextSaysWhichMeasureItIs(t *testing.T) {
	across := Overhead{PlainMS: 100, CuptiMS: 150, Repeats: 3}
	txt := overheadText(across)
	assert.Contains(t, txt, "1.500x")
	assert.Contains(t, txt, "did not measure it in one process")
	assert.NotContains(t, txt, "**")

	both := across
	both.InProcess = newInProcess("alternating", []float64{102}, []float64{100})
	both.Reference = newInProcess("alternating", []float64{130}, []float64{100})
	txt = overheadText(both)
	assert.Contains(t, txt, "Overhead: **1.020x**")
	assert.Contains(t, txt, "in the recorded process, the median over 1 pairs")
	assert.Contains(t, txt, "Across processes")
	assert.Contains(t, txt, "1.500x", "the cross-process figure is still given")
	assert.Contains(t, txt, "torch.profiler (CUDA activity) cost 1.300x")
}
