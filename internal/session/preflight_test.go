package session

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/machine"
)

// ncuVersion is what ncu 2025.3.1 printed for --version on the H200.
const ncuVersion = "NVIDIA (R) Nsight Compute Command Line Profiler\nCopyright (c) 2018-2025 NVIDIA Corporation\nVersion 2025.3.1.0 (build 36398880) (public-release)\n"

// noGPU is NVML on a machine without the driver: machine.Collect's real error.
func noGPU() (machine.Provenance, error) {
	return machine.Collect(&mock.Interface{InitFunc: func() nvml.Return { return nvml.ERROR_LIBRARY_NOT_FOUND }}, machine.Selection{})
}

func h200() (machine.Provenance, error) {
	g := machine.GPU{Index: 0, Name: "NVIDIA H200", UUID: "GPU-a534c9a9-6a07-4cfe-15db-62d7cae8e4d1"}
	return machine.Provenance{Driver: "580.159.04", CUDADriverVersion: "13.0", DeviceCount: 1, Selected: g, GPUs: []machine.GPU{g}}, nil
}

// ncuPrints is a Tool probe whose ncu printed out (parsed as machine.Probe
// parses it).
func ncuPrints(out string) func(context.Context, string) (machine.Tool, error) {
	return func(_ context.Context, path string) (machine.Tool, error) {
		v, err := machine.ParseNcuVersion(out)
		if err != nil {
			return machine.Tool{}, fmt.Errorf("tools: %s --version: %w", path, err)
		}
		return machine.Tool{Name: "ncu", Path: path, Version: v}, nil
	}
}

// exitError is a real *exec.ExitError with status 1.
func exitError(t *testing.T) error {
	err := exec.Command("sh", "-c", "exit 1").Run()
	require.Error(t, err)
	return err
}

// fake are the probes of a machine that has everything.
type fake struct {
	ran []string // argvs run, joined
}

func (f *fake) probes(t *testing.T) Probes {
	return Probes{
		GPU:      h200,
		Tool:     ncuPrints(ncuVersion),
		LookPath: func(file string) (string, error) { return "/usr/bin/" + file, nil },
		IsFile:   func(string) error { return nil },
		Run: func(_ context.Context, argv, env []string) ([]byte, error) {
			f.ran = append(f.ran, strings.Join(argv, " ")+" "+strings.Join(env, " "))
			return nil, nil
		},
	}
}

var defaultWorkload = []string{"python3", "scripts/workloads/hf_causal_lm.py", "--prompt-tokens=64"}

func TestAllPass(t *testing.T) {
	t.Parallel()
	f := &fake{}
	r := Run(context.Background(), Input{Ncu: "/usr/local/cuda/bin/ncu", Workload: defaultWorkload, Env: []string{"PYTHONPATH=/x"},
		Files: []string{"scripts/workloads/hf_causal_lm.py"}, CheckImports: true}, f.probes(t))
	require.NoError(t, r.Err())
	assert.Equal(t, []string{"python3 -c import sys; sys.path[:] = filter(None, sys.path); import torch, transformers PYTHONPATH=/x"}, f.ran, "one import check, an argv, with the workload's env")
	require.NotNil(t, r.Ncu)
	assert.Equal(t, "2025.3.1.0", r.Ncu.Version.String())
	var b bytes.Buffer
	require.NoError(t, r.Write(&b))
	assert.Equal(t, `preflight:
  ok    GPU: NVIDIA H200 (index 0 of 1, GPU-a534c9a9-6a07-4cfe-15db-62d7cae8e4d1), driver 580.159.04, CUDA 13.0
  ok    ncu: /usr/local/cuda/bin/ncu, version 2025.3.1.0
  ok    files: scripts/workloads/hf_causal_lm.py
  ok    workload: /usr/bin/python3 imports torch, transformers
`, b.String())
}

