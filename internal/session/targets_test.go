package session

import (
	"context"
	"fmt"
	"io"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/config"
	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/ncu"
	"github.com/llm-perf-opt/deepprof/internal/phases"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
)

func kernel(name string, ms float64) model.KernelStats {
	return model.KernelStats{KernelTotals: model.KernelTotals{Name: name, TotalMS: ms, Calls: 1}}
}

// TestPlanTargets: the top kernels by time, each with every mangled name
// and launch configuration, if their launches fit in what is left of
// ncu.max_launches; a kernel that does not fit is passed over and the next
// ones tried; the first kernel always; a kernel with none in the profiled
// ranges passed over.
func TestPlanTargets(t *testing.T) {
	t.Parallel()
	top := []model.KernelStats{kernel("gemm", 50), kernel("attn", 20), kernel("none", 10), kernel("norm", 10), kernel("act", 5)}
	ts := []phases.Target{
		{Name: "gemm", Mangled: "_Z4gemmILi1EEvv", Configs: 3},
		{Name: "gemm", Mangled: "_Z4gemmILi2EEvv", Configs: 1},
		{Name: "attn", Mangled: "_Z4attnv", Configs: 2},
		{Name: "norm", Mangled: "_Z4normv", Configs: 4},
		{Name: "act", Mangled: "_Z3actv", Configs: 1},
	}
	c := config.NCU{PerKernelLaunches: 2, MaxLaunches: 7, Set: "basic", Metrics: []string{model.DurationMetric}}
	d := planTargets(top, 100, ts, c, false, true, false)
	require.NotNil(t, d)
	assert.Equal(t, []string{"_Z4gemmILi1EEvv", "_Z4gemmILi2EEvv", "_Z4attnv", "_Z3actv"}, d.mangled)
	assert.Equal(t, 7, d.launches, "4 + 2 + 1 configurations, one launch each (per_kernel_launches does not apply)")
	assert.Equal(t, 3, d.kernels)
	assert.InDelta(t, 0.75, d.share, 1e-9)
	assert.Equal(t, []string{"norm"}, d.left, "norm does not fit; act, after it, does")
	assert.Contains(t, d.note(), "7 launch(es), 1 of each of their 7 launch configuration(s), within ncu.max_launches=7 (10 pass(es) a launch: about 5 s of profiling at 0.065 s a pass); they ran 75.0% of the timed GPU time")
	assert.Contains(t, d.note(), "1 further top kernel(s) left out by the budget")

	c.Sections = []string{"MemoryWorkloadAnalysis"}
	assert.Contains(t, planTargets(top, 100, ts, c, false, true, false).note(), "(ncu's passes a launch for these sections and metrics are not known before it runs; 0 s or more of profiling at 0.065 s a pass)")
	c.Sections = nil

	c.MaxLaunches = 1
	d = planTargets(top, 100, ts, c, false, true, false)
	assert.Equal(t, 4, d.launches, "the first kernel whatever its count")
	assert.Equal(t, 1, d.kernels)

	c.LaunchCount = 3 // an explicit ncu.launch_count is per configuration
	c.MaxLaunches = 100
	d = planTargets(top, 100, ts, c, false, true, false)
	assert.Equal(t, 3*(4+2+4+1), d.launches)
	assert.Nil(t, planTargets(top, 100, nil, c, false, true, false), "no target in the profiled ranges")
}

// TestPlannedStop counts the launches ncu says it profiled, whatever the
// writes' boundaries, and stops once, at the planned count.
func TestPlannedStop(t *testing.T) {
	t.Parallel()
	stops := 0
	p := &plannedStop{want: 2, stop: func() { stops++ }}
	out := `==PROF== Connected to process 7 (/usr/bin/python3.12)
==PROF== Profiling "gemm" - 0: 0%....50%....100% - 10 passes
program output with "==PROF== Profiling" in it
==PROF== Profiling "attn" - 1: 0%....50%....` + "\n" + `==PROF== Profiling "attn" - 1: 0%....50%....100% - 10 passes
==PROF== Profiling "norm" - 2: 0%....50%....100% - 10 passes
`
	for i := 0; i < len(out); i += 7 {
		n, err := p.Write([]byte(out[i:min(i+7, len(out))]))
		require.NoError(t, err)
		require.Equal(t, min(7, len(out)-i), n)
	}
	assert.True(t, p.fired())
	assert.Equal(t, 1, stops)
	assert.Equal(t, 3, p.done)
	assert.Equal(t, "10 pass(es) a launch", p.passes())
	_, _ = p.Write([]byte("==PROF== Profiling \"gemm\" - 3: 0%....50%....100% - 17 passes\n"))
	assert.Equal(t, "10 to 17 passes a launch", p.passes())
}

