package kernels

import "testing"

// TestFP32GEMMByName: the names of GEMM kernels recorded in fixtures/runs
// (kernels.json) and the families cuBLAS and CUTLASS name their FP32 and
// tensor-core kernels by.
func TestFP32GEMMByName(t *testing.T) {
	for _, tc := range []struct {
		name string
		want bool
	}{
		// recorded: cupti-llama3-8b-4l, corpus-cpp, corpus-hf-auto
		{"void cutlass::Kernel2<cutlass_80_simt_sgemm_128x32_8x5_tn_align1>(cutlass_80_simt_sgemm_128x32_8x5_tn_align1::Params)", true},
		{"matmul(float const*, float const*, float*, int, int)", true},
		{"void gemmk1_kernel<int, float, 256, 5, true, false, false, false, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, float, 0>(cublasGemmk1Params<float, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, float, biasType<cublasGemvTensorStridedBatched<float>::value_type, float>::type>)", true},
		// recorded, not FP32: a BF16 convolution run as an implicit
		// SGEMM (any-vlm-qwen2-vl), cuBLAS's nvjet tensor-core GEMMs, its
		// split-K reduction of a BF16 GEMM (cupti-llama3-8b-4l)
		{"void implicit_convolveNd_sgemm<__nv_bfloat16, 3, 128, 6, 7, 3, 3, 5, 1, false, false, true>(int, int, int, __nv_bfloat16 const*, int, __nv_bfloat16*, __nv_bfloat16 const*, kernel_convNd_params, unsigned long long, int, float, float, int, __nv_bfloat16 const*, __nv_bfloat16 const*, bool, bool)", false},
		{"nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT", false},
		{"void cublasLt::splitKreduce_kernel<32, 16, int, float, __nv_bfloat16, float, __nv_bfloat16, false, false, false>(cublasLt::cublasSplitKParams<float>)", false},
		// the families' names
		{"ampere_sgemm_128x64_nn", true},
		{"sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x8_stage3_warpsize2x2x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas", true},
		{"sm80_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x16_stage4_warpsize2x2x1_tensor16x8x8_execute_kernel__5x_cublas", false},
		{"cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4", false},
		{"ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_32x5_nn", false},
		{"volta_dgemm_64x64_nn", false},
		{"cutlass_80_simt_hgemm_256x128_8x2_nn_align1", false},
	} {
		if got := FP32GEMM(tc.name, nil); got != tc.want {
			t.Errorf("FP32GEMM(%q) = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestFP32GEMMByCounters: where ncu counted FLOPs (the recorded roofline
// pass over a Llama decode, ncu/h200-llama-decode-roofline), they decide:
// its CUTLASS SIMT SGEMM ran FP32 FFMAs and no tensor-core op, its nvjet
// GEMM tensor-core ops only. Counters win over a name: a GEMM named like
// an SGEMM that ran tensor-core ops is not FP32.
func TestFP32GEMMByCounters(t *testing.T) {
	ms := fromFixture(t, "ncu/h200-llama-decode-roofline/raw.csv")
	sgemm := ms["void cutlass::Kernel2<cutlass_80_simt_sgemm_128x32_8x5_tn_align1>(T1::Params)"]
	nvjet := ms["nvjet_sm90_tst_8x64_64x16_4x1_v_bz_TNN"]
	if sgemm == nil || nvjet == nil {
		t.Fatalf("the recorded run's GEMMs: sgemm %v, nvjet %v", sgemm != nil, nvjet != nil)
	}
	if !sgemm.HasFLOPs || sgemm.TensorOps != 0 || sgemm.FP32FLOPs <= 0 || sgemm.FP32FLOPs != sgemm.FPFLOPs {
		t.Errorf("SGEMM counters: %+v", *sgemm)
	}
	if !nvjet.HasFLOPs || nvjet.TensorOps <= 0 || nvjet.FPFLOPs != 0 {
		t.Errorf("nvjet counters: %+v", *nvjet)
	}
	if !FP32GEMM(sgemm.Kernel, sgemm) {
		t.Error("the SIMT SGEMM is an FP32 GEMM")
	}
	if FP32GEMM(nvjet.Kernel, nvjet) {
		t.Error("nvjet runs on the tensor cores")
	}
	tensor := *sgemm
	tensor.TensorOps = 1e9
	if FP32GEMM("ampere_sgemm_128x64_nn", &tensor) {
		t.Error("tensor-core ops counted: not an FP32 GEMM, whatever its name")
	}
	plain := *sgemm
	if !FP32GEMM("gemm_kernel", &plain) {
		t.Error("FP32 FFMAs counted and no tensor-core op: an FP32 GEMM, whatever its name")
	}
	none := Metrics{Kernel: "ampere_sgemm_128x64_nn", Launches: 1, DurationNS: 1}
	if !FP32GEMM(none.Kernel, &none) {
		t.Error("no FLOP counters: the name decides")
	}
}
