package kernels

import (
	"errors"
	"regexp/syntax"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestOfFixtureNames classifies real kernel names. Each case names the
// fixture (under fixtures/) it was taken from, and the test checks that the
// fixture does hold it.
func TestOfFixtureNames(t *testing.T) {
	names := fixtureNames(t)
	for _, tc := range []struct {
		fixture, kernel, want string
	}{
		// gemm
		{"runs/llama3-8b-roofline/ncu/raw.csv.gz", "nvjet_sm90_tst_128x128_64x6_2x1_v_bz_TNT", "gemm"},
		{"runs/llama3-8b-roofline/ncu/raw.csv.gz", "nvjet_sm90_tst_64x8_64x16_2x1_v_bz_splitK_TNT", "gemm"},
		{"runs/llama3-8b-roofline/ncu/raw.csv.gz", "void cublasLt::splitKreduce_kernel<32, 16, int, float, __nv_bfloat16, float, __nv_bfloat16, 0, float, __nv_bfloat16, __nv_bfloat16, 1, 0, 0, 0>(cublasLt::cublasSplitKParams<T6>, const T4 *, const T10 *, T9 *, T5 *, const T6 *, const T6 *, const T11 *, const T4 *, T11 *, void *, long, T6 *, int *, T6 *, T6 *, const T6 *, const T6 *, const T6 *, const T6 *, const T6 *)", "gemm"},
		{"ncu/h200-llama3-8b-function-names/ncu/timing-functions.csv.gz", "splitKreduce_kernel", "gemm"},
		{"ncu/h200-llama-decode-basic/raw.csv", "void cutlass::Kernel2<cutlass_80_simt_sgemm_128x32_8x5_tn_align1>(T1::Params)", "gemm"},
		{"nsys/rtx5090-dsocr-all-stage/cuda_gpu_kern_sum.csv", "std::enable_if<!T7, void>::type internal::gemvx::kernel<int, int, __nv_bfloat16, __nv_bfloat16, __nv_bfloat16, float, (bool)0, (bool)1, (bool)1, (bool)0, (int)7, (bool)0, cublasGemvParamsEx<int, cublasGemvTensorStridedBatched<const __nv_bfloat16>, cublasGemvTensorStridedBatched<const __nv_bfloat16>, cublasGemvTensorStridedBatched<__nv_bfloat16>, float>>(T13)", "gemm"},
		// The same GEMV under --kernel-name-base demangled: only the template
		// arguments say what it is.
		{"ncu/rtx5090-dsocr-kernel_0001_67bdb7e29d1bb4e0ca0aec954ef18af3/ncu.details.csv", "enable_if<!T7, void>::type kernel<int, int, __nv_bfloat16, __nv_bfloat16, __nv_bfloat16, float, 0, 1, 1, 0, 7, 0, cublasGemvParamsEx<int, cublasGemvTensorStridedBatched<const __nv_bfloat16>, cublasGemvTensorStridedBatched<const __nv_bfloat16>, cublasGemvTensorStridedBatched<__nv_bfloat16>, float>>(T13)", "gemm"},
		// A convolution run as implicit GEMM.
		{"nsys/rtx5090-dsocr-prefill/cuda_gpu_kern_sum.csv", "sm80_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize128x32x32_stage4_warpsize4x1x1_g1_tensor16x8x16_execute_kernel__5x_cudnn", "gemm"},

		// attention
		{"runs/tiny-llama/ncu/timing-functions.csv.gz", "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x64_4x1x1_cga1x1x1_kernel0_0", "attention"},
		{"nsys/rtx5090-dsocr-sam/cuda_gpu_kern_sum.csv", "fmha_cutlassF_bf16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<cutlass::bfloat16_t, cutlass::arch::Sm80, (bool)1, (int)64, (int)64, (int)64, (bool)1, (bool)1>::Params)", "attention"},
		// Its template arguments name cutlass: attention must come before gemm.
		{"nsys/rtx5090-dsocr-decode/cuda_gpu_kern_sum.csv", "void flash::flash_fwd_splitkv_combine_kernel<Flash_fwd_kernel_traits<(int)128, (int)64, (int)128, (int)4, (bool)0, (bool)0, cutlass::bfloat16_t, Flash_kernel_traits<(int)128, (int)64, (int)128, (int)4, cutlass::bfloat16_t>>, (int)4, (int)3, (bool)1>(flash::Flash_fwd_params)", "attention"},

		// normalization
		{"nsys/rtx5090-dsocr-sam/cuda_gpu_kern_sum.csv", "void at::native::<unnamed>::vectorized_layer_norm_kernel<float, float, (bool)0>(int, T2, const T1 *, const T1 *, const T1 *, T2 *, T2 *, T1 *)", "normalization"},

		// reduction
		// RMSNorm's mean, as Python RMSNorm runs it: a reduction by its name.
		{"runs/tiny-llama/ncu/raw.csv.gz", "void at::reduce_kernel<512, 1, at::ReduceOp<float, at::MeanOps<float, float, float, float>, unsigned int, float, 4, 4>>(T3)", "reduction"},
		{"runs/tiny-llama/ncu/raw.csv.gz", "void at::reduce_kernel<512, 1, at::ReduceOp<c10::BFloat16, at::ArgMaxOps<float>, unsigned int, long, 4, 4>>(T3)", "reduction"},
		{"nsys/rtx5090-dsocr-decode/cuda_gpu_kern_sum.csv", "void <unnamed>::softmax_warp_forward<float, float, float, (int)6, (bool)0, (bool)0>(T2 *, const T1 *, int, int, int, const bool *, int, bool)", "reduction"},
		// "gather" in its name: reduction must come before copy.
		{"nsys/rtx5090-dsocr-all-stage/cuda_gpu_kern_sum.csv", "void at::native::sbtopk::gatherTopK<float, unsigned int, (int)1, (bool)0>(at::cuda::detail::TensorInfo<const T1, T2>, T2, T2, bool, T2, T2, at::cuda::detail::TensorInfo<T1, T2>, T2, at::cuda::detail::TensorInfo<long, T2>, T2, T1 *)", "reduction"},
		{"nsys/rtx5090-dsocr-all-stage/cuda_gpu_kern_sum.csv", "void at::native::bitonicSortKVInPlace<(int)-2, (int)-1, (int)16, (int)16, long, long, at::native::LTOp<long, (bool)1>, unsigned int>(at::cuda::detail::TensorInfo<T5, T8>, T8, T8, T8, at::cuda::detail::TensorInfo<T6, T8>, T8, T7)", "reduction"},
		{"ncu/h200-llama3-8b-function-names/ncu/timing-functions.csv.gz", "lean_reduction_kernel", "reduction"},

		// copy
		// direct_copy_kernel inside an elementwise kernel is a copy.
		{"ncu/h200-llama-decode-basic/details.csv.gz", "void at::unrolled_elementwise_kernel<at::direct_copy_kernel_cuda(at::TensorIteratorBase &)::[lambda() (instance 3)]::operator ()() const::[lambda() (instance 7)]::operator ()() const::[lambda(float) (instance 1)], std::array<char *, 2>, 4, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, memory::LoadWithCast<1>, memory::StoreWithCast<1>>(int, T1, T2, T4, T5, T6, T7)", "copy"},
		{"ncu/h200-llama-decode-basic/details.csv.gz", "void at::vectorized_elementwise_kernel<8, at::bfloat16_copy_kernel_cuda(at::TensorIteratorBase &)::[lambda(float) (instance 1)], std::array<char *, 2>>(int, T2, T3)", "copy"},
		{"runs/tiny-llama/ncu/timing-functions.csv.gz", "CatArrayBatchedCopy", "copy"},
		{"runs/tiny-llama/ncu/timing-functions.csv.gz", "vectorized_gather_kernel", "copy"},
		{"nsys/rtx5090-dsocr-all-stage/cuda_gpu_kern_sum.csv", "fused__autocast_to__12152488584593855096", "copy"},
		{"nsys/rtx5090-dsocr-all-stage/cuda_gpu_kern_sum.csv", "void cudnn::engines_precompiled::nchwToNhwcKernel<__nv_bfloat16, __nv_bfloat16, float, (bool)0, (bool)1, (cudnnKernelDataType_t)0>(cudnn::engines_precompiled::nchw2nhwc_params_t<T3>, const T1 *, T2 *)", "copy"},
		{"nsys/rtx5090-dsocr-all-stage/cuda_gpu_kern_sum.csv", "void at::native::index_elementwise_kernel<(int)128, (int)4, void at::native::gpu_index_kernel<void at::native::index_put_kernel_impl<at::native::OpaqueType<(int)2>>(at::TensorIterator &, c10::ArrayRef<long>, c10::ArrayRef<long>)::[lambda(char *, const char *, long) (instance 1)]>(at::TensorIteratorBase &, c10::ArrayRef<long>, c10::ArrayRef<long>, const T1 &, bool)::[lambda(int) (instance 1)]>(long, T3)", "copy"},
		{"sessions/nvtx-no-match/ncu/discovery-raw.csv.gz", "void at::vectorized_elementwise_kernel<2, at::FillFunctor<long>, std::array<char *, 1>>(int, T2, T3)", "copy"},

		// elementwise
		{"ncu/h200-llama-decode-basic/raw.csv", "void at::vectorized_elementwise_kernel<8, at::CUDAFunctor_add<c10::BFloat16>, std::array<char *, 3>>(int, T2, T3)", "elementwise"},
		{"ncu/h200-llama-decode-basic/details.csv.gz", "void at::vectorized_elementwise_kernel<8, at::<unnamed>::silu_kernel(at::TensorIteratorBase &)::[lambda() (instance 1)]::operator ()() const::[lambda() (instance 6)]::operator ()() const::[lambda(c10::BFloat16) (instance 1)], std::array<char *, 2>>(int, T2, T3)", "elementwise"},
		// RMSNorm's pow and rsqrt: elementwise by their names.
		{"ncu/h200-llama-decode-basic/details.csv.gz", "void at::vectorized_elementwise_kernel<4, void at::<unnamed>::pow_tensor_scalar_kernel_impl<float, float>(at::TensorIteratorBase &, T2)::[lambda(float) (instance 1)], std::array<char *, 2>>(int, T2, T3)", "elementwise"},
		{"ncu/h200-llama-decode-basic/details.csv.gz", "void at::vectorized_elementwise_kernel<4, at::rsqrt_kernel_cuda(at::TensorIteratorBase &)::[lambda() (instance 2)]::operator ()() const::[lambda() (instance 2)]::operator ()() const::[lambda(float) (instance 1)], std::array<char *, 2>>(int, T2, T3)", "elementwise"},
		{"runs/tiny-llama/ncu/timing-functions.csv.gz", "vectorized_elementwise_kernel", "elementwise"},
		{"ncu/cuda-nvtx-domains/raw.csv", "add_kernel(const float *, const float *, float *, int)", "elementwise"},
		{"ncu/cuda-nvtx-kernel-replay/raw.csv", "void axpy_kernel<float>(T1, const T1 *, T1 *, int)", "elementwise"},

		// other: names that do not say what they do.
		// A range-replay result, not a kernel.
		{"ncu/cuda-range-replay/raw.csv", "range", "other"},
		// CUTLASS's kernel template with its GEMM argument cut off by
		// --kernel-name-base function.
		{"runs/tiny-llama/ncu/timing-functions.csv.gz", "Kernel2", "other"},
		{"nsys/rtx5090-dsocr-all-stage/cuda_gpu_kern_sum.csv", "void at::native::<unnamed>::upsample_linear1d_out_frame<float, float>(int, T2, bool, at::GenericPackedTensorAccessor<const T1, (unsigned long)3, at::DefaultPtrTraits, long>, at::GenericPackedTensorAccessor<T1, (unsigned long)3, at::DefaultPtrTraits, long>)", "other"},
	} {
		if !slices.Contains(names[tc.kernel], tc.fixture) {
			t.Errorf("fixture %s does not hold kernel %q (it is in %v)", tc.fixture, tc.kernel, names[tc.kernel])
		}
		if got := Default().Of(tc.kernel); got != tc.want {
			t.Errorf("Of(%q) [%s] = %q, want %q", tc.kernel, tc.fixture, got, tc.want)
		}
	}
}

// TestOfCommunication: the NCCL kernels of the 2-GPU recording
// (fixtures/runs/h200x2-tp2-lockstep: all-reduce, all-gather, broadcast,
// send/recv) are communication, and no other fixture kernel is; then names
// from public NCCL issue threads and nsys tables (NOT from a fixture) for
// the spellings the recording lacks.
func TestOfCommunication(t *testing.T) {
	names := fixtureNames(t)
	var nccl []string
	for n := range names {
		isNCCL := strings.HasPrefix(n, "nccl")
		if got := Default().Of(n) == "communication"; got != isNCCL {
			t.Errorf("Of(%q) communication = %v, want %v", n, got, isNCCL)
		}
		if isNCCL {
			nccl = append(nccl, n)
		}
	}
	if !slices.Contains(nccl, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)") {
		t.Errorf("the 2-GPU recording's all-reduce is not among the fixtures' names: %v", nccl)
	}
	for _, k := range []string{
		"ncclKernel_SendRecv_RING",        // NVIDIA/nccl issue #739, its title
		"ncclDevKernel_allreduce_ring_LL", // NVIDIA/nccl issue #2196, a maintainer's comment
		"ncclDevKernel_AllReduce_RING_LL", // a public nsys kernel table
		// vLLM's custom all-reduce, as public nsys kernel tables print it.
		"void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(vllm::RankData*, vllm::RankSignals, vllm::Signal*, __nv_bfloat16*, int, int)",
	} {
		if got := Default().Of(k); got != "communication" {
			t.Errorf("Of(%q) = %q, want communication", k, got)
		}
	}
}

