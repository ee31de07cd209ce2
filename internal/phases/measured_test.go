package phases

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/facts"
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
	return build(t, map[string]string{"cupti-7.tsv": repeatsFile(7, "", 0, n, firstNS, measured, true)})
}

// peerMeasured is SYNTHETIC: measuredRepeats' process (pid 7, header
// fields own, e.g. "host=vm", its kernels on device 0) measuring nothing,
// beside a peer (pid 8, header fields peer, its kernels on device
// peerDevice) that measured a launch during its repeats listed in
// measured, with the same windows, and recorded no range.
func peerMeasured(t *testing.T, n int, own, peer string, peerDevice int, measured ...int) *timeline.Timeline {
	t.Helper()
	return build(t, map[string]string{
		"cupti-7.tsv": repeatsFile(7, own, 0, n, 0, nil, true),
		"cupti-8.tsv": repeatsFile(8, peer, peerDevice, n, 0, measured, false),
	})
}

// repeatsFile is measuredRepeats' record file of process pid, with the
// further header fields header ("k=v\tk=v"), its kernels on device.
func repeatsFile(pid int, header string, device, n int, firstNS int64, measured []int, ranges bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\tpid=%d\tppid=1\tcupti_api=1\tcuda_driver=1\tstart_ns=1\texe=/bin/x", cupti.Magic, pid)
	if header != "" {
		b.WriteString("\t" + header)
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
		fmt.Fprintf(&b, "K\t%d\t%d\t%d\t1\t7\t%d\t1,1,1\t32,1,1\t8\t0\t0\t_Z1kv\tk()\n", at+100, at+200, device, corr)
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
// measuring window of a peer is left out of the steady state: a process
// of its machine on its GPU (the GPU replayed the peer's launch), or a
// rank of its job on another GPU (waiting at a collective for the rank
// that measured); not a process of another machine (another clock), nor
// one of its machine on another GPU that is not a rank with it.
func TestSteadyLeavesPeersMeasuredRepeats(t *testing.T) {
	left := []bool{false, false, true, false}
	none := []bool{false, false, false, false}
	for _, tc := range []struct {
		name       string
		own, peer  string
		peerDevice int
		want       []bool
	}{
		{"its machine, its GPU", "host=vm", "host=vm", 0, left},
		{"neither names a machine: one", "", "", 0, left},
		{"another machine", "host=vm", "host=other", 0, none},
		{"a machine named beside none", "host=vm", "", 0, none},
		{"another GPU, no ranks", "host=vm", "host=vm", 1, none},
		{"another GPU, ranks of one job", "host=vm\trank=0", "host=vm\trank=1", 1, left},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tl := peerMeasured(t, 4, tc.own, tc.peer, tc.peerDevice, 2)
			require.Len(t, tl.Processes, 2)
			warm, s := warmOf(tl)
			assert.Equal(t, tc.want, warm)
			assert.False(t, s.MeasuredSteady())
		})
	}
}

