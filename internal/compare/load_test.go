package compare_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/compare"
	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/synth"
)

const (
	tiny  = "../../fixtures/runs/tiny-llama"
	llama = "../../fixtures/runs/llama3-8b-roofline"
	gpt2  = "../../fixtures/runs/gpt2-llm-domain"
)

// recordedRuns are the recorded runs every test of a whole run goes over;
// gpt2-llm-domain has sub-stages (prefill/attn0, a stage with a parent) and
// regions of a named NVTX domain.
var recordedRuns = []string{tiny, llama, gpt2}

// TestLoadRecordedRuns checks Load against what each recorded run's files
// say (read apart, by synth.Read): no number of a recording is typed here.
func TestLoadRecordedRuns(t *testing.T) {
	for _, run := range recordedRuns {
		t.Run(filepath.Base(run), func(t *testing.T) {
			rec := synth.Read(t, run)
			s, err := compare.Load(run)
			require.NoError(t, err)
			require.NotEmpty(t, rec.RunID, "a recorded run has a manifest with its run_id")
			assert.Equal(t, rec.RunID, s.RunID, "the run id is the manifest's, not the directory's name")
			assert.Equal(t, run, s.Source)
			assert.Equal(t, rec.Model, s.Model)
			assert.Equal(t, rec.Device, s.Device)
			assert.NotEmpty(t, s.Device)
			assert.Empty(t, s.Missing)

			require.Len(t, s.Stages, len(rec.Stages))
			var names []string
			for _, st := range s.Stages {
				names = append(names, st.Name)
				assert.Equal(t, rec.Stages[st.Name], st.Repeats, st.Name)
				assert.Equal(t, model.Summarize(st.Repeats), st.Summary, st.Name)
			}
			// prefill, then its sub-stages, then decode and its sub-stages,
			// then other stages by name.
			var top []string
			for i, n := range names {
				if p, _, ok := strings.Cut(n, "/"); ok {
					assert.Contains(t, names[:i], p, "sub-stage %s after its parent", n)
					assert.True(t, names[i-1] == p || strings.HasPrefix(names[i-1], p+"/"), "sub-stage %s right after its parent's rows", n)
					continue
				}
				top = append(top, n)
			}
			assert.Equal(t, []string{"prefill", "decode"}, top[:2], "prefill and decode first, then by name")
			assert.IsIncreasing(t, top[2:])

			assert.Equal(t, rec.Kernels, s.Kernels)
			assert.InDelta(t, rec.KernelMS(), s.KernelMS, 1e-9)
			assert.Equal(t, rec.Regions, s.Regions)
			assert.Equal(t, rec.MFU, s.MFU, "summary.json's mfu, nulls kept")
		})
	}
}

// A SYNTHETIC run: tiny-llama with its first decode repeat 10x slower, as a
// run that did not warm up has. The warm-up rule drops it, and keeps it beside
// the stage's numbers.
func TestLoadWarmupDropped(t *testing.T) {
	rec := synth.Read(t, tiny)
	dir := synth.Run(t, tiny, synth.ScaleRepeat("decode", 0, 10))
	s, err := compare.Load(dir)
	require.NoError(t, err)
	require.Len(t, s.Stages, 2)
	dec := s.Stages[1]
	require.Equal(t, "decode", dec.Name)
	want := rec.Stages["decode"]
	require.GreaterOrEqual(t, len(want), 3, "the rule needs 3 repeats")
	assert.Len(t, dec.Repeats, len(want))
	assert.Equal(t, len(want)-1, dec.N, "the slow first decode repeat is dropped as warm-up")
	require.NotNil(t, dec.WarmupMS)
	assert.Equal(t, dec.Repeats[0], *dec.WarmupMS)
	assert.InDelta(t, 10*want[0], *dec.WarmupMS, 1e-9)
	var sum float64
	for _, v := range want[1:] {
		sum += v
	}
	assert.InDelta(t, sum/float64(len(want)-1), dec.MeanMS, 1e-9, "the mean of the others")
	assert.Equal(t, s.Stages[0].Summary, model.Summarize(rec.Stages["prefill"]), "prefill untouched")
}

