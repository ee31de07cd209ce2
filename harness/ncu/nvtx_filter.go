package ncu

import (
	"regexp"
	"strconv"
	"strings"
)

// nvtxQuantifiers are the characters ncu's NVTX filter syntax gives a
// meaning: '/' between push/pop levels, '[' and ']' for the bottom and top of
// the stack, '+' and '*' for one or any number of levels between two names,
// '@' after a domain name, ',' between start/end ranges. A name that holds
// one needs a '\' before it (Nsight Compute CLI docs, "NVTX Filtering").
const nvtxQuantifiers = `@,[]/*+`

// EscapeNVTXName writes one domain or range name for an NVTX filter
// expression: each quantifier character gets a '\' before it, and a '\' in
// the name is written as four (our reading of the docs' rule; only the
// escaped '@' has been checked against a real ncu). Spaces and quotes need
// nothing: the expression is one argv element, never seen by a shell.
func EscapeNVTXName(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r == '\\':
			b.WriteString(`\\\\`)
		case strings.ContainsRune(nvtxQuantifiers, r):
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// IncludeExpr builds an --nvtx-include (or --nvtx-exclude) expression that
// matches launches inside the push/pop ranges levels, outermost first, each
// directly inside the one before: the levels joined by '/', with a trailing
// '/' (which makes even a single name a push/pop range, not a start/end
// one). domain "" (or "<default domain>") is the default domain; a named
// domain is written before the ranges as "Domain@". Names are escaped with
// EscapeNVTXName, so a default-domain range literally named "LLM@decode_all"
// becomes `LLM\@decode_all/`, which ncu matched on the H200, where
// "LLM@decode_all/" read LLM as a domain and matched nothing
// (fixtures/logs/ncu-escaped-at-sign-match.txt,
// ncu-no-kernels-profiled-domain-syntax.txt). No levels gives "".
func IncludeExpr(domain string, levels []string) string {
	if len(levels) == 0 {
		return ""
	}
	var b strings.Builder
	if domain != "" && domain != DefaultDomain {
		b.WriteString(EscapeNVTXName(domain))
		b.WriteByte('@')
	}
	for _, l := range levels {
		b.WriteString(EscapeNVTXName(l))
		b.WriteByte('/')
	}
	return b.String()
}

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
