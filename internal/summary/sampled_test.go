package summary

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSampled: a kernel's sample is the configurations the deep pass
// profiled, of those the timeline saw, weighted by their time there.
func TestSampled(t *testing.T) {
	byConfig := map[string]float64{"(1, 1, 1) (32, 1, 1)": 30, "(8, 1, 1) (256, 1, 1)": 60, "(2, 1, 1) (64, 1, 1)": 10}
	s := sampled([]string{"(8, 1, 1) (256, 1, 1)", "(2, 1, 1) (64, 1, 1)", "(9, 9, 9) (1, 1, 1)"}, byConfig)
	require.NotNil(t, s)
	assert.Equal(t, 2, s.Configs, "a profiled configuration the timeline never saw counts for nothing")
	assert.Equal(t, 3, s.Of)
	assert.InDelta(t, 0.7, s.Share, 1e-12)
	assert.Nil(t, sampled([]string{"x"}, nil), "no timeline: no sample")
}
