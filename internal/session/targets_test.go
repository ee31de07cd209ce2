package session

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/config"
	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
	"github.com/llm-perf-opt/deepprof/internal/timeline"
)

func kernel(name string, ms float64) model.Kernel {
	return model.Kernel{KernelTotals: model.KernelTotals{Name: name, TotalMS: ms, Calls: 1}}
}

// TestPlanTargets: the top kernels by time, each with every mangled name
// and launch configuration, while their launches fit in ncu.max_launches;
// the first kernel whatever its count; a kernel with none in the profiled
// ranges passed over.
func TestPlanTargets(t *testing.T) {
	top := []model.Kernel{kernel("gemm", 50), kernel("attn", 20), kernel("none", 10), kernel("norm", 10), kernel("act", 5)}
	ts := []timeline.Target{
		{Name: "gemm", Mangled: "_Z4gemmILi1EEvv", Configs: 3},
		{Name: "gemm", Mangled: "_Z4gemmILi2EEvv", Configs: 1},
		{Name: "attn", Mangled: "_Z4attnv", Configs: 2},
		{Name: "norm", Mangled: "_Z4normv", Configs: 4},
		{Name: "act", Mangled: "_Z3actv", Configs: 1},
	}
	c := config.NCU{PerKernelLaunches: 2, MaxLaunches: 7}
	d := planTargets(top, 100, ts, c)
	require.NotNil(t, d)
	assert.Equal(t, []string{"_Z4gemmILi1EEvv", "_Z4gemmILi2EEvv", "_Z4attnv"}, d.mangled)
	assert.Equal(t, 6, d.launches, "4 + 2 configurations, one launch each (per_kernel_launches does not apply)")
	assert.Equal(t, 2, d.kernels)
	assert.InDelta(t, 0.70, d.share, 1e-9)
	assert.Equal(t, []string{"norm", "act"}, d.left, "norm does not fit, and the choice is a prefix")
	assert.Contains(t, d.note(), "6 launch(es), 1 of each of their 6 launch configuration(s), within ncu.max_launches=7 (about 4 s of profiling); they ran 70.0% of the timed GPU time")
	assert.Contains(t, d.note(), "2 further top kernel(s) left out by the budget")

	c.MaxLaunches = 1
	d = planTargets(top, 100, ts, c)
	assert.Equal(t, 4, d.launches, "the first kernel whatever its count")
	assert.Equal(t, 1, d.kernels)

	c.LaunchCount = 3 // an explicit ncu.launch_count is per configuration
	c.MaxLaunches = 100
	d = planTargets(top, 100, ts, c)
	assert.Equal(t, 3*(4+2+4+1), d.launches)
	assert.Nil(t, planTargets(top, 100, nil, c), "no target in the profiled ranges")
}

// TestPlannedStop counts the launches ncu says it profiled, whatever the
// writes' boundaries, and stops once, at the planned count.
func TestPlannedStop(t *testing.T) {
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
		return Result{ExitCode: -1, Interrupted: true}, nil
	case <-time.After(5 * time.Second):
		return Result{}, nil
	}
}

// TestStepStopsAfterPlannedLaunches: a pass with StopAfter ends, as a
// success, once that many launches are profiled, and the run says so; a
// pass that profiles fewer runs to its end.
func TestStepStopsAfterPlannedLaunches(t *testing.T) {
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
