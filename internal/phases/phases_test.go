package phases_test

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/cupti"
	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/phases"
	"github.com/llm-perf-opt/deepprof/internal/synth"
	"github.com/llm-perf-opt/deepprof/internal/timeline"
)

// The record lines of SYNTHETIC files, by the short names the tests'
// data reads best with.
var (
	build   = synth.Timeline
	records = synth.RecordsTimeline
	header  = synth.HeaderLine
	k       = synth.KernelLine
	a       = synth.LaunchLine
	n       = synth.NVTXLine
)

// phaseFile is SYNTHETIC, made so every figure can be worked out by hand.
// Thread 1: step (1000-1100), step (1200-1300), both in loop (990-1400).
// Step 1 launches k at 1010 (runs 1020-1040) and 1030 (1050-1060, on
// stream 7) and 1035 (1055-1070, stream 9: overlaps); a memcpy (1080-1090).
// Step 2 launches at 1210 (1300-1310), 1220 (1400-1450): its kernels run
// after the range ends. Thread 2, in no range, launches x (1210-1230), which
// makes device 0 busy inside step 2. One kernel outside every range, on
// device 1.
func phaseFile() string {
	return header(3) +
		n("push", 990, 1, "", "loop") + n("push", 1000, 1, "", "step") + n("pop", 1100, 1, "", "") +
		n("push", 1200, 1, "", "step") + n("pop", 1300, 1, "", "") + n("pop", 1400, 1, "", "") +
		a(1010, 1, 1) + k(1020, 1040, 0, 7, 1, "a") +
		a(1030, 1, 2) + k(1050, 1060, 0, 7, 2, "b") +
		a(1035, 1, 3) + k(1055, 1070, 0, 9, 3, "c") +
		"A\t1075\t1092\t1\t4\truntime\t51\tcudaMemcpy\n" + "C\t1080\t1090\t0\t1\t7\t4\tDtoH\t64\n" +
		a(1210, 1, 5) + k(1300, 1310, 0, 7, 5, "a") +
		a(1220, 1, 6) + k(1400, 1450, 0, 7, 6, "b") +
		a(1500, 1, 7) + k(1600, 1601, 1, 7, 7, "z") +
		a(1205, 2, 8) + k(1210, 1230, 0, 11, 8, "x") +
		"E\t0\t0\n"
}

