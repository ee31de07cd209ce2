package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/synth"
)

// rebuiltDiff rebuilds the SYNTHETIC copy dir (deepprof report), then
// diffs it against the recorded run src as deepprof diff --format json
// does: the result and the exit status.
func rebuiltDiff(t *testing.T, src, dir string, args ...string) (*facts.DiffResult, int, string) {
	t.Helper()
	_, stderr, err := runCmd([]string{"report", dir}, "")
	require.NoError(t, err, stderr)
	out, stderr, err := runCmd(append(append([]string{"diff", "--format", "json"}, args...), src, dir), "")
	code := 0
	if err != nil {
		code = exitCode(err)
		stderr += oneLine(err)
	}
	var r facts.DiffResult
	require.NoError(t, json.Unmarshal([]byte(out), &r), out)
	return &r, code, stderr
}

func diffStageRow(t *testing.T, r *facts.DiffResult, name string) facts.DiffStage {
	t.Helper()
	for _, s := range r.Stages {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no stage %s in %v", name, r.Stages)
	return facts.DiffStage{}
}

// TestGateTopKernelsSlowed (issue 51): the three top kernels of a recorded
// CUPTI run made 30 % slower (SYNTHETIC: their CUPTI durations stretched,
// each capped at the next kernel on its stream; the copy rebuilt). The
// program's walls (stage 1, the plain run) did not move, and the diff
// still fails, naming the three kernels, and puts the decode's change on
// its GPU work.
func TestGateTopKernelsSlowed(t *testing.T) {
	t.Parallel()
	src := "../../fixtures/runs/cupti-tiny-llama"
	top := synth.Read(t, src).Kernels[:3]
	var names []string
	for _, k := range top {
		names = append(names, k.Name)
	}
	dir := synth.RawRun(t, src, synth.StretchKernels("top3-30pct", names, 1.3))
	r, code, stderr := rebuiltDiff(t, src, dir)
	assert.Equal(t, 1, code, stderr)
	assert.True(t, r.Regression)
	for _, k := range top {
		var row *facts.DiffKernel
		for i := range r.Kernels {
			if r.Kernels[i].Name == k.Name && r.Kernels[i].Device == k.Device {
				row = &r.Kernels[i]
			}
		}
		require.NotNil(t, row, k.Name)
		assert.Equal(t, facts.Regression, row.Verdict, k.Name)
		t.Logf("%.40s: %+.1f%%", k.Name, *row.DeltaPct)
		assert.Greater(t, *row.DeltaPct, 15.0, "%s: stretched by up to 30 %%, capped", k.Name)
		assert.LessOrEqual(t, *row.DeltaPct, 30.0+1e-6, k.Name)
		assert.True(t, slicesContainsPrefix(r.Regressions, "kernel "+k.Name+" (device"), "%s not named in %v", k.Name, r.Regressions)
	}
	assert.Contains(t, stderr, "regression: ")
	d := diffStageRow(t, r, "decode")
	require.NotNil(t, d.Work)
	assert.Equal(t, "phases", d.Work.A.From)
	assert.Equal(t, facts.Regression, d.Verdict)
	assert.Equal(t, facts.CauseGPU, d.Cause)
	assert.Contains(t, d.Why, "its GPU work grew")
	t.Logf("decode: %s", d.Why)
	assert.Empty(t, r.HostMoves)
}

// TestGateGPUBoundStageSlowed (issue 51): the decode of a recorded
// GPU-bound run (batch 2048) made 10 % slower in its GPU work (SYNTHETIC:
// each kernel launched inside decode_all stretched by 10 %, every later
// record moved by the time added; the copy rebuilt). The diff fails and
// puts the decode's wall on the GPU.
func TestGateGPUBoundStageSlowed(t *testing.T) {
	t.Parallel()
	src := "../../fixtures/runs/h200-generate-gpu-auto"
	dir := synth.RawRun(t, src, synth.SlowRange("decode-10pct", "decode_all", 1.1))
	r, code, stderr := rebuiltDiff(t, src, dir)
	assert.Equal(t, 1, code, stderr)
	d := diffStageRow(t, r, "decode_all")
	require.NotNil(t, d.Work)
	assert.False(t, *d.Work.A.LaunchBound, "GPU-bound: %s", d.Work.A.BoundWhy)
	assert.InDelta(t, 10, *d.Work.KernelPct, 0.5, "the decode's kernel time per instance")
	assert.Greater(t, *d.DeltaPct, 5.0, "the wall moved with it")
	t.Logf("decode_all: wall %+.1f%%, %s", *d.DeltaPct, d.Why)
	assert.Equal(t, facts.Regression, d.Verdict)
	assert.Equal(t, facts.CauseGPU, d.Cause)
	assert.True(t, slicesContainsPrefix(r.Regressions, "stage decode_all: "), "%v", r.Regressions)
	p := diffStageRow(t, r, "prefill")
	assert.Empty(t, p.Cause, "prefill's GPU work and wall are as recorded")
	assert.Empty(t, r.HostMoves)
}

// TestGateLeasePair (issue 51): the recorded lease pair exits 0 and names
// the host; --gate host fails it.
func TestGateLeasePair(t *testing.T) {
	t.Parallel()
	pair := []string{tinyRun, "../../fixtures/runs/tiny-llama-lease2"}
	out, _, err := runCmd(append([]string{"diff", "--format", "md"}, pair...), "")
	require.NoError(t, err)
	assert.Contains(t, out, "2 stages moved by the host (reported, not failing)")
	assert.Contains(t, out, "stage prefill: 1.89 → 2.88 ms mean (+52.3%): the host")
	_, _, err = runCmd(append([]string{"diff", "--gate", "host"}, pair...), "")
	require.Error(t, err)
	assert.Equal(t, 1, exitCode(err))
	_, _, err = runCmd(append([]string{"diff", "--gate", "cpu"}, pair...), "")
	require.Error(t, err)
	assert.Equal(t, 2, exitCode(err))
}

// TestGateBackToBack (issue 51): the default session run twice, back to
// back, on one H200 (fixtures/runs/h200-back-to-back-1 and -2): the same
// kernels, decode's wall +7.4 % with the host. It exits 0 and names the
// host; prefill's MFU, -6.2 % where its stage's repeats call the +6.6 %
// noise, is that noise, not a regression.
func TestGateBackToBack(t *testing.T) {
	t.Parallel()
	pair := []string{"../../fixtures/runs/h200-back-to-back-1", "../../fixtures/runs/h200-back-to-back-2"}
	out, _, err := runCmd(append([]string{"diff", "--format", "md"}, pair...), "")
	require.NoError(t, err, "%s", out)
	assert.Contains(t, out, "No regression.")
	assert.Contains(t, out, "stage decode: 6.78 → 7.28 ms mean (+7.4%): the host")
	assert.Contains(t, out, "which its repeats call noise")
}

func slicesContainsPrefix(items []string, prefix string) bool {
	for _, it := range items {
		if strings.HasPrefix(it, prefix) {
			return true
		}
	}
	return false
}

// TestBaselineGate (issue 51): deepprof baseline --gate host keeps the gate
// in the file, and a diff against it gates the host with no --gate of its
// own: the lease pair's walls, the host's, fail it. Without the key they
// pass; a diff's --gate wins over the file's either way.
func TestBaselineGate(t *testing.T) {
	t.Parallel()
	lease2 := "../../fixtures/runs/tiny-llama-lease2"
	write := func(args ...string) string {
		out, stderr, err := runCmd(append(append([]string{"baseline"}, args...), tinyRun), "")
		require.NoError(t, err, stderr)
		path := filepath.Join(t.TempDir(), "base.json")
		require.NoError(t, os.WriteFile(path, []byte(out), 0o644))
		return path
	}
	diff := func(args ...string) (*facts.DiffResult, int) {
		out, _, err := runCmd(append([]string{"diff", "--format", "json"}, args...), "")
		var r facts.DiffResult
		require.NoError(t, json.Unmarshal([]byte(out), &r), out)
		if err != nil {
			return &r, exitCode(err)
		}
		return &r, 0
	}
	host, plain, gpu := write("--gate", "host"), write(), write("--gate", "gpu")
	for path, want := range map[string]string{host: "host", plain: "", gpu: "gpu"} {
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		var doc struct {
			Gate *string `json:"gate"`
		}
		require.NoError(t, json.Unmarshal(b, &doc))
		if want == "" {
			assert.Nil(t, doc.Gate, "none kept")
			continue
		}
		require.NotNil(t, doc.Gate)
		assert.Equal(t, want, *doc.Gate)
	}

	r, code := diff(host, lease2)
	assert.Equal(t, 1, code)
	require.Len(t, r.Stages, 2)
	for _, st := range r.Stages {
		assert.Equal(t, facts.Regression, st.Verdict, st.Name)
		assert.Equal(t, facts.CauseHost, st.Cause, st.Name)
	}
	assert.Len(t, r.Regressions, 2, "the two stages the host moved, and nothing else")

	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{plain, lease2}, 0},
		{[]string{gpu, lease2}, 0},
		{[]string{"--gate", "gpu", host, lease2}, 0},
		{[]string{"--gate", "host", gpu, lease2}, 1},
		{[]string{"--gate", "host", plain, lease2}, 1},
	} {
		r, code := diff(c.args...)
		assert.Equal(t, c.code, code, "%v", c.args)
		if c.code == 0 {
			assert.Len(t, r.HostMoves, 2, "%v: reported", c.args)
		}
	}
}

