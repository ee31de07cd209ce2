package timeline

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestSortNearly: whatever the order, sortNearly's result is
// slices.SortFunc's, and the general sort is called only where a value is
// far out of place (past nearlyMaxMove) or the moves pass nearlyBudget a
// value: sorted; blocks of 16 reversed (the synthetic records' order, 7.5
// moves a value); one value 64, 65 and 1,000 places out; blocks of 32 reversed (15.5
// moves a value); the whole reversed; and random orders. The values are
// pairs whose first half ties, ordered totally by the second.
func TestSortNearly(t *testing.T) {
	type pair struct{ key, id int }
	order := func(a, b pair) int { return cmp.Or(cmp.Compare(a.key, b.key), cmp.Compare(a.id, b.id)) }
	make := func(n int, key func(i int) int) []pair {
		s := []pair{}
		for i := range n {
			s = append(s, pair{key(i), i})
		}
		return s
	}
	reversedBlocks := func(n int) func(i int) int { return func(i int) int { return i/n*n + n - 1 - i%n } }
	for _, tc := range []struct {
		name    string
		s       []pair
		general bool
	}{
		{"empty", nil, false},
		{"sorted", make(1000, func(i int) int { return i / 3 }), false},
		{"blocks of 16 reversed", make(1000, reversedBlocks(16)), false},
		{"a move of 64", append(make(64, func(i int) int { return i + 10 }), pair{0, -1}), false},
		{"a move of 65", append(make(65, func(i int) int { return i + 10 }), pair{0, -1}), true},
		{"one far", append(make(1000, func(i int) int { return i + 10 }), pair{0, -1}), true},
		{"blocks of 32 reversed", make(1000, reversedBlocks(32)), true},
		{"reversed", make(1000, func(i int) int { return -i }), true},
	} {
		want := slices.Clone(tc.s)
		slices.SortFunc(want, order)
		assert.Equal(t, tc.general, sortNearly(tc.s, order), "%s: the general sort", tc.name)
		assert.Equal(t, want, tc.s, tc.name)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 20 {
		s := make(r.IntN(300), func(int) int { return r.IntN(50) })
		want := slices.Clone(s)
		slices.SortFunc(want, order)
		sortNearly(s, order)
		assert.Equal(t, want, s, "random %d", i)
	}
}
