package compare_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	_ "github.com/sebdah/goldie/v2" // registers -update, as in every golden test here
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/llm-perf-opt/deepprof/internal/compare"
	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/render"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
	"github.com/llm-perf-opt/deepprof/internal/synth"
)

const (
	baselineTiny  = "../../fixtures/runs/tiny-llama"
	baselineLlama = "../../fixtures/runs/llama3-8b-roofline"
)

func TestFromRun(t *testing.T) {
	rec := synth.Read(t, baselineTiny)
	b, err := compare.FromRunTop(baselineTiny, 3)
	require.NoError(t, err)
	assert.Equal(t, compare.Format, b.Format)
	assert.Equal(t, rec.RunID, b.RunID, "the manifest's run id")
	assert.Equal(t, rec.Model, b.Model)
	assert.Equal(t, rec.Device, b.Device)
	require.Len(t, b.Stages, len(rec.Stages))
	assert.Equal(t, "prefill", b.Stages[0].Name)
	assert.Equal(t, "decode", b.Stages[1].Name)
	for _, st := range b.Stages {
		assert.Equal(t, model.Summarize(rec.Stages[st.Name]), st.Summary, st.Name)
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
	b, err = compare.FromRunTop(baselineTiny, 0)
	require.NoError(t, err)
	assert.Equal(t, rec.Kernels, b.Kernels.Rows)
}

// roundTrip writes b, reads it back, and checks it is the same; it returns
// what was written.
func roundTrip(t *testing.T, b *compare.Baseline) string {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, b.Write(&buf))
	text := buf.String()
	got, err := compare.Read(&buf, "x.json")
	require.NoError(t, err)
	want := *b
	want.Source = "x.json"
	assert.Equal(t, &want, got)
	return text
}

// SYNTHETIC runs: tiny-llama with a slow first decode repeat (the recording
// warms up and has none), and without summary.json.
func TestFromRunSynthetic(t *testing.T) {
	rec := synth.Read(t, baselineTiny)
	b, err := compare.FromRun(synth.Run(t, baselineTiny, synth.ScaleRepeat("decode", 0, 10)))
	require.NoError(t, err)
	require.Len(t, b.Stages, 2)
	dec := b.Stages[1]
	assert.Equal(t, "decode", dec.Name)
	assert.Equal(t, len(rec.Stages["decode"])-1, dec.N, "warm-up dropped")
	require.NotNil(t, dec.WarmupMS)
	assert.InDelta(t, 10*rec.Stages["decode"][0], *dec.WarmupMS, 1e-9)
	text := roundTrip(t, b)
	assert.Contains(t, text, `"warmup_ms": `, "the dropped warm-up is kept in the file")

	b, err = compare.FromRun(synth.Run(t, baselineTiny, synth.Remove(rundir.SummaryJSON)))
	require.NoError(t, err)
	assert.Nil(t, b.MFU)
	text = roundTrip(t, b)
	assert.Contains(t, text, `"mfu": null`, "no summary.json: MFU not available")
	assert.NotContains(t, text, `"warmup_ms"`)
}

func TestFromRunMissing(t *testing.T) {
	dir := synth.Run(t, baselineTiny, synth.Remove("kernels.json"))
	_, err := compare.FromRun(dir)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no "+filepath.Join(dir, "kernels.json"))
}

