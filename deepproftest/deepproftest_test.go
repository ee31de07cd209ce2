package deepproftest_test

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/deepproftest"
	"github.com/llm-perf-opt/deepprof/internal/kernels"
	"github.com/llm-perf-opt/deepprof/internal/machine"
	"github.com/llm-perf-opt/deepprof/internal/synth"
)

// recordingT is a testing.TB that keeps what the assertions report.
type recordingT struct {
	testing.TB
	errors []string
	fatal  string
	skip   string
	logs   []string
}

func (r *recordingT) Helper() {}
func (r *recordingT) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
func (r *recordingT) Fatalf(format string, args ...any) { r.fatal = fmt.Sprintf(format, args...) }
func (r *recordingT) Skipf(format string, args ...any)  { r.skip = fmt.Sprintf(format, args...) }
func (r *recordingT) Logf(format string, args ...any) {
	r.logs = append(r.logs, fmt.Sprintf(format, args...))
}

const roofline = "../fixtures/runs/llama3-8b-roofline"

// The assertions on a recorded run (Llama-3-8B shapes on an H200): what
// holds passes, what does not fails with the run directory and the
// numbers.
func TestAssertions(t *testing.T) {
	rt := &recordingT{TB: t}
	run := deepproftest.Open(rt, roofline)
	share, ok := run.RegionShare("decode_all")
	require.True(t, ok)
	k1, ok := run.Kernel(1)
	require.True(t, ok)

	run.RegionShareAtLeast("decode_all", share-1)
	run.BoundIs(1, k1.Bound.Class)
	run.CategoryShareAtMost("gemm", 100)
	s, ok := run.Stage("decode")
	require.True(t, ok)
	run.StageWithin("decode", s.MeanMS+1)
	assert.Empty(t, rt.errors, "what holds passes")

	run.RegionShareAtLeast("decode_all", share+1)
	run.RegionShareAtLeast("no_such_range", 1)
	run.BoundIs(1, kernels.ComputeBound+"-not")
	run.CategoryShareAtMost("gemm", 1)
	run.StageWithin("decode", s.MeanMS/2)
	run.StageWithin("nope", 1)
	require.Len(t, rt.errors, 6)
	for _, e := range rt.errors {
		assert.True(t, strings.HasPrefix(e, roofline+": "), "names the run directory: %s", e)
	}
	assert.Contains(t, rt.errors[0], fmt.Sprintf("holds %.1f%% of the GPU time, want at least %.1f%%", share, share+1))
	assert.Contains(t, rt.errors[1], `no region "no_such_range" (regions: prefill, decode_all`)
	assert.Contains(t, rt.errors[2], "top kernel #1 ")
	assert.Contains(t, rt.errors[3], "gemm kernels hold")
	assert.Contains(t, rt.errors[4], `stage "decode" took`)
	assert.Contains(t, rt.errors[5], "no stage \"nope\" (stages: prefill, decode")
}

// TestOpenPartialRun (issue 53): a run that is not complete (a program
// SIGKILLed by the out-of-memory killer, recorded) fails Open's test
// before any assertion could pass on part of it; OpenPartial reads it and
// says so.
func TestOpenPartialRun(t *testing.T) {
	const killed = "../fixtures/runs/h200-killed-sigkill"
	rt := &recordingT{TB: t}
	assert.Nil(t, deepproftest.Open(rt, killed))
	assert.Contains(t, rt.fatal, "deepproftest: run "+killed+" is partial: ")
	assert.Contains(t, rt.fatal, "SIGKILL")
	assert.Contains(t, rt.fatal, "(deepproftest.OpenPartial reads a run that is not complete)")

	rt = &recordingT{TB: t}
	r := deepproftest.OpenPartial(rt, killed)
	require.NotNil(t, r)
	assert.Empty(t, rt.fatal)
	assert.False(t, r.Complete())
	assert.Equal(t, "partial", r.Status)
	r2, err := deepproftest.Read(killed)
	require.NoError(t, err)
	assert.Equal(t, "partial", r2.Status)
	complete, err := deepproftest.Read(roofline)
	require.NoError(t, err)
	assert.True(t, complete.Complete())
}

