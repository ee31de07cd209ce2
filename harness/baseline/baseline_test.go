package baseline_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	_ "github.com/sebdah/goldie/v2" // registers -update, as in every golden test here
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/llm-perf-opt/deepprof/harness/baseline"
	"github.com/llm-perf-opt/deepprof/harness/diff"
	"github.com/llm-perf-opt/deepprof/harness/diff/difftest"
	"github.com/llm-perf-opt/deepprof/harness/internal/mdtable"
	"github.com/llm-perf-opt/deepprof/harness/stats"
)

const (
	tiny  = "../../fixtures/runs/tiny-llama"
	llama = "../../fixtures/runs/llama3-8b-roofline"
)

func TestFromRun(t *testing.T) {
	rec := difftest.Read(t, tiny)
	b, err := baseline.FromRunTop(tiny, 3)
	require.NoError(t, err)
	assert.Equal(t, baseline.Format, b.Format)
	assert.Equal(t, rec.RunID, b.RunID, "the manifest's run id")
	assert.Equal(t, rec.Model, b.Model)
	assert.Equal(t, rec.Device, b.Device)
	require.Len(t, b.Stages, len(rec.Stages))
	assert.Equal(t, "prefill", b.Stages[0].Name)
	assert.Equal(t, "decode", b.Stages[1].Name)
	for _, st := range b.Stages {
		assert.Equal(t, stats.Summarize(rec.Stages[st.Name]), st.Summary, st.Name)
	}
	require.Greater(t, len(rec.Kernels), 3)
	assert.Equal(t, rec.Kernels[:3], b.Kernels.Rows, "the top 3, as listed")
	assert.Equal(t, 3, b.Kernels.Top)
	assert.Equal(t, len(rec.Kernels), b.Kernels.Count)
	assert.InDelta(t, rec.KernelMS(), b.Kernels.TotalMS, 1e-9, "the appeared rule's base: every listed kernel")
	require.NotNil(t, rec.EveryLaunchRegions, "tiny-llama's summary.json counts every launch")
	assert.Equal(t, rec.EveryLaunchRegions, b.Regions, "the summary's regions, over every launch")
	assert.True(t, b.RegionsEveryLaunch)
	require.NotNil(t, rec.MFU, "tiny-llama has summary.json with mfu")
	assert.Equal(t, rec.MFU, b.MFU)

	// Write, then Read: the same numbers.
	roundTrip(t, b)

	// All kernels with top <= 0.
	b, err = baseline.FromRunTop(tiny, 0)
	require.NoError(t, err)
	assert.Equal(t, rec.Kernels, b.Kernels.Rows)
}

// roundTrip writes b, reads it back, and checks it is the same; it returns
// what was written.
func roundTrip(t *testing.T, b *baseline.Baseline) string {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, b.Write(&buf))
	text := buf.String()
	got, err := baseline.Read(&buf, "x.json")
	require.NoError(t, err)
	want := *b
	want.Source = "x.json"
	assert.Equal(t, &want, got)
	return text
}

// SYNTHETIC runs: tiny-llama with a slow first decode repeat (the recording
// warms up and has none), and without summary.json.
func TestFromRunSynthetic(t *testing.T) {
	rec := difftest.Read(t, tiny)
	b, err := baseline.FromRun(difftest.Run(t, tiny, difftest.ScaleRepeat("decode", 0, 10)))
	require.NoError(t, err)
	require.Len(t, b.Stages, 2)
	dec := b.Stages[1]
	assert.Equal(t, "decode", dec.Name)
	assert.Equal(t, len(rec.Stages["decode"])-1, dec.N, "warm-up dropped")
	require.NotNil(t, dec.WarmupMS)
	assert.InDelta(t, 10*rec.Stages["decode"][0], *dec.WarmupMS, 1e-9)
	text := roundTrip(t, b)
	assert.Contains(t, text, `"warmup_ms": `, "the dropped warm-up is kept in the file")

	b, err = baseline.FromRun(difftest.Run(t, tiny, difftest.Remove(diff.SummaryJSON)))
	require.NoError(t, err)
	assert.Nil(t, b.MFU)
	text = roundTrip(t, b)
	assert.Contains(t, text, `"mfu": null`, "no summary.json: MFU not available")
	assert.NotContains(t, text, `"warmup_ms"`)
}

