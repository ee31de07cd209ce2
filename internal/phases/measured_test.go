package phases

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/cupti"
	"github.com/llm-perf-opt/deepprof/internal/timeline"
)

// measuredRepeats is a SYNTHETIC record file: repeats of a "generate" range
// on one thread, each 1,000 ns with one 100 ns kernel, the first slow
// (firstNS long) when firstNS > 0; the library measured a launch in the
// repeats listed in measured (a W window of 10 ns at the repeat's start, no
// kernel of its own).
func measuredRepeats(t *testing.T, n int, firstNS int64, measured ...int) *timeline.Timeline {
	t.Helper()
	return build(t, map[string]string{"cupti-7.tsv": repeatsFile(7, "", n, firstNS, measured, true)})
}

// peerMeasured is SYNTHETIC: measuredRepeats' process (pid 7, on host
// "vm") measuring nothing, beside a peer (pid 8, on host peerHost) that
// measured a launch during its repeats listed in measured, with the
// same windows, and recorded no range.
func peerMeasured(t *testing.T, n int, peerHost string, measured ...int) *timeline.Timeline {
	t.Helper()
	return build(t, map[string]string{
		"cupti-7.tsv": repeatsFile(7, "vm", n, 0, nil, true),
		"cupti-8.tsv": repeatsFile(8, peerHost, n, 0, measured, false),
	})
}

func repeatsFile(pid int, host string, n int, firstNS int64, measured []int, ranges bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\tpid=%d\tppid=1\tcupti_api=1\tcuda_driver=1\tstart_ns=1\texe=/bin/x", cupti.Magic, pid)
	if host != "" {
		fmt.Fprintf(&b, "\thost=%s", host)
	}
	b.WriteString("\n")
	lines := 0
	at := int64(1000)
	for i := range n {
		length := int64(1000)
		if i == 0 && firstNS > 0 {
			length = firstNS
		}
		corr := 100 + i
		if ranges {
			fmt.Fprintf(&b, "N\tpush\t%d\t%d\t0\t\tgenerate\n", at, pid)
			fmt.Fprintf(&b, "N\tpop\t%d\t%d\t0\t\t\n", at+length, pid)
			lines += 2
		}
		fmt.Fprintf(&b, "A\t%d\t%d\t%d\t%d\truntime\t211\tcudaLaunchKernel\n", at+50, at+60, pid, corr)
		fmt.Fprintf(&b, "K\t%d\t%d\t0\t1\t7\t%d\t1,1,1\t32,1,1\t8\t0\t0\t_Z1kv\tk()\n", at+100, at+200, corr)
		lines += 2
		for _, m := range measured {
			if m == i {
				fmt.Fprintf(&b, "W\t%d\t%d\t%d\n", 900+i, at+10, at+20)
				lines++
			}
		}
		at += length + 100
	}
	fmt.Fprintf(&b, "E\t%d\t0\n", lines)
	return b.String()
}

func build(t *testing.T, files map[string]string) *timeline.Timeline {
	t.Helper()
	bl := timeline.NewBuilder()
	for _, name := range slices.Sorted(maps.Keys(files)) {
		require.NoError(t, bl.Read(strings.NewReader(files[name]), name))
	}
	tl, err := bl.Build()
	require.NoError(t, err)
	return tl
}

// warmOf is which repeats of the record file the steady state left out.
func warmOf(tl *timeline.Timeline) ([]bool, *Steady) {
	s := SteadyState(tl, []string{""})
	var out []bool
	for _, r := range tl.Processes[0].Ranges {
		out = append(out, s.IsWarmup(r))
	}
	return out, s
}

// TestSteadyLeavesMeasuredRepeats (issue 52): a repeat holding one of the
// library's measurements is left out of the steady state; the warm-up is
// decided on every repeat first, so a slow first repeat stays warm-up when a
// later one is measured; where every steady repeat holds one, they stay,
// and MeasuredSteady says so.
func TestSteadyLeavesMeasuredRepeats(t *testing.T) {
	warm, s := warmOf(measuredRepeats(t, 4, 0, 2))
	assert.Equal(t, []bool{false, false, true, false}, warm)
	assert.False(t, s.MeasuredSteady())

	warm, _ = warmOf(measuredRepeats(t, 4, 20_000, 1))
	assert.Equal(t, []bool{true, true, false, false}, warm, "the slow first repeat is warm-up, the measured second left out")

	warm, s = warmOf(measuredRepeats(t, 3, 0, 0, 1, 2))
	assert.Equal(t, []bool{false, false, false}, warm)
	assert.True(t, s.MeasuredSteady())

	warm, s = warmOf(measuredRepeats(t, 4, 0))
	assert.Equal(t, []bool{false, false, false, false}, warm)
	assert.False(t, s.MeasuredSteady())
}

// TestSteadyLeavesPeersMeasuredRepeats (issue 52): a repeat overlapping a
// measuring window of another process of its machine (a rank waiting at a
// collective for the rank that measured) is left out of the steady state;
// one of another machine's (another clock) is not.
func TestSteadyLeavesPeersMeasuredRepeats(t *testing.T) {
	tl := peerMeasured(t, 4, "vm", 2)
	require.Len(t, tl.Processes, 2)
	warm, s := warmOf(tl)
	assert.Equal(t, []bool{false, false, true, false}, warm)
	assert.False(t, s.MeasuredSteady())

	warm, _ = warmOf(peerMeasured(t, 4, "other", 2))
	assert.Equal(t, []bool{false, false, false, false}, warm, "another machine's window is on another clock")
}

// FirstPause is on the timeline's clock: the library's measuring windows
// before it are cut, as every record's time is.
func TestFirstPauseCut(t *testing.T) {
	bl := timeline.NewBuilder()
	require.NoError(t, bl.Read(strings.NewReader(cupti.Magic+"\tpid=7\tppid=1\tcupti_api=1\tcuda_driver=1\tstart_ns=1\texe=/bin/x\n"+
		"W\t9\t100\t400\nX\trecording\tpaused 1000\nE\t2\t0\n"), "cupti-7.tsv"))
	tl, err := bl.Build()
	require.NoError(t, err)
	at, ok := FirstPause(tl.Processes[0])
	assert.True(t, ok)
	assert.Equal(t, int64(700), at)
}
