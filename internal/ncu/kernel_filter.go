package ncu

import (
	"fmt"
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

// KernelInvocation builds a --kernel-id value that matches the n-th
// invocation (from 1) of each of the given kernels, by the names
// --kernel-name-base gives: "::regex:^(a|b):n". ncu counts invocations of
// each kernel apart and takes one --kernel-id, so one n serves every kernel
// (fixtures/logs/ncu-kernel-id-invocations.txt). A name holding ':', which
// would end the name field, is an error.
func KernelInvocation(names []string, n int) (string, error) {
	if len(names) == 0 || n < 1 {
		return "", fmt.Errorf("kernel invocation: want kernels and an invocation from 1, got %d kernel(s) and %d", len(names), n)
	}
	seen := make(map[string]bool, len(names))
	quoted := make([]string, 0, len(names))
	for _, name := range names {
		if strings.Contains(name, ":") {
			return "", fmt.Errorf("kernel invocation: %q holds ':', which ends the name in --kernel-id", name)
		}
		if seen[name] {
			continue
		}
		seen[name] = true
		quoted = append(quoted, regexp.QuoteMeta(name))
	}
	return "::regex:^(" + strings.Join(quoted, "|") + ")$:" + strconv.Itoa(n), nil
}

// MangledFunctionRegex builds a --kernel-name value for --kernel-name-base
// mangled that matches every kernel whose function (as FunctionName gives
// it) is one of names, whatever its template arguments: an extern "C"
// kernel's mangled name is its name ("^name$"); a C++ one holds the name
// with its length before it (Itanium ABI: "_ZN2at6native29vectorized_
// elementwise_kernelILi8E..." for vectorized_elementwise_kernel), which a
// non-digit precedes. Filtering on mangled names keeps each template
// instantiation a kernel of its own for --filter-mode per-launch-config:
// with function names, ncu samples the instantiations that share a
// function and a launch configuration as one (one of a function's
// instantiations on one grid is profiled, the others not).
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
