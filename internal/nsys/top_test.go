package nsys_test

import (
	"testing"

	"github.com/llm-perf-opt/deepprof/internal/model"

	"github.com/stretchr/testify/assert"

	"github.com/llm-perf-opt/deepprof/internal/nsys"
)

func TestTopN(t *testing.T) {
	sums := []nsys.KernelSum{
		{Name: "b", TotalNS: 2e6, Instances: 4},
		{Name: "a", TotalNS: 2e6, Instances: 1},
		{Name: "c", TotalNS: 5e6, Instances: 0},
		{Name: "d", TotalNS: 1e6, Instances: 2},
		{Name: "d", TotalNS: 2.5e6, Instances: 3}, // same name: summed
	}
	all := []model.KernelStats{
		{KernelTotals: model.KernelTotals{Name: "c", TotalMS: 5, Calls: 0}, MeanMS: 5},
		{KernelTotals: model.KernelTotals{Name: "d", TotalMS: 3.5, Calls: 5}, MeanMS: 0.7},
		{KernelTotals: model.KernelTotals{Name: "a", TotalMS: 2, Calls: 1}, MeanMS: 2},
		{KernelTotals: model.KernelTotals{Name: "b", TotalMS: 2, Calls: 4}, MeanMS: 0.5},
	}
	tests := []struct {
		n    int
		want []model.KernelStats
	}{
		{0, all}, {-1, all}, {10, all}, {4, all},
		{3, all[:3]}, {1, all[:1]},
	}
	for _, tt := range tests {
		got := nsys.TopN(sums, tt.n)
		assert.Equal(t, tt.want, got, "n=%d", tt.n)
		for _, r := range got {
			assert.Equal(t, model.DeviceID(0), r.Device, "nsys stats does not say which GPU")
		}
	}
	assert.Empty(t, nsys.TopN(nil, 10))

	assert.InDelta(t, 1.0, nsys.Coverage(sums, nsys.TopN(sums, 0)), 1e-12)
	assert.InDelta(t, 8.5/12.5, nsys.Coverage(sums, nsys.TopN(sums, 2)), 1e-12)
	assert.Equal(t, 0.0, nsys.Coverage(nil, nil))
	assert.Equal(t, 0.0, nsys.Coverage([]nsys.KernelSum{{Name: "z"}}, nil))
}

func TestTable(t *testing.T) {
	sums := []nsys.KernelSum{
		{Name: "b", TotalNS: 2e6, Instances: 4},
		{Name: "a", TotalNS: 5e6, Instances: 1},
		{Name: "b", TotalNS: 1e6, Instances: 2},
	}
	tab := nsys.Table(sums, "run_cuda_gpu_kern_sum.csv")
	assert.Equal(t, model.KernelTable{Source: "run_cuda_gpu_kern_sum.csv", Launches: 7, TotalMS: 8, Count: 2, Kernels: []model.KernelStats{
		{KernelTotals: model.KernelTotals{Name: "a", TotalMS: 5, Calls: 1}, MeanMS: 5},
		{KernelTotals: model.KernelTotals{Name: "b", TotalMS: 3, Calls: 6}, MeanMS: 0.5},
	}}, tab)
	// The coverage rule of the ncu timing path applies unchanged.
	assert.Equal(t, []model.KernelStats{{KernelTotals: model.KernelTotals{Name: "a", TotalMS: 5, Calls: 1}, MeanMS: 5}}, tab.Covering(0.6, 1, 0).Kernels)
	assert.InDelta(t, 5.0/8, tab.Covering(0.6, 1, 0).Share(), 1e-12)
}
