package session

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/config"
	"github.com/llm-perf-opt/deepprof/internal/cupti"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
	"github.com/llm-perf-opt/deepprof/internal/timeline"
)

// inRunFake replays the recorded H200 run whose CUPTI library measured the
// deep metrics of 3 launches in the recorded run (ncu.deep_source=library).
func inRunFake() *fakeTools {
	f := cuptiFake()
	f.cuptiRun, f.cuptiFile = "runs/corpus-in-run-cpp", "cupti-550.tsv.gz"
	return f
}

// TestDeepMetricsInRun (issue 52): with ncu.deep_source=library the CUPTI
// run is asked for the deep metrics (the metrics and the budget in its
// environment, said in the plan), and where its records hold measurements
// no ncu pass runs: the deep pass's files are recorded as skipped, with why,
// and the manifest says what was measured. With both, ncu's pass runs too.
func TestDeepMetricsInRun(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		source string
		ncu    bool
	}{{config.DeepSourceLibrary, false}, {config.DeepSourceBoth, true}} {
		t.Run(tt.source, func(t *testing.T) {
			t.Parallel()
			f := inRunFake()
			cfg := testConfig(t, t.TempDir())
			cfg.NCU.DeepSource = tt.source
			s := newSession(t, cfg, f)
			s.CUPTI = fakeCUPTI(t, true)
			run, err := s.Run(context.Background())
			require.NoError(t, err)
			m := run.Manifest()
			// The recording's GPU queue was not drained before one of its
			// windows: a kernel ran while the library measured, an anomaly.
			assert.Equal(t, rundir.StatusPartial, m.Status, m.Reason)
			assert.Contains(t, m.Reason, "anomaly")
			assert.True(t, slices.ContainsFunc(m.Notes, func(n string) bool {
				return strings.Contains(n, "ran while deepprof's library measured a launch")
			}), "%q", m.Notes)
			i := slices.IndexFunc(f.envs, func(env []string) bool { return slices.Contains(env, "DEEPPROF_PHASE=cupti") })
			require.GreaterOrEqual(t, i, 0)
			env := f.envs[i]
			assert.Contains(t, env, EnvMetrics+"=sm__throughput.avg.pct_of_peak_sustained_elapsed,gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum")
			assert.Contains(t, env, EnvMetricsKernels+"=24")
			assert.Contains(t, env, EnvMetricsCoverage+"=90")
			ranNcu := slices.ContainsFunc(m.Steps, func(st rundir.StepTime) bool { return st.Name == string(StepNcuDeep) })
			assert.Equal(t, tt.ncu, ranNcu, "%v", m.Steps)
			assert.True(t, slices.ContainsFunc(m.Notes, func(n string) bool {
				return strings.HasPrefix(n, "deep pass: made in the recorded run by deepprof's CUPTI library: 3 launch(es) measured")
			}), "%q", m.Notes)
			if !tt.ncu {
				a, ok := m.Find(rundir.NcuDeepReport)
				require.True(t, ok)
				assert.Equal(t, rundir.StatusSkipped, a.Status)
				assert.Contains(t, a.Reason, "measured in the recorded run")
			}
		})
	}
}

// TestDeepMetricsInRunNoneMeasured: a CUPTI run whose records hold no
// measurement (a library that was not asked, or measured nothing) gets
// ncu's pass, with a note that says why.
func TestDeepMetricsInRunNoneMeasured(t *testing.T) {
	t.Parallel()
	f := cuptiFake()
	cfg := testConfig(t, t.TempDir())
	cfg.NCU.DeepSource = config.DeepSourceLibrary
	s := newSession(t, cfg, f)
	s.CUPTI = fakeCUPTI(t, true)
	run, err := s.Run(context.Background())
	require.NoError(t, err)
	m := run.Manifest()
	assert.True(t, slices.ContainsFunc(m.Steps, func(st rundir.StepTime) bool { return st.Name == string(StepNcuDeep) }))
	assert.True(t, slices.ContainsFunc(m.Notes, func(n string) bool {
		return strings.HasPrefix(n, "deep pass: the CUPTI run measured no launch (the records hold no measurement") &&
			strings.HasSuffix(n, "ncu's pass runs instead")
	}), "%q", m.Notes)
}

