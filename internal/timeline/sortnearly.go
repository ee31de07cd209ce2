package timeline

import "slices"

// sortNearly's bounds: the farthest it moves one value, and the most moves
// a value on average, before it leaves the rest to a general sort.
const (
	nearlyMaxMove = 64
	nearlyBudget  = 8
)

// sortNearly sorts s by cmp, which must be a total order (so that any
// sort gives the same result). The CUPTI library's records come nearly in
// order: a buffer holds its activities in the order they completed, its
// calls in the order they returned. An insertion sort moves each value
// the short way it is out of place; where one must go farther than
// nearlyMaxMove, or the moves pass nearlyBudget a value, slices.SortFunc
// sorts the whole, and general is true.
func sortNearly[T any](s []T, cmp func(a, b T) int) (general bool) {
	budget := nearlyBudget * len(s)
	for i := 1; i < len(s); i++ {
		if cmp(s[i-1], s[i]) <= 0 {
			continue
		}
		v, j := s[i], i-1
		for j > 0 && cmp(s[j-1], v) > 0 && i-j < nearlyMaxMove {
			j--
		}
		if budget -= i - j; budget < 0 || (j > 0 && cmp(s[j-1], v) > 0) {
			slices.SortFunc(s, cmp)
			return true
		}
		copy(s[j+1:i+1], s[j:i])
		s[j] = v
	}
	return false
}