// TestDisturbedAtTheEdges: a disturbance counts where it overlaps a
// repeat, its ends included: one ending at the repeat's start, one
// starting at its end, one across it; not one between two repeats.
func TestDisturbedAtTheEdges(t *testing.T) {
	tl := measuredRepeats(t, 4, 0)
	spans := Spans(tl.Processes[0])
	var runs [][]*timeline.Range
	for _, r := range tl.Processes[0].Ranges {
		runs = append(runs, []*timeline.Range{r})
	}
	// the repeats: 1000-2000, 2100-3100, 3200-4200, 4300-5300
	for _, tc := range []struct {
		name string
		at   Span
		want []bool
	}{
		{"ending at the second's start", Span{Start: 2050, End: 2100}, []bool{false, true, false, false}},
		{"starting at the third's end", Span{Start: 4200, End: 4250}, []bool{false, false, true, false}},
		{"across the second and third", Span{Start: 3000, End: 3300}, []bool{false, true, true, false}},
		{"between two repeats", Span{Start: 2010, End: 2090}, []bool{false, false, false, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Steady{warm: map[*timeline.Range]bool{}, measured: map[*timeline.Range]bool{}, memo: map[*timeline.Range]bool{}}
			s.leaveMeasured(runs, spans, []Span{tc.at})
			var got []bool
			for _, run := range runs {
				got = append(got, s.warm[run[0]])
			}
			assert.Equal(t, tc.want, got)
		})
	}
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

// TestMeasuredInstancesApart: a phase's instances left out for a
// measurement are summed apart from those the warm-up rule dropped
// (facts.Phase.Measured, Warmup).
func TestMeasuredInstancesApart(t *testing.T) {
	for _, tc := range []struct {
		name           string
		tl             *timeline.Timeline
		warm, measured int
		warmNS         int64
	}{
		{"the third measured", measuredRepeats(t, 4, 0, 2), 0, 1, 0},
		{"a slow first, the second measured", measuredRepeats(t, 4, 20_000, 1), 1, 1, 20_000},
		{"a slow first, none measured", measuredRepeats(t, 4, 20_000), 1, 0, 20_000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := Of(tc.tl, Options{Depth: 1, Steady: SteadyState(tc.tl, []string{""})})
			require.Len(t, rep.Scopes, 1)
			require.Len(t, rep.Scopes[0].Phases, 1)
			ph := rep.Scopes[0].Phases[0]
			count := func(p *facts.Phase) int {
				if p == nil {
					return 0
				}
				return p.Instances
			}
			assert.Equal(t, tc.warm, count(ph.Warmup))
			assert.Equal(t, tc.measured, count(ph.Measured))
			assert.Equal(t, 4-tc.warm-tc.measured, ph.Instances)
			if ph.Warmup != nil {
				assert.Equal(t, tc.warmNS, ph.Warmup.SpanNS, "the warm-up's figures hold no measured instance")
			}
		})
	}
}

// TestMeasuredStepLeadsNothing: a measured step inside a phase's one
// instance is not a leading warm-up part of it (Steady.Leading): the steps
// before it are steady.
func TestMeasuredStepLeadsNothing(t *testing.T) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\tpid=7\tppid=1\tcupti_api=1\tcuda_driver=1\tstart_ns=1\texe=/bin/x\n", cupti.Magic)
	fmt.Fprintf(&b, "N\tpush\t%d\t7\t0\t\tsolve\n", 500)
	lines := 1
	at := int64(1000)
	for i := range 6 {
		corr := 100 + i
		fmt.Fprintf(&b, "N\tpush\t%d\t7\t0\t\titer\n", at)
		fmt.Fprintf(&b, "A\t%d\t%d\t7\t%d\truntime\t211\tcudaLaunchKernel\n", at+50, at+60, corr)
		fmt.Fprintf(&b, "K\t%d\t%d\t0\t1\t7\t%d\t1,1,1\t32,1,1\t8\t0\t0\t_Z1kv\tk()\n", at+100, at+200, corr)
		fmt.Fprintf(&b, "N\tpop\t%d\t7\t0\t\t\n", at+1000)
		lines += 4
		if i == 3 {
			fmt.Fprintf(&b, "W\t%d\t%d\t%d\n", 900+i, at+10, at+20)
			lines++
		}
		at += 1100
	}
	fmt.Fprintf(&b, "N\tpop\t%d\t7\t0\t\t\n", at)
	fmt.Fprintf(&b, "E\t%d\t0\n", lines+1)
	tl := build(t, map[string]string{"cupti-7.tsv": b.String()})
	s := SteadyState(tl, []string{""})
	for _, r := range tl.Processes[0].Ranges {
		if r.Name == "solve" {
			_, ok := s.Leading(r)
			assert.False(t, ok, "a measured step is no leading warm-up")
		}
	}
}
