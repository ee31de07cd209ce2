package model

import (
	"fmt"
	"math"
	"strconv"
)

// Decimals picks one number of decimals for a column of values, so that the
// smallest non-zero magnitude shows at least three significant digits, with
// at least least and at most 9 decimals.
func Decimals(values []float64, least int) int {
	smallest := math.Inf(1)
	for _, v := range values {
		if a := math.Abs(v); a > 0 && a < smallest {
			smallest = a
		}
	}
	if math.IsInf(smallest, 1) {
		return least
	}
	d := 2 - int(math.Floor(math.Log10(smallest)))
	return max(least, min(d, 9))
}

// Fixed formats v with d decimals.
func Fixed(v float64, d int) string { return strconv.FormatFloat(v, 'f', d, 64) }

// FormatPercent formats a fraction as a percentage with one decimal.
func FormatPercent(f float64) string { return Fixed(100*f, 1) + "%" }

// FormatMS prints a time in ms for a one-line summary, with at least three
// significant digits.
func FormatMS(v float64) string { return Fixed(v, Decimals([]float64{v}, 0)) }

// ShareText prints a share as a percentage with one decimal, or "all" for
// an infinite one (a part that was zero before).
func ShareText(f float64) string {
	if math.IsInf(f, 0) {
		return "all"
	}
	return fmt.Sprintf("%.1f%%", 100*f)
}
