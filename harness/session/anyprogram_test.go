package session

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/harness/artifacts"
	"github.com/llm-perf-opt/deepprof/harness/config"
	"github.com/llm-perf-opt/deepprof/harness/rundir"
)

// The any-program form (issue 14), offline: a program that writes no
// workload report, recorded under the CUPTI library for real
// (fixtures/cupti/h100-torch-nvtx: scripts/cupti/torch_nvtx.py, a PyTorch
// script with NVTX ranges prefill and decode_all/decode_step, no deepprof
// import), with fake ncu.

const torchNVTX = "cupti/h100-torch-nvtx/cupti-727.tsv"

func anyProgram(t *testing.T, include []string, f *fakeTools) (*artifacts.Run, error) {
	t.Helper()
	root := t.TempDir()
	cfg := testConfig(t, root)
	cfg.Workload.Python = ""
	cfg.Workload.Argv = []string{"./my-program", "--fast"}
	cfg.NVTX.Include = include
	f.deep = pass{Raw: "ncu/h200-llama-decode-roofline/raw.csv", Details: "ncu/h200-llama-decode-roofline/details.csv"}
	f.noReport = true
	s := newSession(t, cfg, f)
	s.CUPTI = fakeCUPTI(t, true)
	return s.Run(context.Background())
}

func notes(run *artifacts.Run) string { return strings.Join(run.Manifest().Notes, "\n") }

func TestAnyProgramStagesFromNVTX(t *testing.T) {
	f := &fakeTools{cuptiSrc: torchNVTX}
	run, err := anyProgram(t, []string{"prefill", "decode_all"}, f)
	require.NoError(t, err)
	m := run.Manifest()
	assert.Equal(t, artifacts.StatusComplete, m.Status, m.Reason)
	assert.Equal(t, artifacts.TimelineCupti, m.Sources.Stages.Path, "stages from the NVTX ranges")
	assert.Equal(t, rundir.CuptiStagesWhat, m.Sources.Stages.What)
	a, ok := m.Find(artifacts.Stage1Report)
	require.True(t, ok)
	assert.Equal(t, artifacts.StatusSkipped, a.Status)
	assert.Contains(t, a.Reason, "wrote no workload report")
	assert.Contains(t, notes(run), "oracle (torch.profiler): not run")
	for _, argv := range f.calls {
		assert.NotEqual(t, "oracle", envOf(f, argv), "no oracle run for a program that writes no report")
	}
	sum, err := os.ReadFile(run.Path(artifacts.StakeholderSummary))
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
	run, err := anyProgram(t, []string{"serve"}, &fakeTools{cuptiSrc: torchNVTX})
	require.NoError(t, err)
	assert.Contains(t, notes(run), "nvtx.include: none of the ranges [serve] occurred; the program's outermost ranges are [prefill decode_all]")
	cfg, err := config.Parse(run.Path(artifacts.ConfigYAML))
	require.NoError(t, err)
	assert.Equal(t, []string{"prefill", "decode_all"}, cfg.NVTX.Include)
	assert.Equal(t, artifacts.StatusComplete, run.Manifest().Status, run.Manifest().Reason)
}

// No NVTX range at all: the whole program is profiled, and the run says
// how to add ranges.
func TestAnyProgramNoNVTX(t *testing.T) {
	b, err := os.ReadFile("../../fixtures/" + torchNVTX)
	require.NoError(t, err)
	var lines []string
	for _, l := range strings.SplitAfter(string(b), "\n") {
		if !strings.HasPrefix(l, "N\t") {
			lines = append(lines, l)
		}
	}
	// synthetic: the real recording without its NVTX lines
	run, err := anyProgram(t, []string{"prefill", "decode_all"}, &fakeTools{cuptiText: strings.Join(lines, "")})
	require.NoError(t, err)
	assert.Contains(t, notes(run), "the program opened no NVTX range: the whole program is profiled")
	assert.Contains(t, notes(run), "torch.cuda.nvtx.range_push")
	cfg, err := config.Parse(run.Path(artifacts.ConfigYAML))
	require.NoError(t, err)
	assert.Empty(t, cfg.NVTX.Include)
	assert.True(t, run.Exists(artifacts.KernelsMD))
}

// No CUDA kernel at all: the session stops before the deep pass and says so.
func TestAnyProgramNoCUDA(t *testing.T) {
	b, err := os.ReadFile("../../fixtures/" + torchNVTX)
	require.NoError(t, err)
	header, _, _ := strings.Cut(string(b), "\n")
	// synthetic: the real recording's header line only
	f := &fakeTools{cuptiText: header + "\n"}
	run, err := anyProgram(t, []string{"prefill"}, f)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the program launched no CUDA kernel")
	assert.Equal(t, artifacts.StatusPartial, run.Manifest().Status)
	for _, c := range f.calls {
		assert.NotContains(t, c, "--section", "no deep pass")
	}
}

// A program that fails: its exit status and the end of its output, the run
// kept and marked partial.
func TestAnyProgramFails(t *testing.T) {
	f := &fakeTools{cuptiSrc: torchNVTX, exit: 3, output: []string{"Traceback (most recent call last):", "RuntimeError: CUDA out of memory"}}
	run, err := anyProgram(t, []string{"prefill"}, f)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "exited with status 3")
	assert.Contains(t, err.Error(), "RuntimeError: CUDA out of memory")
	assert.Equal(t, artifacts.StatusPartial, run.Manifest().Status)
}
