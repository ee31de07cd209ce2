//go:build gpu

package deepprof_test

// Phases without annotations on a GPU (issue 39): go test -tags gpu -run
// Stage2Phases. DEEPPROF_GPU_OUT keeps the run directories.

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
)

// TestStage2PhasesAutoRanges: model.generate() with no NVTX range, its
// phases found by deepprof's automatic ranges, against the same program
// annotated by hand around its forward: prefill and decode found in both;
// each phase's kernel time, TTFT and TPOT within 5 %.
func TestStage2PhasesAutoRanges(t *testing.T) {
	tool, prov := preflight(t)
	root := outDir(t)
	stamp := time.Now().UTC().Format("150405")
	// A shape whose GPU sets its pace: a launch-bound program's wall times
	// follow its host's speed, which differs between two processes on one
	// machine by up to half (docs/measurements.md), so the two would
	// disagree whichever ranges they had. The program plans its prefill's
	// kernels before its first generate (--warmup): a first prefill 1.2 to
	// 1.6 times the others', dropped as warm-up in one run and kept in the
	// other, moved TTFT 8 % between two runs.
	program := []string{"python3", "scripts/bench/generate_lm.py", "--tokens", "32", "--batch", "2048", "--layers", "4", "--hidden", "4096", "--warmup"}
	// The hand-annotated run is told its tokens and batch (the program
	// writes no report); the automatic ranges read them, and the model's
	// facts, from the program's generate() (timeline/model.json).
	tokens := []string{"model.prompt_tokens=262144", "model.generated_tokens=63488", "model.batch=2048"}
	auto := runCommand(t, tool, root, "phases-auto-"+stamp, program)
	hand := runCommand(t, tool, root, "phases-hand-"+stamp, append(slices.Clone(program), "--annotate"),
		append(tokens, "workload.auto_ranges=off")...)
	var sums [2]facts.Summary
	for i, run := range []*rundir.Run{auto, hand} {
		checkAnyProgram(t, run, prov)
		b, err := run.ReadFile(rundir.SummaryJSON)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(b, &sums[i]))
	}
	a, h := sums[0], sums[1]
	for _, s := range sums {
		require.NotNil(t, s.Serving.TTFTMS, s.Serving.Missing)
		require.NotNil(t, s.Serving.TPOTMS, s.Serving.Missing)
	}
	t.Logf("TTFT %.3f against %.3f ms, TPOT %.3f against %.3f ms", *a.Serving.TTFTMS, *h.Serving.TTFTMS, *a.Serving.TPOTMS, *h.Serving.TPOTMS)
	// The automatic ranges also read the model's facts from its
	// transformers config: MBU follows with no model.* override.
	assert.Contains(t, a.Environment.ModelFrom, "the transformers config of LlamaForCausalLM")
	require.NotNil(t, a.Serving.MBU, a.Serving.Missing)
	t.Logf("MBU %.1f %%, model facts from %s", 100**a.Serving.MBU, a.Environment.ModelFrom)
	assert.InEpsilon(t, *h.Serving.TTFTMS, *a.Serving.TTFTMS, 0.05, "TTFT")
	assert.InEpsilon(t, *h.Serving.TPOTMS, *a.Serving.TPOTMS, 0.05, "TPOT")
	kernels := func(s facts.Summary) map[string]float64 {
		out := map[string]float64{}
		for _, r := range s.Phases.Rows {
			if !r.Nested && r.Phase != "" {
				out[r.Phase] += r.KernelMS
			}
		}
		return out
	}
	ka, kh := kernels(a), kernels(h)
	for _, phase := range []string{"prefill", "decode_all"} {
		require.Contains(t, ka, phase)
		require.Contains(t, kh, phase)
		t.Logf("%s: kernels %.3f against %.3f ms", phase, ka[phase], kh[phase])
		assert.InEpsilon(t, kh[phase], ka[phase], 0.05, "%s kernel time", phase)
	}
}

// TestStage2PhasesInferred: a CUDA C++ decoder loop of our own
// (scripts/corpus/decode_loop.cu: 3 generates, each a prefill and 16
// decode steps, no NVTX range, no framework) gets its phases from its
// kernel stream, as many decode steps as it ran.
func TestStage2PhasesInferred(t *testing.T) {
	tool, prov := preflight(t)
	root := outDir(t)
	bin := filepath.Join(t.TempDir(), "decode_loop")
	out, err := exec.Command(nvccPath(), "-O2", "-arch=sm_90", "-o", bin, "scripts/corpus/decode_loop.cu").CombinedOutput()
	require.NoError(t, err, "nvcc: %s", out)
	run := runCommand(t, tool, root, "phases-inferred-"+time.Now().UTC().Format("150405"), []string{bin})
	checkAnyProgram(t, run, prov)
	b, err := run.ReadFile(rundir.SummaryJSON)
	require.NoError(t, err)
	var s facts.Summary
	require.NoError(t, json.Unmarshal(b, &s))
	assert.Contains(t, s.Stages.Source, rundir.SourceInferredStages)
	n := map[string]int{}
	for _, r := range s.Stages.Rows {
		n[r.Name] = len(r.MS)
	}
	assert.Equal(t, 3, n["prefill"], "the program's prefills")
	assert.Equal(t, 3*16, n["decode_step"], "the program's decode steps")
}