func TestPhases(t *testing.T) {
	tl := build(t, phaseFile())
	rep := phases.Of(tl, phases.Options{Depth: 2, TopGaps: 2})
	require.Len(t, rep.Scopes, 2)
	d0 := rep.Scopes[0]
	assert.Equal(t, int64(3), d0.ProcessID)
	assert.Equal(t, model.DeviceID(0), d0.Device)

	// The whole run on device 0: 1020..1450; kernels busy 1020-1040,
	// 1050-1070, 1210-1230, 1300-1310, 1400-1450 = 20+20+20+10+50 = 120.
	run := d0.Run
	assert.Equal(t, "", run.Name)
	assert.Equal(t, int64(430), run.SpanNS)
	assert.Equal(t, int64(6), run.Kernels)
	assert.Equal(t, int64(20+10+15+10+50+20), run.KernelNS, "overlapping kernels count twice")
	assert.Equal(t, int64(120), run.BusyNS)
	assert.Equal(t, int64(310), run.IdleNS)
	assert.InDelta(t, 310.0/430, run.IdleShare, 1e-12)
	assert.True(t, run.LaunchBound)
	// Gaps: 1040-1050 (10), 1070-1210 (140), 1230-1300 (70), 1310-1400 (90).
	assert.Equal(t, int64(310), run.Gaps.SumNS)
	assert.Equal(t, int64(4), run.Gaps.Count)
	assert.Equal(t, []facts.Gap{
		{AtNS: 70, NS: 140, Before: "c", After: "x", Instance: 1},
		{AtNS: 310, NS: 90, Before: "a", After: "b", Instance: 1},
	}, run.Gaps.Largest, "the 2 largest, at ns from start_ns 1000")
	// Latencies 10, 20, 20, 90, 180, 5.
	assert.Equal(t, facts.Latency{Count: 6, MeanNS: 325.0 / 6, MedianNS: 20, MaxNS: 180}, run.Latency)
	assert.Equal(t, facts.CopyStats{Count: 1, NS: 10, Bytes: 64}, run.Memcpy)

	require.Len(t, d0.Phases, 1)
	step := d0.Phases[0]
	assert.Equal(t, "loop/step", step.Name)
	assert.Equal(t, 2, step.Instances)
	assert.Equal(t, int64(5), step.Kernels, "x is not the step's kernel")
	// Instance 1: 1000..1100 (range) = 100, busy 40. Instance 2: 1200..1450
	// (its kernels end after the pop) = 250, busy 60: x runs in its window
	// but is not the step's, so it is not the step's busy time.
	assert.Equal(t, int64(350), step.SpanNS)
	assert.Equal(t, int64(100), step.BusyNS)
	assert.LessOrEqual(t, step.BusyNS, step.KernelNS, "busy is never more than the phase's own kernel time")
	assert.Equal(t, int64(250), step.IdleNS)
	assert.False(t, step.LaunchBound, "gaps of 100 ns make less than half of 250 ns idle: the idle lies before and after its kernels")
	assert.False(t, step.HostAhead, "launch latency of tens of ns: no queue")
	// Gaps within instances only, between the step's own kernels: 10
	// (instance 1), 90 (instance 2); not the 1070-1210 between them.
	assert.Equal(t, int64(100), step.Gaps.SumNS)
	assert.Equal(t, []facts.Gap{
		{AtNS: 310, NS: 90, Before: "a", After: "b", Instance: 2},
		{AtNS: 40, NS: 10, Before: "a", After: "b", Instance: 1},
	}, step.Gaps.Largest)
	assert.Equal(t, facts.Latency{Count: 5, MeanNS: 64, MedianNS: 20, MaxNS: 180}, step.Latency)
	assert.Equal(t, int64(1), step.Memcpy.Count)

	// Depth 1: one instance of loop, 990..1450.
	rep1 := phases.Of(tl, phases.Options{Depth: 1})
	loop := rep1.Scopes[0].Phases[0]
	assert.Equal(t, "loop", loop.Name)
	assert.Equal(t, int64(460), loop.SpanNS)
	assert.Equal(t, int64(100), loop.BusyNS, "x, launched by another thread in no range, is not loop's")
	assert.Equal(t, int64(10+230+90), loop.Gaps.SumNS)

	// NestedDepth 2 over depth 1: loop/step reported inside loop, the
	// same numbers as a depth-2 report's phase; loop itself unchanged.
	nested := phases.Of(tl, phases.Options{Depth: 1, NestedDepth: 2})
	assert.Equal(t, rep1.Scopes[0].Phases, nested.Scopes[0].Phases)
	depth2 := phases.Of(tl, phases.Options{Depth: 2})
	assert.Equal(t, depth2.Scopes[0].Phases, nested.Scopes[0].Nested)
	assert.Equal(t, "loop/step", nested.Scopes[0].Nested[0].Name)
	assert.Empty(t, nested.Scopes[1].Nested, "device 1 has no range")
	assert.Empty(t, rep1.Scopes[0].Nested, "no NestedDepth: no nested regions")

	// Device 1: one kernel, no phase.
	d1 := rep.Scopes[1]
	assert.Equal(t, model.DeviceID(1), d1.Device)
	assert.Equal(t, int64(1), d1.Run.BusyNS)
	assert.False(t, d1.Run.LaunchBound)
	assert.Empty(t, d1.Phases)
}

// TestStages: an instance runs from its push to its pop, or to the end of
// the last kernel launched inside it where that is later: step 2 (pushed
// at 1200, popped at 1300) waits for nothing, and its kernel b ends at
// 1450, so it took 250 ns, and loop (990 to 1400) 460 ns; step 1's
// kernels end before its pop, so it took its 100 ns.
func TestStages(t *testing.T) {
	tl := build(t, phaseFile())
	st := phases.Stages(tl, nil, nil)
	assert.Equal(t, []phases.RangeStage{
		{ProcessID: 3, Name: "loop", Kind: timeline.PushPop, DurationsNS: []int64{460}, Steps: []int{2}, Depth: 1},
		{ProcessID: 3, Name: "step", Kind: timeline.PushPop, DurationsNS: []int64{100, 250}, Depth: 2, Parent: "loop"},
	}, st)
}

