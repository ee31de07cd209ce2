package kernels

import "regexp"

var (
	// fp32GEMMName is a GEMM kernel of cuBLAS or CUTLASS that computes in
	// FP32 on the FMA pipe: the SIMT SGEMMs (ampere_sgemm_128x64_nn,
	// cutlass_80_simt_sgemm_128x32_8x5_tn_align1) and the xmma kernels
	// built on FFMA (sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_..._ffma_...).
	fp32GEMMName = regexp.MustCompile(`(?i)sgemm|_ffma_`)
	// floatType is FP32 named as a C type, in a kernel's signature or
	// template arguments (matmul(float const*, float const*, float*, int,
	// int), gemmk1_kernel<int, float, ...>).
	floatType = regexp.MustCompile(`\bfloat\b`)
	// notFP32 is a name that carries another element type or a
	// tensor-core path: BF16, FP16, FP8, INT8, TF32, FP64 (cuDNN's
	// implicit_convolveNd_sgemm<__nv_bfloat16, ...> is a BF16
	// convolution), or tensor-op, HMMA, IMMA, (W)GMMA and MMA kernels
	// (cute::MMA_Atom; cuBLAS's xmma family has both kinds, and says
	// which by its types and _ffma_).
	notFP32 = regexp.MustCompile(`(?i)bfloat16|bf16|half|fp16|f16|float16|e4m3|e5m2|fp8|int8|tf32|double|dgemm|hgemm|f64|tensorop|hmma|imma|gmma|\bmma_|nvjet`)
)

// FP32GEMM is the rule for a GEMM kernel (category "gemm") that does its
// arithmetic in FP32 on the FMA pipe rather than on the tensor cores, for
// which TF32 or BF16 tensor cores are the next step. Where the deep pass
// counted its FLOPs (m.HasFLOPs), they say it: no tensor-core op, and FP32
// instructions (FADD, FMUL, FFMA) at least half of its floating-point
// FLOPs. Otherwise its name does: cuBLAS's and CUTLASS's SGEMM and FFMA
// kernels, or a signature that names float, and in neither case another
// element type or a tensor-core path. m may be nil.
func FP32GEMM(name string, m *Metrics) bool {
	if m != nil && m.HasFLOPs && m.TensorOps+m.FPFLOPs > 0 {
		return m.TensorOps == 0 && 2*m.FP32FLOPs >= m.FPFLOPs
	}
	if notFP32.MatchString(name) {
		return false
	}
	return fp32GEMMName.MatchString(name) || floatType.MatchString(name)
}
