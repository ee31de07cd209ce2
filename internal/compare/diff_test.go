package compare_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/compare"
	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/render"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
	"github.com/llm-perf-opt/deepprof/internal/synth"
)

func load(t *testing.T, dir string) *compare.Summary {
	t.Helper()
	s, err := compare.Load(dir)
	require.NoError(t, err)
	return s
}

func verdicts(r *facts.DiffResult) map[facts.Verdict]int {
	m := map[facts.Verdict]int{}
	for _, s := range r.Stages {
		m[s.Verdict]++
	}
	for _, k := range r.Kernels {
		m[k.Verdict]++
	}
	for _, g := range r.Regions {
		m[g.Verdict]++
	}
	return m
}

func TestCompareWithItself(t *testing.T) {
	for _, run := range recordedRuns {
		t.Run(filepath.Base(run), func(t *testing.T) {
			rec := synth.Read(t, run)
			s := load(t, run)
			r := compare.Compare(s, s, compare.Uniform(compare.DefaultThreshold))
			assert.False(t, r.Regression)
			assert.False(t, r.Incomplete)
			assert.Empty(t, r.Regressions)
			assert.Empty(t, r.Improvements)
			regs := rec.Regions
			if rec.EveryLaunchRegions != nil {
				regs = rec.EveryLaunchRegions
				assert.Equal(t, compare.RegionsEveryLaunch, r.RegionsSource)
			}
			assert.Equal(t, map[facts.Verdict]int{facts.Unchanged: len(rec.Stages) + len(rec.Kernels) + len(regs)}, verdicts(r))
			require.Len(t, r.MFU, 3)
			for _, m := range r.MFU {
				want := rec.MFUFigure(m.Name)
				assert.Equal(t, want, m.A, m.Name)
				if want == nil {
					assert.Equal(t, facts.NotAvail, m.Verdict, "%s: null in summary.json: not available, never 0", m.Name)
					continue
				}
				assert.Equal(t, facts.Unchanged, m.Verdict, m.Name)
				require.NotNil(t, m.DeltaPct, m.Name)
				assert.Zero(t, *m.DeltaPct, m.Name)
			}
			// Even at a zero threshold: identical numbers never move.
			r = compare.Compare(s, s, compare.Uniform(0))
			assert.False(t, r.Regression)
			assert.Empty(t, r.Improvements)
		})
	}
}

// The new recordings have MFU (the GPU is known): tiny-llama's three figures
// are compared, and unchanged against themselves.
func TestCompareRecordedMFU(t *testing.T) {
	rec := synth.Read(t, tiny)
	require.NotNil(t, rec.MFU, "tiny-llama has summary.json with mfu")
	s := load(t, tiny)
	r := compare.Compare(s, s, compare.Uniform(compare.DefaultThreshold))
	for _, m := range r.MFU {
		require.NotNil(t, rec.MFUFigure(m.Name), m.Name)
		assert.Equal(t, facts.Unchanged, m.Verdict, m.Name)
		assert.Empty(t, m.Why, m.Name)
	}
}

// A SYNTHETIC run: tiny-llama without summary.json. MFU is not available,
// never 0, and its absence fails nothing.
func TestCompareNoSummary(t *testing.T) {
	a := load(t, tiny)
	b := load(t, synth.Run(t, tiny, synth.Remove(rundir.SummaryJSON)))
	require.Nil(t, b.MFU)
	for _, c := range []struct {
		name string
		a, b *compare.Summary
		why  string
	}{
		{"neither", b, b, "neither run has summary.json with mfu"},
		{"B lacks it", a, b, "B has no summary.json with mfu"},
		{"A lacks it", b, a, "A has no summary.json with mfu"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := compare.Compare(c.a, c.b, compare.Uniform(compare.DefaultThreshold))
			assert.False(t, r.Regression)
			assert.False(t, r.Incomplete, "MFU is optional")
			require.Len(t, r.MFU, 3)
			for _, m := range r.MFU {
				assert.Equal(t, facts.NotAvail, m.Verdict, m.Name)
				assert.Equal(t, c.why, m.Why, m.Name)
				assert.Nil(t, m.DeltaPct, m.Name)
			}
			// Regions: every launch only when both runs have them, never a
			// run's full count against the other's sample.
			assert.Equal(t, compare.RegionsDeepSample, r.RegionsSource)
		})
	}
	r := compare.Compare(a, a, compare.Uniform(compare.DefaultThreshold))
	assert.Equal(t, compare.RegionsEveryLaunch, r.RegionsSource)
}