// stopRunner prints ncu's progress for n launches, then waits for the
// context (a program under ncu that would run on), as ExecRunner reports
// a command it stopped.
type stopRunner struct{ n int }

func (r stopRunner) Run(ctx context.Context, c Command) (Result, error) {
	for i := range r.n {
		fmt.Fprintf(c.Stdout, "==PROF== Profiling \"k%d\" - %d: 0%%....50%%....100%% - 10 passes\n", i, i)
	}
	select {
	case <-ctx.Done():
		// as ExecRunner reports a group that needed SIGKILL after the grace
		return Result{ExitCode: -1, Signal: syscall.SIGKILL, Interrupted: true}, nil
	case <-time.After(5 * time.Second):
		return Result{}, nil
	}
}

// TestStepStopsAfterPlannedLaunches: a pass with StopAfter ends, as a
// success, once that many launches are profiled, and the run says so; a
// pass that profiles fewer runs to its end.
func TestStepStopsAfterPlannedLaunches(t *testing.T) {
	t.Parallel()
	run, err := rundir.Create(t.TempDir(), "run", time.Date(2026, 11, 26, 15, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	s := &Session{Runner: stopRunner{3}, Progress: io.Discard}
	start := time.Now()
	err = s.step(context.Background(), run, Step{ID: StepNcuDeep, Argv: []string{"ncu"}, Log: "deep.log", StopAfter: 3}, true)
	require.NoError(t, err)
	assert.Less(t, time.Since(start), 4*time.Second, "stopped, not run to its end")
	notes := strings.Join(run.Manifest().Notes, "\n")
	assert.Contains(t, notes, "ncu-deep: the program was stopped once the 3 planned launches were profiled")
	steps := run.Manifest().Steps
	require.Len(t, steps, 1)
	assert.Equal(t, 0, steps[0].ExitCode)
	assert.Empty(t, steps[0].Stopped)
}

// exitRunner prints ncu's progress for n launches and exits, as ncu does
// when --kill ends the program.
type exitRunner struct{ n int }

func (r exitRunner) Run(_ context.Context, c Command) (Result, error) {
	for i := range r.n {
		fmt.Fprintf(c.Stdout, "==PROF== Profiling \"k%d\" - %d: 0%%....50%%....100%% - 10 passes\n", i, i)
	}
	return Result{}, nil
}

// TestStepNcuKills: a pass whose ncu ends the program itself (--kill) is
// not signalled, and the run says ncu ended it; one that runs on past
// killGrace after its planned launches is stopped as any other.
func TestStepNcuKills(t *testing.T) { // not parallel: it sets killGrace
	run, err := rundir.Create(t.TempDir(), "run", time.Date(2026, 11, 26, 15, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	s := &Session{Runner: exitRunner{3}, Progress: io.Discard}
	require.NoError(t, s.step(context.Background(), run, Step{ID: StepNcuDeep, Argv: []string{"ncu"}, Log: "deep.log", StopAfter: 3, NcuKills: true}, true))
	notes := strings.Join(run.Manifest().Notes, "\n")
	assert.Contains(t, notes, "ncu-deep: ncu ended the program once the 3 planned launches were profiled (--kill; 10 pass(es) a launch)")
	assert.NotContains(t, notes, "was stopped")

	was := killGrace
	killGrace = 200 * time.Millisecond
	defer func() { killGrace = was }()
	run, err = rundir.Create(t.TempDir(), "run", time.Date(2026, 11, 26, 15, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	s = &Session{Runner: stopRunner{3}, Progress: io.Discard}
	start := time.Now()
	require.NoError(t, s.step(context.Background(), run, Step{ID: StepNcuDeep, Argv: []string{"ncu"}, Log: "deep.log", StopAfter: 3, NcuKills: true}, true))
	assert.Less(t, time.Since(start), 4*time.Second, "stopped after the grace, not run to its end")
	assert.Contains(t, strings.Join(run.Manifest().Notes, "\n"), "ncu-deep: ncu's --kill did not end the program within 200ms of the last planned launch: it was stopped once the 3 planned launches were profiled")
}

// TestPlanOneEach: where every configuration would leave top kernels out
// of the budget, one launch of each mangled name, at the one invocation
// number that gives the most top kernels a bound, then samples the
// heaviest configurations; a kernel whose launch at that number is
// missing or in a configuration never run in the ranges is not profiled.
// Every configuration when it fits, or when an order is unknown (several
// processes) or ncu.launch_count asks for more.
func TestPlanOneEach(t *testing.T) {
	t.Parallel()
	top := []model.KernelStats{kernel("gemm", 50), kernel("attn", 20), kernel("norm", 10), kernel("act", 5)}
	ts := []phases.Target{
		{Name: "gemm", Mangled: "G", Configs: 2, NS: 40, ConfigNS: []int64{10, 30}, Order: []int32{0, 1, 1, 1}, Admitted: []bool{true, true, true, true}},
		{Name: "attn", Mangled: "A", Configs: 2, NS: 20, ConfigNS: []int64{5, 15}, Order: []int32{0, 1, 1, 1}, Admitted: []bool{true, true, true, true}},
		{Name: "norm", Mangled: "N1", Configs: 1, NS: 6, ConfigNS: []int64{6}, Order: []int32{0, 0, 0, 0}, Admitted: []bool{true, true, true, true}},
		{Name: "norm", Mangled: "N2", Configs: 1, NS: 4, ConfigNS: []int64{4}, Order: []int32{-1, 0}, Admitted: []bool{false, true}},
		// act's second launch is outside the ranges, in a configuration it
		// ran inside them
		{Name: "act", Mangled: "X", Configs: 2, NS: 5, ConfigNS: []int64{2, 3}, Order: []int32{0, 1}, Admitted: []bool{true, false}},
	}
	c := config.NCU{MaxLaunches: 5, Set: "basic", Metrics: []string{model.DurationMetric}}
	d := planTargets(top, 100, ts, c, false, true, false)
	require.NotNil(t, d)
	assert.Equal(t, 2, d.invocation, "invocation 1 leaves norm out (N2's first launch is outside the ranges)")
	assert.Equal(t, []string{"G", "A", "N1", "N2", "X"}, d.mangled)
	assert.Equal(t, 5, d.launches)
	assert.Equal(t, 4, d.kernels)
	assert.InDelta(t, 0.85, d.share, 1e-9)
	assert.InDelta(t, 58.0/75, d.sampled, 1e-9, "30 + 15 + 6 + 4 + 3 of 75 ns")
	assert.Equal(t, 8, d.allConfigs, "gemm 2, attn 2, norm 1 + 1, act 2")
	assert.Empty(t, d.missed)
	assert.Equal(t, "deep pass on the top 4 kernel(s) by exact name (5 mangled name(s)): one launch of each, its invocation 2 (ncu --kernel-id takes one invocation number for all), whose launch configurations ran 77.3% of their time; every configuration would take 8 launches, over ncu.max_launches=5; 5 launch(es) (10 pass(es) a launch: about 3 s of profiling at 0.065 s a pass); they ran 85.0% of the timed GPU time; ncu ends the program once the 5 launches are profiled (--launch-count 5 --kill 1); of 2 invocation(s) weighed, one reached soon: ncu follows the program to its launch 1, 0.0 s in (about 6 s before the last profiled launch: 0.8 ms a launch followed, and ncu's start of 6 s); 4 of the 5 launches are in the profiled NVTX ranges, the others of the same kernel and launch configuration outside them (a warm-up's)", d.note())

	// attn's second launch outside the ranges in a configuration it never
	// ran in them: invocation 2 would leave it out (20), invocation 3 norm
	// and act (15), invocation 1 norm (10).
	ts[1].Order, ts[1].Admitted = []int32{0, -1, 1}, []bool{true, false, true}
	d = planTargets(top, 100, ts, c, false, true, false)
	require.NotNil(t, d)
	assert.Equal(t, 1, d.invocation)
	assert.Equal(t, []string{"G", "A", "X"}, d.mangled, "norm is partly reached (N2's first launch is of no configuration in the ranges): none of its names is profiled")
	assert.Equal(t, 3, d.launches)
	assert.Equal(t, []string{"norm"}, d.missed)
	assert.InDelta(t, 0.75, d.share, 1e-9)
	assert.Contains(t, d.note(), "; 1 top kernel(s) not profiled: their invocation 1 was not made, or ran in a launch configuration they did not run in the profiled ranges")

	c.MaxLaunches = 8
	assert.Zero(t, planTargets(top, 100, ts, c, false, true, false).invocation, "every configuration fits")
	c.MaxLaunches = 5
	assert.Zero(t, planTargets(top, 100, ts, c, false, false, false).invocation, "not allowed (a multi-GPU workload, an NVTX exclude)")
	c.LaunchCount = 2
	assert.Zero(t, planTargets(top, 100, ts, c, false, true, false).invocation, "ncu.launch_count asks for more of each configuration")
	c.LaunchCount = 0
	ts[4].Order = nil
	assert.Zero(t, planTargets(top, 100, ts, c, false, true, false).invocation, "act's launches are of two processes")

	// No invocation reaches any kernel (every launch counted is of a
	// configuration never run in the ranges): every configuration, no panic.
	none := []phases.Target{
		{Name: "gemm", Mangled: "G", Configs: 2, NS: 40, ConfigNS: []int64{10, 30}, Order: []int32{-1}, Admitted: []bool{false}},
		{Name: "attn", Mangled: "A", Configs: 2, NS: 20, ConfigNS: []int64{5, 15}, Order: []int32{-1, -1}, Admitted: []bool{false, false}},
	}
	c.MaxLaunches = 3
	d = planTargets(top, 100, none, c, false, true, false)
	require.NotNil(t, d)
	assert.Zero(t, d.invocation)
	assert.Equal(t, []string{"G"}, d.mangled)
}

// TestPlanWithin (issue 54): where the scope is phases inferred from the
// kernel stream (ncu cannot filter on them), a pass of every
// configuration, which profiles each one's first launch, is planned only
// where those launches are inside the phases; else one launch of each,
// its invocation inside them, even with every configuration within the
// budget; where the launches are not counted, every configuration of the
// kernels whose configurations were all first launched inside, the
// others left out; where none was, every configuration, said to be
// profiled outside.
func TestPlanWithin(t *testing.T) {
	t.Parallel()
	top := []model.KernelStats{kernel("gemm", 50), kernel("norm", 10)}
	// gemm's first launch, of the configuration it runs in the steps, is
	// a compiler's autotuning's (outside: -1 in TargetsWithin's order).
	ts := []phases.Target{
		{Name: "gemm", Mangled: "G", Configs: 2, NS: 50, ConfigNS: []int64{10, 40}, Order: []int32{-1, 0, 1, 1}, Admitted: []bool{false, true, true, true}, FirstOutside: 1},
		{Name: "norm", Mangled: "N", Configs: 1, NS: 10, ConfigNS: []int64{10}, Order: []int32{0, 0, 0}, Admitted: []bool{true, true, true}},
	}
	c := config.NCU{MaxLaunches: 24, Set: "basic", Metrics: []string{model.DurationMetric}}
	assert.Zero(t, planTargets(top, 60, ts, c, false, true, false).invocation, "ranges ncu filters on: every configuration fits")
	d := planTargets(top, 60, ts, c, false, true, true)
	require.NotNil(t, d)
	assert.Equal(t, 3, d.invocation, "inside, gemm's heavier configuration (2 is inside too)")
	assert.Equal(t, []string{"G", "N"}, d.mangled)
	assert.Equal(t, 2, d.inside)
	assert.Equal(t, 3, d.allConfigs)
	assert.Contains(t, d.note(), "one launch of each, its invocation 3 (ncu --kernel-id takes one invocation number for all), whose launch configurations ran 83.3% of their time; every configuration would take 3 launches, within ncu.max_launches=24, but ncu would profile each one's first launch, and 1 of those are outside the phases inferred from the kernel stream; 2 launch(es)")
	assert.Contains(t, d.note(), "; each a launch inside the phases inferred from the kernel stream, on which ncu cannot filter (the program pushed no range): its invocation number names it")
	assert.NotContains(t, d.note(), "outside them (a warm-up's)")

	// Every configuration first launched inside: every one is profiled.
	ts[0].Order, ts[0].Admitted, ts[0].FirstOutside = []int32{0, 1, 1}, []bool{true, true, true}, 0
	d = planTargets(top, 60, ts, c, false, true, true)
	require.NotNil(t, d)
	assert.Zero(t, d.invocation)
	assert.Equal(t, 3, d.launches)
	assert.Contains(t, d.note(), "; each configuration's first launch, which ncu profiles, is inside the phases inferred from the kernel stream")

	// Not counted (CUDA graph launches): norm alone was first launched
	// inside in every configuration.
	ts[0].Order, ts[0].Admitted, ts[0].FirstOutside = nil, nil, 1
	ts[1].Order, ts[1].Admitted = nil, nil
	d = planTargets(top, 60, ts, c, false, true, true)
	require.NotNil(t, d)
	assert.Zero(t, d.invocation)
	assert.Equal(t, []string{"N"}, d.mangled)
	assert.Equal(t, []string{"gemm"}, d.outsideLeft)
	assert.Contains(t, d.note(), "; each configuration's first launch, which ncu profiles, is inside the phases inferred from the kernel stream; 1 top kernel(s) left out: ncu cannot filter on those phases (the program pushed no range), their launch configurations were first launched outside them (a compiler's autotuning, the model's build), where ncu would profile them, and one launch of each, named by its invocation inside them, is not planned here (the records do not count the launches as ncu does: CUDA graph launches, dropped records, several processes; or the ranks of a multi-GPU workload, ncu.launch_count or ncu.launch_skip)")

	// None was: every configuration, its first launches outside said; or
	// not known.
	ts[1].FirstOutside = 1
	d = planTargets(top, 60, ts, c, false, true, true)
	require.NotNil(t, d)
	assert.Equal(t, []string{"G", "N"}, d.mangled)
	assert.Contains(t, d.note(), "; ncu cannot filter on the phases inferred from the kernel stream (the program pushed no range): 2 launch configuration(s) are first launched outside them, and those launches are the ones it profiles")
	ts[1].FirstOutside = -1
	assert.Contains(t, planTargets(top, 60, ts, c, false, true, true).note(), "; ncu cannot filter on the phases inferred from the kernel stream (the program pushed no range), and each configuration's first launch, which it profiles, may lie outside them")
}

// TestPlanOneEachSoon (issue 36): a decode whose attention kernel runs in
// a new launch configuration each step (its grid grows with the sequence)
// and whose output projection runs once a step. Every invocation covers
// the same kernels; the later ones sample heavier configurations but lie
// further into the program. The invocation chosen, and how far ncu
// follows the program, is the same at 24 and at 120 steps.
func TestPlanOneEachSoon(t *testing.T) {
	t.Parallel()
	const launchesPerStep, stepNS = 500, int64(20e6)
	targets := func(steps int) []phases.Target {
		gemm := phases.Target{Name: "gemm", Mangled: "G", Configs: 1, ConfigNS: []int64{0}}
		head := phases.Target{Name: "head", Mangled: "H", Configs: 1, ConfigNS: []int64{0}}
		attn := phases.Target{Name: "attn", Mangled: "A", Configs: steps}
		for s := range steps {
			at := func(i int) phases.Reach {
				return phases.Reach{Launches: s*launchesPerStep + i, NS: int64(s)*stepNS + int64(i)*stepNS/launchesPerStep}
			}
			for i := range 4 { // four GEMMs a step
				gemm.Order, gemm.Admitted, gemm.Reach = append(gemm.Order, 0), append(gemm.Admitted, true), append(gemm.Reach, at(100*i))
			}
			gemm.ConfigNS[0] += 4 * 50
			gemm.NS += 4 * 50
			attn.Order, attn.Admitted, attn.Reach = append(attn.Order, int32(s)), append(attn.Admitted, true), append(attn.Reach, at(50))
			attn.ConfigNS = append(attn.ConfigNS, int64(10+s))
			attn.NS += int64(10 + s)
			head.Order, head.Admitted, head.Reach = append(head.Order, 0), append(head.Admitted, true), append(head.Reach, at(499))
			head.ConfigNS[0] += 30
			head.NS += 30
		}
		return []phases.Target{gemm, attn, head}
	}
	c := config.NCU{MaxLaunches: 3, Set: "basic", Metrics: []string{model.DurationMetric}}
	plan := func(steps int) *deepTargets {
		ts := targets(steps)
		var top []model.KernelStats
		total := 0.0
		for _, x := range ts {
			top = append(top, kernel(x.Name, float64(x.NS)))
			total += float64(x.NS)
		}
		top = append(top, kernel("other", total)) // left out by the budget
		d := oneEach(top, 2*total, ts, c)
		require.NotNil(t, d)
		return d
	}
	short, long := plan(24), plan(120)
	assert.Equal(t, short.invocation, long.invocation)
	assert.Equal(t, short.reach, long.reach)
	assert.Less(t, short.invocation, 8, "the first steps, not the last")
	assert.InDelta(t, ncu.FollowSeconds(short.reach.Launches, short.reach.NS), ncu.FollowSeconds(long.reach.Launches, long.reach.NS), 1e-9)
}
