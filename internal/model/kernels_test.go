package model

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSpreadOfMixedDurations: durations kept in four bytes (whole ns up to
// math.MaxUint32) and those kept in eight (a fraction of a ns, or more)
// give one kernel's spread together, as the durations themselves do.
func TestSpreadOfMixedDurations(t *testing.T) {
	durs := []float64{5e9, 1200, 0.5, 1200.25, math.MaxUint32, math.MaxUint32 + 1, 800}
	a := NewKernelAggregator()
	a.KeepSpread()
	for i, ns := range durs {
		require.NoError(t, a.Add("x", &Launch{Line: i + 1, ID: int64(i), Kernel: "k", Duration: Value{Base: ns, Unit: "ns", Valid: true}}))
	}
	tab := a.Table("x")
	require.Len(t, tab.Kernels, 1)
	sp := tab.Kernels[0].Spread
	require.NotNil(t, sp)
	assert.Equal(t, 0.5/1e6, sp.MinMS)
	assert.Equal(t, 1200.25/1e6, sp.MedianMS)
	assert.Equal(t, 5e9/1e6, sp.MaxMS)
	assert.Equal(t, kernelSpread(append([]float64(nil), durs...)), sp)
	assert.Len(t, a.m[kernelKey{"k", 0}].durs.small, 3, "whole ns below 4.29 s in four bytes")
}