// TestTargets: the kernels asked for, by their mangled names, each with its
// launch configurations among the launches kept, in the order asked.
func TestTargets(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, synth.Write(&buf, synth.Small(7)))
	b := timeline.NewBuilder()
	require.NoError(t, b.Read(&buf, "gen.tsv"))
	tl, err := b.Build()
	require.NoError(t, err)
	all := func(*model.Launch) bool { return true }
	ts := phases.Targets(tl, []string{"flash_fwd_kernel(Params)", "rmsnorm_kernel(float*, float const*, int)", "absent"}, all)
	require.Len(t, ts, 2)
	assert.Equal(t, "flash_fwd_kernel(Params)", ts[0].Name)
	assert.Equal(t, "_Z16flash_fwd_kernel6Params", ts[0].Mangled)
	assert.Equal(t, 1, ts[0].Configs, "one grid, block and shared memory")
	assert.Positive(t, ts[0].NS)
	assert.Equal(t, "_Z14rmsnorm_kernelPfPKfi", ts[1].Mangled)
	none := phases.Targets(tl, []string{"flash_fwd_kernel(Params)"}, func(*model.Launch) bool { return false })
	assert.Empty(t, none, "no launch kept")
}

// TestTargetsOrder: a target's launches in the order the program made them
// (correlation ids, not start times: two streams), each by its
// configuration numbered by first launch; a launch keep does not admit
// has its configuration's number when an admitted launch has that
// configuration, else -1; a kernel two processes launched has no order.
func TestTargetsOrder(t *testing.T) {
	k := func(start int64, corr uint32, stream uint32, grid uint32, mangled string) *cupti.KernelRecord {
		return &cupti.KernelRecord{Start: start, End: start + int64(grid)*10, Device: 0, Context: 1, Stream: stream, Correlation: corr,
			Grid: cupti.Dim3{X: grid, Y: 1, Z: 1}, Block: cupti.Dim3{X: 128, Y: 1, Z: 1}, Mangled: mangled, Demangled: mangled}
	}
	tl := records(t, map[int64][]cupti.Record{
		100: {
			k(1000, 1, 7, 9, "gemm"), // outside: a configuration never admitted
			k(2000, 3, 7, 4, "gemm"), // outside, but admitted later
			k(2500, 2, 8, 2, "gemm"), // launched before the one above, ran after it
			k(3000, 4, 7, 4, "gemm"),
			k(4000, 5, 7, 2, "gemm"),
			k(5000, 6, 7, 1, "shared"),
		},
		200: {k(1000, 1, 7, 1, "shared")},
	})
	keep := func(l *model.Launch) bool {
		return l.GridSize != "(9, 1, 1)" && !(l.GridSize == "(4, 1, 1)" && l.ID == 1)
	}
	ts := phases.Targets(tl, []string{"gemm", "shared"}, keep)
	require.Len(t, ts, 2)
	g := ts[0]
	assert.Equal(t, "gemm", g.Mangled)
	assert.Equal(t, 2, g.Configs)
	assert.Equal(t, []int32{-1, 0, 1, 1, 0}, g.Order, "correlation order: grid 9 (never admitted), 2, 4, 4, 2")
	assert.Equal(t, []bool{false, true, false, true, true}, g.Admitted)
	assert.Equal(t, []int64{40, 40}, g.ConfigNS, "grid 2: two launches of 20 ns; grid 4: the admitted one of 40 ns")
	assert.Equal(t, int64(80), g.NS)
	assert.Nil(t, ts[1].Order, "two processes launched it")
	assert.Equal(t, int64(20), ts[1].NS)

	// The workload paused the recording at 3500 ns: what it launched
	// while paused is not known, so the order stops there; the time
	// recorded after it still counts.
	tl = records(t, map[int64][]cupti.Record{
		100: {
			k(1000, 1, 7, 2, "gemm"),
			k(2000, 2, 7, 4, "gemm"),
			&cupti.Note{Key: "recording", Value: "paused 3500"},
			&cupti.Note{Key: "recording", Value: "resumed 3600"},
			k(4000, 3, 7, 4, "gemm"),
		},
	})
	ts = phases.Targets(tl, []string{"gemm"}, func(*model.Launch) bool { return true })
	require.Len(t, ts, 1)
	assert.Equal(t, []int32{0, 1}, ts[0].Order)
	assert.Equal(t, []int64{20, 80}, ts[0].ConfigNS)
	at, ok := phases.FirstPause(tl.Processes[0])
	assert.True(t, ok)
	assert.Equal(t, int64(3500), at)

	// No order where the records do not number the launches as ncu
	// would: every launch after the pause, a CUDA graph launch (two
	// kernels of one correlation id) before it, records dropped.
	for name, recs := range map[string][]cupti.Record{
		"all after the pause": {&cupti.Note{Key: "recording", Value: "paused 500"}, k(1000, 1, 7, 2, "gemm")},
		"a graph launch":      {k(1000, 1, 7, 2, "gemm"), k(1100, 1, 7, 4, "other")},
		"records dropped":     {k(1000, 1, 7, 2, "gemm"), &cupti.Note{Key: "dropped_records", Value: "12"}},
	} {
		tl = records(t, map[int64][]cupti.Record{100: recs})
		ts = phases.Targets(tl, []string{"gemm"}, func(*model.Launch) bool { return true })
		require.Len(t, ts, 1, name)
		assert.Nil(t, ts[0].Order, name)
		assert.Positive(t, ts[0].NS, name)
	}
}

