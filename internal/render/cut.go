// Cutting a table column's cells for a terminal so that they read apart.

package render

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/llm-perf-opt/deepprof/internal/input"
)

// cutColumn cuts the cells of one column to w cells, "…" marking each cut,
// so that cells that differ still read apart; equal cells read alike. A
// cut keeps a cell's start. Cells whose cuts read alike are cut in the
// middle instead (middleCuts): about half of w their start, "…", and the
// rest their text from a little before a point where it departs from
// another. Cells that still read alike show more of that text, past w,
// until they differ.
func cutColumn(column []string, w int) []string {
	var names []string // the distinct cells
	index := map[string]int{}
	for _, c := range column {
		if _, ok := index[c]; !ok {
			index[c] = len(names)
			names = append(names, c)
		}
	}
	shown := make([]string, len(names))
	for i, c := range names {
		shown[i] = input.Truncate(c, w, "…")
	}
	head := max(0, (w-1)/2)
	cut := middleCuts(names, shown, alike(shown), head, w-1-head)
	for i, m := range cut {
		shown[i] = cutMiddle(names[i], m.head, m.rest, m.from)
	}
	for groups := alike(shown); len(groups) > 0; groups = alike(shown) {
		for _, idx := range groups {
			for _, i := range idx {
				if shown[i] == names[i] {
					continue // whole: the others of its group give
				}
				m := cut[i]
				if m == nil {
					m = &middle{head: head, rest: w - 1 - head}
					cut[i] = m
				}
				m.rest++
				shown[i] = cutMiddle(names[i], m.head, m.rest, m.from)
			}
		}
	}
	out := make([]string, len(column))
	for i, c := range column {
		out[i] = shown[index[c]]
	}
	return out
}

// A middle is a cut in the middle (cutMiddle): the cells of the start,
// the cells after "…", and the byte offset they start from.
type middle struct{ head, rest, from int }

// middleCuts cuts in the middle the names of groups (distinct names whose
// cuts, shown, read alike within each group): each from a third of rest
// before a point where it departs from another of them, the nearest
// first. Each takes the first of these that reads apart from every other
// name shown, as one matching of names to cuts (augmenting paths) finds
// them; one left without takes its first. Names whole in shown stay whole.
func middleCuts(names, shown []string, groups [][]int, head, rest int) map[int]*middle {
	var order []int // the names to cut
	for _, idx := range groups {
		for _, i := range idx {
			if shown[i] != names[i] {
				order = append(order, i)
			}
		}
	}
	cutting := map[int]bool{}
	for _, i := range order {
		cutting[i] = true
	}
	taken := map[string]bool{} // shown by the names that stay
	for i, c := range shown {
		if !cutting[i] {
			taken[c] = true
		}
	}
	type option struct {
		text string
		from int
	}
	options := map[int][]option{}
	departs := departures(names, order)
	for _, i := range order {
		for _, at := range departs[i] {
			from := max(0, at-rest/3)
			c := cutMiddle(names[i], head, rest, from)
			if o := options[i]; !taken[c] && (len(o) == 0 || o[len(o)-1].text != c) {
				options[i] = append(o, option{c, from})
			}
		}
	}
	holder := map[string]int{}
	var claim func(i int, seen map[string]bool) bool
	claim = func(i int, seen map[string]bool) bool {
		for _, o := range options[i] {
			if seen[o.text] {
				continue
			}
			seen[o.text] = true
			if j, held := holder[o.text]; !held || claim(j, seen) {
				holder[o.text] = i
				return true
			}
		}
		return false
	}
	for _, i := range order {
		claim(i, map[string]bool{})
	}
	cut := map[int]*middle{}
	for _, i := range order {
		m := &middle{head: head, rest: rest}
		if len(options[i]) > 0 {
			m.from = options[i][0].from
		}
		for _, o := range options[i] {
			if j, held := holder[o.text]; held && j == i {
				m.from = o.from
				break
			}
		}
		cut[i] = m
	}
	return cut
}

// alike groups the indexes of the strings of shown that are one, in
// order.
func alike(shown []string) [][]int {
	by := map[string][]int{}
	var order []string
	for i, c := range shown {
		if by[c] == nil {
			order = append(order, c)
		}
		by[c] = append(by[c], i)
	}
	var groups [][]int
	for _, c := range order {
		if len(by[c]) > 1 {
			groups = append(groups, by[c])
		}
	}
	return groups
}

// departures are, for each of the names idx, the byte offsets of the
// first runes where it departs from the others (past the prefix it shares
// with one of them), the nearest (the latest) first. In the names' sorted
// order the prefix two share is the least of those shared by the
// neighbours between them: each offset is one step down those, found by
// jumping to the next smaller one.
func departures(names []string, idx []int) map[int][]int {
	sorted := slices.Clone(idx)
	slices.SortFunc(sorted, func(a, b int) int { return strings.Compare(names[a], names[b]) })
	n := len(sorted)
	if n < 2 {
		return nil
	}
	common := make([]int, n-1) // common[k]: shared by sorted[k] and sorted[k+1]
	for k := range common {
		common[k] = sharedPrefix(names[sorted[k]], names[sorted[k+1]])
	}
	prevLess, nextLess := make([]int, n-1), make([]int, n-1)
	var stack []int
	for k := range common {
		for len(stack) > 0 && common[stack[len(stack)-1]] >= common[k] {
			stack = stack[:len(stack)-1]
		}
		prevLess[k] = -1
		if len(stack) > 0 {
			prevLess[k] = stack[len(stack)-1]
		}
		stack = append(stack, k)
	}
	stack = stack[:0]
	for k := n - 2; k >= 0; k-- {
		for len(stack) > 0 && common[stack[len(stack)-1]] >= common[k] {
			stack = stack[:len(stack)-1]
		}
		nextLess[k] = n - 1
		if len(stack) > 0 {
			nextLess[k] = stack[len(stack)-1]
		}
		stack = append(stack, k)
	}
	out := map[int][]int{}
	for k, i := range sorted {
		var at []int
		for j := k - 1; j >= 0; j = prevLess[j] {
			at = append(at, common[j])
		}
		for j := k; j < n-1; j = nextLess[j] {
			at = append(at, common[j])
		}
		slices.Sort(at)
		slices.Reverse(at)
		out[i] = slices.Compact(at)
	}
	return out
}

// sharedPrefix is the length in bytes of the prefix a and b share, whole
// runes.
func sharedPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) {
		r, size := utf8.DecodeRuneInString(a[n:])
		if q, _ := utf8.DecodeRuneInString(b[n:]); q != r {
			break
		}
		n += size
	}
	return n
}

// cutMiddle is s cut to its first head cells, "…", and rest cells more:
// its end where that holds the byte offset from, else its text from
// there, cut with "…". s whole where it fits.
func cutMiddle(s string, head, rest, from int) string {
	if input.Width(s) <= head+1+rest {
		return s
	}
	start := input.Truncate(s, head, "")
	from = max(from, len(start))
	for from > len(start) && from < len(s) && !utf8.RuneStart(s[from]) {
		from--
	}
	if input.Width(s[from:]) <= rest {
		return start + "…" + input.TruncateStart(s[len(start):], rest)
	}
	return start + "…" + input.Truncate(s[from:], rest, "…")
}
