package model

import "strings"

// FunctionName returns the function name of a demangled kernel name, as
// Nsight Compute prints it with --print-kernel-base function: the return
// type, the namespaces and classes, the template arguments and the
// parameter list are dropped.
//
//	void at::native::vectorized_elementwise_kernel<4, at::native::…>(int, T2, T3) -> vectorized_elementwise_kernel
//	void cutlass::Kernel2<cutlass_80_simt_sgemm_128x32_8x5_nn_align1>(T1::Params)  -> Kernel2
//	std::enable_if<!T7, void>::type internal::gemvx::kernel<int, …>(T13)          -> kernel
//	nvjet_sm90_tst_8x64_64x16_4x1_v_bz_TNN                                         -> (unchanged)
//
// The session filters the deep pass on these names, derived from the
// timing pass's demangled ones (so the timing report is exported once), and
// uses them in place of nsys's base names when `nsys stats --report
// cuda_gpu_kern_sum:base` gives none. TestFunctionNameAgreesWithNcu checks
// it against ncu's own function-named export of every recorded session.
func FunctionName(demangled string) string {
	s := strings.TrimSpace(demangled)
	s = trimGroup(s, '(', ')')
	s = trimGroup(s, '<', '>')
	// The qualified name is the last word outside brackets: what comes before
	// it is the return type ("void", "std::enable_if<!T7, void>::type").
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
	s = s[start:]
	// The last "::" outside brackets ends the scopes ("at::<unnamed>::f").
	depth, start = 0, 0
	for i := 0; i+1 < len(s); i++ {
		switch s[i] {
		case '<', '(', '[':
			depth++
		case '>', ')', ']':
			depth--
		case ':':
			if depth == 0 && s[i+1] == ':' {
				start = i + 2
				i++
			}
		}
	}
	if name := s[start:]; name != "" {
		return name
	}
	return strings.TrimSpace(demangled)
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