// TestOfEveryFixtureName classifies every kernel name the fixtures hold and
// lists the ones that land in "other", for review.
func TestOfEveryFixtureName(t *testing.T) {
	names := fixtureNames(t)
	cats := Default()
	count := map[string]int{}
	var other []string
	for n := range names {
		c := cats.Of(n)
		if c == "" {
			t.Errorf("Of(%q) is empty", n)
		}
		count[c]++
		if c == Other {
			other = append(other, n)
		}
	}
	sort.Strings(other)
	t.Logf("%d distinct kernel names; per category: %v", len(names), count)
	for _, n := range other {
		t.Logf("other: %q (in %s)", n, strings.Join(names[n], ", "))
	}
	for _, c := range cats.Names() {
		if c != "communication" && c != Other && count[c] == 0 {
			t.Errorf("no fixture name lands in %s", c)
		}
	}
	if len(names) < 100 {
		t.Errorf("only %d kernel names read from %s: were fixtures moved?", len(names), fixturesDir)
	}
}

func TestDefault(t *testing.T) {
	want := []string{"communication", "attention", "gemm", "normalization", "reduction", "copy", "elementwise", "other"}
	if got := Default().Names(); !slices.Equal(got, want) {
		t.Errorf("Names() = %v, want %v", got, want)
	}
	// Default returns a copy.
	d := Default()
	d[0].Name = "changed"
	if Default()[0].Name != "communication" {
		t.Error("Default() shares its slice with callers")
	}
	// DefaultSpecs round-trips through Parse.
	c, err := Parse(DefaultSpecs())
	if err != nil {
		t.Fatal(err)
	}
	for i := range c {
		if c[i].Name != Default()[i].Name || c[i].Pattern.String() != Default()[i].Pattern.String() {
			t.Errorf("entry %d: Parse(DefaultSpecs()) = %s=%s, Default() = %s=%s", i+1, c[i].Name, c[i].Pattern, Default()[i].Name, Default()[i].Pattern)
		}
	}
}

