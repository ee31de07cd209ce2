package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/input"
)

// cutNames are SYNTHETIC kernel names shaped as PyTorch's and cuBLAS's:
// families that share a long prefix.
var cutNames = func() []string {
	gpu := "void at::native::elementwise_kernel<128, 4, void at::native::gpu_kernel_impl_nocast<"
	args := "(at::TensorIteratorBase &, const T1 &)::[lambda(int) (instance 1)]>(int, T3)"
	return []string{
		"kernel",
		gpu + "at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float>>>" + args,
		gpu + "at::native::BinaryFunctor<float, float, float, at::native::binary_internal::DivFunctor<float>>>" + args,
		gpu + "at::native::neg_kernel_cuda(at::TensorIteratorBase &)::[lambda() (instance 2)]>" + args,
		gpu + "at::native::neg_kernel_cuda(at::TensorIteratorBase &)::[lambda() (instance 2)]>" + args,
		"nvjet_sm90_tst_64x8_64x16_2x4_h_bz_TNT_with_a_long_tail_of_tile_options_TNN",
		"nvjet_sm90_tst_64x8_64x16_2x4_h_bz_TNT_with_a_long_tail_of_tile_options_TNT",
		"short_kernel",
	}
}()

// readApart fails t where two cells of got, cut from column, read alike
// while they differ.
func readApart(t *testing.T, column, got []string, w int) {
	t.Helper()
	require.Len(t, got, len(column))
	of := map[string]string{}
	for i, c := range got {
		if o, ok := of[c]; ok && o != column[i] {
			t.Errorf("at %d cells, %q and %q both read %q", w, o, column[i], c)
		}
		of[c] = column[i]
	}
}

// TestCutColumnReadsApart (issue 50): names that share a long prefix,
// cut to one width, still read apart within it: cut in the middle, their
// start kept and then what tells them apart (a template argument, a
// suffix). A name that fits is whole; the same name twice (one kernel on
// two GPUs) reads alike.
func TestCutColumnReadsApart(t *testing.T) {
	for _, w := range []int{54, 40, 26, MinTextCell, MinNarrowCell} {
		got := cutColumn(cutNames, w)
		readApart(t, cutNames, got, w)
		for i, c := range got {
			assert.LessOrEqual(t, input.Width(c), w, "%d cells: %q", w, c)
			if input.Width(cutNames[i]) <= w {
				assert.Equal(t, cutNames[i], c, "a name that fits is whole")
			} else {
				assert.True(t, strings.HasPrefix(c, input.Truncate(cutNames[i], w/4, "")), "at %d cells, %q keeps the start of %q", w, c, cutNames[i])
			}
		}
		assert.Equal(t, got[3], got[4], "the same name reads alike")
	}
	got := cutColumn(cutNames, 54)
	assert.Equal(t, []string{
		"kernel",
		"void at::native::elementwi…nternal::MulFunctor<float>…",
		"void at::native::elementwi…nternal::DivFunctor<float>…",
		"void at::native::elementwi…:native::neg_kernel_cuda(a…",
		"void at::native::elementwi…:native::neg_kernel_cuda(a…",
		"nvjet_sm90_tst_64x8_64x16_…ng_tail_of_tile_options_TNN",
		"nvjet_sm90_tst_64x8_64x16_…ng_tail_of_tile_options_TNT",
		"short_kernel",
	}, got, "what tells them apart after the start; the end where it is there")
	assert.Equal(t, []string{"aaaaaaaa…", "bbbb"}, cutColumn([]string{strings.Repeat("a", 20), "bbbb"}, 9), "names that read apart cut at their end")
}

