package deepproftest_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/deepproftest"
	"github.com/llm-perf-opt/deepprof/harness/classify"
)

// recordingT is a testing.TB that keeps what the assertions report.
type recordingT struct {
	testing.TB
	errors []string
	fatal  string
}

func (r *recordingT) Helper() {}
func (r *recordingT) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
func (r *recordingT) Fatalf(format string, args ...any) { r.fatal = fmt.Sprintf(format, args...) }

const roofline = "../fixtures/runs/llama3-8b-roofline"

// The assertions on a recorded run (Llama-3-8B shapes on an H200): what
// holds passes, what does not fails with the run directory and the
// numbers.
func TestAssertions(t *testing.T) {
	rt := &recordingT{TB: t}
	run := deepproftest.Open(rt, roofline)
	share, ok := run.RegionShare("decode_all")
	require.True(t, ok)
	k1, ok := run.Kernel(1)
	require.True(t, ok)

	run.RegionShareAtLeast("decode_all", share-1)
	run.BoundIs(1, k1.Bound.Class)
	run.CategoryShareAtMost("gemm", 100)
	s, ok := run.Stage("decode")
	require.True(t, ok)
	run.StageWithin("decode", s.MeanMS+1)
	assert.Empty(t, rt.errors, "what holds passes")

	run.RegionShareAtLeast("decode_all", share+1)
	run.RegionShareAtLeast("no_such_range", 1)
	run.BoundIs(1, classify.ComputeBound+"-not")
	run.CategoryShareAtMost("gemm", 1)
	run.StageWithin("decode", s.MeanMS/2)
	run.StageWithin("nope", 1)
	require.Len(t, rt.errors, 6)
	for _, e := range rt.errors {
		assert.True(t, strings.HasPrefix(e, roofline+": "), "names the run directory: %s", e)
	}
	assert.Contains(t, rt.errors[0], fmt.Sprintf("holds %.1f%% of the GPU time, want at least %.1f%%", share, share+1))
	assert.Contains(t, rt.errors[1], `no region "no_such_range" (regions: prefill, decode_all`)
	assert.Contains(t, rt.errors[2], "top kernel #1 ")
	assert.Contains(t, rt.errors[3], "gemm kernels hold")
	assert.Contains(t, rt.errors[4], `stage "decode" took`)
	assert.Contains(t, rt.errors[5], "no stage \"nope\" (stages: prefill, decode")
}

func TestOpenNotARun(t *testing.T) {
	rt := &recordingT{TB: t}
	deepproftest.Open(rt, t.TempDir())
	assert.Contains(t, rt.fatal, "not a run directory")
}

// The structure of a run (names and counts, no times) is what a golden
// file of a profiled program holds: two runs of tiny-llama on two leases
// of an H200 have the same.
func TestStructureIsStableAcrossRuns(t *testing.T) {
	a := deepproftest.Open(t, "../fixtures/runs/tiny-llama")
	b := deepproftest.Open(t, "../fixtures/runs/tiny-llama-lease2")
	assert.Equal(t, a.Structure(), b.Structure())
	assert.NotEmpty(t, a.Structure().Kernels)
	assert.Contains(t, string(a.StructureJSON()), `"name": "decode_all"`)
}

// A recorded run's typed data, read with no GPU.
func ExampleRead() {
	run, err := deepproftest.Read("../fixtures/runs/llama3-8b-roofline")
	if err != nil {
		fmt.Println(err)
		return
	}
	share, _ := run.RegionShare("decode_all")
	k, _ := run.Kernel(1)
	fmt.Printf("decode_all: %.0f%% of the GPU time\n", share)
	fmt.Printf("top kernel: %s, %s\n", k.Category, k.Bound.Class)
	// Output:
	// decode_all: 76% of the GPU time
	// top kernel: gemm, memory-bound
}

// A profiling test in your own module, behind your own gpu build tag.
func ExampleProfile() {
	var t *testing.T // the test's
	m := deepproftest.Preflight(t)
	run := deepproftest.Profile(t, m, deepproftest.Options{
		Command: []string{"python3", "generate.py", "--tokens", "32"},
	})
	run.RegionShareAtLeast("decode_all", 50)
	run.BoundIs(1, classify.MemoryBound)
	run.StageWithin("decode_step", 25)
}