func TestFromRunMissing(t *testing.T) {
	dir := difftest.Run(t, tiny, difftest.Remove("kernels.json"))
	_, err := baseline.FromRun(dir)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no "+filepath.Join(dir, "kernels.json"))
}

func TestRead(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"syntax", "{\n\"format\": \"deepprof-baseline/1\",\n\"stages\": [,]}", "b.json:3: invalid character ','"},
		{"format", "{\"format\": \"deepprof-baseline/9\"}", `b.json:1: format "deepprof-baseline/9": want "deepprof-baseline/1"`},
		{"no format", "{}", `b.json:1: format ""`},
		{"type", "{\"format\": \"deepprof-baseline/1\",\n\"stages\": [{\"name\": \"decode\", \"n\": \"three\"}]}", "b.json:2: json: cannot unmarshal"},
		{"bad stage", "{\"format\": \"deepprof-baseline/1\",\n\"stages\": [\n{\"name\": \"decode\", \"n\": 0}]}", `b.json:3: stage "decode": want a name, n >= 1`},
		{"empty", "", "b.json:1: EOF"},
		// synthetic duplicates: the second row is the one named
		{"duplicate stage", "{\"format\": \"deepprof-baseline/1\",\n\"stages\": [\n{\"name\": \"decode\", \"n\": 2},\n{\"name\": \"decode\", \"n\": 3}]}",
			`b.json:4: stage "decode" is listed twice`},
		{"duplicate kernel", "{\"format\": \"deepprof-baseline/1\",\n\"kernels\": {\"rows\": [\n{\"kernel_name\": \"gemm\", \"total_ms\": 1},\n{\"kernel_name\": \"gemm\", \"total_ms\": 2}]}}",
			`b.json:4: kernel "gemm" is listed twice`},
		{"negative device", "{\"format\": \"deepprof-baseline/1\",\n\"kernels\": {\"rows\": [\n{\"kernel_name\": \"gemm\", \"device\": -1, \"total_ms\": 1}]}}",
			`b.json:3: kernel "gemm": want a kernel_name, total_ms >= 0, device >= 0`},
		{"duplicate region", "{\"format\": \"deepprof-baseline/1\",\n\"regions\": [\n{\"name\": \"prefill\"},\n{\"name\": \"prefill\"}]}",
			`b.json:4: region "prefill" is listed twice`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := baseline.Read(strings.NewReader(c.in), "b.json")
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

func TestTolerances(t *testing.T) {
	th, err := baseline.Thresholds(baseline.Tolerances{KernelPct: 2.5})
	require.NoError(t, err)
	assert.Equal(t, diff.Thresholds{Stage: 0.1, Kernel: 0.025, Region: 0.1, MFU: 0.1}, th, "zero takes the default, 10%")
	_, err = baseline.Thresholds(baseline.Tolerances{StagePct: -1})
	assert.ErrorContains(t, err, "tolerance stage_pct = -1")

	// The names a profile gives them.
	var tol baseline.Tolerances
	require.NoError(t, yaml.Unmarshal([]byte("stage_pct: 15\nkernel_pct: 20\nregion_pct: 25\nmfu_pct: 5\n"), &tol))
	assert.Equal(t, baseline.Tolerances{StagePct: 15, KernelPct: 20, RegionPct: 25, MFUPct: 5}, tol)
	j, err := json.Marshal(tol)
	require.NoError(t, err)
	assert.JSONEq(t, `{"stage_pct": 15, "kernel_pct": 20, "region_pct": 25, "mfu_pct": 5}`, string(j))
}

func TestCompare(t *testing.T) {
	base, err := baseline.FromRun(llama)
	require.NoError(t, err)
	r, err := baseline.Compare(base, base, baseline.DefaultTolerances())
	require.NoError(t, err)
	assert.False(t, r.Regression)
	assert.Contains(t, r.MovedMarkdown(), "Nothing moved beyond the rule.")

	// A SYNTHETIC run: llama3-8b with its top kernel 1.2x slower.
	top := difftest.Read(t, llama).Kernels[0]
	run, err := baseline.FromRun(difftest.Run(t, llama, difftest.ScaleKernel(0, 1.2)))
	require.NoError(t, err)
	r, err = baseline.Compare(base, run, baseline.DefaultTolerances())
	require.NoError(t, err)
	assert.True(t, r.Regression)
	assertMovedRow(t, r.MovedMarkdown(), top, 1.2, "| +20.0% | regression |")
	r, err = baseline.Compare(base, run, baseline.Tolerances{KernelPct: 25})
	require.NoError(t, err)
	assert.False(t, r.Regression, "within a 25% kernel tolerance")
	_, err = baseline.Compare(base, run, baseline.Tolerances{MFUPct: -3})
	assert.Error(t, err)

	// A SYNTHETIC run: tiny-llama with decode 1.5x slower and its first
	// repeat a warm-up. The table of what moved says which repeat was
	// dropped from B's decode mean, and why.
	base, err = baseline.FromRun(tiny)
	require.NoError(t, err)
	run, err = baseline.FromRun(difftest.Run(t, tiny, difftest.ScaleStage("decode", 1.5), difftest.ScaleRepeat("decode", 0, 10)))
	require.NoError(t, err)
	r, err = baseline.Compare(base, run, baseline.DefaultTolerances())
	require.NoError(t, err)
	assert.True(t, r.Regression)
	moved := r.MovedMarkdown()
	assert.Contains(t, moved, "| stage | decode | ")
	w := 15 * difftest.Read(t, tiny).Stages["decode"][0]
	assert.Contains(t, moved, "- B's decode: first of 3 repeats, "+strconv.FormatFloat(w, 'f', 1, 64)+
		" ms, dropped: over 1.5× the median of the other repeats (warm-up).")
	assert.NotContains(t, moved, "A's decode")
}

// assertMovedRow checks the row of kernel k in a table of what moved: its
// name escaped, its A and B times (k's, and k's times f) to three significant
// digits, and how it ends.
func assertMovedRow(t *testing.T, moved string, k diff.Kernel, f float64, end string) {
	t.Helper()
	prefix := "| kernel | " + mdtable.EscapeCell(k.Name) + " | "
	var row string
	for _, line := range strings.Split(moved, "\n") {
		if strings.HasPrefix(line, prefix) {
			require.Empty(t, row, "one row for the kernel")
			row = line
		}
	}
	require.NotEmpty(t, row, "a row for kernel %s in:\n%s", k.Name, moved)
	assert.True(t, strings.HasSuffix(row, end), row)
	cells := strings.Split(strings.TrimPrefix(row, prefix), " | ")
	require.GreaterOrEqual(t, len(cells), 2, row)
	for i, want := range []float64{k.TotalMS, f * k.TotalMS} {
		ms, ok := strings.CutSuffix(cells[i], " ms")
		require.True(t, ok, "a time in ms: %q", cells[i])
		got, err := strconv.ParseFloat(ms, 64)
		require.NoError(t, err)
		assert.InEpsilon(t, want, got, 0.005, "%q: three significant digits of %v", cells[i], want)
	}
}

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
	c := baseline.Checker{Dir: filepath.Join(t.TempDir(), "perf")}
	tol := baseline.DefaultTolerances()

	// No baseline yet: fail, and say how to write one.
	ft := &fakeTB{TB: t}
	c.Check(ft, "tiny", tiny, tol)
	require.Len(t, ft.errors, 1)
	assert.Contains(t, ft.errors[0], "not found: run the test with -update")

	// -update writes it, and fails nothing.
	setUpdate(t, true)
	ft = &fakeTB{TB: t}
	c.Check(ft, "tiny", tiny, tol)
	assert.Empty(t, ft.errors)
	assert.FileExists(t, filepath.Join(c.Dir, "tiny.json"))
	setUpdate(t, false)

	// The same run passes.
	ft = &fakeTB{TB: t}
	c.Check(ft, "tiny", tiny, tol)
	assert.Empty(t, ft.errors)
	assert.Empty(t, ft.logs)

	// A SYNTHETIC run, its top kernel 1.5x slower: fails with the table of
	// what moved, naming the kernel.
	slow := difftest.Run(t, tiny, difftest.ScaleKernel(0, 1.5))
	ft = &fakeTB{TB: t}
	c.Check(ft, "tiny", slow, tol)
	require.Len(t, ft.errors, 1)
	msg := ft.errors[0]
	assert.Contains(t, msg, "the run moved beyond its tolerances (stages 10%, kernels 10%, regions 10%, MFU 10%)")
	assert.Contains(t, msg, "| part | name | A | B | Δ % | verdict |")
	assertMovedRow(t, msg, difftest.Read(t, tiny).Kernels[0], 1.5, "| +50.0% | regression |")
	t.Logf("what a failing check prints:\n%s", msg)

	// Within a wider tolerance it passes.
	ft = &fakeTB{TB: t}
	c.Check(ft, "tiny", slow, baseline.Tolerances{KernelPct: 60})
	assert.Empty(t, ft.errors)

	// Faster: logged, not failing.
	fast := difftest.Run(t, tiny, difftest.ScaleKernel(0, 0.5))
	ft = &fakeTB{TB: t}
	c.Check(ft, "tiny", fast, tol)
	assert.Empty(t, ft.errors)
	require.Len(t, ft.logs, 1)
	assert.Contains(t, ft.logs[0], "improved")

	// A run that lacks a part, bad names and tolerances: failures, no panic.
	for _, bad := range []struct {
		name, run string
		tol       baseline.Tolerances
		want      string
	}{
		{"tiny", difftest.Run(t, tiny, difftest.Remove("ncu/regions/report.json")), tol, "a baseline needs"},
		{"../escape", tiny, tol, "want a plain name"},
		{"tiny", tiny, baseline.Tolerances{RegionPct: -5}, "region_pct = -5"},
		{"tiny", filepath.Join(t.TempDir(), "none"), tol, "no such file"},
	} {
		ft = &fakeTB{TB: t}
		c.Check(ft, bad.name, bad.run, bad.tol)
		require.Len(t, ft.errors, 1, bad.want)
		assert.Contains(t, ft.errors[0], bad.want)
	}

	// A baseline file that is not one.
	require.NoError(t, os.WriteFile(filepath.Join(c.Dir, "broken.json"), []byte("{\n\"format\": 1}"), 0o644))
	ft = &fakeTB{TB: t}
	c.Check(ft, "broken", tiny, tol)
	require.Len(t, ft.errors, 1)
	assert.Contains(t, ft.errors[0], filepath.Join(c.Dir, "broken.json")+":2:")
}

// TestCheckRecordedRun is how a GPU test uses Check, here on a recorded run
// and the example baseline golden/perf/tiny-llama.json (rewrite it with
// go test ./harness/baseline -run TestCheckRecordedRun -update).
func TestCheckRecordedRun(t *testing.T) {
	baseline.Checker{Dir: "../../golden/perf"}.Check(t, "tiny-llama", tiny, baseline.DefaultTolerances())
}

// Issue 16, item 3 (staticcheck SA4006): under -update a baseline that
// cannot be written fails the test; it was logged as written.
func TestCheckUpdateWriteFails(t *testing.T) {
	setUpdate(t, true)
	blocker := filepath.Join(t.TempDir(), "perf")
	require.NoError(t, os.WriteFile(blocker, []byte("a file where the folder goes"), 0o644))
	c := baseline.Checker{Dir: blocker}
	ft := &fakeTB{TB: t}
	c.Check(ft, "tiny", tiny, baseline.DefaultTolerances())
	require.Len(t, ft.errors, 1)
	assert.Contains(t, ft.errors[0], "baseline "+filepath.Join(blocker, "tiny.json"))
	for _, l := range ft.logs {
		assert.NotContains(t, l, "written")
	}
}
