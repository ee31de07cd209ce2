package model

import (
	"strings"

	"github.com/llm-perf-opt/deepprof/facts"
)

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
	// The qualified name (facts.Signature); its last "::" outside
	// brackets ends the scopes ("at::<unnamed>::f").
	s, _ := facts.Signature(demangled)
	depth, start := 0, 0
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
