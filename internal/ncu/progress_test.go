package ncu_test

import (
	"bufio"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/ncu"
)

func TestParseProgress(t *testing.T) {
	tests := []struct {
		line string
		want ncu.Progress
		ok   bool
	}{
		{`==PROF== Profiling "nvjet_sm90_tst_8x64_64x16_4x1..." - 21: 0%....50%....100% - 1 pass`,
			ncu.Progress{Kind: ncu.ProgressKernel, Kernel: "nvjet_sm90_tst_8x64_64x16_4x1...", Index: 21, Passes: 1, Done: true}, true},
		{`==PROF== Profiling "vectorized_gather_kernel" - 0: 0%....50%....100% - 10 passes`,
			ncu.Progress{Kind: ncu.ProgressKernel, Kernel: "vectorized_gather_kernel", Index: 0, Passes: 10, Done: true}, true},
		{`==PROF== Profiling "range" - 1: 0%....50%....100% - 11 passes` + "\r\n",
			ncu.Progress{Kind: ncu.ProgressKernel, Kernel: "range", Index: 1, Passes: 11, Done: true}, true},
		// SYNTHETIC: a line read before ncu finished it
		{`==PROF== Profiling "axpy_kernel" - 4: 0%....50%`,
			ncu.Progress{Kind: ncu.ProgressKernel, Kernel: "axpy_kernel", Index: 4}, true},
		{`==PROF== Profiling "a "quoted" - 3: name" - 7: 0%....50%....100% - 1 pass`,
			ncu.Progress{Kind: ncu.ProgressKernel, Kernel: `a "quoted" - 3: name`, Index: 7, Passes: 1, Done: true}, true},
		{`==PROF== Connected to process 588 (/usr/bin/python3.12)`,
			ncu.Progress{Kind: ncu.ProgressConnected, PID: 588, Exe: "/usr/bin/python3.12"}, true},
		{`Connected to process 588 (/usr/bin/python3.12)`,
			ncu.Progress{Kind: ncu.ProgressConnected, PID: 588, Exe: "/usr/bin/python3.12"}, true},
		{`==PROF== Disconnected from process 8953`,
			ncu.Progress{Kind: ncu.ProgressDisconnected, PID: 8953}, true},
		{`==PROF== Report: out/at.ncu-rep`,
			ncu.Progress{Kind: ncu.ProgressReport, Report: "out/at.ncu-rep"}, true},
		{`workload names=at layers=2 steps=4 wall_s=5.476`, ncu.Progress{}, false},
		{`==WARNING== No kernels were profiled.`, ncu.Progress{}, false},
		{`==PROF== Trying to shutdown target application`, ncu.Progress{}, false},
		{``, ncu.Progress{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			got, ok := ncu.ParseProgress(tt.line)
			require.Equal(t, tt.ok, ok)
			got.RawLine = ""
			assert.Equal(t, tt.want, got)
		})
	}
}

// fakeClock advances by step each time it is read.
func fakeClock(step time.Duration) func() time.Time {
	t := time.Date(2025, 11, 21, 22, 0, 0, 0, time.UTC)
	return func() time.Time {
		now := t
		t = t.Add(step)
		return now
	}
}

func TestProgressLineFixture(t *testing.T) {
	f, err := os.Open(filepath.Join("../../fixtures", "logs/ncu-escaped-at-sign-match.txt"))
	require.NoError(t, err)
	defer f.Close()
	p := ncu.NewProgressLine(fakeClock(100 * time.Millisecond))
	assert.Equal(t, "ncu: 0 launches profiled, 0.1s", p.String())
	sc := bufio.NewScanner(f)
	events := 0
	for sc.Scan() {
		if p.Feed(sc.Text()) {
			events++
		}
	}
	require.NoError(t, sc.Err())
	assert.Equal(t, 412, p.Launches())
	assert.Equal(t, 412+3, events) // launches, connected, disconnected, report
	assert.Equal(t, `ncu: 412 launches profiled, current: reduce_kernel, report: out/at.ncu-rep, 0.2s`, p.String())
}

func TestProgressLine(t *testing.T) {
	p := ncu.NewProgressLine(fakeClock(12300 * time.Millisecond))
	p.Feed("==PROF== Connected to process 588 (/usr/bin/python3.12)")
	assert.Equal(t, "ncu: 0 launches profiled, 1 process(es) attached, 12.3s", p.String())
	p.Feed(`==PROF== Profiling "Kernel1" - 0: 0%....50%....100% - 1 pass`)
	assert.Equal(t, "ncu: 1 launch profiled, current: Kernel1, 24.6s", p.String())
	p.Add(ncu.Progress{Kind: ncu.ProgressKernel, Kernel: "Kernel2", Index: 1})
	assert.Equal(t, 1, p.Launches())
	assert.Equal(t, "ncu: 1 launch profiled, current: Kernel2, 36.9s", p.String())
	assert.False(t, p.Feed("workload output"))
}

// TestParseProgressFiltered: with a kernel filter ncu prints no launch index
// (line copied from a deep pass on an H200, ncu 2025.3.1).
func TestParseProgressFiltered(t *testing.T) {
	p, ok := ncu.ParseProgress(`==PROF== Profiling "nvjet_sm90_tst_64x32_64x16_1x2_h_bz_TNT": 0%....50%....100% - 10 passes`)
	if !ok || p.Kernel != "nvjet_sm90_tst_64x32_64x16_1x2_h_bz_TNT" || p.Index != -1 || p.Passes != 10 || !p.Done {
		t.Fatalf("got %+v, %v", p, ok)
	}
}

// TestParseProgressCounted: with --launch-count ncu adds "(n/count)" (line
// copied from a discovery pass on an H200, ncu 2025.3.1).
func TestParseProgressCounted(t *testing.T) {
	p, ok := ncu.ParseProgress(`==PROF== Profiling "nvjet_sm90_tst_8x64_64x16_4x1..." - 499 (500/500): 0%....50%....100% - 1 pass`)
	if !ok || p.Index != 499 || p.Passes != 1 || !p.Done {
		t.Fatalf("got %+v, %v", p, ok)
	}
}

// TestPassesPerLaunch: the measured counts for the sets deepprof's presets
// use, and unknown (0) for anything else.
func TestPassesPerLaunch(t *testing.T) {
	dur := []string{model.DurationMetric}
	for _, c := range []struct {
		set      string
		sections []string
		metrics  []string
		want     int
	}{
		{"basic", nil, dur, 10},
		{"basic", []string{"Occupancy"}, dur, 10},
		{"", []string{"SpeedOfLight"}, dur, 10},
		{"", []string{"SpeedOfLight", "LaunchStats", "Occupancy"}, nil, 10},
		{"", []string{"LaunchStats"}, dur, 0},
		{"roofline", nil, dur, 17},
		{"", nil, dur, 1},
		{"basic", []string{"MemoryWorkloadAnalysis"}, dur, 0},
		{"basic", nil, []string{"dram__bytes.sum"}, 0},
		{"full", nil, nil, 38},
		{"detailed", nil, nil, 0},
	} {
		assert.Equal(t, c.want, ncu.PassesPerLaunch(c.set, c.sections, c.metrics), "%+v", c)
	}
}
