package timeline

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestSortNearly: whatever the order, sortNearly's result is
// slices.SortFunc's: sorted, blocks reversed (the synthetic records'
// order), values far out of place (past nearlyMaxMove), many short moves
// (past nearlyBudget), and random orders. The values are pairs whose
// first half ties, ordered totally by the second.
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
	r := rand.New(rand.NewPCG(1, 2))
	cases := map[string][]pair{
		"empty":           nil,
		"sorted":          make(1000, func(i int) int { return i / 3 }),
		"blocks reversed": make(1000, func(i int) int { return i/16*16 + 15 - i%16 }),
		"one far":         append(make(1000, func(i int) int { return i + 10 }), pair{0, -1}),
		"every other":     make(1000, func(i int) int { return i + 20*(i%2) }),
		"reversed":        make(1000, func(i int) int { return -i }),
	}
	for i := range 20 {
		cases["random "+string(rune('a'+i))] = make(r.IntN(300), func(int) int { return r.IntN(50) })
	}
	for name, s := range cases {
		want := slices.Clone(s)
		slices.SortFunc(want, order)
		sortNearly(s, order)
		assert.Equal(t, want, s, name)
	}
}