func TestOpenNotARun(t *testing.T) {
	rt := &recordingT{TB: t}
	deepproftest.Open(rt, t.TempDir())
	assert.Contains(t, rt.fatal, "not a run directory")
}

// TestOpenNotARunWithASummary (issue 53): a folder deepprof did not make
// (no mark) is no run for deepproftest either, whatever it holds: a
// manifest.json with a run id and a recorded run's summary.json among a
// person's files fail the test, as deepprof report refuses the folder
// (one detection, rundir.Open), and nothing in it changes. Its summary's
// assertions were run as a run's.
func TestOpenNotARunWithASummary(t *testing.T) {
	dir := synth.NotARun(t, roofline)
	before := synth.Tree(t, dir)
	rt := &recordingT{TB: t}
	deepproftest.Open(rt, dir)
	assert.Equal(t, "deepproftest: "+dir+": not a run directory: no .deepprof-run, the mark deepprof profile writes into every run directory it makes (deepprof writes and removes files only in those)", rt.fatal)
	_, err := deepproftest.Read(dir)
	assert.ErrorContains(t, err, dir+": not a run directory: no .deepprof-run")
	assert.Empty(t, synth.Changed(before, synth.Tree(t, dir)))
}

// The structure of a run (names and counts, no times) is what a golden
// file of a profiled program holds: two runs of tiny-llama on two leases
// of an H200 have the same.
func TestStructureIsStableAcrossRuns(t *testing.T) {
	a := deepproftest.Open(t, "../fixtures/runs/tiny-llama")
	b := deepproftest.Open(t, "../fixtures/runs/tiny-llama-lease2")
	assert.Equal(t, a.Structure(), b.Structure())
	assert.NotEmpty(t, a.Structure().Kernels)
	assert.NotEmpty(t, a.Structure().Categories)
	for _, k := range a.Summary.Kernels.Rows {
		in := slices.ContainsFunc(a.Structure().Kernels, func(c deepproftest.Count) bool { return c.Name == k.Name })
		assert.Equal(t, k.Share >= deepproftest.StructureMinShare, in, "%s holds %.1f%%", k.Name, 100*k.Share)
	}
	assert.Contains(t, string(a.StructureJSON()), `"name": "decode_all"`)
}

// A recorded run's typed data, read with no GPU.
func ExampleRead() {
	run, err := deepproftest.Read("../fixtures/runs/llama3-8b-roofline")
	if err != nil {
		fmt.Println(err)
		return
	}
	share, _ := run.RegionShare("decode_all")
	k, _ := run.Kernel(1)
	fmt.Printf("decode_all: %.0f%% of the GPU time\n", share)
	fmt.Printf("top kernel: %s, %s\n", k.Category, k.Bound.Class)
	// Output:
	// decode_all: 76% of the GPU time
	// top kernel: gemm, memory-bound
}

// A profiling test in your own module, behind your own gpu build tag.
func ExampleProfile() {
	var t *testing.T // the test's
	m := deepproftest.Preflight(t)
	run := deepproftest.Profile(t, m, deepproftest.Options{
		Command: []string{"python3", "generate.py", "--tokens", "32"},
	})
	run.RegionShareAtLeast("decode_all", 50)
	run.BoundIs(1, kernels.MemoryBound)
	run.StageWithin("decode_step", 25)
}

