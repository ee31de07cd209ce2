package input

// Closest is the candidate with the smallest edit distance to s (Distance),
// ties going to the first in the list; "" when there are none: the one rule
// of every "did you mean" deepprof prints.
func Closest(s string, candidates []string) string {
	best, bestD := "", -1
	for _, c := range candidates {
		if c == s {
			continue
		}
		if d := Distance(s, c); bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// Distance is the edit distance between a and b, counted in bytes.
func Distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// MaxSuggestDistance is how far a name may be from one it is taken for a
// mistyping of.
const MaxSuggestDistance = 2

// Suggest is the candidate s is a mistyping of: the closest, within
// MaxSuggestDistance; "" for none.
func Suggest(s string, candidates []string) string {
	if c := Closest(s, candidates); c != "" && Distance(s, c) <= MaxSuggestDistance {
		return c
	}
	return ""
}
