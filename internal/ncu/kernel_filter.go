package ncu

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// KernelRegex builds a --kernel-name value that matches exactly the given
// kernel names, as the report writes them with --kernel-name-base demangled:
// "regex:^(?:a|b)$", every regular-expression metacharacter in a name quoted
// with regexp.QuoteMeta. Repeated names are written once, in first-seen
// order. No names gives "" (no kernel filter).
func KernelRegex(names []string) string {
	if len(names) == 0 {
		return ""
	}
	seen := make(map[string]bool, len(names))
	quoted := make([]string, 0, len(names))
	for _, n := range names {
		if seen[n] {
			continue
		}
		seen[n] = true
		quoted = append(quoted, regexp.QuoteMeta(n))
	}
	return "regex:^(?:" + strings.Join(quoted, "|") + ")$"
}

// KernelInvocation builds a --kernel-id value that matches the n-th
// invocation (from 1) of each of the given kernels, by the names
// --kernel-name-base gives: "::regex:^(a|b)$:n" (prefixTree). ncu counts invocations of
// each kernel apart and takes one --kernel-id, so one n serves every kernel
// (fixtures/logs/ncu-kernel-id-invocations.txt). A name holding ':', which
// would end the name field, is an error.
func KernelInvocation(names []string, n int) (string, error) {
	if len(names) == 0 || n < 1 {
		return "", fmt.Errorf("kernel invocation: want kernels and an invocation from 1, got %d kernel(s) and %d", len(names), n)
	}
	for _, name := range names {
		if strings.Contains(name, ":") {
			return "", fmt.Errorf("kernel invocation: %q holds ':', which ends the name in --kernel-id", name)
		}
	}
	return "::regex:^" + prefixTree(names) + "$:" + strconv.Itoa(n), nil
}

// prefixTree writes a regular expression that matches exactly the given
// strings, their common prefixes written once: "(a(b|c)|d)" for "ab", "ac"
// and "d". ncu matches its kernel filter against every launch's name: a
// backtracking matcher then compares each shared prefix once, not once an
// alternative (docs/measurements.md). Groups capture: a "(?:" would put a
// ':' in --kernel-id. Metacharacters are quoted with regexp.QuoteMeta.
func prefixTree(names []string) string {
	set := slices.Clone(names)
	slices.Sort(set)
	set = slices.Compact(set)
	var b strings.Builder
	writeTree(&b, set)
	return b.String()
}

// writeTree writes the strings of set (sorted, distinct) as one group:
// their common prefix, then a group of the rests by first byte, an empty
// alternative where one string ends; the rests are grouped by their first
// rune, so that every group shares a prefix and the recursion ends.
func writeTree(b *strings.Builder, set []string) {
	if len(set) == 1 {
		b.WriteString(regexp.QuoteMeta(set[0]))
		return
	}
	p := commonPrefix(set)
	b.WriteString(regexp.QuoteMeta(p))
	b.WriteByte('(')
	first := true
	for i := 0; i < len(set); {
		if !first {
			b.WriteByte('|')
		}
		first = false
		rest := set[i][len(p):]
		if rest == "" { // sorted: the one that ends here comes first
			i++
			continue
		}
		r, _ := utf8.DecodeRuneInString(rest)
		j := i + 1
		for j < len(set) && strings.HasPrefix(set[j][len(p):], string(r)) {
			j++
		}
		group := make([]string, j-i)
		for k := i; k < j; k++ {
			group[k-i] = set[k][len(p):]
		}
		writeTree(b, group)
		i = j
	}
	b.WriteByte(')')
}

// commonPrefix is the longest prefix of every string of set (sorted)
// that ends between two runes.
func commonPrefix(set []string) string {
	a, z := set[0], set[len(set)-1]
	n := 0
	for n < len(a) && n < len(z) && a[n] == z[n] {
		n++
	}
	for n > 0 && n < len(a) && !utf8.RuneStart(a[n]) {
		n--
	}
	return a[:n]
}

// MangledFunctionRegex builds a --kernel-name value for --kernel-name-base
// mangled that matches every kernel whose function (as FunctionName gives
// it) is one of names, whatever its template arguments: an extern "C"
// kernel's mangled name is its name ("^name$"); a C++ one holds the name
// with its length before it (Itanium ABI: "_ZN2at6native29vectorized_
// elementwise_kernelILi8E..." for vectorized_elementwise_kernel), which a
// non-digit precedes. Filtering on mangled names keeps each template
// instantiation a kernel of its own for --filter-mode per-launch-config:
// with function names, ncu sampled the instantiations that share a
// function and a launch configuration as one (seen on an H200: of the
// vectorized_elementwise_kernel instantiations launched on grid (1,1,1),
// only one was profiled).
func MangledFunctionRegex(names []string) string {
	if len(names) == 0 {
		return ""
	}
	seen := make(map[string]bool, len(names))
	var plain, cpp []string
	for _, n := range names {
		if seen[n] || n == "" {
			continue
		}
		seen[n] = true
		q := regexp.QuoteMeta(n)
		plain = append(plain, q)
		cpp = append(cpp, strconv.Itoa(len(n))+q)
	}
	// Anchored at both ends, so that it means the same whether ncu searches
	// or matches the whole name.
	return "regex:^(?:" + strings.Join(plain, "|") + ")$|^(?:.*[^0-9])?(?:" + strings.Join(cpp, "|") + ").*$"
}