// warmupFile is SYNTHETIC: three instances of gen (each with two steps
// launching one kernel each), the first 10x as long: the warm-up.
func warmupFile() string {
	var b strings.Builder
	b.WriteString(header(4))
	t, corr := 1000, 1
	for g, steps := range []int{2000, 200, 200} {
		b.WriteString(n("push", t, 1, "", "gen"))
		for range 2 {
			b.WriteString(n("push", t+1, 1, "", "step"))
			b.WriteString(a(t+2, 1, corr) + k(t+5, t+5+steps/4, 0, 7, corr, fmt.Sprintf("k%d", g)))
			corr++
			t += steps / 2
			b.WriteString(n("pop", t, 1, "", ""))
		}
		t += 10
		b.WriteString(n("pop", t, 1, "", ""))
		t += 100
	}
	return b.String() + "E\t0\t0\n"
}

// TestSteadyState (issue 34): one warm-up decision for every figure: the
// first gen is dropped, and its steps with it, from the stages and the
// phases alike; its figures are kept apart.
func TestSteadyState(t *testing.T) {
	tl := build(t, warmupFile())
	st := phases.SteadyState(tl, nil)
	byName := map[string]phases.RangeStage{}
	for _, s := range phases.Stages(tl, st, nil) {
		byName[s.Name] = s
	}
	assert.Len(t, byName["gen"].DurationsNS, 3, "the stage keeps its warm-up first, for its own rule to drop")
	assert.Len(t, byName["step"].DurationsNS, 4, "the 2 steps inside the dropped gen are not the step's instances")
	assert.Len(t, byName["step"].InWarmupNS, 2)
	assert.Nil(t, model.Summarize(msOf(byName["step"].DurationsNS)).WarmupMS, "no second warm-up among the steady steps")

	rep := phases.Of(tl, phases.Options{Depth: 1, NestedDepth: 2, Steady: st})
	gen := rep.Scopes[0].Phases[0]
	assert.Equal(t, 2, gen.Instances)
	assert.Equal(t, int64(4), gen.Kernels)
	require.NotNil(t, gen.Warmup)
	assert.Equal(t, 1, gen.Warmup.Instances)
	assert.Equal(t, int64(2), gen.Warmup.Kernels)
	step := rep.Scopes[0].Nested[0]
	assert.Equal(t, "gen/step", step.Name)
	assert.Equal(t, 4, step.Instances, "a step inside the warm-up gen is warm-up with it")
	require.NotNil(t, step.Warmup)
	assert.Equal(t, 2, step.Warmup.Instances)
	assert.Equal(t, rep.Scopes[0].Run.Kernels, gen.Kernels+gen.Warmup.Kernels, "the whole run keeps every kernel")

	none := phases.Of(tl, phases.Options{Depth: 1})
	assert.Equal(t, 3, none.Scopes[0].Phases[0].Instances, "no decision: every instance")
}