func TestParse(t *testing.T) {
	c, err := Parse([]string{"gemm=gemm|gemv", "eq=a=b", "gemm=nvjet"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ kernel, want string }{
		{"nvjet_x", "gemm"}, {"a=b", "eq"}, {"gemv", "gemm"}, {"GEMM", "other"}, {"", "other"},
	} {
		if got := c.Of(tc.kernel); got != tc.want {
			t.Errorf("Of(%q) = %q, want %q", tc.kernel, got, tc.want)
		}
	}
	if got := c.Names(); !slices.Equal(got, []string{"gemm", "eq", "other"}) {
		t.Errorf("Names() = %v", got)
	}
	if c, err := Parse(nil); err != nil || c.Of("x") != Other {
		t.Errorf("Parse(nil) = %v, %v; want an empty table that says other", c, err)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		specs []string
		want  string
	}{
		{[]string{"gemm=gemm", "attention"}, `category 2 ("attention"): no "=": write name=regex`},
		{[]string{"=flash"}, `category 1 ("=flash"): empty category name before '='`},
		{[]string{"  =flash"}, `category 1 ("  =flash"): empty category name before '='`},
		{[]string{"gemm =gemm"}, `category 1 ("gemm =gemm"): category name "gemm " has leading or trailing spaces`},
		{[]string{"a=x", "b=y", "gemm="}, `category 3 ("gemm="): empty pattern after '=' (it would match every kernel)`},
		{[]string{"gemm=gemm(", "x=y"}, "category 1 (\"gemm=gemm(\"): bad pattern: error parsing regexp: missing closing ): `gemm(`"},
	} {
		_, err := Parse(tc.specs)
		if err == nil {
			t.Errorf("Parse(%q): no error, want %s", tc.specs, tc.want)
			continue
		}
		if err.Error() != tc.want {
			t.Errorf("Parse(%q):\n got %s\nwant %s", tc.specs, err, tc.want)
		}
		var se *SpecError
		if !errors.As(err, &se) {
			t.Errorf("Parse(%q): error %T is not a *SpecError", tc.specs, err)
		}
	}
	_, err := Parse([]string{"x=["})
	var re *syntax.Error
	if !errors.As(err, &re) {
		t.Errorf("Parse bad regexp: error %v does not wrap the *syntax.Error", err)
	}
}

// BenchmarkCategoryOfHugeName classifies a SYNTHETIC 4 MB kernel name (one
// had cost 16 s of a rebuild): Of reads its first MaxClassifiedName bytes.
func BenchmarkCategoryOfHugeName(b *testing.B) {
	name := strings.Repeat("void at::native::elementwise_kernel<", 4<<20/36)
	cats := Default()
	for b.Loop() {
		if cats.Of(name) == "" {
			b.Fatal("no category")
		}
	}
}

func TestCategoryOfLongName(t *testing.T) {
	cats := Default()
	gemm := "ampere_sgemm_128x64_nn"
	assert.Equal(t, cats.Of(gemm), cats.Of(gemm+strings.Repeat("x", 2*MaxClassifiedName)), "the category is read from the name's start")
}

// TestIsAgreesWithOf asks Is of every kernel name in the fixtures, for each
// category of tables that put the asked category first, last, twice, or
// not at all, and checks it against Of.
func TestIsAgreesWithOf(t *testing.T) {
	tables := map[string][]string{
		"default": DefaultSpecs(),
		"communication twice, after gemm": {
			`gemm=(?i)gemm|nvjet`,
			`communication=(?i)nccl`,
			`elementwise=elementwise`,
			`communication=(?i)all_?reduce|cross_device`,
		},
		"no communication":                   {`gemm=(?i)gemm`},
		"other named":                        {`gemm=gemm`, `other=(?i)copy`},
		"other named, and after a catch-all": {`gemm=gemm`, `other=(?i)copy`, `all=.`, `communication=(?i)nccl`},
	}
	for name, specs := range tables {
		cats, err := Parse(specs)
		if err != nil {
			t.Fatal(err)
		}
		asked := append(cats.Names(), Communication)
		checked := 0
		for kernel := range fixtureNames(t) {
			for _, c := range asked {
				if got, want := cats.Is(kernel, c), cats.Of(kernel) == c; got != want {
					t.Errorf("%s: Is(%q, %q) = %v, Of says %q", name, kernel, c, got, cats.Of(kernel))
				}
				checked++
			}
		}
		assert.Greater(t, checked, 1000, name)
	}
}

// byRegexpOnly is Of without the literal prefilter: the first category
// whose pattern matches.
func byRegexpOnly(c Categories, kernel string) string {
	if len(kernel) > MaxClassifiedName {
		kernel = kernel[:MaxClassifiedName]
	}
	for _, cat := range c {
		if cat.Pattern.MatchString(kernel) {
			return cat.Name
		}
	}
	return Other
}

// TestPrefilterKeepsEveryMatch classifies every kernel name in the
// fixtures, and upper-case and non-ASCII variants of each, with the default
// table and tables of patterns the prefilter reads differently, against the
// patterns alone.
func TestPrefilterKeepsEveryMatch(t *testing.T) {
	tables := [][]string{
		DefaultSpecs(),
		{`a=(?i)NCCL|Gemm`, `b=Kernel<`, `c=\bvoid\b`, `d=(?i)(rms|layer)_?norm`, `e=(?i)ſ|K`, `f=x?`, `g=[a-c]+_kernel`},
	}
	var names []string
	for n := range fixtureNames(t) {
		names = append(names, n, strings.ToUpper(n), n+"\u017f", strings.ToUpper(n)+"\u212a")
	}
	ruled := 0
	for _, specs := range tables {
		cats, err := Parse(specs)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			if got, want := cats.Of(n), byRegexpOnly(cats, n); got != want {
				t.Errorf("%q: %q, by the patterns alone %q", n, got, want)
			}
		}
		for _, cat := range cats {
			if cat.needs != nil {
				ruled++
			}
		}
	}
	assert.Equal(t, 7+5, ruled, "patterns the prefilter reads: all but (?i)ſ|K (a class of runes) and x? (no literal)")
}