// A SYNTHETIC run: tiny-llama with its top kernel 1.5x slower.
func TestCompareSlowedKernel(t *testing.T) {
	top := synth.Read(t, tiny).Kernels[0]
	a := load(t, tiny)
	b := load(t, synth.Run(t, tiny, synth.ScaleKernel(0, 1.5)))
	r := compare.Compare(a, b, compare.Uniform(compare.DefaultThreshold))
	require.True(t, r.Regression)
	require.Len(t, r.Regressions, 1)
	assert.Contains(t, r.Regressions[0], fmt.Sprintf("kernel %s (device %d)", top.Name, top.Device))
	assert.Contains(t, r.Regressions[0], "+50.0%")
	k := r.Kernels[0]
	assert.Equal(t, top.Name, k.Name)
	assert.Equal(t, facts.Matched, k.Status)
	assert.Equal(t, facts.Regression, k.Verdict)
	assert.InDelta(t, 50, *k.DeltaPct, 1e-6)

	// The other way round it is an improvement: reported, not failing.
	r = compare.Compare(b, a, compare.Uniform(compare.DefaultThreshold))
	assert.False(t, r.Regression)
	require.Len(t, r.Improvements, 1)
	assert.Equal(t, facts.Improvement, r.Kernels[0].Verdict)

	// Under a threshold above the change it is unchanged.
	r = compare.Compare(a, b, compare.Uniform(0.6))
	assert.False(t, r.Regression)
}

// A SYNTHETIC run: tiny-llama with its top kernel renamed.
func TestCompareRenamedKernel(t *testing.T) {
	rec := synth.Read(t, tiny)
	top := rec.Kernels[0]
	const renamed = "nvjet_sm90_renamed|<b>*x*</b>"
	a := load(t, tiny)
	b := load(t, synth.Run(t, tiny, synth.RenameKernel(0, renamed)))
	r := compare.Compare(a, b, compare.Uniform(compare.DefaultThreshold))
	byName := map[string]facts.DiffKernel{}
	for _, k := range r.Kernels {
		byName[k.Name] = k
	}
	assert.Equal(t, facts.Disappeared, byName[top.Name].Status)
	app := byName[renamed]
	assert.Equal(t, facts.Appeared, app.Status)
	// Appeared with its share of A's listed kernel time; beyond 5% of it, a
	// regression.
	share := top.TotalMS / rec.KernelMS()
	require.Greater(t, share, compare.DefaultThreshold, "the fixture's top kernel has more than 5%% of its kernel time")
	require.NotNil(t, app.ShareOfA)
	assert.InDelta(t, share, *app.ShareOfA, 1e-6)
	assert.Equal(t, facts.Regression, app.Verdict)
	assert.True(t, r.Regression)
	require.Len(t, r.Regressions, 1)
	assert.Contains(t, r.Regressions[0], fmt.Sprintf("kernel %s (device %d) appeared: ", renamed, top.Device))
	assert.Contains(t, r.Regressions[0], fmt.Sprintf("ms total, %.1f%% of A's kernel time", 100**app.ShareOfA))

	// A kernel name with Markdown in it stays in its cell.
	var md bytes.Buffer
	require.NoError(t, render.DiffMarkdown(&md, r))
	rows := 0
	for _, line := range strings.Split(md.String(), "\n") {
		if strings.Contains(line, "renamed") && strings.HasPrefix(line, "| ") {
			rows++
			assert.Equal(t, 9, cells(line), line)
			assert.Contains(t, line, `nvjet\_sm90\_renamed\|\<b\>\*x\*\</b\>`)
		}
	}
	assert.Equal(t, 1, rows, "the kernels table has the renamed kernel's row")
}