// TestIssueMachine is the machine of the report: NVML finds no GPU, ncu
// prints no version, and Python has no torch (its real output). Every
// check fails, with what to do.
func TestIssueMachine(t *testing.T) {
	t.Parallel()
	noTorch, err := os.ReadFile("../../fixtures/logs/python-no-torch.txt")
	require.NoError(t, err)
	p := (&fake{}).probes(t)
	p.GPU = noGPU
	p.Tool = ncuPrints("")
	p.Run = func(context.Context, []string, []string) ([]byte, error) { return noTorch, exitError(t) }
	r := Run(context.Background(), Input{Ncu: "/usr/local/cuda/bin/ncu", Workload: defaultWorkload, CheckImports: true}, p)
	assert.Equal(t, []string{CheckGPU, CheckNcu, CheckWorkload}, r.Failed())
	assert.Nil(t, r.Ncu)
	var pe *Error
	require.ErrorAs(t, r.Err(), &pe)
	assert.Equal(t, "preflight: GPU, ncu, workload failed (what was found and what to do is printed above)", r.Err().Error())

	byCheck := map[string]Finding{}
	for _, f := range r.Findings {
		byCheck[f.Check] = f
		assert.NotEmpty(t, f.Fix, f.Check)
	}
	assert.Contains(t, byCheck[CheckGPU].Found, "ERROR_LIBRARY_NOT_FOUND")
	assert.Contains(t, byCheck[CheckGPU].Fix, "machine with an NVIDIA GPU")
	assert.Contains(t, byCheck[CheckNcu].Found, `no line "Version YYYY.N.N.N" in ""`)
	assert.Contains(t, byCheck[CheckNcu].Fix, "ncu.path")
	assert.Equal(t, `python3 -c "import sys; sys.path[:] = filter(None, sys.path); import torch, transformers": exit status 1: No module named 'torch'`, byCheck[CheckWorkload].Found)
	assert.Equal(t, "install torch and transformers for /usr/bin/python3 (python3 -m pip install torch transformers), or set workload.python to an interpreter that has them",
		byCheck[CheckWorkload].Fix)

	var b bytes.Buffer
	require.NoError(t, r.Write(&b))
	assert.Regexp(t, regexp.MustCompile(`(?m)^  FAIL  GPU: nvml: Init: ERROR_LIBRARY_NOT_FOUND.*\n        do: run deepprof profile on a machine`), b.String())
}

// TestSessionLeavesImportsToItsFirstStep (issue 36): a session's
// preflight starts no interpreter (its first step starts the same one), and
// that step's failure names the missing module and what to do, from
// Python's real output.
func TestSessionLeavesImportsToItsFirstStep(t *testing.T) {
	t.Parallel()
	f := &fake{}
	r := Run(context.Background(), Input{Ncu: "/usr/local/cuda/bin/ncu", Workload: defaultWorkload}, f.probes(t))
	require.NoError(t, r.Err())
	assert.Empty(t, f.ran)

	noTorch, err := os.ReadFile("../../fixtures/logs/python-no-torch.txt")
	require.NoError(t, err)
	assert.Equal(t, "install torch for python3 (python3 -m pip install torch), or set workload.python to an interpreter that has it",
		MissingModule(defaultWorkload, lastLines(noTorch, 5)))
	assert.Empty(t, MissingModule([]string{"./bench"}, string(noTorch)), "not an interpreter")
	assert.Empty(t, MissingModule(defaultWorkload, "Traceback ...\nRuntimeError: CUDA error\n"))
	assert.Empty(t, MissingModule(defaultWorkload, "warning: No module named 'flash_attn'\ntorch.OutOfMemoryError: CUDA out of memory"),
		"a warning about an optional module is not why it failed")
	assert.Equal(t, "install transformers for /opt/py/bin/python3.12 (/opt/py/bin/python3.12 -m pip install transformers), or set workload.python to an interpreter that has it",
		MissingModule([]string{"/opt/py/bin/python3.12", "x.py"}, "ModuleNotFoundError: No module named 'transformers.models'\n"))
	assert.Contains(t, MissingModule(defaultWorkload, "ModuleNotFoundError: No module named 'yaml'"), "pip install pyyaml")
}

func TestNcuNotFound(t *testing.T) {
	t.Parallel()
	p := (&fake{}).probes(t)
	p.Tool = func(context.Context, string) (machine.Tool, error) {
		t.Error("a tool that was not found is not run")
		return machine.Tool{}, errors.New("x")
	}
	nf := &machine.NotFoundError{Name: "ncu", Looked: []string{"PATH", "/usr/local/cuda/bin"}}
	r := Run(context.Background(), Input{NcuErr: nf, Workload: defaultWorkload}, p)
	assert.Equal(t, []string{CheckNcu}, r.Failed())
	assert.Equal(t, Finding{Check: CheckNcu, Found: "not found", Fix: nf.Error()}, r.Findings[1])
}

