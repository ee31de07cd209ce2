package ncu_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llm-perf-opt/deepprof/internal/model"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/ncu"
)

// launchNames reads launch ID -> kernel name from a recorded ncu export.
func launchNames(t testing.TB, path string) map[int64]string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	out := map[int64]string{}
	r := ncu.NewReader(f, path, ncu.Options{})
	for r.Scan() {
		if l, ok := r.Record().(*model.Launch); ok {
			out[l.ID] = l.Kernel
		}
	}
	require.NoError(t, r.Err())
	return out
}

// TestFunctionNameAgreesWithNcu: every timing report of the recorded H200
// sessions (fixtures/runs, fixtures/sessions), exported twice by ncu
// 2025.3.1: demangled names, and --print-kernel-base function. FunctionName
// must give ncu's function name for every launch: the deep pass filters on
// it.
func TestFunctionNameAgreesWithNcu(t *testing.T) {
	dirs, err := filepath.Glob("../../fixtures/*/*/ncu/timing-functions.csv.gz")
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(dirs), 5)
	launches, distinct := 0, map[string]bool{}
	for _, fnPath := range dirs {
		dir := filepath.Dir(fnPath) + "/"
		demangled := launchNames(t, dir+"timing-raw.csv.gz")
		function := launchNames(t, fnPath)
		require.Len(t, function, len(demangled), dir)
		for id, name := range demangled {
			want, ok := function[id]
			require.True(t, ok, "%s: launch %d", dir, id)
			if !assert.Equal(t, want, model.FunctionName(name), "%s: launch %d: %s", dir, id, name) {
				return
			}
			distinct[name] = true
			launches++
		}
	}
	t.Logf("%d launches, %d distinct kernel names, in %d recorded timing reports", launches, len(distinct), len(dirs))
	assert.Greater(t, len(distinct), 60, "distinct demangled names checked")
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
		assert.Equal(t, tt.want, model.FunctionName(tt.in), tt.in)
	}
}

// FuzzFunctionName: any input, seeded from the recorded names; it must not
// panic, and a name that is not blank gives a name that is not blank.
func FuzzFunctionName(f *testing.F) {
	seen := map[string]bool{}
	for _, name := range launchNames(f, "../../fixtures/runs/tiny-llama/ncu/timing-raw.csv.gz") {
		if !seen[name] {
			seen[name] = true
			f.Add(name)
		}
	}
	f.Add("a<(b)>(c)")
	f.Add(")(><")
	f.Fuzz(func(t *testing.T, in string) {
		out := model.FunctionName(in)
		if strings.TrimSpace(in) != "" && out == "" {
			t.Fatalf("FunctionName(%q) is empty", in)
		}
	})
}
