//go:build gpu

package deepprof_test

// Profile any program (issue 14) on a GPU: go test -tags gpu -run
// Stage2AnyProgram. Each subtest writes or builds a program that knows
// nothing of deepprof (no import, no workload report) and profiles it with
// `deepprof profile -- CMD` as a user would; DEEPPROF_GPU_OUT keeps the run
// directories.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/deepproftest"
	"github.com/llm-perf-opt/deepprof/harness"
	"github.com/llm-perf-opt/deepprof/internal/config"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
	"github.com/llm-perf-opt/deepprof/internal/workload"
)

// userScript is a small PyTorch program as a user writes it: a stack of
// linear layers, a prefill and 16 decode steps marked with torch's NVTX
// ranges (nvtx=False: none), three times after a warm-up.
func userScript(nvtx bool) string {
	s := `import torch
torch.manual_seed(0)
d = 1024
layers = [torch.nn.Linear(d, d, device="cuda", dtype=torch.float16) for _ in range(4)]
def fwd(x):
    for l in layers:
        x = torch.relu(l(x))
    return x
push, pop = torch.cuda.nvtx.range_push, torch.cuda.nvtx.range_pop
with torch.inference_mode():
    fwd(torch.randn(64, d, device="cuda", dtype=torch.float16))
    torch.cuda.synchronize()
    for r in range(3):
        push("prefill")
        x = fwd(torch.randn(128, d, device="cuda", dtype=torch.float16))
        torch.cuda.synchronize()
        pop()
        push("decode_all")
        for s in range(16):
            push("decode_step")
            x = fwd(x[:1])
            torch.cuda.synchronize()
            pop()
        pop()
print("done", float(x.float().sum()))
`
	if !nvtx {
		s = strings.NewReplacer(`push("prefill")`, "pass", `push("decode_all")`, "pass", `push("decode_step")`, "pass", "pop()", "pass").Replace(s)
	}
	return s
}

func TestStage2AnyProgram(t *testing.T) {
	tool, prov := preflight(t)
	root := outDir(t)
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
		return p
	}
	script := write("generate.py", userScript(true))
	bare := write("bare.py", userScript(false))
	parent := write("launcher.py", "import subprocess, sys\n"+
		"# the GPU work runs in a child process; this one touches no CUDA\n"+
		"subprocess.run([sys.executable, "+`"`+script+`"`+"], check=True)\n")
	bin := filepath.Join(dir, "nvtx_ranges")
	out, err := exec.Command(nvccPath(), "-O2", "-arch=sm_90", "-o", bin, "scripts/fixtures/nvtx_ranges.cu", "-ldl").CombinedOutput()
	require.NoError(t, err, "nvcc: %s", out)
	// The vision-language model's input: a 448x448 image tensor, listed
	// in inputs.yaml through workload.inputs.
	image := filepath.Join(dir, "image.pt")
	out, err = exec.Command("python3", "-c", "import sys, torch; torch.manual_seed(1); torch.save(torch.rand(3, 448, 448), sys.argv[1])", image).CombinedOutput()
	require.NoError(t, err, "writing the image tensor: %s", out)

	for _, c := range []struct {
		name    string
		command []string
		// stages: the summary's stages come from the NVTX ranges
		stages bool
		note   string // a manifest note the run must hold
		region string // a region ncu/regions/report.md must hold
		// overrides beside the command; check, more to check of the run
		overrides []string
		check     func(t *testing.T, run *rundir.Run)
	}{
		{name: "python-script", command: []string{"python3", script}, stages: true, region: "decode_all/decode_step",
			check: nestedPhase("decode_all/decode_step")},
		{name: "cuda-cpp", command: []string{bin, "ranges"}, stages: true,
			note: "nvtx.include: none of the ranges [prefill decode_all] occurred; the program's outermost ranges are [A B]", region: "A/A1"},
		{name: "cuda-cpp-two-processes", command: []string{bin, "twoproc_exec"}, stages: true, region: "decode_all/decode_step",
			note: "over the 2 processes that launched them", check: checkTwoProcesses},
		{name: "python-child-process", command: []string{"python3", parent}, stages: true, region: "decode_all/decode_step"},
		{name: "no-nvtx", command: []string{"python3", bare}, note: "the program opened no NVTX range: the whole program is profiled"},
		{name: "vlm", command: []string{"python3", "scripts/fixtures/qwen2_vl.py", image, "--new-tokens", "8"}, stages: true,
			region: "prefill/vision_encoder", overrides: append([]string{"workload.inputs=[" + image + "]", "workload.repeats=2"}, qwen2VLFacts()...),
			check: checkVLM},
	} {
		t.Run(c.name, func(t *testing.T) {
			id := "any-" + c.name + "-" + time.Now().UTC().Format("150405")
			run := runCommand(t, tool, root, id, c.command, c.overrides...)
			checkAnyProgram(t, run, prov)
			m := run.Manifest()
			notes := strings.Join(m.Notes, "\n")
			if c.note != "" {
				assert.Contains(t, notes, c.note)
			}
			sum, err := os.ReadFile(run.Path(rundir.StakeholderSummary))
			require.NoError(t, err)
			if c.stages {
				assert.Equal(t, rundir.TimelineCupti, m.Sources.Stages.Path, "stages from the NVTX ranges")
				assert.Contains(t, string(sum), "Wall time from timeline/cupti")
			} else {
				assert.Contains(t, strings.ReplaceAll(string(sum), `\_`, "_"), "torch.cuda.nvtx.range_push", "says how to add ranges")
			}
			if c.region != "" {
				reg, err := os.ReadFile(run.Path(rundir.RegionsMD))
				require.NoError(t, err)
				assert.Contains(t, strings.ReplaceAll(string(reg), `\_`, "_"), c.region)
			}
			if c.check != nil {
				c.check(t, run)
			}
		})
	}
}

