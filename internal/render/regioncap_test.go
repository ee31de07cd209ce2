package render

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/regions"
)

// manyRanges is a SYNTHETIC region report of a program that opens a range
// per iteration ("decode_step 0", "decode_step 1", ...): n ranges, each
// with two kernels, the later ones longer.
func manyRanges(tb testing.TB, n int) *facts.RegionReport {
	tb.Helper()
	a, err := regions.New(regions.Config{Aggregate: true})
	require.NoError(tb, err)
	for i := range n {
		for _, k := range []string{"gemm", "norm"} {
			l := &model.Launch{ProcessID: 7, Device: 0, Kernel: k, Duration: model.Value{Base: float64(1000 + i), Unit: "ns", Valid: true},
				NVTX: &model.Stack{Thread: 1, Levels: []model.Range{{Name: fmt.Sprintf("decode_step %d", i)}}}}
			require.NoError(tb, a.Add("synthetic", l, false))
		}
	}
	return a.Report("synthetic")
}

// TestRegionTablesCapped (issue 53): a program with a range per iteration
// gets a kernel table folder for its MaxRegionTables largest regions only;
// the others are in report.md, which says so, and report.json. Before,
// every range made a folder (20,000 ranges: 20,004 folders, 336 MB).
func TestRegionTablesCapped(t *testing.T) {
	rep := manyRanges(t, 250)
	paths, err := RegionsDirPaths(rep)
	require.NoError(t, err)
	assert.Len(t, paths, 2+2*MaxRegionTables)
	files, err := RegionsDirFiles(rep)
	require.NoError(t, err)
	require.Len(t, files, len(paths))
	for i, f := range files {
		assert.Equal(t, paths[i], f.Rel)
	}
	var b bytes.Buffer
	_, err = files[0].WriteTo(&b)
	require.NoError(t, err)
	md := b.String()
	assert.Equal(t, MaxRegionTables, strings.Count(md, "Kernel table: ["))
	assert.Equal(t, 250-MaxRegionTables, strings.Count(md, "No kernel table of its own"))
	assert.Contains(t, md, "decode\\_step 249")
	// the largest, decode_step 249, has its table; the smallest does not
	var big, small facts.Region
	for _, r := range rep.Aggregate {
		switch r.Name {
		case "decode_step 249":
			big = r
		case "decode_step 0":
			small = r
		}
	}
	assert.Contains(t, paths, big.Dir+"/kernels.md")
	assert.NotContains(t, paths, small.Dir+"/kernels.md")
}

// BenchmarkRegions20000 is the region report of 20,000 ranges, a range per
// iteration, rendered with its files: what a rebuild of such a program
// writes under ncu/regions/.
func BenchmarkRegions20000(b *testing.B) {
	rep := manyRanges(b, 20000)
	b.ResetTimer()
	for b.Loop() {
		files, err := RegionsDirFiles(rep)
		if err != nil || len(files) != 2+2*MaxRegionTables {
			b.Fatal(err, len(files))
		}
		for _, f := range files {
			if _, err := f.WriteTo(io.Discard); err != nil {
				b.Fatal(err)
			}
		}
	}
}
