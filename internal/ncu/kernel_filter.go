package ncu

import (
	"regexp"
	"strconv"
	"strings"
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