// nvccPath is the CUDA toolkit's nvcc: $CUDA_HOME's, else /usr/local/cuda's.
func nvccPath() string {
	if h := os.Getenv("CUDA_HOME"); h != "" {
		return filepath.Join(h, "bin", "nvcc")
	}
	return "/usr/local/cuda/bin/nvcc"
}

// runCommand is `deepprof profile -- command` as a Go test, through the
// public package: the default profile, the CUPTI timeline.
func runCommand(t *testing.T, tool harness.Tool, root, id string, command []string, overrides ...string) *rundir.Run {
	t.Helper()
	r := deepproftest.Profile(t, deepproftest.Machine{Ncu: tool}, deepproftest.Options{
		ProfilesDir: "profiles", Root: root, ID: id, Command: command,
		Overrides: append(append([]string{"timeline.tool=cupti"}, config.GoTestOverrides()...), overrides...)})
	run, err := rundir.Open(r.Dir)
	require.NoError(t, err)
	return run
}

// checkAnyProgram: a complete run directory with the files a person opens.
func checkAnyProgram(t *testing.T, run *rundir.Run, prov harness.GPU) {
	t.Helper()
	m := run.Manifest()
	assert.Equal(t, rundir.StatusComplete, m.Status, m.Reason)
	for _, rel := range []string{rundir.KernelsMD, rundir.KernelsJSON, rundir.RegionsMD, rundir.StakeholderSummary,
		rundir.SummaryJSON, rundir.TimelineTrace, rundir.NcuRaw} {
		assert.FileExists(t, run.Path(rel))
	}
	assert.NotEmpty(t, rundir.CuptiFiles(run))
	assert.Equal(t, rundir.TimelineCupti, m.Sources.Kernels.Path)
	a, ok := m.Find(rundir.Stage1Report)
	require.True(t, ok)
	assert.Equal(t, rundir.StatusSkipped, a.Status, "the program wrote no report")
	assert.Equal(t, prov.Driver, envDriver(t, run), "env.json is this machine's")
	// The deep pass's metrics reach the timeline's top kernel, however the
	// two tools spell its name (ncu.MatchSpellings).
	r, err := deepproftest.Read(run.Dir)
	require.NoError(t, err)
	if k, ok := r.Kernel(1); assert.True(t, ok, "a top kernel") {
		assert.NotEqual(t, "unknown", k.Bound.Class, "#1 %s: %s", k.Name, k.Bound.Why)
	}
}