// cells counts the cell separators of a table row that are not escaped.
func cells(row string) int {
	n := 0
	for i := 0; i < len(row); i++ {
		if row[i] == '\\' {
			i++
			continue
		}
		if row[i] == '|' {
			n++
		}
	}
	return n
}

func TestCompareKernelListCut(t *testing.T) {
	// Two top-2 lists: "small" and "other" are each no slower than the
	// other run's smallest listed kernel.
	a := &compare.Summary{Kernels: []model.KernelTotals{{Name: "big", TotalMS: 10}, {Name: "small", TotalMS: 0.9}}, KernelMS: 11}
	b := &compare.Summary{Kernels: []model.KernelTotals{{Name: "big", TotalMS: 10}, {Name: "other", TotalMS: 0.9}}, KernelMS: 11}
	r := compare.Compare(a, b, compare.Uniform(0.05))
	assert.False(t, r.Regression, "a kernel under A's smallest may have been under A's top-N cut")
	byName := map[string]facts.DiffKernel{}
	for _, k := range r.Kernels {
		byName[k.Name] = k
	}
	assert.Equal(t, facts.LeftList, byName["small"].Status, "no slower than B's smallest listed")
	assert.Equal(t, facts.EnteredList, byName["other"].Status)

	// On another device, a kernel of the same name is another kernel.
	b.Kernels = append(b.Kernels, model.KernelTotals{Name: "big", Device: 1, TotalMS: 5})
	r = compare.Compare(a, b, compare.Uniform(0.05))
	assert.True(t, r.Regression)
	assert.Contains(t, r.Regressions[0], "kernel big (device 1) appeared: 5.00 ms total, 45.5% of A's kernel time")
}

// A SYNTHETIC run: tiny-llama without kernels.json.
func TestCompareMissingKernels(t *testing.T) {
	rec := synth.Read(t, tiny)
	a := load(t, tiny)
	b := load(t, synth.Run(t, tiny, synth.Remove("kernels.json")))
	r := compare.Compare(a, b, compare.Uniform(compare.DefaultThreshold))
	assert.False(t, r.Regression)
	assert.True(t, r.Incomplete)
	require.Len(t, r.Missing, 1)
	assert.Equal(t, "B", r.Missing[0].Run)
	assert.Equal(t, facts.PartKernels, r.Missing[0].Part)
	assert.Empty(t, r.Kernels)
	assert.Len(t, r.Stages, len(rec.Stages), "the other parts are compared")
	assert.Len(t, r.Regions, len(rec.Regions))
	var md bytes.Buffer
	require.NoError(t, render.DiffMarkdown(&md, r))
	assert.Contains(t, md.String(), "**Incomplete: no regression in what could be compared.**")
	assert.Contains(t, md.String(), "Not compared: B has no ")
}

func stage(name string, ms ...float64) model.StageTimes {
	return model.NewStage(name, ms, nil)
}

