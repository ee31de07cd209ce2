package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sebdah/goldie/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/synth"
)

// TestOneStatistic is the "one statistic" contract (docs/development.md,
// "Regression gates"; docs/run-directory.md, the summary): for the same
// run, the stakeholder summary (summary.json's stages.rows[].mean_ms, as
// deepprof report rebuilds it), deepprof baseline (stages[].mean_ms) and
// deepprof diff (stages[].a.mean_ms) give each stage the same mean, sd and
// count, with a warm-up repeat dropped by all three. No recorded run has a
// warm-up (the workload warms up), so the run is a SYNTHETIC copy of
// tiny-llama with its first decode repeat made 10x slower, as a run that did
// not warm up has; its stakeholder_summary.md is compared with
// golden/cli/report-synthetic-decode-warmup.stakeholder_summary.md.
// Regenerate with: go test ./cmd/deepprof -run TestOneStatistic -update
func TestOneStatistic(t *testing.T) {
	t.Parallel()
	dir := synth.Run(t, tinyRun, synth.ScaleRepeat("decode", 0, 10))
	rec := synth.Read(t, dir)
	require.Len(t, rec.Stages["decode"], 3)

	rows := reportedStages(t, dir)
	fromBaseline := baselineStages(t, dir)

	out, _, err := runCmd([]string{"diff", "--format", "json", dir, dir}, "")
	require.NoError(t, err)
	var cmp struct {
		Stages []struct {
			Name string         `json:"name"`
			A    *model.Summary `json:"a"`
		} `json:"stages"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &cmp))

	fromSummary, fromDiff := map[string]model.Summary{}, map[string]model.Summary{}
	for _, r := range rows {
		fromSummary[r.Name] = r.Summary
	}
	for _, r := range cmp.Stages {
		require.NotNil(t, r.A, r.Name)
		fromDiff[r.Name] = *r.A
	}
	require.Len(t, fromSummary, len(rec.Stages))
	for name, ms := range rec.Stages {
		want := model.Summarize(ms)
		assert.Equal(t, want, fromSummary[name], "summary.json, stage %s", name)
		assert.Equal(t, want, fromBaseline[name], "deepprof baseline, stage %s", name)
		assert.Equal(t, want, fromDiff[name], "deepprof diff, stage %s", name)
	}
	dec := fromSummary["decode"]
	require.NotNil(t, dec.WarmupMS, "the slow first decode repeat is dropped")
	assert.Equal(t, 2, dec.N)
	assert.InDelta(t, (rec.Stages["decode"][1]+rec.Stages["decode"][2])/2, dec.MeanMS, 1e-9, "the mean of the other two")
	assert.Nil(t, fromSummary["prefill"].WarmupMS, "prefill keeps its repeats")

	md, err := os.ReadFile(filepath.Join(dir, "stakeholder_summary.md"))
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(string(md), "- decode: first of 3 repeats"), "the Stages table says once which repeat was dropped and why")
	g := goldie.New(t, goldie.WithFixtureDir("../../golden/cli"), goldie.WithNameSuffix(""))
	g.Assert(t, "report-synthetic-decode-warmup.stakeholder_summary.md", md)
}

// TestOneStatisticCuptiStages: the same contract for runs whose stages
// come from the CUPTI run's report, recorded: beside stage 1
// (cupti-tiny-llama-11pairs; h100x2-two-nodes-merged, whose CUPTI run
// dropped a warm-up) or with repeats after the library detached and no
// stage 1 (h100-default-alone-detached). summary.json's rows are
// the program alone's, as baseline and diff take them; the CUPTI run's own
// repeats stand beside them (recorded).
func TestOneStatisticCuptiStages(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"cupti-tiny-llama-11pairs", "h100-default-alone-detached", "h100x2-two-nodes-merged"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), name)
			require.NoError(t, synth.RawCopy(dir, filepath.Join("../../fixtures/runs", name)))
			rows := reportedStages(t, dir)
			fromBaseline := baselineStages(t, dir)
			require.NotEmpty(t, rows)
			require.Len(t, fromBaseline, len(rows), "the same stages in both")
			for _, r := range rows {
				assert.Equal(t, fromBaseline[r.Name], r.Summary, "stage %s: summary.json and deepprof baseline", r.Name)
				require.NotNil(t, r.Recorded, "stage %s: the CUPTI run's own repeats beside", r.Name)
				assert.NotEqual(t, r.MeanMS, r.Recorded.MeanMS, "stage %s", r.Name)
			}
		})
	}
}

// stageRow is a stage row of summary.json, as the contract names it.
type stageRow struct {
	Name string `json:"name"`
	model.Summary
	Recorded *model.Summary `json:"recorded"`
}

// reportedStages rebuilds the run dir (deepprof report) and gives its
// summary.json's stage rows.
func reportedStages(t *testing.T, dir string) []stageRow {
	t.Helper()
	_, _, err := runCmd([]string{"report", dir}, "")
	require.NoError(t, err)
	data, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	require.NoError(t, err)
	var sum struct {
		Stages struct {
			Rows []stageRow `json:"rows"`
		} `json:"stages"`
	}
	require.NoError(t, json.Unmarshal(data, &sum))
	return sum.Stages.Rows
}

// baselineStages are deepprof baseline's stages of the run dir, by name.
func baselineStages(t *testing.T, dir string) map[string]model.Summary {
	t.Helper()
	out, _, err := runCmd([]string{"baseline", dir}, "")
	require.NoError(t, err)
	var base struct {
		Stages []struct {
			Name string `json:"name"`
			model.Summary
		} `json:"stages"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &base))
	by := map[string]model.Summary{}
	for _, r := range base.Stages {
		by[r.Name] = r.Summary
	}
	return by
}