func msOf(ns []int64) []float64 {
	out := make([]float64, len(ns))
	for i, v := range ns {
		out[i] = float64(v) / 1e6
	}
	return out
}

// TestUnclosedRangeOfACompleteProcess: in a process that ended normally,
// a push/pop range never popped (as NCCL's ncclCommInitRankConfig in the
// 2-GPU recording) is left out: the program's ranges under it are the
// outermost, and hold their launches.
func TestUnclosedRangeOfACompleteProcess(t *testing.T) {
	f := header(7) + n("push", 10, 1, "NCCL", "ncclCommInitRankConfig") +
		n("push", 100, 1, "", "prefill") + a(110, 1, 1) + k(200, 210, 0, 7, 1, "gemm") + n("pop", 300, 1, "", "") +
		a(310, 1, 2) + k(320, 330, 0, 7, 2, "after") + "E\t2\t0\n"
	tl := build(t, f)
	p := tl.Processes[0]
	require.Len(t, p.Ranges, 1)
	assert.Equal(t, "prefill", p.Ranges[0].Name)
	assert.Equal(t, 1, p.Ranges[0].Depth)
	assert.Nil(t, p.Ranges[0].Parent)
	assert.Contains(t, p.Problems, `f0.tsv:2: push/pop range "ncclCommInitRankConfig" on thread 1 never closed`)
	rep := phases.Of(tl, phases.Options{Depth: 1})
	require.Len(t, rep.Scopes[0].Phases, 1)
	assert.Equal(t, "prefill", rep.Scopes[0].Phases[0].Name)
	for l := range tl.Launches() {
		if l.Kernel == "gemm" {
			assert.Equal(t, []model.Range{{Name: "prefill"}}, l.NVTX.Levels)
		} else {
			require.NotNil(t, l.NVTX)
			assert.Empty(t, l.NVTX.Levels, "outside every range once the unclosed one is left out")
		}
	}
}

// TestSteadyAskedAtOnce: the analyses of one rebuild ask one warm-up
// decision from several goroutines (go test -race); each range's answer is
// the same from every one, and the dropped gen and its steps are in the
// warm-up.
func TestSteadyAskedAtOnce(t *testing.T) {
	tl := build(t, warmupFile())
	var ranges []*timeline.Range
	for _, p := range tl.Processes {
		ranges = append(ranges, p.Ranges...)
	}
	asked := phases.SteadyState(tl, nil) // asked in sequence, for the answers
	want := make([]bool, len(ranges))
	warm := 0
	for i, r := range ranges {
		if want[i] = asked.InWarmup(r); want[i] {
			warm++
		}
	}
	st := phases.SteadyState(tl, nil)
	assert.Equal(t, 3, warm, "the first gen and its 2 steps")
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for i, r := range ranges {
				assert.Equal(t, want[i], st.InWarmup(r))
			}
		})
	}
	wg.Wait()
}