// TestWorkloadNotPython: for a program that is not Python only its
// existence is checked; nothing is run.
func TestWorkloadNotPython(t *testing.T) {
	t.Parallel()
	f := &fake{}
	p := f.probes(t)
	r := Run(context.Background(), Input{Ncu: "ncu", Workload: []string{"./bench", "--model", "x"}}, p)
	require.NoError(t, r.Err())
	assert.Empty(t, f.ran)
	assert.Equal(t, "/usr/bin/./bench exists", r.Findings[len(r.Findings)-1].Found)

	p.LookPath = func(file string) (string, error) { return "", &exec.Error{Name: file, Err: exec.ErrNotFound} }
	r = Run(context.Background(), Input{Ncu: "ncu", Workload: []string{"bench"}}, p)
	assert.Equal(t, []string{CheckWorkload}, r.Failed())
	assert.Equal(t, Finding{Check: CheckWorkload, Found: `exec: "bench": executable file not found in $PATH`,
		Fix: "install bench, or give workload.argv the program's path"}, r.Findings[len(r.Findings)-1])

	r = Run(context.Background(), Input{Ncu: "ncu", Workload: []string{"python3.12", "mine.py"}}, p)
	assert.Contains(t, r.Findings[len(r.Findings)-1].Fix, "workload.python")
}

// TestOtherPythonScript: a Python script deepprof does not ship has no
// known imports: the interpreter must exist, nothing is imported.
func TestOtherPythonScript(t *testing.T) {
	t.Parallel()
	f := &fake{}
	r := Run(context.Background(), Input{Ncu: "ncu", Workload: []string{"/opt/venv/bin/python", "byo.py"}}, f.probes(t))
	require.NoError(t, r.Err())
	assert.Empty(t, f.ran)
}

func TestMissingFiles(t *testing.T) {
	t.Parallel()
	p := (&fake{}).probes(t)
	p.IsFile = func(path string) error { return fmt.Errorf("stat %s: no such file or directory", path) }
	r := Run(context.Background(), Input{Ncu: "ncu", Workload: []string{"bench"}, Files: []string{"wl.py", "prompt.txt"}}, p)
	assert.Equal(t, []string{CheckFiles}, r.Failed())
	assert.Equal(t, "stat wl.py: no such file or directory; stat prompt.txt: no such file or directory", r.Findings[2].Found)
}

func TestIsPython(t *testing.T) {
	t.Parallel()
	for argv0, want := range map[string]bool{"python": true, "python3": true, "python3.12": true, "/usr/bin/python3": true,
		".venv/bin/python": true, "pythonista": false, "torchrun": false, "python3-config": false, "": false} {
		assert.Equal(t, want, IsPython([]string{argv0}), argv0)
	}
	assert.False(t, IsPython(nil))
}

// TestKnownImports: the modules the preflight imports for a workload
// deepprof ships are the ones its script imports at its top.
func TestKnownImports(t *testing.T) {
	t.Parallel()
	for script, mods := range knownImports {
		b, err := os.ReadFile("../../scripts/workloads/" + script)
		require.NoError(t, err)
		for _, m := range mods {
			assert.Regexp(t, regexp.MustCompile(`(?m)^import `+regexp.QuoteMeta(m)+`$`), string(b), script)
		}
		assert.Equal(t, mods, Imports([]string{"python3", "scripts/workloads/" + script, "--x"}))
	}
	assert.Nil(t, Imports([]string{"./hf_causal_lm.py"}), "not run by an interpreter")
}

// TestSystemRun: the real runner runs an argv with the env added and
// returns both streams.
func TestSystemRun(t *testing.T) {
	t.Parallel()
	out, err := run(context.Background(), []string{"sh", "-c", `echo "$PREFLIGHT_X"; echo err >&2; exit 3`}, []string{"PREFLIGHT_X=a b"})
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 3, ee.ExitCode())
	assert.Equal(t, "a b\nerr\n", string(out))
	require.NoError(t, isFile("preflight.go"))
	assert.EqualError(t, isFile("."), ". is not a file")
}