// TestBaselineOfRunsGate (issue 51): deepprof baseline of the recorded
// lease pair, two processes of one program, keeps the spread between them;
// a diff of either run against it exits 0, the host gated or not, and a
// SYNTHETIC copy of lease 2 with its three top kernels 30 % slower (beyond
// the spread) exits 1, naming them.
func TestBaselineOfRunsGate(t *testing.T) {
	t.Parallel()
	lease2 := "../../fixtures/runs/tiny-llama-lease2"
	out, stderr, err := runCmd([]string{"baseline", tinyRun, lease2}, "")
	require.NoError(t, err, stderr)
	base := filepath.Join(t.TempDir(), "pair.json")
	require.NoError(t, os.WriteFile(base, []byte(out), 0o644))
	for _, run := range []string{tinyRun, lease2} {
		for _, gate := range []string{"gpu", "host"} {
			out, _, err := runCmd([]string{"diff", "--gate", gate, base, run}, "")
			require.NoError(t, err, "%s, --gate %s", run, gate)
			assert.Contains(t, out, "No regression.", run)
		}
	}
	top := synth.Read(t, lease2).Kernels[:3]
	slowed := synth.Run(t, lease2, synth.ScaleKernel(0, 1.3), synth.ScaleKernel(1, 1.3), synth.ScaleKernel(2, 1.3))
	_, _, err = runCmd([]string{"diff", base, slowed}, "")
	require.Error(t, err)
	assert.Equal(t, 1, exitCode(err))
	for _, k := range top {
		assert.Contains(t, oneLine(err), "kernel "+k.Name[:min(len(k.Name), 60)])
	}
}
