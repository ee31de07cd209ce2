package session

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/config"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
	"github.com/llm-perf-opt/deepprof/internal/synth"
)

func readManifest(t *testing.T, run *rundir.Run) rundir.Manifest {
	t.Helper()
	b, err := os.ReadFile(run.Path(rundir.ManifestJSON))
	require.NoError(t, err, "manifest.json is written")
	var m rundir.Manifest
	require.NoError(t, json.Unmarshal(b, &m))
	return m
}

// TestSessionWorkloadTimeout: a workload that hangs (this test binary,
// re-executed, ignoring SIGINT) is stopped at workload.timeout; the run is
// kept, partial, with the reason and what to do; what the workload printed
// is kept; nothing of it is left running.
func TestSessionWorkloadTimeout(t *testing.T) {
	t.Parallel() // it waits on real processes and deadlines
	root := t.TempDir()
	cfg := testConfig(t, root)
	cfg.Workload.Argv = []string{os.Args[0]}
	cfg.Workload.Env = map[string]string{"DEEPPROF_TEST_HELPER": "hang"}
	cfg.Workload.Timeout = "1s"
	cfg.Timeline.Tool = "ncu"
	s := newSession(t, cfg, nil)
	s.Runner = ExecRunner{Grace: 300 * time.Millisecond}
	s.Ncu = "/no/such/ncu" // --list-sections cannot start: a note, and the session goes on
	var log bytes.Buffer
	s.Log = &log

	start := time.Now()
	run, err := s.Run(context.Background())
	took := time.Since(start)
	require.Error(t, err)
	assert.Less(t, took, 10*time.Second, "stopped at the deadline, not at the helper's minute")

	m := readManifest(t, run)
	assert.Equal(t, rundir.StatusPartial, m.Status)
	assert.Equal(t, "stage1 timed out: stopped at its deadline, 1s (workload.timeout); the steps before it are kept. "+
		"Next: raise workload.timeout (now 1s), or find out why the workload hangs; stage1/workload.log shows how far it got", m.Reason)
	require.NotEmpty(t, m.Steps)
	last := m.Steps[len(m.Steps)-1]
	assert.Equal(t, "stage1", last.Name)
	assert.Equal(t, rundir.StopTimedOut, last.Stopped)
	assert.Equal(t, -1, last.ExitCode)
	assert.Empty(t, m.Steps[0].Stopped, "ncu-sections failed to start; it was not stopped")

	b, rerr := os.ReadFile(run.Path(rundir.Stage1Log))
	require.NoError(t, rerr)
	var pid int
	_, serr := fmt.Sscanf(string(b), "pid=%d loading the model", &pid)
	require.NoError(t, serr, "the workload's output before the deadline is kept: %q", b)
	assert.Error(t, syscall.Kill(pid, 0), "the workload (pid %d) still runs", pid)
	assert.FileExists(t, run.Path(rundir.ReportMD))
	assert.Contains(t, log.String(), "deepprof: stage1 timed out: stopped at its deadline, 1s (workload.timeout)")
}

// TestSessionNcuTimeout: an ncu pass that reaches ncu.timeout is stopped;
// what follows it does not run; the run is partial with the reason.
func TestSessionNcuTimeout(t *testing.T) {
	t.Parallel() // it waits on real processes and deadlines
	for _, tc := range []struct {
		hang, step string
		ran        []string // steps recorded, in order
	}{
		{"timing", "ncu-timing", []string{"ncu-sections", "stage1", "ncu-timing"}},
		{"deep", "ncu-deep", []string{"ncu-sections", "stage1", "ncu-timing", "export-timing-raw", "ncu-deep"}},
	} {
		t.Run(tc.hang, func(t *testing.T) {
			root := t.TempDir()
			cfg := testConfig(t, root)
			cfg.NCU.Timeout = "200ms"
			f := &fakeTools{
				timing:         pass{Raw: "ncu/h200-llama-decode-basic/raw.csv", Log: "logs/ncu-output-file-plus-log-file.txt", NoReport: tc.hang == "timing"},
				deep:           pass{Log: "logs/ncu-no-kernels-profiled-domain-syntax.txt", NoReport: true},
				workloadReport: stage1Report,
				hang:           tc.hang,
			}
			run, err := newSession(t, cfg, f).Run(context.Background())
			require.Error(t, err)
			m := readManifest(t, run)
			assert.Equal(t, rundir.StatusPartial, m.Status)
			assert.True(t, strings.HasPrefix(m.Reason, tc.step+" timed out: stopped at its deadline, 200ms (ncu.timeout); the steps before it are kept. Next: raise ncu.timeout (now 200ms), or give ncu less to profile"), m.Reason)
			var ran []string
			for _, st := range m.Steps {
				ran = append(ran, st.Name)
			}
			assert.Equal(t, tc.ran, ran)
			assert.Equal(t, rundir.StopTimedOut, m.Steps[len(m.Steps)-1].Stopped)
			assert.Contains(t, m.Notes, tc.step+": timed out at its deadline, 200ms (ncu.timeout); ncu/"+tc.hang+".log is kept as it was when the step was stopped, and not diagnosed: what a stopped program prints (ncu: \"No kernels were profiled.\") is no fault of its settings")
		})
	}
}