// TestCutColumnFamilies: a family whose pairs depart at different points
// (PyTorch's CatArrayBatchedCopy and its vectorized twin, each for two
// types) reads apart within the width, each name cut in the middle.
func TestCutColumnFamilies(t *testing.T) {
	column := append([]string{
		"void at::<unnamed>::CatArrayBatchedCopy<at::<unnamed>::OpaqueType<2>, unsigned int, 4, 64, 64>(T1 *, int, T2)",
		"void at::<unnamed>::CatArrayBatchedCopy<at::<unnamed>::OpaqueType<4>, unsigned int, 3, 64, 64>(T1 *, int, T2)",
		"void at::<unnamed>::CatArrayBatchedCopy_vectorized<at::<unnamed>::OpaqueType<2>, unsigned int, 3, 128, 1>(char *, int, T2)",
		"void at::<unnamed>::CatArrayBatchedCopy_vectorized<at::<unnamed>::OpaqueType<4>, unsigned int, 3, 128, 1>(char *, int, T2)",
	}, cutNames...)
	for _, w := range []int{54, 26, MinNarrowCell} {
		got := cutColumn(column, w)
		readApart(t, column, got, w)
		for i, c := range got {
			assert.LessOrEqual(t, input.Width(c), w, "%d cells: %q", w, c)
			if i < 4 {
				assert.Regexp(t, `^[^…]+…[^…]+…?$`, c, "cut in the middle")
			}
		}
	}
}

// TestCutColumnLonger: names that cannot read apart within the width are
// cut longer until they do, and only they.
func TestCutColumnLonger(t *testing.T) {
	long := strings.Repeat("x", 40)
	column := []string{long + "1" + long, long + "2" + long, long + "3" + long, "zzzzzz"}
	got := cutColumn(column, 3)
	readApart(t, column, got, 3)
	assert.Equal(t, "zz…", got[3])
	for _, c := range got[:3] {
		assert.Greater(t, input.Width(c), 3, c)
	}
}

// TestDiffTextNamesReadApart (issue 50): diff's text output, at the
// terminal's width, shows each kernel of a family that shares a long
// prefix (PyTorch's elementwise kernels) by a name no other row shares.
func TestDiffTextNamesReadApart(t *testing.T) {
	prefix := "void at::native::elementwise_kernel<128, 4, void at::native::gpu_kernel_impl_nocast<at::native::"
	names := []string{prefix + "BinaryFunctor<float>>(int)", prefix + "CUDAFunctor_add<float>>(int)", prefix + "neg_kernel_cuda>(int)"}
	side := &facts.DiffKernelSide{TotalMS: 1, Calls: 1}
	r := &facts.DiffResult{Rule: "a rule"}
	for _, n := range names {
		r.Kernels = append(r.Kernels, facts.DiffKernel{Name: n, Status: "matched", A: side, B: side, DiffChange: facts.DiffChange{Verdict: facts.Unchanged}})
	}
	var md bytes.Buffer
	require.NoError(t, DiffMarkdown(&md, r))
	for _, width := range []int{TextWidth, 80} {
		text := RenderWidth(md.Bytes(), width)
		seen := map[string]bool{}
		for _, line := range strings.Split(text, "\n") {
			if strings.HasPrefix(line, "void at::") {
				assert.LessOrEqual(t, input.Width(line), width, line)
				name := strings.Fields(strings.SplitN(line, "  ", 2)[0])
				assert.False(t, seen[strings.Join(name, " ")], "at %d columns, one name for two kernels: %q", width, line)
				seen[strings.Join(name, " ")] = true
			}
		}
		assert.Len(t, seen, len(names), text)
	}
}

// FuzzCutColumn: whatever the names (wide runes, combining marks, "…"
// in them), cells that differ read apart and equal cells alike.
func FuzzCutColumn(f *testing.F) {
	f.Add(strings.Join(cutNames, "\n"), 16)
	f.Add("注意力注意力注意力a\n注意力注意力注意力b\ne\u0301e\u0301e\u0301e\u0301x\ne\u0301e\u0301e\u0301e\u0301y", 5)
	f.Add("ab…cd\nab…\nabcdef", 3)
	f.Add("注注注注注注\n注…\n注注注注注a", 3)
	f.Fuzz(func(t *testing.T, text string, w int) {
		if w < 1 || w > 200 || len(text) > 4096 {
			t.Skip()
		}
		column := strings.Split(text, "\n")
		got := cutColumn(column, w)
		readApart(t, column, got, w)
		shown := map[string]string{}
		for i, c := range column {
			if s, ok := shown[c]; ok && s != got[i] {
				t.Fatalf("%q reads %q and %q", c, s, got[i])
			}
			shown[c] = got[i]
		}
	})
}
