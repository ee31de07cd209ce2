package session

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/config"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
	"github.com/llm-perf-opt/deepprof/internal/synth"
	"github.com/llm-perf-opt/deepprof/internal/workload"
)

// The any-program form (issue 14), offline: a program that writes no
// workload report, recorded under the CUPTI library for real
// (fixtures/cupti/h100-torch-nvtx: scripts/cupti/torch_nvtx.py, a PyTorch
// script with NVTX ranges prefill and decode_all/decode_step, no deepprof
// import), with fake ncu.

const torchNVTX = "cupti/h100-torch-nvtx/cupti-727.tsv"

func anyProgram(t *testing.T, include []string, f *fakeTools) (*rundir.Run, error) {
	return anyProgramRepeated(t, include, f, 1)
}

// anyProgramRepeated is anyProgram with stage 1 running it repeats times,
// as deepprof profile -- CMD configures it.
func anyProgramRepeated(t *testing.T, include []string, f *fakeTools, repeats int) (*rundir.Run, error) {
	t.Helper()
	root := t.TempDir()
	cfg := testConfig(t, root)
	cfg.Workload.Python = ""
	cfg.Workload.Argv = []string{"./my-program", "--fast"}
	cfg.Workload.Repeats, cfg.Workload.RepeatBy = repeats, config.RepeatByProcess
	cfg.NVTX.Include = include
	f.deep = pass{Raw: "ncu/h200-llama-decode-roofline/raw.csv", Details: "ncu/h200-llama-decode-roofline/details.csv"}
	f.noReport = true
	s := newSession(t, cfg, f)
	s.CUPTI = fakeCUPTI(t, true)
	return s.Run(context.Background())
}

func notes(run *rundir.Run) string { return strings.Join(run.Manifest().Notes, "\n") }

func TestAnyProgramStagesFromNVTX(t *testing.T) {
	t.Parallel()
	f := &fakeTools{cuptiSrc: torchNVTX}
	run, err := anyProgram(t, []string{"prefill", "decode_all"}, f)
	require.NoError(t, err)
	m := run.Manifest()
	assert.Equal(t, rundir.StatusComplete, m.Status, m.Reason)
	assert.Equal(t, rundir.TimelineCupti, m.Sources.Stages.Path, "stages from the NVTX ranges")
	assert.Equal(t, rundir.SourceCuptiStages, m.Sources.Stages.What)
	a, ok := m.Find(rundir.Stage1Report)
	require.True(t, ok)
	assert.Equal(t, rundir.StatusSkipped, a.Status)
	assert.Contains(t, a.Reason, "wrote no workload report")
	assert.Contains(t, notes(run), "oracle (torch.profiler): not run")
	for _, argv := range f.calls {
		assert.NotEqual(t, "oracle", envOf(f, argv), "no oracle run for a program that writes no report")
	}
	sum, err := os.ReadFile(run.Path(rundir.StakeholderSummary))
	require.NoError(t, err)
	assert.Contains(t, string(sum), "decode\\_step")
	assert.Contains(t, string(sum), "Wall time from timeline/cupti")
}

// envOf is the DEEPPROF_PHASE a call ran with ("" when none).
func envOf(f *fakeTools, argv []string) string {
	for i, c := range f.calls {
		if strings.Join(c, " ") != strings.Join(argv, " ") {
			continue
		}
		for _, e := range f.envs[i] {
			if v, ok := strings.CutPrefix(e, "DEEPPROF_PHASE="); ok {
				return v
			}
		}
	}
	return ""
}

// None of the configured ranges occurs: the session says which did, and
// profiles those; config.yaml holds what it went on with.
func TestAnyProgramOtherRanges(t *testing.T) {
	t.Parallel()
	run, err := anyProgram(t, []string{"serve"}, &fakeTools{cuptiSrc: torchNVTX})
	require.NoError(t, err)
	assert.Contains(t, notes(run), "nvtx.include: none of the ranges [serve] occurred; the program's outermost ranges are [prefill decode_all]")
	cfg, err := config.Parse(run.Path(rundir.ConfigYAML))
	require.NoError(t, err)
	assert.Equal(t, []string{"prefill", "decode_all"}, cfg.NVTX.Include)
	assert.Equal(t, rundir.StatusComplete, run.Manifest().Status, run.Manifest().Reason)
}