// TestStoppedStepIsNotDiagnosed: a deep pass stopped by Ctrl-C or by its
// deadline gets no diagnosis of its log. The recorded session
// (fixtures/logs/session-interrupted-during-deep-pass.txt) noted, after
// Ctrl-C, that "ncu profiled no kernel and wrote no report", with advice
// about kernel filters; here the pass's log says no kernel was profiled,
// as an ncu stopped early does.
func TestStoppedStepIsNotDiagnosed(t *testing.T) {
	t.Parallel() // it waits on processes: beside the others that do
	rec, err := os.ReadFile(fx + "logs/session-interrupted-during-deep-pass.txt")
	require.NoError(t, err)
	// The recorded misdiagnosis: "ncu-deep: ncu/deep.log:10: ncu profiled no kernel ...".
	recorded := regexp.MustCompile(`'(ncu-deep: ncu/deep\.log:\d+: [^']*)'`).FindSubmatch(rec)
	require.NotNil(t, recorded, "the recording holds the diagnosis of the interrupted pass")
	require.Contains(t, string(recorded[1]), "ncu profiled no kernel and wrote no report Next: check that the workload launches CUDA kernels")

	for _, how := range []string{"interrupted", "timed out"} {
		t.Run(how, func(t *testing.T) {
			root := t.TempDir()
			cfg := testConfig(t, root)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			f := &fakeTools{
				timing:         pass{Raw: "ncu/h200-llama-decode-basic/raw.csv", Log: "logs/ncu-output-file-plus-log-file.txt"},
				deep:           pass{Log: "logs/ncu-no-kernels-profiled-domain-syntax.txt", NoReport: true},
				workloadReport: stage1Report,
			}
			if how == "interrupted" {
				f.interrupt, f.cancel = "deep", cancel
			} else {
				f.hang = "deep"
				cfg.NCU.Timeout = "200ms"
			}
			run, err := newSession(t, cfg, f).Run(ctx)
			require.Error(t, err)
			m := readManifest(t, run)
			assert.Equal(t, rundir.StatusPartial, m.Status)
			var said []string
			for _, n := range m.Notes {
				assert.NotContains(t, n, "ncu-deep: ncu/deep.log:", "a stopped pass's log is not diagnosed")
				assert.NotContains(t, n, "ncu profiled no kernel")
				if strings.HasPrefix(n, "ncu-deep: ") {
					said = append(said, n)
					assert.NotContains(t, n, "Next:", "no advice about the settings")
				}
			}
			require.Len(t, said, 1, "one note on ncu-deep")
			assert.True(t, strings.HasPrefix(said[0], "ncu-deep: "+map[string]string{"interrupted": "interrupted; ", "timed out": "timed out at its deadline, 200ms (ncu.timeout); "}[how]), said[0])
			a, ok := m.Find(rundir.NcuDeepLog)
			require.True(t, ok)
			assert.Equal(t, rundir.StatusComplete, a.Status, "the log is kept")
			d, ok := m.Find(rundir.NcuDeepReport)
			require.True(t, ok)
			assert.Equal(t, rundir.StatusMissing, d.Status)
		})
	}
}

// TestEveryStepHasADeadline: every step of every plan (ncu timeline, nsys
// timeline, range replay) and of the NVTX discovery pass has a deadline
// from a configuration key, and the dry run prints it.
func TestEveryStepHasADeadline(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, "/runs")
	cfg.Workload.Timeout = "7m"
	cfg.NCU.Timeout = "45m"
	cfg.Nsys.Timeout = "12m"
	want := map[string]string{keyWorkloadTimeout: "7m", keyNcuTimeout: "45m", keyNsysTimeout: "12m"}
	ncuPlan, err := newSession(t, cfg, &fakeTools{}).Plan("/runs/run-1", []string{"k"})
	require.NoError(t, err)
	nsysPlan, err := newNsysSession(t, cfg, newNsysTools(synth.Fake{})).Plan("/runs/run-1", nil)
	require.NoError(t, err)
	rcfg := testConfig(t, "/runs")
	rcfg.NCU.ReplayMode = "range"
	rangePlan, err := newSession(t, rcfg, &fakeTools{}).Plan("/runs/run-1", nil)
	require.NoError(t, err)
	s := newSession(t, cfg, &fakeTools{})
	discovery := s.withDeadlines([]Step{{ID: StepNcuDiscovery}, {ID: StepExportDiscoveryRaw}})

	seen := map[StepID]bool{}
	for _, plan := range [][]Step{ncuPlan, nsysPlan, rangePlan, discovery} {
		for _, st := range plan {
			seen[st.ID] = true
			assert.NotEmpty(t, st.Deadline.Key, "step %s has no deadline", st.ID)
		}
	}
	for _, st := range append(append(ncuPlan, nsysPlan...), discovery...) {
		assert.Equal(t, want[st.Deadline.Key], string(st.Deadline.Value), st.ID)
	}
	for id, key := range map[StepID]string{StepStage1: keyWorkloadTimeout, StepNcuTiming: keyNcuTimeout, StepExportTimingRaw: keyNcuTimeout,
		StepNcuDeep: keyNcuTimeout, StepExportRaw: keyNcuTimeout, StepNsysProfile: keyNsysTimeout, StepNsysStatsBase: keyNsysTimeout, StepNcuSections: keyNcuTimeout} {
		assert.True(t, seen[id], id)
		assert.Equal(t, key, s.deadline(id).Key, id)
	}

	var b strings.Builder
	require.NoError(t, FormatPlan(&b, nsysPlan))
	assert.Contains(t, b.String(), "   log: MAIN/stage1/workload.log\n   deadline: 7m (workload.timeout)\n")
	assert.Contains(t, b.String(), "   log: MAIN/nsys/profile.log\n   deadline: 12m (nsys.timeout)\n")

	cfg.Workload.Timeout = ""
	plan, err := newSession(t, cfg, &fakeTools{}).Plan("/runs/run-1", nil)
	require.NoError(t, err)
	b.Reset()
	require.NoError(t, FormatPlan(&b, plan))
	assert.Contains(t, b.String(), "   deadline: none (workload.timeout is \"\")\n")
	assert.Equal(t, config.Duration(""), plan[1].Deadline.Value)
}