func TestCompareStages(t *testing.T) {
	// SYNTHETIC repeats (ms) with a slow first one: decode as an earlier
	// tiny-llama recording had it, before its workload warmed up (the fixture
	// has been recorded again since).
	warm := []float64{118.67505100000386, 11.11253199999851, 11.272524999995426}
	// tiny-llama's recorded decode repeats, as its fixture has them now.
	recorded := synth.Read(t, tiny).Stages["decode"]
	require.GreaterOrEqual(t, len(recorded), 2)
	scaled := func(ms []float64, f float64) []float64 {
		out := make([]float64, len(ms))
		for i, v := range ms {
			out[i] = v * f
		}
		return out
	}
	th := compare.Uniform(0.05)
	for _, c := range []struct {
		name string
		a, b model.StageTimes
		want facts.Verdict
	}{
		{"same", stage("decode", warm...), stage("decode", warm...), facts.Unchanged},
		{"3% slower: under the threshold", stage("decode", warm...), stage("decode", scaled(warm, 1.03)...), facts.Unchanged},
		{"20% slower: significant once the warm-up is dropped", stage("decode", warm...), stage("decode", scaled(warm, 1.2)...), facts.Regression},
		{"20% faster", stage("decode", warm...), stage("decode", scaled(warm, 1/1.2)...), facts.Improvement},
		{"recorded: same", stage("decode", recorded...), stage("decode", recorded...), facts.Unchanged},
		{"recorded: 3% slower", stage("decode", recorded...), stage("decode", scaled(recorded, 1.03)...), facts.Unchanged},
		{"recorded: 20% slower", stage("decode", recorded...), stage("decode", scaled(recorded, 1.2)...), facts.Regression},
		{"recorded: 20% faster", stage("decode", recorded...), stage("decode", scaled(recorded, 1/1.2)...), facts.Improvement},
		{"beyond the threshold, within the noise", stage("decode", 10, 12, 14, 11), stage("decode", 12, 16, 11, 14), facts.Noise},
		{"one repeat: threshold only", stage("decode", 10), stage("decode", 11), facts.Regression},
		{"only in B", stage("prefill", 1), stage("decode", 1), facts.Reported},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := compare.Compare(&compare.Summary{Stages: []model.StageTimes{c.a}}, &compare.Summary{Stages: []model.StageTimes{c.b}}, th)
			got := r.Stages[len(r.Stages)-1]
			assert.Equal(t, c.want, got.Verdict)
			assert.Equal(t, c.want == facts.Regression, r.Regression)
		})
	}

	// Kept, the warm-up repeat would hide even a 50% slowdown: with it, the
	// spread is larger than the mean.
	var sum, ss float64
	for _, v := range warm {
		sum += v
	}
	mean := sum / float64(len(warm))
	for _, v := range warm {
		ss += (v - mean) * (v - mean)
	}
	sd := math.Sqrt(ss / float64(len(warm)-1))
	require.Greater(t, sd, mean)
	a := model.Summary{N: len(warm), MeanMS: mean, SDMS: sd}
	b := model.Summary{N: len(warm), MeanMS: 1.5 * mean, SDMS: 1.5 * sd}
	assert.Greater(t, model.Welch(a, b), 0.5)
}

func TestCompareMFU(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	a := &compare.Summary{MFU: &compare.MFU{Model: f(0.40), Prefill: f(0.50), Decode: nil}}
	b := &compare.Summary{MFU: &compare.MFU{Model: f(0.39), Prefill: f(0.40), Decode: f(0.1)}}
	r := compare.Compare(a, b, compare.Uniform(0.05))
	require.Len(t, r.MFU, 3)
	assert.Equal(t, facts.Unchanged, r.MFU[0].Verdict, "-2.5% relative")
	assert.Equal(t, facts.Regression, r.MFU[1].Verdict, "-20% relative")
	assert.Equal(t, facts.NotAvail, r.MFU[2].Verdict)
	assert.Equal(t, "A's mfu.decode is null", r.MFU[2].Why)
	assert.Equal(t, []string{"MFU prefill: 50% → 40% (-20.0%)"}, r.Regressions)

	r = compare.Compare(a, &compare.Summary{}, compare.Uniform(0.05))
	assert.False(t, r.Regression, "MFU missing in B is not available, not a drop to 0")
	assert.Equal(t, "B has no summary.json with mfu", r.MFU[0].Why)
}