func TestRead(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"syntax", "{\n\"format\": \"deepprof-baseline/1\",\n\"stages\": [,]}", "b.json:3: invalid character ','"},
		{"format", "{\"format\": \"deepprof-baseline/9\"}", `b.json:1: format "deepprof-baseline/9": want "deepprof-baseline/3", "deepprof-baseline/2" or "deepprof-baseline/1"`},
		{"no format", "{}", `b.json:1: format ""`},
		{"type", "{\"format\": \"deepprof-baseline/1\",\n\"stages\": [{\"name\": \"decode\", \"n\": \"three\"}]}", "b.json:2: json: cannot unmarshal"},
		{"bad stage", "{\"format\": \"deepprof-baseline/1\",\n\"stages\": [\n{\"name\": \"decode\", \"n\": 0}]}", `b.json:3: stage "decode": want a name, n >= 1`},
		{"empty", "", "b.json:1: empty: a baseline file is the JSON deepprof baseline writes"},
		// issue 53: a second "stages" key, which encoding/json took in
		// place of the first (an empty list switched the comparison off)
		{"second stages key", "{\"format\": \"deepprof-baseline/1\",\n\"stages\": [{\"name\": \"decode\", \"n\": 3, \"mean_ms\": 1}],\n\"stages\": []}", `b.json:3: key "stages" is given twice`},
		// issue 53: a byte-order mark is read past, lines unchanged
		{"byte-order mark", "\ufeff{\n\"format\": \"deepprof-baseline/1\",\n\"stages\": [,]}", "b.json:3: invalid character ','"},
		// synthetic duplicates: the second row is the one named
		{"duplicate stage", "{\"format\": \"deepprof-baseline/1\",\n\"stages\": [\n{\"name\": \"decode\", \"n\": 2},\n{\"name\": \"decode\", \"n\": 3}]}",
			`b.json:4: stage "decode" is listed twice`},
		{"duplicate kernel", "{\"format\": \"deepprof-baseline/1\",\n\"kernels\": {\"rows\": [\n{\"kernel_name\": \"gemm\", \"total_ms\": 1},\n{\"kernel_name\": \"gemm\", \"total_ms\": 2}]}}",
			`b.json:4: kernel "gemm" is listed twice`},
		{"negative device", "{\"format\": \"deepprof-baseline/1\",\n\"kernels\": {\"rows\": [\n{\"kernel_name\": \"gemm\", \"device\": -1, \"total_ms\": 1}]}}",
			`b.json:3: kernel "gemm": want a kernel_name, total_ms >= 0, device >= 0`},
		{"duplicate region", "{\"format\": \"deepprof-baseline/1\",\n\"regions\": [\n{\"name\": \"prefill\"},\n{\"name\": \"prefill\"}]}",
			`b.json:4: region "prefill" is listed twice`},
		// issue 51: the spread between runs, new in version 3
		{"between runs in version 2", "{\"format\": \"deepprof-baseline/2\",\n\"between_runs\": {\"runs\": [\"a\", \"b\"]}}",
			`b.json:2: between_runs is new in deepprof-baseline/3: this file says deepprof-baseline/2`},
		{"between one run", "{\"format\": \"deepprof-baseline/3\",\n\"between_runs\": {\n\"runs\": [\"a\"]}}",
			`b.json:3: between_runs: want the run ids of 2 runs or more, got 1`},
		{"stage between runs reversed", "{\"format\": \"deepprof-baseline/3\",\n\"between_runs\": {\"runs\": [\"a\", \"b\"], \"stages\": [\n{\"stage\": \"decode\", \"n\": 2, \"min_ms\": 2, \"max_ms\": 1}]}}",
			`b.json:3: stage "decode" between runs: want a stage, n from 2 to the 2 runs, and 0 <= min_ms <= max_ms`},
		{"kernel between more runs than named", "{\"format\": \"deepprof-baseline/3\",\n\"between_runs\": {\"runs\": [\"a\", \"b\"], \"kernels\": [\n{\"kernel_name\": \"gemm\", \"n\": 3, \"min_ms\": 1, \"max_ms\": 2}]}}",
			`b.json:3: kernel "gemm" between runs: want a kernel_name, device >= 0, n from 2 to the 2 runs`},
		{"kernel between runs twice", "{\"format\": \"deepprof-baseline/3\",\n\"between_runs\": {\"runs\": [\"a\", \"b\"], \"kernels\": [\n{\"kernel_name\": \"gemm\", \"n\": 2, \"min_ms\": 1, \"max_ms\": 2},\n{\"kernel_name\": \"gemm\", \"n\": 2, \"min_ms\": 1, \"max_ms\": 2}]}}",
			`b.json:4: kernel between runs "gemm" is listed twice`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := compare.Read(strings.NewReader(c.in), "b.json")
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

// TestReadByteOrderMark (issue 53): a baseline saved by an editor that
// writes a UTF-8 byte-order mark first reads as the same baseline; before,
// "invalid character 'ï'".
func TestReadByteOrderMark(t *testing.T) {
	f, err := os.ReadFile("../../golden/perf/tiny-llama.json")
	require.NoError(t, err)
	plain, err := compare.Read(bytes.NewReader(f), "b.json")
	require.NoError(t, err)
	marked, err := compare.Read(bytes.NewReader(append([]byte("\ufeff"), f...)), "b.json")
	require.NoError(t, err)
	assert.Equal(t, plain, marked)
}

func TestTolerances(t *testing.T) {
	th, err := model.Tolerances{KernelPct: 2.5}.Thresholds()
	require.NoError(t, err)
	assert.Equal(t, model.Thresholds{Stage: 0.1, Kernel: 0.025, Region: 0.1, MFU: 0.1, Floor: 0.01}, th, "zero takes the default, 10%")
	_, err = model.Tolerances{StagePct: -1}.Thresholds()
	assert.ErrorContains(t, err, "tolerance stage_pct = -1")

	// The names a profile gives them.
	var tol model.Tolerances
	require.NoError(t, yaml.Unmarshal([]byte("stage_pct: 15\nkernel_pct: 20\nregion_pct: 25\nmfu_pct: 5\n"), &tol))
	assert.Equal(t, model.Tolerances{StagePct: 15, KernelPct: 20, RegionPct: 25, MFUPct: 5}, tol)
	j, err := json.Marshal(tol)
	require.NoError(t, err)
	assert.JSONEq(t, `{"stage_pct": 15, "kernel_pct": 20, "region_pct": 25, "mfu_pct": 5}`, string(j))
}

func TestCompare(t *testing.T) {
	base, err := compare.FromRun(baselineLlama)
	require.NoError(t, err)
	r, err := compare.CompareBaseline(base, base, model.DefaultTolerances())
	require.NoError(t, err)
	assert.False(t, r.Regression)
	assert.Contains(t, render.MovedMarkdown(r), "Nothing moved beyond the rule.")

	// A SYNTHETIC run: llama3-8b with its top kernel 1.2x slower.
	top := synth.Read(t, baselineLlama).Kernels[0]
	run, err := compare.FromRun(synth.Run(t, baselineLlama, synth.ScaleKernel(0, 1.2)))
	require.NoError(t, err)
	r, err = compare.CompareBaseline(base, run, model.DefaultTolerances())
	require.NoError(t, err)
	assert.True(t, r.Regression)
	synth.AssertMovedRow(t, render.MovedMarkdown(r), top, 1.2, "| +20.0% | regression |")
	r, err = compare.CompareBaseline(base, run, model.Tolerances{KernelPct: 25})
	require.NoError(t, err)
	assert.False(t, r.Regression, "within a 25% kernel tolerance")
	_, err = compare.CompareBaseline(base, run, model.Tolerances{MFUPct: -3})
	assert.Error(t, err)

	// A SYNTHETIC run: tiny-llama with decode 1.5x slower and its first
	// repeat a warm-up, its kernels as recorded. The stage is launch-bound
	// and its GPU work unchanged: the host moved it, reported and not
	// failing, unless the tolerances gate the host. The table of what
	// moved says which repeat was dropped from B's decode mean, and why.
	base, err = compare.FromRun(baselineTiny)
	require.NoError(t, err)
	run, err = compare.FromRun(synth.Run(t, baselineTiny, synth.ScaleStage("decode", 1.5), synth.ScaleRepeat("decode", 0, 10)))
	require.NoError(t, err)
	r, err = compare.CompareBaseline(base, run, model.DefaultTolerances())
	require.NoError(t, err)
	assert.False(t, r.Regression, "%v", r.Regressions)
	assert.Contains(t, render.MovedMarkdown(r), "| host |")
	gated := model.DefaultTolerances()
	gated.Gate = model.GateHost
	r, err = compare.CompareBaseline(base, run, gated)
	require.NoError(t, err)
	assert.True(t, r.Regression)
	moved := render.MovedMarkdown(r)
	assert.Contains(t, moved, "| stage | decode | ")
	w := 15 * synth.Read(t, baselineTiny).Stages["decode"][0]
	assert.Contains(t, moved, "- B's decode: first of 3 repeats, "+strconv.FormatFloat(w, 'f', 1, 64)+
		" ms, dropped: over 1.5× the median of the other repeats (warm-up).")
	assert.NotContains(t, moved, "A's decode")
}

// TestBaselineRefusesOtherSetup (issue 27): a baseline records the workload's
// shape and its kernel source, and a run of another shape is not compared
// with it: the error names the difference.
func TestBaselineRefusesOtherSetup(t *testing.T) {
	base, err := compare.FromRun(baselineTiny)
	require.NoError(t, err)
	assert.Equal(t, "prompt 64, generated 4, batch 1", base.Shape)
	require.NotNil(t, base.KernelsFrom)
	assert.True(t, base.KernelsFrom.EveryLaunch)
	longer, err := compare.FromRun(synth.Run(t, baselineTiny, synth.EditJSON("prompt-128", "stage1/report.json", func(m map[string]any) error {
		m["tokens"].(map[string]any)["prompt"] = 128
		return nil
	})))
	require.NoError(t, err)
	_, err = compare.CompareBaseline(base, longer, model.DefaultTolerances())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "run A's workload is prompt 64, generated 4, batch 1 and run B's prompt 128, generated 4, batch 1")
	assert.Contains(t, err.Error(), "record one of this setup (-update)")
	_, err = compare.CompareBaseline(base, base, model.DefaultTolerances())
	assert.NoError(t, err)
}

