package model

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDecimals(t *testing.T) {
	// One number of decimals per column: the smallest non-zero value keeps
	// three significant digits, within [least, 9].
	for _, tt := range []struct {
		values []float64
		least  int
		want   int
	}{
		{[]float64{0.2136, 0.0842}, 3, 4},
		{[]float64{0.2136, 0.00534}, 3, 5},
		{[]float64{0.1, 0.1}, 3, 3},      // 0.1 needs 3 decimals for 3 digits
		{[]float64{0.0999, 1}, 3, 4},     // just under the 0.1 boundary
		{[]float64{1.5, 250}, 3, 3},      // large values: the floor wins
		{[]float64{0, 0}, 3, 3},          // no non-zero value
		{[]float64{1e-12}, 3, 9},         // capped
		{[]float64{-0.005, 0.2}, 2, 5},   // magnitude, not sign
		{[]float64{0.00100, 0.5}, 3, 5},  // exactly 1e-3
		{[]float64{0.000999, 0.5}, 3, 6}, // just under 1e-3
	} {
		assert.Equal(t, tt.want, Decimals(tt.values, tt.least), "%v", tt.values)
	}
}