// No NVTX range at all: the whole program is profiled, and the run says
// how to add ranges.
func TestAnyProgramNoNVTX(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../fixtures/" + torchNVTX)
	require.NoError(t, err)
	// synthetic: the real recording without its NVTX lines
	run, err := anyProgram(t, []string{"prefill", "decode_all"}, &fakeTools{cuptiText: string(synth.WithoutNVTX(b))})
	require.NoError(t, err)
	assert.Contains(t, notes(run), "the program opened no NVTX range: the whole program is profiled")
	assert.Contains(t, notes(run), "torch.cuda.nvtx.range_push")
	cfg, err := config.Parse(run.Path(rundir.ConfigYAML))
	require.NoError(t, err)
	assert.Empty(t, cfg.NVTX.Include)
	assert.True(t, run.Exists(rundir.KernelsMD))
}

// No CUDA kernel at all: the session stops before the deep pass and says so.
func TestAnyProgramNoCUDA(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../fixtures/" + torchNVTX)
	require.NoError(t, err)
	// synthetic: the real recording's header, notes and end line only
	f := &fakeTools{cuptiText: string(synth.WithoutActivity(b))}
	run, err := anyProgram(t, []string{"prefill"}, f)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the program launched no CUDA kernel")
	assert.Equal(t, rundir.StatusPartial, run.Manifest().Status)
	for _, c := range f.calls {
		assert.NotContains(t, c, "--section", "no deep pass")
	}
}

// A program that never loads CUDA leaves no record file: the same answer.
func TestAnyProgramNoRecordFile(t *testing.T) {
	t.Parallel()
	f := &fakeTools{} // the program writes no record file
	run, err := anyProgram(t, []string{"prefill"}, f)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the program launched no CUDA kernel (0 record file(s) in MAIN/timeline/cupti). Next: check that it runs its work on the GPU")
	assert.Equal(t, rundir.StatusPartial, run.Manifest().Status)
	for _, c := range f.calls {
		assert.NotContains(t, c, "--section", "no deep pass")
	}
}

// A program that fails: its exit status and the end of its output, the run
// kept and marked partial.
func TestAnyProgramFails(t *testing.T) {
	t.Parallel()
	f := &fakeTools{cuptiSrc: torchNVTX, exit: 3, output: []string{"Traceback (most recent call last):", "RuntimeError: CUDA out of memory"}}
	run, err := anyProgram(t, []string{"prefill"}, f)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "exited with status 3")
	assert.Contains(t, err.Error(), "RuntimeError: CUDA out of memory")
	assert.Equal(t, rundir.StatusPartial, run.Manifest().Status)
}

// workload.repeats runs the command that many times in stage 1, each
// timed: the summary's "(whole program)" stage; every profiled step runs it
// once, with DEEPPROF_REPEATS=1.
func TestAnyProgramRepeats(t *testing.T) {
	t.Parallel()
	f := &fakeTools{cuptiSrc: torchNVTX}
	run, err := anyProgramRepeated(t, []string{"prefill", "decode_all"}, f, 3)
	require.NoError(t, err)
	assert.Equal(t, rundir.StatusComplete, run.Manifest().Status, run.Manifest().Reason)
	var names []string
	for _, st := range run.Manifest().Steps {
		names = append(names, st.Name)
	}
	assert.Equal(t, []string{"stage1 (run 1 of 3)", "stage1 (run 2 of 3)", "stage1 (run 3 of 3)"}, names[1:4])
	for i, env := range f.envs {
		if len(env) > 0 { // the program's runs; ncu's own calls add nothing
			assert.Contains(t, env, "DEEPPROF_REPEATS=1", "call %d: %v", i, f.calls[i])
		}
	}

	b, err := os.ReadFile(run.Path(rundir.Stage1Runs))
	require.NoError(t, err)
	runs, err := workload.ReadRuns(strings.NewReader(string(b)), rundir.Stage1Runs)
	require.NoError(t, err)
	require.Len(t, runs.Runs, 3)
	log, err := os.ReadFile(run.Path(rundir.Stage1Log))
	require.NoError(t, err)
	assert.Equal(t, 3, strings.Count(string(log), "workload=fake prefill and decode done"), "every run's output is kept")
	assert.Contains(t, string(log), "==> stage1 (run 3 of 3) <==")

	var s facts.Summary
	b, err = os.ReadFile(run.Path(rundir.SummaryJSON))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &s))
	var whole *facts.Stage
	for i, r := range s.Stages.Rows {
		if r.Name == workload.WholeProgram {
			whole = &s.Stages.Rows[i]
		}
	}
	require.NotNil(t, whole, "the runs' wall times are a stage")
	assert.Len(t, whole.MS, 3)
	for i, ms := range whole.MS {
		assert.Equal(t, runs.Runs[i].WallMS, ms)
	}
	sum, err := os.ReadFile(run.Path(rundir.StakeholderSummary))
	require.NoError(t, err)
	assert.Contains(t, string(sum), "each run of the program in stage 1 (the program alone, no profiler), from start to exit")
}

