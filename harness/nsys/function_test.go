package nsys_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/harness/ncu"
	"github.com/llm-perf-opt/deepprof/harness/nsys"
)

// launchNames reads launch ID -> kernel name from a recorded ncu export.
func launchNames(t *testing.T, path string) map[int64]string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	out := map[int64]string{}
	r := ncu.NewReader(f, path, ncu.Options{})
	for r.Scan() {
		if l, ok := r.Record().(*ncu.Launch); ok {
			out[l.ID] = l.Kernel
		}
	}
	require.NoError(t, r.Err())
	return out
}

// TestFunctionNameAgreesWithNcu: the same timing report of a real H200
// session exported twice by ncu 2025.3.1 (fixtures/sessions/range-replay-refused:
// demangled names, and --print-kernel-base function). FunctionName must
// give ncu's function name for every launch.
func TestFunctionNameAgreesWithNcu(t *testing.T) {
	const dir = fixtures + "sessions/range-replay-refused/ncu/"
	demangled := launchNames(t, dir+"timing-raw.csv.gz")
	function := launchNames(t, dir+"timing-functions.csv.gz")
	require.Len(t, function, len(demangled))
	require.Greater(t, len(demangled), 500)
	distinct := map[string]bool{}
	for id, name := range demangled {
		want, ok := function[id]
		require.True(t, ok, "launch %d", id)
		if !assert.Equal(t, want, nsys.FunctionName(name), "launch %d: %s", id, name) {
			return
		}
		distinct[name] = true
	}
	assert.Greater(t, len(distinct), 25, "distinct demangled names checked")
}

// The demangled names nsys printed for the RTX 5090 recordings, with their
// function names as ncu would write them (written here by hand from the
// names: no ncu export of that workload was recorded).
func TestFunctionName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"std::enable_if<!T7, void>::type internal::gemvx::kernel<int, int, __nv_bfloat16, __nv_bfloat16, __nv_bfloat16, float, (bool)0, (bool)1, (bool)1, (bool)0, (int)7, (bool)0, cublasGemvParamsEx<int, cublasGemvTensorStridedBatched<const __nv_bfloat16>, cublasGemvTensorStridedBatched<const __nv_bfloat16>, cublasGemvTensorStridedBatched<__nv_bfloat16>, float>>(T13)", "kernel"},
		{"void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase &)::[lambda() (instance 3)]::operator ()() const::[lambda() (instance 7)]::operator ()() const::[lambda(float) (instance 1)], std::array<char *, (unsigned long)2>, (int)4, TrivialOffsetCalculator<(int)1, unsigned int>, TrivialOffsetCalculator<(int)1, unsigned int>, at::native::memory::LoadWithCast<(int)1>, at::native::memory::StoreWithCast<(int)1>>(int, T1, T2, T4, T5, T6, T7)", "unrolled_elementwise_kernel"},
		{"nvjet_sm90_tst_8x64_64x16_4x1_v_bz_TNN", "nvjet_sm90_tst_8x64_64x16_4x1_v_bz_TNN"},
		{"void <unnamed>::elementwise_kernel_with_index<int, f>(T1, T2, function_traits<T2>::result_type *)", "elementwise_kernel_with_index"},
		{"kernel_a(float *)", "kernel_a"},
		{"  ", ""},
		{"unbalanced<(x", "unbalanced<(x"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, nsys.FunctionName(tt.in), tt.in)
	}
}

// FuzzFunctionName: any input, seeded from the recorded names; it must not
// panic, and a name that is not blank gives a name that is not blank.
func FuzzFunctionName(f *testing.F) {
	for _, data := range kernSumFixtures(f) {
		sums, err := nsys.ReadKernelSums(strings.NewReader(string(data)), "k.csv")
		if err != nil {
			f.Fatal(err)
		}
		for _, s := range sums[:min(len(sums), 8)] {
			f.Add(s.Name)
		}
	}
	f.Add("a<(b)>(c)")
	f.Add(")(><")
	f.Fuzz(func(t *testing.T, in string) {
		out := nsys.FunctionName(in)
		if strings.TrimSpace(in) != "" && out == "" {
			t.Fatalf("FunctionName(%q) is empty", in)
		}
	})
}