// Preflight skips what is not there and fails what is there but broken.
func TestPreflight(t *testing.T) {
	for _, c := range []struct {
		name       string
		m          deepproftest.FakeMachine
		skip, fail string
	}{
		{name: "ready", m: deepproftest.FakeMachine{}},
		{name: "no driver", m: deepproftest.FakeMachine{GPUErr: fmt.Errorf("nvml: Init: ERROR_LIBRARY_NOT_FOUND: %w", machine.ErrNoGPU)},
			skip: "no GPU through NVML"},
		{name: "NVML broken", m: deepproftest.FakeMachine{GPUErr: errors.New("nvml: DeviceGetName(0): ERROR_GPU_IS_LOST")},
			fail: "the NVIDIA driver is there but NVML fails: nvml: DeviceGetName(0): ERROR_GPU_IS_LOST"},
		{name: "no ncu", m: deepproftest.FakeMachine{FindErr: errors.New("ncu: not found")}, skip: "ncu: not found"},
		{name: "ncu broken", m: deepproftest.FakeMachine{RunErr: errors.New("exit status 127")}, fail: "ncu found but not runnable: exit status 127"},
		{name: "no torch", m: deepproftest.FakeMachine{PythonExit: 3, PythonOut: "cannot import torch: No module named 'torch'\n"},
			skip: "cannot run the profiled Python (exit 3): cannot import torch"},
		{name: "no python", m: deepproftest.FakeMachine{PythonExit: -1, PythonOut: `exec: "python3": executable file not found in $PATH`},
			skip: "executable file not found"},
		{name: "torch broken", m: deepproftest.FakeMachine{PythonExit: 1, PythonOut: "ImportError: libcudnn.so.9: cannot open shared object file\n"},
			fail: "torch is installed and does not import:\nImportError: libcudnn.so.9"},
		{name: "torch without CUDA", m: deepproftest.FakeMachine{PythonExit: 4, PythonOut: "torch 2.11.0+cpu built for CUDA None sees no CUDA device\n"},
			fail: "sees no CUDA device\n(the GPU is there: a CPU-only torch"},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer deepproftest.UseFakeMachine(c.m)()
			rt := &recordingT{TB: t}
			m := deepproftest.Preflight(rt)
			if c.skip == "" {
				assert.Empty(t, rt.skip)
			} else {
				assert.Contains(t, rt.skip, c.skip)
			}
			if c.fail == "" {
				assert.Empty(t, rt.fatal)
			} else {
				assert.Contains(t, rt.fatal, c.fail)
			}
			if c.skip == "" && c.fail == "" {
				assert.Equal(t, "/fake/ncu", m.Ncu.Path)
			}
		})
	}
	t.Run("compiled program", func(t *testing.T) {
		defer deepproftest.UseFakeMachine(deepproftest.FakeMachine{PythonExit: 3})()
		rt := &recordingT{TB: t}
		deepproftest.Preflight(rt, "")
		assert.Empty(t, rt.skip+rt.fatal, "python \"\" leaves the interpreter unchecked")
	})
}

// Profile fails the test with the run's own reason when the run is
// partial, and with the session's error when it failed; a complete run is
// opened for the test's assertions. (The session is replaced: recorded
// runs stand for what it made.)
func TestProfileOutcome(t *testing.T) {
	m := deepproftest.Machine{}
	m.Ncu.Path = "/fake/ncu"
	cmd := []string{"python3", "generate.py"}

	defer deepproftest.UseSessionResult("../fixtures/runs/h200x2-tp2-lockstep", nil)()
	rt := &recordingT{TB: t}
	run := deepproftest.Profile(rt, m, deepproftest.Options{Command: cmd, Root: "../fixtures/runs", ID: "h200x2-tp2-lockstep"})
	assert.Nil(t, run)
	assert.Contains(t, rt.fatal, "run ../fixtures/runs/h200x2-tp2-lockstep is partial: ")
	assert.Contains(t, rt.fatal, "killed", "the run's own reason")

	defer deepproftest.UseSessionResult("", errors.New("ncu: exit status 9"))()
	rt = &recordingT{TB: t}
	deepproftest.Profile(rt, m, deepproftest.Options{Command: cmd, Root: "../fixtures/runs", ID: "gone"})
	assert.Equal(t, "deepproftest: the session failed (../fixtures/runs/gone): ncu: exit status 9", rt.fatal)

	defer deepproftest.UseSessionResult("../fixtures/runs/example-profile-my-script", nil)()
	rt = &recordingT{TB: t}
	run = deepproftest.Profile(rt, m, deepproftest.Options{Command: cmd, Root: "../fixtures/runs", ID: "example-profile-my-script"})
	require.NotNil(t, run)
	assert.Empty(t, rt.fatal)
	assert.Equal(t, "../fixtures/runs/example-profile-my-script", run.Dir)
}