// TestSpansHostAhead: a host that runs ahead pushes and pops its steps
// long before the GPU runs them (the TP=2 shape of issue 54: each
// decode_step from its push to its last kernel, 2.3, 3.1, 4.0 ... ms in a
// decode of 1.6 ms steps). Each instance starts where the previous one of
// its name ended, so steps never overlap, they sum to no more than their
// parent, and each carries its own GPU work; before, each ran from its
// push and the steps summed past decode_all.
func TestSpansHostAhead(t *testing.T) {
	// SYNTHETIC: thread 1 pushes decode_all at 100 and four steps 10 ns
	// apart, each launching one kernel; the GPU runs them 1,000 ns each
	// from 1000.
	f := header(7) + n("push", 100, 1, "", "decode_all")
	for i := range 4 {
		push := 110 + 10*i
		start := 1000 + 1000*i
		f += n("push", push, 1, "", "decode_step") + a(push+1, 1, i+1) + k(start, start+1000, 0, 7, i+1, "step") + n("pop", push+5, 1, "", "")
	}
	f += n("pop", 160, 1, "", "") + "E\t0\t0\n"
	tl := build(t, f)
	st := phases.Stages(tl, nil, nil)
	require.Len(t, st, 2)
	assert.Equal(t, []int64{4900}, st[0].DurationsNS, "decode_all: its push to its last kernel's end")
	assert.Equal(t, []int64{1890, 1000, 1000, 1000}, st[1].DurationsNS, "each step after the one before it")
	var sum int64
	for _, d := range st[1].DurationsNS {
		sum += d
	}
	assert.LessOrEqual(t, sum, st[0].DurationsNS[0])
	p := tl.Processes[0]
	sp := phases.Spans(p)
	var prev phases.Span
	for _, r := range p.Ranges {
		if r.Name != "decode_step" {
			continue
		}
		assert.GreaterOrEqual(t, sp[r].Start, prev.End, "siblings never overlap")
		prev = sp[r]
	}
}

// TestDecodeOnceAToken (issue 54): a program that pushes prefill, then a
// decode range once a token (forward hooks; no decode_all). SYNTHETIC:
// four generates of 1 prefill and 4 steps; the first generate's steps
// take 10x, except its last (its new shapes planned). The decode stage is
// timed run by run (a generate's steps, 4 steps each), the slow generate
// is left out whole, and the decode's steps give TPOT: a step from its
// push to the next one's (100 ns), the host's time between them included.
func TestDecodeOnceAToken(t *testing.T) {
	f := header(5)
	ts, corr := 1000, 1
	for g := range 4 {
		f += n("push", ts, 1, "", "prefill") + a(ts+1, 1, corr) + k(ts+2, ts+20, 0, 7, corr, "pre") + n("pop", ts+30, 1, "", "")
		corr++
		ts += 50
		for s := range 4 {
			d := 80 // a step's range; 20 ns more of the host's before the next
			if g == 0 && s < 3 {
				d = 980
			}
			f += n("push", ts, 1, "", "decode") + a(ts+1, 1, corr) + k(ts+2, ts+d-2, 0, 7, corr, "step") + n("pop", ts+d, 1, "", "")
			corr++
			ts += d + 20
		}
		ts += 500
	}
	tl := build(t, f+"E\t0\t0\n")
	st := phases.SteadyState(tl, nil)
	var dec phases.RangeStage
	for _, s := range phases.Stages(tl, st, nil) {
		if s.Name == "decode" {
			dec = s
		}
	}
	assert.Equal(t, []int{4, 4, 4, 4}, dec.Steps, "a run of 4 steps a repeat")
	assert.Equal(t, []int64{3*1000 + 80, 380, 380, 380}, dec.DurationsNS)
	d := phases.DecodeSteps(tl, st, "", model.DefaultPhases)
	require.NotNil(t, d)
	assert.Equal(t, "decode", d.Step)
	assert.Equal(t, 4, d.Runs)
	assert.Equal(t, 3, d.SteadyRuns, "the slow generate is left out whole")
	assert.Equal(t, []facts.DecodeRun{{ProcessID: 5, Index: 1, Steps: 4, StepMS: 0.001}}, d.Warmup)
	assert.InDelta(t, 100e-6, d.StepMS, 1e-12, "push to push: 80 ns of range, 20 of the host's")
	require.NotNil(t, d.TTFTMS)
	assert.InDelta(t, 50e-6, *d.TTFTMS, 1e-12, "the prefill's start to the first step's")
	assert.Equal(t, "the prefill's start", d.TTFTFrom)
}

