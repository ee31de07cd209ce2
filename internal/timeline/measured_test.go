package timeline

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/cupti"
)

// measuredRecords is a SYNTHETIC record file of one thread launching
// kernels k1, k2, k3 (correlations 1 to 3), each 10 ns, the second measured
// by the library: CUPTI gave its K record no time, its M lines carry
// withDuration's duration (none when 0) and its W line a window of 1,000 ns
// from 1,100; a pause note after it.
func measuredRecords(withDuration int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\tpid=7\tppid=1\tcupti_api=1\tcuda_driver=1\tstart_ns=1\texe=/bin/x\n", cupti.Magic)
	lines := []string{
		"A\t1000\t1005\t7\t1\truntime\t211\tcudaLaunchKernel",
		"K\t1010\t1020\t0\t1\t7\t1\t1,1,1\t32,1,1\t8\t0\t0\t_Z2k1v\tk1()",
		"A\t1100\t1200\t7\t2\truntime\t211\tcudaLaunchKernel",
		"K\t0\t0\t0\t1\t7\t2\t2,1,1\t32,1,1\t8\t0\t0\t_Z2k2v\tk2()",
		"M\t2\tsm__throughput.avg.pct_of_peak_sustained_elapsed\t71.5",
		"W\t2\t1100\t2100",
		"A\t2150\t2155\t7\t3\truntime\t211\tcudaLaunchKernel",
		"K\t2160\t2170\t0\t1\t7\t3\t1,1,1\t32,1,1\t8\t0\t0\t_Z2k3v\tk3()",
		"X\trecording\tpaused 2500",
	}
	if withDuration > 0 {
		lines = append(lines, fmt.Sprintf("M\t2\tgpu__time_duration.sum\t%d", withDuration))
	}
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	fmt.Fprintf(&b, "E\t%d\t0\n", len(lines))
	return b.String()
}

// TestMeasuredCut (issue 52): the library's measuring window is cut out of
// every time of the process, the measured launch keeps the replay's
// duration at the window's end, and without a duration it is left out of
// the kernels; the notice says what was done.
func TestMeasuredCut(t *testing.T) {
	t.Run("placed", func(t *testing.T) {
		p := build(t, measuredRecords(40)).Processes[0]
		require.Len(t, p.Measured, 1)
		m := p.Measured[0]
		assert.True(t, m.Placed)
		assert.Equal(t, "k2()", m.Name())
		// the window 1100..2100 less the 40 ns the launch ran: 960 ns cut
		assert.Equal(t, int64(960), p.CutNS())
		var got [][2]int64
		for _, k := range p.Kernels {
			got = append(got, [2]int64{k.Start, k.End})
		}
		assert.Equal(t, [][2]int64{{1010, 1020}, {1100, 1140}, {1200, 1210}}, got)
		assert.Equal(t, []int64{1100}, p.MeasuredAt())
		assert.Equal(t, int64(2500-960), p.Cut(2500), "a note's time is cut as the records' are")
		require.Len(t, p.APIs, 3)
		assert.Equal(t, [2]int64{1100, 1100}, [2]int64{p.APIs[1].Start, p.APIs[1].End}, "the measured call is inside the window")
		assert.Equal(t, [2]int64{1190, 1195}, [2]int64{p.APIs[2].Start, p.APIs[2].End})
		assert.Empty(t, p.Anomalies, "a measured launch is no anomaly")
		assert.Contains(t, p.measuredNotice(), "1 launch(es) measured")
		assert.Contains(t, p.measuredNotice(), "1 keep the duration the replay measured")
	})
	t.Run("no duration", func(t *testing.T) {
		p := build(t, measuredRecords(0)).Processes[0]
		require.Len(t, p.Measured, 1)
		assert.False(t, p.Measured[0].Placed)
		assert.Equal(t, int64(1000), p.CutNS())
		require.Len(t, p.Kernels, 2, "the measured launch has no time: left out")
		assert.Equal(t, [2]int64{1160, 1170}, [2]int64{p.Kernels[1].Start, p.Kernels[1].End})
		assert.Empty(t, p.Anomalies)
		assert.Contains(t, p.measuredNotice(), "1, with none, are left out of the kernel times")
	})
}

// TestCutsAt: times before, inside and after windows, overlapping windows
// merged.
func TestCutsAt(t *testing.T) {
	c := newCuts([]cupti.Window{{Start: 300, End: 400}, {Start: 100, End: 200}, {Start: 350, End: 450}})
	for _, tt := range []struct{ in, want int64 }{{50, 50}, {100, 100}, {150, 100}, {200, 100}, {250, 150}, {300, 200}, {420, 200}, {450, 200}, {500, 250}} {
		assert.Equal(t, tt.want, c.at(tt.in), "at(%d)", tt.in)
	}
	assert.Equal(t, int64(250), c.total())
	assert.Equal(t, int64(7), cuts{}.at(7))
}

// TestMeasuredOverlap: a kernel that ran while the library measured (its
// GPU queue not drained first) is an anomaly, since the cut shortens it.
func TestMeasuredOverlap(t *testing.T) {
	f := strings.Replace(measuredRecords(40), "K\t1010\t1020\t", "K\t1010\t1150\t", 1)
	p := build(t, f).Processes[0]
	require.Len(t, p.Anomalies, 1)
	assert.Contains(t, p.Anomalies[0].Msg, "1 kernel(s) or copies ran while deepprof's library measured a launch")
	assert.Equal(t, int64(1100), p.Kernels[0].End, "shortened to the window's start")
}