func TestLoadMissing(t *testing.T) {
	dir := synth.Run(t, tiny, synth.Remove("kernels.json"), synth.Remove("ncu/regions/report.json"))
	s, err := compare.Load(dir)
	require.NoError(t, err, "a missing file is not an error")
	assert.Equal(t, []facts.DiffMissing{
		{Part: facts.PartKernels, File: filepath.Join(dir, "kernels.json")},
		{Part: facts.PartRegions, File: filepath.Join(dir, "ncu", "regions", "report.json")},
	}, s.Missing)
	assert.True(t, s.Has(facts.PartStages))
	assert.False(t, s.Has(facts.PartKernels))

	_, err = compare.Load(filepath.Join(dir, "nope"))
	assert.Error(t, err, "no run directory at all")
	_, err = compare.Load(filepath.Join(dir, "ncu"))
	assert.ErrorContains(t, err, "ncu: not a run directory: no .deepprof-run")
	assert.ErrorIs(t, err, compare.ErrNotRun)
	empty := synth.Run(t, tiny, synth.Remove("kernels.json"), synth.Remove("ncu/regions/report.json"), synth.Remove("stage1/report.json"))
	_, err = compare.Load(empty)
	assert.ErrorContains(t, err, "nothing to compare: the run has no stage1/report.json, kernels.json nor ncu/regions/report.json")
	assert.ErrorIs(t, err, compare.ErrNothingToCompare)
	_, err = compare.Load(filepath.Join(dir, "kernels.md"))
	assert.ErrorContains(t, err, "not a run directory")
}

