// The short names a kernel is shown by, and who a figure is of: words
// every table and finding uses alike.

package facts

import (
	"regexp"
	"strings"
)

// maxDisplay bounds a display name, in runes.
const maxDisplay = 100

// qualifier is a namespace or class prefix ("at::native::"), left out of a
// template argument shown in a display name.
var qualifier = regexp.MustCompile(`(?:\(anonymous namespace\)::|<unnamed>::|[A-Za-z_][A-Za-z0-9_]*::)+`)

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
	_, s := Signature(name)
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

// Signature splits a demangled kernel name into its qualified function
// name (namespaces and classes kept; return type, template arguments and
// parameters dropped) and its template argument list as written, brackets
// included ("" when it has none):
//
//	std::enable_if<!T7, void>::type internal::gemvx::kernel<int, …>(T13) -> internal::gemvx::kernel, <int, …>
func Signature(demangled string) (qualified, templateArgs string) {
	s := strings.TrimSpace(demangled)
	withArgs := trimGroup(s, '(', ')')
	bare := trimGroup(withArgs, '<', '>')
	templateArgs = strings.TrimSpace(withArgs[len(bare):])
	return lastWord(bare), templateArgs
}

// lastWord is the last space-separated word of s outside brackets: a
// qualified name without the return type before it.
func lastWord(s string) string {
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '<', '(', '[':
			depth++
		case '>', ')', ']':
			depth--
		case ' ':
			if depth == 0 {
				start = i + 1
			}
		}
	}
	if w := s[start:]; w != "" {
		return w
	}
	return s
}

// trimGroup drops a trailing bracketed group ("(int, T2)", "<4, f<g>>") from
// s, matching brackets from the end; s is returned unchanged when it does not
// end with close or the brackets do not balance.
func trimGroup(s string, open, close byte) string {
	if !strings.HasSuffix(s, string(close)) {
		return s
	}
	depth := 0
	for i := len(s) - 1; i >= 0; i-- {
		switch s[i] {
		case close:
			depth++
		case open:
			depth--
			if depth == 0 {
				return strings.TrimSpace(s[:i])
			}
		}
	}
	return s
}
