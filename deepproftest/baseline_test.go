package deepproftest_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	_ "github.com/sebdah/goldie/v2" // registers -update, as in every golden test here
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/deepproftest"
	"github.com/llm-perf-opt/deepprof/harness"
	"github.com/llm-perf-opt/deepprof/internal/synth"
)

const baselineTiny = "../fixtures/runs/tiny-llama"

// fakeTB records what Check reports instead of failing the test.
type fakeTB struct {
	testing.TB
	errors, logs []string
}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Errorf(format string, args ...any) {
	f.errors = append(f.errors, fmt.Sprintf(format, args...))
}
func (f *fakeTB) Logf(format string, args ...any) {
	f.logs = append(f.logs, fmt.Sprintf(format, args...))
}

// setUpdate sets goldie's -update flag for the rest of the test.
func setUpdate(t *testing.T, v bool) {
	f := flag.Lookup("update")
	require.NotNil(t, f, "goldie registers -update")
	old := f.Value.String()
	require.NoError(t, flag.Set("update", fmt.Sprint(v)))
	t.Cleanup(func() { flag.Set("update", old) })
}

func TestCheck(t *testing.T) {
	setUpdate(t, false)
	c := deepproftest.BaselineChecker{Dir: filepath.Join(t.TempDir(), "perf")}
	tol := deepproftest.DefaultTolerances()

	// No baseline yet: fail, and say how to write one.
	ft := &fakeTB{TB: t}
	c.Check(ft, "tiny", baselineTiny, tol)
	require.Len(t, ft.errors, 1)
	assert.Contains(t, ft.errors[0], "not found: run the test with -update")

	// -update writes it, and fails nothing.
	setUpdate(t, true)
	ft = &fakeTB{TB: t}
	c.Check(ft, "tiny", baselineTiny, tol)
	assert.Empty(t, ft.errors)
	assert.FileExists(t, filepath.Join(c.Dir, "tiny.json"))
	setUpdate(t, false)

	// The same run passes.
	ft = &fakeTB{TB: t}
	c.Check(ft, "tiny", baselineTiny, tol)
	assert.Empty(t, ft.errors)
	assert.Empty(t, ft.logs)

	// A SYNTHETIC run, its top kernel 1.5x slower: fails with the table of
	// what moved, naming the kernel.
	slow := synth.Run(t, baselineTiny, synth.ScaleKernel(0, 1.5))
	ft = &fakeTB{TB: t}
	c.Check(ft, "tiny", slow, tol)
	require.Len(t, ft.errors, 1)
	msg := ft.errors[0]
	assert.Contains(t, msg, "the run moved beyond its tolerances (stages 10%, kernels 10%, regions 10%, MFU 10%)")
	assert.Contains(t, msg, "| part | name | A | B | Δ % | verdict |")
	synth.AssertMovedRow(t, msg, synth.Read(t, baselineTiny).Kernels[0], 1.5, "| +50.0% | regression |")
	t.Logf("what a failing check prints:\n%s", msg)

	// Within a wider tolerance it passes.
	ft = &fakeTB{TB: t}
	c.Check(ft, "tiny", slow, harness.Tolerances{KernelPct: 60})
	assert.Empty(t, ft.errors)

	// Faster: logged, not failing.
	fast := synth.Run(t, baselineTiny, synth.ScaleKernel(0, 0.5))
	ft = &fakeTB{TB: t}
	c.Check(ft, "tiny", fast, tol)
	assert.Empty(t, ft.errors)
	require.Len(t, ft.logs, 1)
	assert.Contains(t, ft.logs[0], "improved")

	// A run that lacks a part, bad names and tolerances: failures, no panic.
	for _, bad := range []struct {
		name, run string
		tol       harness.Tolerances
		want      string
	}{
		{"tiny", synth.Run(t, baselineTiny, synth.Remove("ncu/regions/report.json")), tol, "a baseline needs"},
		{"../escape", baselineTiny, tol, "want a plain name"},
		{"tiny", baselineTiny, harness.Tolerances{RegionPct: -5}, "region_pct = -5"},
		{"tiny", filepath.Join(t.TempDir(), "none"), tol, "none: not a run directory: no such directory"},
	} {
		ft = &fakeTB{TB: t}
		c.Check(ft, bad.name, bad.run, bad.tol)
		require.Len(t, ft.errors, 1, bad.want)
		assert.Contains(t, ft.errors[0], bad.want)
	}

	// A baseline file that is not one.
	require.NoError(t, os.WriteFile(filepath.Join(c.Dir, "broken.json"), []byte("{\n\"format\": 1}"), 0o644))
	ft = &fakeTB{TB: t}
	c.Check(ft, "broken", baselineTiny, tol)
	require.Len(t, ft.errors, 1)
	assert.Contains(t, ft.errors[0], filepath.Join(c.Dir, "broken.json")+":2:")
}

// TestCheckRecordedRun is how a GPU test uses Check, here on a recorded run
// and the example baseline golden/perf/tiny-llama.json (rewrite it with
// go test ./deepproftest -run TestCheckRecordedRun -update).
func TestCheckRecordedRun(t *testing.T) {
	deepproftest.BaselineChecker{Dir: "../golden/perf"}.Check(t, "tiny-llama", baselineTiny, deepproftest.DefaultTolerances())
}

// Issue 16, item 3 (staticcheck SA4006): under -update a baseline that
// cannot be written fails the test; it was logged as written.
func TestCheckUpdateWriteFails(t *testing.T) {
	setUpdate(t, true)
	blocker := filepath.Join(t.TempDir(), "perf")
	require.NoError(t, os.WriteFile(blocker, []byte("a file where the folder goes"), 0o644))
	c := deepproftest.BaselineChecker{Dir: blocker}
	ft := &fakeTB{TB: t}
	c.Check(ft, "tiny", baselineTiny, deepproftest.DefaultTolerances())
	require.Len(t, ft.errors, 1)
	assert.Contains(t, ft.errors[0], "baseline "+filepath.Join(blocker, "tiny.json"))
	for _, l := range ft.logs {
		assert.NotContains(t, l, "written")
	}
}