// A run that fails ends stage 1: the runs before it are kept, marked
// partial, with the failing run's status and output.
func TestAnyProgramRepeatFails(t *testing.T) {
	t.Parallel()
	f := &fakeTools{cuptiSrc: torchNVTX, failRun: 2}
	run, err := anyProgramRepeated(t, []string{"prefill"}, f, 3)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "stage 1: my-program exited with status 5")
	assert.Contains(t, err.Error(), "run 2: RuntimeError")
	assert.Equal(t, rundir.StatusPartial, run.Manifest().Status)
	a, ok := run.Manifest().Find(rundir.Stage1Runs)
	require.True(t, ok)
	assert.Equal(t, rundir.StatusPartial, a.Status)
	assert.Equal(t, "1 of 3 runs: run 2 failed", a.Reason)
	log, err := os.ReadFile(run.Path(rundir.Stage1Log))
	require.NoError(t, err)
	assert.Contains(t, string(log), "==> stage1 (run 2 of 3) <==\nworkload=fake")
}

// A program whose GPU work runs in two processes (the recorded nvcc-built
// program and the child it execs, fixtures/cupti/h100-nvtx-ranges/
// twoproc-exec): ncu counts --launch-count over every process it follows,
// so the deep pass asks for each process's share; when the export still
// holds one process's launches (the recorded H100 run's: the child took
// them all), the run says so.
func TestAnyProgramTwoProcessesDeepPass(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	cfg := testConfig(t, root)
	cfg.Workload.Python = ""
	cfg.Workload.Argv = []string{"./nvtx_ranges", "twoproc_exec"}
	cfg.Workload.Repeats, cfg.Workload.RepeatBy = 1, config.RepeatByProcess
	cfg.NVTX.Include = []string{"prefill", "decode_all"}
	f := &fakeTools{cuptiSrc: "cupti/h100-nvtx-ranges/twoproc-exec/cupti-676.tsv", cuptiMore: []string{"cupti/h100-nvtx-ranges/twoproc-exec/cupti-677.tsv"}, noReport: true}
	f.deep = pass{Raw: "runs/any-cuda-cpp-two-processes/ncu/raw.csv.gz", Details: "runs/any-cuda-cpp-two-processes/ncu/details.csv.gz"}
	s := newSession(t, cfg, f)
	s.CUPTI = fakeCUPTI(t, true)
	run, err := s.Run(context.Background())
	require.NoError(t, err)
	require.Len(t, s.topProcesses.Processes, 2)

	per := cfg.NCU.PerKernelLaunches
	top := s.topProcesses
	// The child runs first and its launches of one configuration are more
	// than the parent's share: the count passes them.
	assert.Greater(t, top.EarlierLaunches, per, "the earlier process's launches of one configuration")
	want := top.EarlierLaunches + per
	deep := deepCall(t, f.calls)
	assert.Equal(t, fmt.Sprint(want), deep[slices.Index(deep, "--launch-count")+1], "room past the earlier process's launches")
	n := notes(run)
	assert.Contains(t, n, fmt.Sprintf("%d launch(es) of each launch configuration of each over the 2 processes that launched them (ncu counts launches over every process it follows: %d per process, and the earlier processes made up to %d of one configuration; at most %d)", want, per, top.EarlierLaunches, per*maxProcessShares))
	// The recorded export (a session with a smaller count) holds the
	// child's launches only: the run says so.
	assert.Contains(t, n, "deep pass: ncu profiled launches of 1 of the 2 processes that launched the top kernels in the timeline (profiled: ")
	assert.Contains(t, n, " (nvtx_ranges)): the others")
	assert.Equal(t, rundir.StatusComplete, run.Manifest().Status, run.Manifest().Reason)
}