// envDriver is env.json's driver version.
func envDriver(t *testing.T, run *rundir.Run) string {
	t.Helper()
	b, err := os.ReadFile(run.Path(rundir.EnvJSON))
	require.NoError(t, err)
	var env struct {
		GPU struct {
			Driver string `json:"driver"`
		} `json:"gpu"`
	}
	require.NoError(t, json.Unmarshal(b, &env))
	return env.GPU.Driver
}

// nestedPhase: the GPU busy and idle table has a row for the range inside
// a phase.
func nestedPhase(path string) func(*testing.T, *rundir.Run) {
	return func(t *testing.T, run *rundir.Run) {
		t.Helper()
		r, err := deepproftest.Read(run.Dir)
		require.NoError(t, err)
		var nested []string
		for _, p := range r.Summary.Phases.Rows {
			if p.Nested {
				nested = append(nested, p.Phase)
				assert.InDelta(t, 1, p.Busy+p.Idle, 1e-9, p.Phase)
			}
		}
		assert.Contains(t, nested, path)
	}
}

// checkTwoProcesses: each stage's instances are kept per process beside
// the pooled row.
func checkTwoProcesses(t *testing.T, run *rundir.Run) {
	t.Helper()
	r, err := deepproftest.Read(run.Dir)
	require.NoError(t, err)
	st, ok := r.Stage("prefill")
	require.True(t, ok)
	assert.Len(t, st.Processes, 2, "the parent's and the child's prefill")
	nestedPhase("decode_all/decode_step")(t, run)
}

// qwen2VLFacts are the model.* facts of scripts/fixtures/qwen2_vl.py's
// language model at its defaults (8 layers of Qwen2-VL-2B's widths: hidden
// 1536, 12 query heads and 2 key-value heads of 128, MLP 8960, vocabulary
// 151936) with a 448x448 image and --new-tokens 8: what a user gives for
// MFU. The vision encoder's FLOPs are not in the formula.
func qwen2VLFacts() []string {
	const hidden, heads, kv, headDim, mlp, layers, vocab = 1536, 12, 2, 128, 8960, 8, 151936
	perLayer := hidden*heads*headDim + 2*hidden*kv*headDim + heads*headDim*hidden + 3*hidden*mlp
	imageTokens := (448 / 14) * (448 / 14) / 4 // patches of 14, merged 2x2
	prompt := 1 + imageTokens + 1 + 32         // vision start, image, vision end, 32 text tokens
	return []string{
		fmt.Sprintf("model.matmul_params=%d", layers*perLayer+hidden*vocab),
		fmt.Sprintf("model.layers=%d", layers), fmt.Sprintf("model.heads=%d", heads), fmt.Sprintf("model.head_dim=%d", headDim),
		"model.dtype=bf16", fmt.Sprintf("model.prompt_tokens=%d", prompt),
		"model.generated_tokens=7", // the first token comes from the prefill's forward
	}
}

// checkVLM: the vision encoder and projector are sub-stages of prefill,
// the image is an input of the run, MFU comes from the facts, and stage 1
// ran the program twice.
func checkVLM(t *testing.T, run *rundir.Run) {
	t.Helper()
	r, err := deepproftest.Read(run.Dir)
	require.NoError(t, err)
	s := r.Summary
	parents := map[string]string{}
	for _, st := range s.Stages.Rows {
		parents[st.Name] = st.Parent
		if st.Name == workload.WholeProgram {
			assert.Len(t, st.MS, 2, "stage 1 ran the program workload.repeats=2 times")
		}
	}
	assert.Equal(t, "prefill", parents["vision_encoder"])
	assert.Equal(t, "prefill", parents["projector"])
	assert.Equal(t, "decode_all", parents["decode_step"])
	assert.Empty(t, s.MFU.Missing)
	require.NotNil(t, s.MFU.Prefill)
	require.NotNil(t, s.MFU.Decode)
	assert.Positive(t, *s.MFU.Prefill)
	in, err := os.ReadFile(run.Path(rundir.InputsYAML))
	require.NoError(t, err)
	assert.Contains(t, string(in), "image.pt")
	assert.Contains(t, string(in), "bytes: ")
	nestedPhase("prefill/vision_encoder")(t, run)
	assert.NotContains(t, s.Narrative.Lines[0], workload.WholeProgram, "the findings open with a stage of the program")
}
