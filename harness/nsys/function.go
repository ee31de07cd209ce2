package nsys

import "strings"

// ReportKernSumBase is the kernel summary over base (function) names, as
// `nsys stats --report` takes it.
//
// What NVIDIA documents, and what this package relies on:
//
//   - The Nsight Systems Post-Collection Analysis Guide
//     (https://docs.nvidia.com/nsight-systems/AnalysisGuide/index.html,
//     "Statistical Reports Shipped With Nsight Systems") lists the report as
//     cuda_gpu_kern_sum[:nvtx-name][:base|:mangled], and so does the usage
//     text of nsys's own report script (reports/cuda_gpu_kern_sum.py,
//     2020-2024): "base - Optional argument, if given, will cause summary to
//     be over the base name of the kernel, rather than the templated name."
//     Arguments follow the report name after ':'.
//   - The columns stay those of the plain report (Time (%), Total Time (ns),
//     Instances, Avg, Med, Min, Max, StdDev, Name); with :base, Name holds the
//     base name. In the versions of the script that show it, :base groups by
//     the shortName column of CUPTI_ACTIVITY_KIND_KERNEL instead of
//     demangledName.
//   - What the base name looks like is not shown there. The session assumes
//     it is what Nsight Compute calls the function name (--kernel-name-base
//     function): "vectorized_elementwise_kernel" for
//     "void at::native::vectorized_elementwise_kernel<4, …>(int, T2, T3)".
//     That is unverified on real hardware (no usable nsys on the GPU machines
//     here): FunctionName derives the same names from the demangled ones, and
//     is checked against what ncu printed for the 509 launches (35 kernel
//     names) of a recorded H200 session.
//   - The file `nsys stats --output PREFIX` writes for a report with
//     arguments is not documented in what was found; StatsCSVPath gives the
//     name for a report without arguments only. Callers look for
//     PREFIX_cuda_gpu_kern_sum*.csv.
const ReportKernSumBase = ReportKernSum + ":base"

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
// It is the session's stand-in for nsys's own base names when
// `nsys stats --report cuda_gpu_kern_sum:base` gives none.
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