// twoThreadSteps is SYNTHETIC: a "step" instance on each of two threads,
// thread 1's from 1000 to 1100 and thread 2's from 1050 to 1150, with the
// launch calls launches inside them and the kernels after.
func twoThreadSteps(launches, kernels string) string {
	return header(3) +
		n("push", 1000, 1, "", "step") + n("push", 1050, 2, "", "step") + launches +
		n("pop", 1100, 1, "", "") + n("pop", 1150, 2, "", "") + kernels + "E\t0\t0\n"
}

// lateFirstStep is twoThreadSteps where thread 1's step, which starts
// first, launches at 1010 and 1020 kernels that run last (1300-1310,
// 1400-1410: a gap of 90); thread 2's launches at 1055 and 1075 kernels
// that run at once (1060-1070, 1080-1090: a gap of 10). Spans: thread 1's
// step runs to its work's end, 1000-1410; thread 2's, 1050-1150.
func lateFirstStep() string {
	return twoThreadSteps(a(1010, 1, 1)+a(1020, 1, 2)+a(1055, 2, 3)+a(1075, 2, 4),
		k(1300, 1310, 0, 7, 1, "a")+k(1400, 1410, 0, 7, 2, "b")+k(1060, 1070, 0, 8, 3, "c")+k(1080, 1090, 0, 8, 4, "d"))
}

// The instances are numbered by where their spans start, not by which one's
// kernels ran first; the queue time is the device's other busy time inside
// each span.
func TestInstancesNumberedBySpan(t *testing.T) {
	rep := phases.Of(build(t, lateFirstStep()), phases.Options{Depth: 1})
	require.Len(t, rep.Scopes, 1)
	require.Len(t, rep.Scopes[0].Phases, 1)
	p := rep.Scopes[0].Phases[0]
	assert.Equal(t, "step", p.Name)
	assert.Equal(t, 2, p.Instances)
	assert.Equal(t, int64(410+100), p.SpanNS)
	assert.Equal(t, int64(40), p.BusyNS)
	assert.Equal(t, []facts.Gap{
		{AtNS: 310, NS: 90, Before: "a", After: "b", Instance: 1},
		{AtNS: 70, NS: 10, Before: "c", After: "d", Instance: 2},
	}, p.Gaps.Largest, "at ns from start_ns 1000")
	// Thread 2's kernels (20 ns) lie inside thread 1's span; thread 1's lie
	// outside thread 2's.
	assert.Equal(t, int64(20), p.QueuedNS)
}

// tiedGaps is twoThreadSteps where the two steps' kernels run side by
// side on two streams, 1200-1210 and 1230-1240 each: a gap of 20 ns at the
// same time in both. Thread 2's kernels have the lower correlation ids, so
// they come first.
func tiedGaps() string {
	return twoThreadSteps(a(1010, 1, 3)+a(1020, 1, 4)+a(1060, 2, 1)+a(1070, 2, 2),
		k(1200, 1210, 0, 7, 3, "a")+k(1230, 1240, 0, 7, 4, "b")+k(1200, 1210, 0, 8, 1, "x")+k(1230, 1240, 0, 8, 2, "y"))
}

// Of gaps that tie in length and time, the lower-numbered instance's is
// kept, whichever instance's kernels came first.
func TestTiedGapsByInstance(t *testing.T) {
	for top, want := range map[int][]facts.Gap{
		1: {{AtNS: 210, NS: 20, Before: "a", After: "b", Instance: 1}},
		2: {{AtNS: 210, NS: 20, Before: "a", After: "b", Instance: 1}, {AtNS: 210, NS: 20, Before: "x", After: "y", Instance: 2}},
	} {
		rep := phases.Of(build(t, tiedGaps()), phases.Options{Depth: 1, TopGaps: top})
		require.Len(t, rep.Scopes, 1)
		require.Len(t, rep.Scopes[0].Phases, 1)
		p := rep.Scopes[0].Phases[0]
		assert.Equal(t, int64(2), p.Gaps.Count)
		assert.Equal(t, want, p.Gaps.Largest, "top %d", top)
	}
}
