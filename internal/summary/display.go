package summary

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/llm-perf-opt/deepprof/internal/model"
)

// maxDisplay bounds a display name, in runes.
const maxDisplay = 100

// qualifier is a namespace or class prefix ("at::native::"), left out of a
// template argument shown in a display name.
var qualifier = regexp.MustCompile(`(?:\(anonymous namespace\)::|<unnamed>::|[A-Za-z_][A-Za-z0-9_]*::)+`)

// DisplayNames gives each kernel name of a report a short name that no
// other in the list shares: its function name (Short), and for functions
// with several instances in the list, the first template argument that no
// other instance has ("elementwise_kernel<…, 4, …>"); "#1", "#2" are added
// where even that does not tell them apart. The full names stay in
// kernels.json and summary.json; the Markdown lists them under the table.
func DisplayNames(names []string) []string {
	out := make([]string, len(names))
	groups := map[string][]int{}
	for i, n := range names {
		out[i] = Short(n)
		groups[out[i]] = append(groups[out[i]], i)
	}
	for base, idx := range groups {
		if len(idx) < 2 {
			continue
		}
		args := make([][]string, len(idx))
		for j, i := range idx {
			args[j] = templateArgs(names[i])
		}
		// Each instance's telling argument, cut to the shortest length
		// (32 to 64 runes) at which the group's cuts still differ.
		tell := make([]string, len(idx))
		at := make([]int, len(idx))
		for j := range idx {
			at[j] = firstDiffering(args, j)
			if at[j] >= 0 {
				tell[j] = qualifier.ReplaceAllString(args[j][at[j]], "")
			}
		}
		cut := 32
		for ; cut < 64 && !distinctCuts(tell, cut); cut += 4 {
		}
		for j, i := range idx {
			if k := at[j]; k >= 0 {
				a := cutRunes(tell[j], cut)
				pre, post := "", ""
				if k > 0 {
					pre = "…, "
				}
				if k < len(args[j])-1 {
					post = ", …"
				}
				out[i] = base + "<" + pre + a + post + ">"
			}
		}
	}
	// Whatever is still shared (the same instance with other parameters,
	// or a cut that met another name) gets its rank in the list.
	seen := map[string]int{}
	for i, d := range out {
		if r := []rune(d); len(r) > maxDisplay {
			d = string(r[:maxDisplay-1]) + "…"
		}
		out[i] = d
		seen[d]++
	}
	count := map[string]int{}
	for i, d := range out {
		if seen[d] > 1 {
			count[d]++
			out[i] = fmt.Sprintf("%s #%d", d, count[d])
		}
	}
	return out
}

// cutRunes is s cut to n runes, "…" marking a cut.
func cutRunes(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// distinctCuts says whether the non-empty strings of ss, each cut to n
// runes, differ from one another.
func distinctCuts(ss []string, n int) bool {
	seen := map[string]bool{}
	for _, s := range ss {
		if s == "" {
			continue
		}
		c := cutRunes(s, n)
		if seen[c] {
			return false
		}
		seen[c] = true
	}
	return true
}

// firstDiffering is the index of the first template argument in which
// instance j differs from every other instance of the group; -1 when none
// does.
func firstDiffering(args [][]string, j int) int {
	for k := range args[j] {
		unique := true
		for o := range args {
			if o != j && k < len(args[o]) && args[o][k] == args[j][k] {
				unique = false
				break
			}
		}
		if unique {
			return k
		}
	}
	return -1
}

// templateArgs are the top-level template arguments of a demangled name's
// function (the first <...> before its parameter list), trimmed.
func templateArgs(name string) []string {
	_, s := model.Signature(name)
	if s == "" {
		return nil
	}
	start := 0
	var out []string
	depth, from := 0, start+1
	for i := start; i < len(s); i++ {
		switch s[i] {
		case '<', '(', '[', '{':
			depth++
		case '>', ')', ']', '}':
			depth--
			if depth == 0 {
				return append(out, strings.TrimSpace(s[from:i]))
			}
		case ',':
			if depth == 1 {
				out = append(out, strings.TrimSpace(s[from:i]))
				from = i + 1
			}
		}
	}
	return out // unbalanced: what was read
}