func TestLoadMalformed(t *testing.T) {
	for _, c := range []struct {
		name, rel, content, want string
	}{
		{"syntax", "kernels.json", "{\n  \"kernels\": [\n    {\"kernel_name\": \"k\", \"total_ms\": 1,}\n  ]\n}\n",
			"kernels.json:3: invalid character '}'"},
		{"wrong type", "kernels.json", "{\"kernels\": [\n{\"kernel_name\": \"a\", \"total_ms\": 1},\n{\"kernel_name\": \"b\",\n \"total_ms\": \"fast\"}]}",
			"kernels.json:4: json: cannot unmarshal string"},
		{"no list", "kernels.json", "{\"rows\": []}", "kernels.json:1: no \"kernels\" list"},
		{"not an object", "kernels.json", "[]", "kernels.json:1: want a JSON object"},
		{"truncated", "kernels.json", "{\"kernels\": [\n{\"kernel_name\": \"a\"", "kernels.json:2: unexpected end of JSON"},
		{"negative time", "kernels.json", "{\"kernels\": [\n{\"kernel_name\": \"a\", \"total_ms\": 1},\n\n{\"kernel_name\": \"b\", \"total_ms\": -1}]}",
			"kernels.json:4: kernel \"b\": want total_ms"},
		{"no name", "kernels.json", "{\"kernels\": [{\"total_ms\": 1}]}", "kernels.json:1: a kernel without kernel_name"},
		{"twice", "kernels.json", "{\"kernels\": [\n{\"kernel_name\": \"a\", \"total_ms\": 1},\n{\"kernel_name\": \"a\", \"total_ms\": 2}]}",
			"kernels.json:3: kernel \"a\" on device 0 is listed twice (first on line 2)"},
		{"empty", "kernels.json", "", "kernels.json:1: unexpected end of JSON"},
		// issue 16 (SYNTHETIC): what no run writes
		{"negative device", "kernels.json", "{\"kernels\": [\n{\"kernel_name\": \"a\", \"device\": -1, \"total_ms\": 1}]}",
			"kernels.json:2: kernel \"a\": want device >= 0 and calls >= 0, got -1 and 0"},
		{"negative calls", "kernels.json", "{\"kernels\": [\n{\"kernel_name\": \"a\", \"calls\": -3, \"total_ms\": 1}]}",
			"kernels.json:2: kernel \"a\": want device >= 0 and calls >= 0, got 0 and -3"},
		{"sum past float64", "kernels.json", "{\"kernels\": [\n{\"kernel_name\": \"a\", \"total_ms\": 1e308},\n{\"kernel_name\": \"b\", \"total_ms\": 1e308}]}",
			"kernels.json:3: kernel \"b\": the kernels' total_ms sum past the largest number a float64 holds"},
		{"regions negative count", "ncu/regions/report.json", "{\"aggregate\": [\n{\"name\": \"prefill\", \"total_ms\": 1, \"kernel_count\": -1}]}",
			"report.json:2: region \"prefill\": want kernel_count >= 0, got -1"},
		{"regions syntax", "ncu/regions/report.json", "{\"aggregate\": [\n{\"name\": \"prefill\" \"total_ms\": 1}]}",
			"report.json:2: invalid character"},
		{"regions no total", "ncu/regions/report.json", "{\"aggregate\": [\n{\"name\": \"prefill\"}]}",
			"report.json:2: region \"prefill\": want total_ms"},
		{"stage1", "stage1/report.json", "{\"model\": {\"name\": \"m\"},\n \"stages\": {\"decode\": {\"ms\": [1, \"x\"]}}}",
			"report.json:2:"},
		{"mfu out of range", "summary.json", "{\"model\": \"x\",\n \"mfu\": {\"model\": 0.4,\n  \"decode\": 41.5}}",
			"summary.json:3: mfu.decode = 41.5: want a fraction 0..1 or null"},
		{"mfu wrong type", "summary.json", "{\"mfu\": {\n \"prefill\": \"high\"}}", "summary.json:2: json: cannot unmarshal"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := synth.Run(t, tiny, synth.WriteFile(c.rel, c.content))
			_, err := compare.Load(dir)
			require.Error(t, err)
			assert.Contains(t, err.Error(), filepath.Join(dir, filepath.FromSlash(c.rel)))
			assert.Contains(t, err.Error(), filepath.FromSlash(c.want))
		})
	}
}

// TestLoadSummaryStagesMalformed (issue 16, SYNTHETIC): a run without a
// workload report takes its stages from summary.json: a stage listed
// twice, or repeats summing past float64, are refused.
func TestLoadSummaryStagesMalformed(t *testing.T) {
	for content, want := range map[string]string{
		`{"stages": {"rows": [{"name": "decode", "ms": [1]}, {"name": "decode", "ms": [2]}]}}`: `stages.rows: stage "decode" is listed twice`,
		`{"stages": {"rows": [{"name": "decode", "ms": [1e308, 1e308]}]}}`:                     `stages.rows: stage "decode": its ms sum past the largest number a float64 holds`,
	} {
		dir := synth.Run(t, tiny, synth.Remove("stage1/report.json"), synth.WriteFile("summary.json", content))
		_, err := compare.Load(dir)
		require.ErrorContains(t, err, want)
	}
}

func TestLoadMFU(t *testing.T) {
	dir := synth.Run(t, tiny, synth.WriteFile("summary.json", `{"run_id": "x", "mfu": {"model": 0.41, "prefill": null, "decode": 0.0}}`))
	s, err := compare.Load(dir)
	require.NoError(t, err)
	require.NotNil(t, s.MFU)
	assert.InDelta(t, 0.41, *s.MFU.Model, 0)
	assert.Nil(t, s.MFU.Prefill, "null stays not available")
	require.NotNil(t, s.MFU.Decode)
	assert.Zero(t, *s.MFU.Decode)

	dir = synth.Run(t, tiny, synth.WriteFile("summary.json", `{"run_id": "x"}`))
	s, err = compare.Load(dir)
	require.NoError(t, err)
	assert.Nil(t, s.MFU, "no mfu key: not available")
}

