package facts

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Names as the recorded runs' kernel tables hold them.
func TestDisplayNames(t *testing.T) {
	names := []string{
		"nvjet_sm90_hsh_64x8_64x16_4x1_v_bz_bias_TNT",
		"void at::native::vectorized_elementwise_kernel<8, at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#8}::operator()() const::{lambda(c10::Half)#1}, std::array<char*, 2ul> >(int, at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#8}::operator()() const::{lambda(c10::Half)#1}, std::array<char*, 2ul>)",
		"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<c10::Half>, std::array<char*, 1ul> >(int, at::native::FillFunctor<c10::Half>, std::array<char*, 1ul>)",
		"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, std::array<char*, 1ul> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)",
		"add_kernel(float const*, float const*, float*, int)",
		"add_kernel(double const*, double const*, double*, int)",
	}
	got := DisplayNames(names)
	assert.Equal(t, []string{
		"nvjet_sm90_hsh_64x8_64x16_4x1_v_bz_bias_TNT",
		"at::native::vectorized_elementwise_kernel<8, …>",
		"at::native::vectorized_elementwise_kernel<…, FillFunctor<Half>, …>",
		"at::native::vectorized_elementwise_kernel<…, FillFunctor<float>, …>",
		"add_kernel #1",
		"add_kernel #2",
	}, got)
	seen := map[string]bool{}
	for _, d := range got {
		assert.False(t, seen[d], "%q twice", d)
		seen[d] = true
		assert.LessOrEqual(t, len([]rune(d)), maxDisplay+4)
	}
}

// ncu spells an anonymous namespace <unnamed>: not a template.
func TestDisplayNamesUnnamed(t *testing.T) {
	got := DisplayNames([]string{"void at::<unnamed>::CatArrayBatchedCopy<at::<unnamed>::OpaqueType<2>, unsigned int, 4, 64, 64>(T1 *, int, T2)"})
	assert.Equal(t, []string{"at::CatArrayBatchedCopy"}, got)
}

// A return type before the function (cuBLAS's gemv kernels, as nsys
// writes them) is not the function.
func TestDisplayNamesReturnType(t *testing.T) {
	got := DisplayNames([]string{
		"std::enable_if<!T7, void>::type internal::gemvx::kernel<int, int, __nv_bfloat16, float, (int)7, (bool)0>(T13)",
		"std::enable_if<!T7, void>::type internal::gemvx::kernel<int, int, __nv_bfloat16, float, (int)6, (bool)0>(T13)",
	})
	assert.Equal(t, []string{"internal::gemvx::kernel<…, (int)7, …>", "internal::gemvx::kernel<…, (int)6, …>"}, got)
}