func TestResultJSON(t *testing.T) {
	rec := synth.Read(t, tiny)
	s := load(t, tiny)
	var buf bytes.Buffer
	require.NoError(t, compare.JSON(compare.Compare(s, s, compare.Uniform(0.05)), &buf))
	var got map[string]any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &got))
	assert.Equal(t, false, got["regression"])
	assert.Equal(t, "welch", got["noise_test"])
	assert.Equal(t, []any{}, got["regressions"])
	assert.Equal(t, rec.RunID, got["a"].(map[string]any)["run_id"])
	mfu := got["mfu"].([]any)[0].(map[string]any)
	require.NotNil(t, rec.MFU.Model)
	assert.Equal(t, "model", mfu["name"])
	assert.Equal(t, *rec.MFU.Model, mfu["a"], "summary.json's figure, as it is")
	assert.Equal(t, string(facts.Unchanged), mfu["verdict"])
	assert.NotContains(t, buf.String(), `\u003c`, "kernel names are written as they are")

	// A SYNTHETIC run without summary.json: not available is null, never 0.
	s = load(t, synth.Run(t, tiny, synth.Remove(rundir.SummaryJSON)))
	buf.Reset()
	require.NoError(t, compare.JSON(compare.Compare(s, s, compare.Uniform(0.05)), &buf))
	got = nil
	require.NoError(t, json.Unmarshal(buf.Bytes(), &got))
	for _, m := range got["mfu"].([]any) {
		m := m.(map[string]any)
		assert.Contains(t, m, "a")
		assert.Nil(t, m["a"], "not available is null, never 0")
		assert.Nil(t, m["b"])
		assert.Equal(t, string(facts.NotAvail), m["verdict"])
	}
}

// TestCompareCollectiveReported: the 2-GPU recording's rank-1 all-reduce
// made 50 % slower (SYNTHETIC, synth.ScaleKernel) is reported, not a
// regression: a collective's time holds its rank's wait for the others.
// A compute kernel slowed the same way still is one.
func TestCompareCollectiveReported(t *testing.T) {
	const tp2 = "../../fixtures/runs/h200x2-tp2-lockstep"
	top := synth.Read(t, tp2).Kernels[0]
	require.Contains(t, top.Name, "ncclDevKernel_AllReduce")
	a := load(t, tp2)
	b := load(t, synth.Run(t, tp2, synth.ScaleKernel(0, 1.5)))
	r := compare.Compare(a, b, compare.Uniform(compare.DefaultThreshold))
	assert.False(t, r.Regression, "%v", r.Regressions)
	assert.Equal(t, facts.Reported, r.Kernels[0].Verdict)
	assert.Contains(t, strings.Join(r.Notes, "\n"), fmt.Sprintf("kernel %s (device %d) is a collective", top.Name, top.Device))

	gemm := 2 // the third row: the first compute kernel
	require.NotContains(t, synth.Read(t, tp2).Kernels[gemm].Name, "nccl")
	b = load(t, synth.Run(t, tp2, synth.ScaleKernel(gemm, 1.5)))
	r = compare.Compare(a, b, compare.Uniform(compare.DefaultThreshold))
	assert.True(t, r.Regression)
}

// TestDiffNamesEachSidesStages (issue 36): a run of stage 1 against one
// whose stages are its detached CUPTI run's alone repeats says where each
// side's stages come from.
func TestDiffNamesEachSidesStages(t *testing.T) {
	t.Parallel()
	a, err := compare.Load("../../fixtures/runs/h100-tiny-llama-one-each")
	require.NoError(t, err)
	b, err := compare.Load("../../fixtures/runs/h100-default-alone-detached")
	require.NoError(t, err)
	var md bytes.Buffer
	require.NoError(t, render.DiffMarkdown(&md, compare.Compare(a, b, compare.Uniform(compare.DefaultThreshold))))
	assert.Contains(t, md.String(), "Stages, ms per repeat: mean ± sd (n); A's from stage1/report.json, B's from timeline/report.json (alone: repeats after the library detached).")
}
