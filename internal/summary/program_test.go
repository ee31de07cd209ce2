package summary

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/llm-perf-opt/deepprof/facts"
)

// TestProgramOf: the rule's cases, first match wins; a native executable
// is C/C++ whatever its kernels; graph launches counted whatever the kind.
func TestProgramOf(t *testing.T) {
	py := []string{"/usr/bin/python3.12"}
	aten := "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<int>>(int)"
	for _, c := range []struct {
		name    string
		exes    []string
		kernels []string
		apis    []string
		kind    facts.ProgramKind
		kernel  string
		graphs  int
	}{
		{"eager", py, []string{aten, "nvjet_sm90_tst_64x8"}, nil, facts.ProgramPyTorch, aten, 0},
		{"compiled", py, []string{aten, "triton_poi_fused_add_5"}, []string{"cudaLaunchKernel", "cudaGraphLaunch"}, facts.ProgramTorchCompile, "triton_poi_fused_add_5", 1},
		{"a hand-written Triton kernel", py, []string{"add_kernel"}, nil, facts.ProgramUnknown, "", 0},
		{"jax", py, []string{"nvjet_sm90_tss_128x128", "fusion_167", "loop_multiply_fusion"}, []string{"cuGraphLaunch", "cuGraphLaunch_ptsz"}, facts.ProgramJAX, "fusion_167", 2},
		{"cuBLAS from Python", py, []string{"nvjet_sm90_tst_64x8"}, nil, facts.ProgramPyTorch, "nvjet_sm90_tst_64x8", 0},
		{"cuBLAS, no executable known", nil, []string{"nvjet_sm90_tst_64x8"}, nil, facts.ProgramUnknown, "", 0},
		{"ATen, no executable known (an ncu-only run)", []string{""}, []string{aten}, nil, facts.ProgramPyTorch, aten, 0},
		{"native", []string{"/work/decode_loop"}, []string{"matmul(float const*)"}, nil, facts.ProgramNative, "", 0},
		{"libtorch from C++", []string{"/work/app"}, []string{aten}, []string{"cudaGraphLaunch"}, facts.ProgramNative, "", 1},
		{"a Python parent beside a native child", []string{"/work/app", "/usr/bin/python3"}, []string{aten}, nil, facts.ProgramPyTorch, aten, 0},
	} {
		p := ProgramOf(c.exes, c.kernels, slices.Values(c.apis))
		assert.Equal(t, c.kind, p.Kind, c.name)
		assert.Equal(t, c.kernel, p.Kernel, c.name)
		assert.Equal(t, c.graphs, p.GraphLaunches, c.name)
	}
}

// TestLeversByKind: no kind is told another's tools: torch.compile only to
// PyTorch, Python never to C/C++.
func TestLeversByKind(t *testing.T) {
	for _, k := range []facts.ProgramKind{facts.ProgramUnknown, facts.ProgramPyTorch, facts.ProgramTorchCompile, facts.ProgramJAX, facts.ProgramNative} {
		for _, graphs := range []int{0, 3} {
			l := leversOf(facts.Program{Kind: k, GraphLaunches: graphs})
			all := strings.Join([]string{l.graphs, l.busy, l.fuse, l.host, l.tensorCores}, "\n")
			if k != facts.ProgramPyTorch && k != facts.ProgramTorchCompile {
				assert.NotContains(t, all, "torch", k)
			}
			if k == facts.ProgramNative || k == facts.ProgramUnknown {
				assert.NotContains(t, all, "Python", k)
			}
			assert.Contains(t, l.busy, l.graphs, k)
			assert.Contains(t, l.tensorCores, "TF32", k)
			assert.Contains(t, l.tensorCores, "BF16", k)
		}
	}
	assert.Contains(t, leversOf(facts.Program{Kind: facts.ProgramUnknown, Exe: "/usr/bin/python3"}).host, "Python")
}
