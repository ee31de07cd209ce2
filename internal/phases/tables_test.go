package phases_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/phases"
)

// TestKernelTables: one pass gives every admitted launch's table, the
// warm-up's and, when asked, the steady state's. SYNTHETIC: three
// instances of "step", the first a warm-up (1,000 ns against 100), and a
// kernel outside every range, which keep leaves out.
func TestKernelTables(t *testing.T) {
	file := header(3) +
		a(500, 1, 9) + k(510, 520, 0, 7, 9, "outside") +
		n("push", 1000, 1, "", "step") + a(1010, 1, 1) + k(1020, 1030, 0, 7, 1, "k") + n("pop", 2000, 1, "", "") +
		n("push", 3000, 1, "", "step") + a(3010, 1, 2) + k(3020, 3030, 0, 7, 2, "k") + a(3040, 1, 3) + k(3050, 3070, 0, 7, 3, "g") + n("pop", 3100, 1, "", "") +
		n("push", 4000, 1, "", "step") + a(4010, 1, 4) + k(4020, 4030, 0, 7, 4, "k") + n("pop", 4100, 1, "", "") +
		"E\t0\t0\n"
	tl := build(t, file)
	steady := phases.SteadyState(tl, nil)
	inRanges := func(l *model.Launch) bool { return l.NVTX != nil && len(l.NVTX.Levels) > 0 }
	calls := func(tab *model.KernelTable) map[string]int64 {
		out := map[string]int64{}
		for _, r := range tab.Kernels {
			out[r.Name] = r.Calls
		}
		return out
	}

	ts, err := phases.KernelTables(tl, "cupti", inRanges, steady, nil, true)
	require.NoError(t, err)
	assert.Equal(t, map[string]int64{"k": 3, "g": 1}, calls(ts.All))
	assert.Equal(t, map[string]int64{"k": 1}, calls(ts.Warmup))
	require.NotNil(t, ts.Steady)
	assert.Equal(t, map[string]int64{"k": 2, "g": 1}, calls(ts.Steady))
	assert.InDelta(t, 20e-6, ts.Steady.Kernels[0].TotalMS, 1e-12, "g's 20 ns first")
	require.NotNil(t, ts.Steady.Kernels[0].Spread, "the steady table has each kernel's spread")

	whole, err := phases.KernelTable(tl, "cupti", inRanges)
	require.NoError(t, err)
	assert.Equal(t, whole, ts.All, "every admitted launch: KernelTable's table")

	no, err := phases.KernelTables(tl, "cupti", inRanges, steady, nil, false)
	require.NoError(t, err)
	assert.Nil(t, no.Steady)
	assert.Equal(t, ts.All, no.All)
	assert.Equal(t, ts.Warmup, no.Warmup)
}

// TestKernelTablesRecorded: on every recorded run with a CUPTI timeline,
// the one pass's table of every launch is KernelTable's, and each
// kernel's launches are its warm-up's and its steady state's.
func TestKernelTablesRecorded(t *testing.T) {
	seen := 0
	all := func(*model.Launch) bool { return true }
	for dir, tl := range recordedTimelines(t) {
		steady := phases.SteadyState(tl, []string{""})
		ts, err := phases.KernelTables(tl, "cupti", all, steady, []string{""}, true)
		require.NoError(t, err, dir)
		whole, err := phases.KernelTable(tl, "cupti", all)
		require.NoError(t, err, dir)
		assert.Equal(t, whole, ts.All, dir)
		type key struct {
			name string
			dev  facts.DeviceID
		}
		parts := map[key]int64{}
		for _, tab := range []*model.KernelTable{ts.Steady, ts.Warmup} {
			for _, r := range tab.Kernels {
				parts[key{r.Name, r.Device}] += r.Calls
			}
		}
		for _, r := range ts.All.Kernels {
			assert.Equal(t, r.Calls, parts[key{r.Name, r.Device}], "%s: %s", dir, r.Name)
		}
		assert.Equal(t, ts.All.Launches, ts.Steady.Launches+ts.Warmup.Launches, dir)
		seen++
	}
	assert.Greater(t, seen, 20)
}