func TestLoadRegionsWithoutAggregate(t *testing.T) {
	// As deepprof regions --aggregate=false writes it: regions per scope only.
	dir := synth.Run(t, tiny, synth.WriteFile("ncu/regions/report.json", `{
  "aggregate": [],
  "scopes": [
    {"process_id": 1, "device": 0, "regions": [{"name": "prefill", "total_ms": 1.5, "kernel_count": 3}]},
    {"process_id": 2, "device": 0, "regions": [{"name": "prefill", "total_ms": 0.5, "kernel_count": 1},
                                               {"name": "decode_all", "total_ms": 2, "kernel_count": 4}]}
  ]
}`))
	s, err := compare.Load(dir)
	require.NoError(t, err)
	assert.Equal(t, []compare.RegionTotals{{Name: "prefill", TotalMS: 2, KernelCount: 4}, {Name: "decode_all", TotalMS: 2, KernelCount: 4}}, s.Regions)
}

// TestLoadProgramWithoutReport: a program that wrote no workload report
// (fixtures/runs/any-python-script) is compared on the stages summary.json
// has from its NVTX ranges, with the statistic summary.json gives them,
// and a diff with itself is complete.
func TestLoadProgramWithoutReport(t *testing.T) {
	const run = "../../fixtures/runs/any-python-script"
	require.NoFileExists(t, filepath.Join(run, "stage1/report.json"))
	s, err := compare.Load(run)
	require.NoError(t, err)
	assert.True(t, s.Has(facts.PartStages))
	assert.Contains(t, s.Read, "summary.json (stages)")

	var sum struct {
		Environment struct {
			GPU string `json:"gpu"`
		} `json:"environment"`
		Stages struct {
			Rows []struct {
				Name   string  `json:"name"`
				MeanMS float64 `json:"mean_ms"`
				N      int     `json:"n"`
			} `json:"rows"`
		} `json:"stages"`
	}
	b, err := os.ReadFile(filepath.Join(run, "summary.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &sum))
	require.Len(t, s.Stages, len(sum.Stages.Rows))
	mean := map[string]float64{}
	for _, r := range sum.Stages.Rows {
		mean[r.Name] = r.MeanMS
	}
	for _, st := range s.Stages {
		assert.Equal(t, mean[st.Name], st.MeanMS, "one statistic: %s", st.Name)
	}
	assert.Equal(t, sum.Environment.GPU, s.Device)

	r := compare.Compare(s, s, compare.Uniform(compare.DefaultThreshold))
	assert.False(t, r.Incomplete)
	assert.False(t, r.Regression)
}

// TestLoadAloneStages (issue 36): a run with no plain run whose CUPTI
// report has program-alone repeats (timed after the library detached) is
// compared on those: the program's speed, as stage 1's is elsewhere, not
// the recorded repeats' (summary.json's rows).
func TestLoadAloneStages(t *testing.T) {
	t.Parallel()
	const dir = "../../fixtures/runs/h100-default-alone-detached"
	s, err := compare.Load(dir)
	require.NoError(t, err)
	assert.Contains(t, s.Read, compare.AloneStagesRead)
	assert.True(t, s.Has(facts.PartStages))
	var rep struct {
		Stages map[string]struct{ MS []float64 } `json:"stages"`
		Alone  struct {
			Stages map[string]struct{ MS []float64 } `json:"stages"`
		} `json:"alone"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "timeline/report.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &rep))
	require.NotEmpty(t, s.Stages)
	for _, st := range s.Stages {
		want := rep.Alone.Stages[st.Name].MS
		require.NotEmpty(t, want, st.Name)
		assert.Equal(t, model.NewStage(st.Name, want, nil), st, "%s: the alone repeats", st.Name)
		assert.NotEqual(t, model.NewStage(st.Name, rep.Stages[st.Name].MS, nil), st, "%s: not the recorded repeats", st.Name)
	}
}
