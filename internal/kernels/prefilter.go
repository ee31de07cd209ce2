package kernels

import (
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// needs is what a pattern cannot match without: a name holds at least one
// of these literals (folded ones compared with the name in ASCII lower
// case) or the pattern does not match it. A nil needs says nothing, and the
// pattern is run. Kernel names run to kilobytes and (?i) alternations make
// the regexp engine backtrack through each, so most patterns are ruled out
// by a substring search first.
type needs struct {
	exact, folded []string
}

// rules reports whether the ASCII name (lower: its lower case) cannot
// match.
func (n *needs) rules(name, lower string) bool {
	for _, s := range n.exact {
		if strings.Contains(name, s) {
			return false
		}
	}
	for _, s := range n.folded {
		if strings.Contains(lower, s) {
			return false
		}
	}
	return true
}

// prefilter is the needs of an RE2 pattern, or nil where it cannot say: a
// pattern that can match without any literal ("\d+", "a?"). A non-ASCII
// literal, whose case folds need not be ASCII's, counts as none: its part
// of the pattern needs nothing.
func prefilter(pattern string) *needs {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil
	}
	lits, ok := required(re.Simplify())
	if !ok {
		return nil
	}
	n := &needs{}
	for _, l := range lits {
		if l.fold {
			n.folded = append(n.folded, strings.ToLower(l.s))
		} else {
			n.exact = append(n.exact, l.s)
		}
	}
	return n
}

type literal struct {
	s    string
	fold bool
}

// required is a set of literals one of which every match of re holds, and
// whether there is one.
func required(re *syntax.Regexp) ([]literal, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		s := string(re.Rune)
		if s == "" || !isASCII(s) {
			return nil, false
		}
		return []literal{{s, re.Flags&syntax.FoldCase != 0}}, true
	case syntax.OpCapture, syntax.OpPlus:
		return required(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min < 1 {
			return nil, false
		}
		return required(re.Sub[0])
	case syntax.OpConcat:
		// Any part's literals will do: take the part whose shortest
		// literal is longest.
		var best []literal
		found := false
		for _, sub := range re.Sub {
			if lits, ok := required(sub); ok && (!found || shortest(lits) > shortest(best)) {
				best, found = lits, true
			}
		}
		return best, found
	case syntax.OpAlternate:
		var all []literal
		for _, sub := range re.Sub {
			lits, ok := required(sub)
			if !ok {
				return nil, false
			}
			all = append(all, lits...)
		}
		return all, len(all) > 0
	}
	return nil, false
}

func shortest(lits []literal) int {
	n := -1
	for _, l := range lits {
		if n < 0 || len(l.s) < n {
			n = len(l.s)
		}
	}
	return n
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// asciiLower is s in lower case, or false where s is not ASCII (the
// prefilter is then not used: Unicode case folding is not ASCII's).
func asciiLower(s string) (string, bool) {
	upper := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			return "", false
		}
		upper = upper || 'A' <= c && c <= 'Z'
	}
	if !upper {
		return s, true
	}
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b), true
}