func TestPrefilter(t *testing.T) {
	for _, tc := range []struct {
		pattern       string
		exact, folded []string
	}{
		{`(?i)nccl|all_?reduce|cross_device`, nil, []string{"nccl", "reduce", "cross_device"}},
		{`\b(add|mul|scale|axpy)_kernel\b`, []string{"_kernel"}, nil},
		{`Kernel2<cutlass`, []string{"Kernel2<cutlass"}, nil},
		{`(?i)(prefill|decode)with\w*kvcache`, nil, []string{"kvcache"}}, // the longest of the parts
		{`gemm|(?i)Flash`, []string{"gemm"}, []string{"flash"}},
		{`(?i)a|b`, nil, nil},                   // a character class
		{`gemm|x?`, nil, nil},                   // can match nothing
		{`\d+`, nil, nil},                       // no literal
		{`(?i)ſ`, nil, []string{"s"}},           // its fold orbit's least rune, 'S'
		{`(?i)é`, nil, nil},                     // non-ASCII
		{`(ab){2}c`, []string{"ab"}, nil},       // a repeat of at least one
		{`x(?i:Gemm)y`, nil, []string{"gemm"}},  // the flag on a part
		{`(x|)kernel`, []string{"kernel"}, nil}, // an empty branch: its part needs nothing
		{`(?i)abc|abd`, nil, []string{"ab"}},    // merged by the parser into ab[cd]
		{`é.*gemm`, []string{"gemm"}, nil},      // the non-ASCII part needs nothing
	} {
		n := prefilter(tc.pattern)
		if tc.exact == nil && tc.folded == nil {
			assert.Nil(t, n, tc.pattern)
			continue
		}
		if assert.NotNil(t, n, tc.pattern) {
			assert.Equal(t, tc.exact, n.exact, tc.pattern)
			assert.Equal(t, tc.folded, n.folded, tc.pattern)
		}
	}
}