// MFU: a run with the model's facts has it per scope; one without says
// which facts would give it.
func TestMFU(t *testing.T) {
	rt := &recordingT{TB: t}
	run := deepproftest.Open(rt, roofline)
	pct, why, ok := run.MFU("prefill")
	require.True(t, ok, why)
	assert.Equal(t, 100**run.Summary.MFU.Prefill, pct)
	run.MFUAtLeast("prefill", pct)
	assert.Empty(t, rt.errors)
	run.MFUAtLeast("prefill", pct*2)
	run.MFUAtLeast("whole", 1)
	require.Len(t, rt.errors, 2)
	assert.Contains(t, rt.errors[0], roofline+": prefill MFU is ")
	assert.Contains(t, rt.errors[1], `no MFU scope "whole"`)

	bare := deepproftest.Open(rt, "../fixtures/runs/any-python-script")
	_, why, ok = bare.MFU("decode")
	assert.False(t, ok)
	assert.Contains(t, why, "model.")
}

// A run's structure against its golden file: the same run matches, a
// changed launch count fails with the difference; -update writes it.
func TestStructureMatches(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	abs, err := filepath.Abs(filepath.Join(wd, "../fixtures/runs/tiny-llama"))
	require.NoError(t, err)
	rt := &recordingT{TB: t}
	run := deepproftest.Open(rt, abs)

	run.StructureMatches("tiny")
	require.Len(t, rt.errors, 1)
	assert.Contains(t, rt.errors[0], "structure golden/structure/tiny.json: not found: run the test with -update")

	t.Setenv("GOLDIE_UPDATE", "1")
	if f := flag.Lookup("update"); f != nil { // goldie's, read at init from GOLDIE_UPDATE
		require.NoError(t, f.Value.Set("true"))
		defer func() { _ = f.Value.Set("false") }()
	}
	rt = &recordingT{TB: t}
	run = deepproftest.Open(rt, abs)
	run.StructureMatches("tiny")
	assert.Empty(t, rt.errors)
	require.FileExists(t, filepath.Join(dir, "golden/structure/tiny.json"))
	if f := flag.Lookup("update"); f != nil {
		require.NoError(t, f.Value.Set("false"))
	}
	t.Setenv("GOLDIE_UPDATE", "")

	b := deepproftest.Open(rt, filepath.Join(wd, "../fixtures/runs/tiny-llama-lease2"))
	b.StructureMatches("tiny")
	assert.Empty(t, rt.errors, "a second run of the same program has the same structure")

	b.Launches[b.Summary.Kernels.Rows[0].Name]++
	b.StructureMatches("tiny")
	require.Len(t, rt.errors, 1)
	assert.Contains(t, rt.errors[0], "its structure differs from golden/structure/tiny.json (-golden +run)")
	assert.Contains(t, rt.errors[0], b.Summary.Kernels.Rows[0].Name)
	b.Launches[b.Summary.Kernels.Rows[0].Name]--

	// A small kernel's time moving it in or out of the top N is no change
	// of structure.
	rows := b.Summary.Kernels.Rows
	last := &rows[len(rows)-1]
	require.Less(t, last.Share, deepproftest.StructureMinShare, "the recording's 10th kernel is a small one")
	last.Name += "-another"
	b.StructureMatches("tiny")
	assert.Len(t, rt.errors, 1, "no new error")
}

var wd = func() string {
	d, err := os.Getwd()
	if err != nil {
		panic(err)
	}
	return d
}()

// TestReadForgedSummary (issue 53): a run whose summary.json was edited
// by hand (a second "kernels" key that empties the kernel table, a share
// of 4,200 %) is refused with the file and the key; before, Read took the
// last key and the assertions ran on an empty table.
func TestReadForgedSummary(t *testing.T) {
	src := "../fixtures/runs/cupti-tiny-llama"
	orig, err := os.ReadFile(filepath.Join(src, "summary.json"))
	require.NoError(t, err)
	forged := strings.Replace(string(orig), `"format": "deepprof-summary/1",`, `"format": "deepprof-summary/1", "kernels": {"rows": []},`, 1)
	require.NotEqual(t, string(orig), forged)
	dir := synth.Run(t, src, synth.WriteFile("summary.json", forged).As("second-kernels"))
	_, err = deepproftest.Read(dir)
	require.Error(t, err)
	assert.Regexp(t, `^`+regexp.QuoteMeta(filepath.Join(dir, "summary.json"))+`:[0-9]+: key "kernels" is given twice`, err.Error())
	rt := &recordingT{TB: t}
	deepproftest.Open(rt, dir)
	assert.Contains(t, rt.fatal, "is given twice")
}