// TestReadKernelTotal (issue 53): kernels.total_ms is the base of the
// appeared rule, so a total its rows cannot sum to is refused, with the
// file, the line and the key. Before, a baseline with a total of 1e300
// read, and a run with a new kernel (a regression against the true
// baseline) passed against it.
func TestReadKernelTotal(t *testing.T) {
	base, err := compare.FromRunTop(baselineTiny, 3)
	require.NoError(t, err)
	require.Greater(t, base.Kernels.Count, 3, "a cut baseline: kernels not kept")
	// A SYNTHETIC run: tiny-llama with its top kernel renamed, a kernel
	// the baseline has not seen.
	run, err := compare.FromRunTop(synth.Run(t, baselineTiny, synth.RenameKernel(0, "new_kernel")), 3)
	require.NoError(t, err)
	r, err := compare.CompareBaseline(base, run, model.DefaultTolerances())
	require.NoError(t, err)
	require.True(t, r.Regression, "the new kernel against the true baseline")

	var text bytes.Buffer
	require.NoError(t, base.Write(&text))
	rows := 0.0
	for _, k := range base.Kernels.Rows {
		rows += k.TotalMS
	}
	least := base.Kernels.Rows[2].TotalMS
	most := rows + float64(base.Kernels.Count-3)*least
	edited := func(edit func(k map[string]any)) string {
		var m map[string]any
		require.NoError(t, json.Unmarshal(text.Bytes(), &m))
		edit(m["kernels"].(map[string]any))
		b, err := json.MarshalIndent(m, "", "  ")
		require.NoError(t, err)
		return string(b)
	}
	lineOf := func(doc, key string) int {
		i := strings.Index(doc, `"kernels": {`)
		j := strings.Index(doc[i:], `"`+key+`"`)
		return 1 + strings.Count(doc[:i+j], "\n")
	}
	for _, c := range []struct {
		name string
		edit func(k map[string]any)
		key  string // "": read
		want string
	}{
		{"as written", func(map[string]any) {}, "", ""},
		{"rounded", func(k map[string]any) { k["total_ms"] = base.Kernels.TotalMS + 1e-9 }, "", ""},
		{"the most the rest can hold", func(k map[string]any) { k["total_ms"] = most }, "", ""},
		{"just the rows", func(k map[string]any) { k["total_ms"] = rows }, "", ""},
		{"1e300", func(k map[string]any) { k["total_ms"] = 1e300 }, "total_ms", "kernels.total_ms: 1e+300 ms, more than " +
			strconv.Itoa(base.Kernels.Count) + " kernels can hold: the 3 rows "},
		{"past the most", func(k map[string]any) { k["total_ms"] = most + 0.01 }, "total_ms", "kernels.total_ms: " + strconv.FormatFloat(most+0.01, 'g', -1, 64) + " ms, more than"},
		{"negative", func(k map[string]any) { k["total_ms"] = -1 }, "total_ms", "kernels.total_ms: -1: want a time in ms >= 0"},
		{"less than the rows", func(k map[string]any) { k["total_ms"] = rows - 0.01 }, "total_ms", "kernels.total_ms: " + strconv.FormatFloat(rows-0.01, 'g', -1, 64) + " ms, less than its 3 rows hold"},
		{"all kept, more", func(k map[string]any) { k["count"] = 3; k["top"] = 0; k["total_ms"] = rows + 0.01 }, "total_ms",
			"kernels.total_ms: " + strconv.FormatFloat(rows+0.01, 'g', -1, 64) + " ms, more than its 3 rows hold"},
		{"all kept, as summed", func(k map[string]any) { k["count"] = 3; k["top"] = 0; k["total_ms"] = rows }, "", ""},
		{"count under the rows", func(k map[string]any) { k["count"] = 2 }, "count", "kernels.count: 2 kernels, top 3, 3 rows"},
		{"count past the cut", func(k map[string]any) { k["top"] = 0; k["count"] = 1000000 }, "count", "kernels.count: 1000000 kernels, top 0"},
		{"negative top", func(k map[string]any) { k["top"] = -1 }, "count", "kernels.count: " + strconv.Itoa(base.Kernels.Count) + " kernels, top -1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			doc := edited(c.edit)
			_, err := compare.Read(strings.NewReader(doc), "b.json")
			if c.key == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), "b.json:"+strconv.Itoa(lineOf(doc, c.key))+": "+c.want)
			assert.Contains(t, err.Error(), "(write it again with deepprof baseline)")
		})
	}
}