// The plan says, on the deep pass's step, when ncu's pass runs: by
// ncu.deep_source, the ranks and the timeline chosen.
func TestDeepPassWhen(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, t.TempDir())
	s := newSession(t, cfg, cuptiFake())
	s.tl = &timelineKind{tool: timelineCupti}
	assert.Contains(t, s.deepPassWhen(), "ncu.deep_source=library: runs only where the CUPTI run's library measured no launch")
	cfg.NCU.DeepSource = config.DeepSourceBoth
	assert.Contains(t, s.deepPassWhen(), "runs beside the library's measurements")
	cfg.NCU.DeepSource = config.DeepSourceLibrary
	s.tl = &timelineKind{tool: timelineNsys}
	assert.Contains(t, s.deepPassWhen(), "the timeline is nsys's, and deepprof's library measures them only in the CUPTI run")
	s.tl = &timelineKind{tool: timelineCupti}
	cfg.Workload.Launcher.Kind, cfg.Workload.Launcher.NprocPerNode = "torchrun", 2
	assert.Contains(t, s.deepPassWhen(), "ncu.deep_source=library: runs only where the CUPTI run's library measured no launch", "ranks measure their own")
	cfg.NCU.DeepSource = config.DeepSourceNcu
	assert.Equal(t, "ncu.deep_source=ncu: ncu's pass measures the deep metrics (the program started again)", s.deepPassWhen())
}

// A workload of several ranks measures in its ranks' own processes too (a
// collective is never a target); ncu.deep_source=ncu never does.
func TestDeepInRunForRanks(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, t.TempDir())
	cfg.NCU.DeepSource = config.DeepSourceLibrary
	s := newSession(t, cfg, cuptiFake())
	assert.True(t, s.deepInRun())
	cfg.Workload.Launcher.Kind = "torchrun"
	cfg.Workload.Launcher.NprocPerNode = 2
	assert.True(t, s.deepInRun())
	env, _ := s.inRunEnv()
	assert.Contains(t, env[0], EnvMetrics+"=")
	cfg.Workload.Launcher.Kind = ""
	cfg.NCU.DeepSource = config.DeepSourceNcu
	assert.False(t, s.deepInRun())
}

// measuredInRun says why the library measured nothing from its
// NoteMetricsStopped notes (a SYNTHETIC record file), and counts what it
// measured and cut.
func TestMeasuredInRunWhy(t *testing.T) {
	t.Parallel()
	read := func(body string) *timeline.Timeline {
		b := timeline.NewBuilder()
		require.NoError(t, b.Read(strings.NewReader(cupti.Magic+"\tpid=7\tppid=1\tcupti_api=1\tcuda_driver=1\tstart_ns=1\texe=/bin/x\n"+body), "cupti-7.tsv"))
		tl, err := b.Build()
		require.NoError(t, err)
		return tl
	}
	n, _, why, _ := measuredInRun(read("X\tmetrics\t14 passes a launch\nX\t" + NoteMetricsStopped + "\tstopped after 0 launches: cuptiRangeProfilerEnable: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES\nE\t2\t0\n"))
	assert.Zero(t, n)
	assert.Equal(t, "cupti-7.tsv: stopped after 0 launches: cuptiRangeProfilerEnable: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES", why)
	n, cut, _, limits := measuredInRun(read("K\t0\t0\t0\t1\t7\t2\t1,1,1\t32,1,1\t8\t0\t0\t_Z1kv\tk()\nM\t2\tgpu__time_duration.sum\t40\nW\t2\t100\t600\n" +
		"X\t" + NoteMetricsCapped + "\tafter 1 launches, 1.50 s: the measuring reached 30% of the program's own time\nX\t" + NoteMetricsLeft + "\t3\n" +
		"X\t" + NoteMetricsHeld + "\tkernels launched from more than one thread or context\nE\t3\t0\n"))
	assert.Equal(t, 1, n)
	assert.Equal(t, 460*time.Nanosecond, cut)
	assert.Equal(t, "cupti-7.tsv: its cost cap: after 1 launches, 1.50 s: the measuring reached 30% of the program's own time; "+
		"cupti-7.tsv: 3 target(s) left unmeasured; cupti-7.tsv: kernels launched from more than one thread or context", limits)
}

// A window with no metric (the evaluation refused) counts no launch: ncu's
// pass runs, and the stop note says why.
func TestMeasuredInRunWindowOnly(t *testing.T) {
	t.Parallel()
	b := timeline.NewBuilder()
	require.NoError(t, b.Read(strings.NewReader(cupti.Magic+"\tpid=7\tppid=1\tcupti_api=1\tcuda_driver=1\tstart_ns=1\texe=/bin/x\n"+
		"K\t0\t0\t0\t1\t7\t2\t1,1,1\t32,1,1\t8\t0\t0\t_Z1kv\tk()\nW\t2\t100\t600\nX\t"+NoteMetricsStopped+"\tstopped after 0 launches: cuptiProfilerHostEvaluateToGpuValues: CUPTI_ERROR_UNKNOWN\nE\t3\t0\n"), "cupti-7.tsv"))
	tl, err := b.Build()
	require.NoError(t, err)
	n, cut, why, _ := measuredInRun(tl)
	assert.Zero(t, n)
	assert.Equal(t, 500*time.Nanosecond, cut)
	assert.Contains(t, why, "cuptiProfilerHostEvaluateToGpuValues")
}
