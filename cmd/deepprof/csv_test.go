package main

import (
	"encoding/csv"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCSVRoundTrip (issue 38): kernels --format csv of every recorded raw
// export reads back through encoding/csv as the JSON output's table: a
// header, a row a kernel, names whole, numbers that parse to the JSON's.
// regions --format csv reads back with a row a region of each scope and
// of the aggregate.
func TestCSVRoundTrip(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("../../fixtures/ncu/*/raw.csv")
	require.NoError(t, err)
	runs, err := filepath.Glob("../../fixtures/runs/*/ncu/raw.csv.gz")
	require.NoError(t, err)
	files = append(files, runs...)
	require.NotEmpty(t, files)
	for _, f := range files {
		out, _, err := runCmd([]string{"kernels", "--format", "csv", f}, "")
		require.NoError(t, err, f)
		rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
		require.NoError(t, err, f)
		js, _, err := runCmd([]string{"kernels", "--format", "json", f}, "")
		require.NoError(t, err, f)
		var want struct {
			Kernels []struct {
				Name    string  `json:"kernel_name"`
				Calls   int64   `json:"calls"`
				TotalMS float64 `json:"total_ms"`
			} `json:"kernels"`
		}
		require.NoError(t, json.Unmarshal([]byte(js), &want), f)
		require.Len(t, rows, len(want.Kernels)+1, f)
		assert.Equal(t, "kernel_name", rows[0][0])
		for i, k := range want.Kernels {
			r := rows[i+1]
			assert.Equal(t, k.Name, r[0], f)
			calls, err := strconv.ParseInt(r[3], 10, 64)
			require.NoError(t, err)
			assert.Equal(t, k.Calls, calls, f)
			ms, err := strconv.ParseFloat(r[4], 64)
			require.NoError(t, err)
			assert.Equal(t, k.TotalMS, ms, "%s: total_ms read back exactly", f)
		}

		out, _, err = runCmd([]string{"regions", "--format", "csv", f}, "")
		require.NoError(t, err, f)
		rrows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
		require.NoError(t, err, f)
		js, _, err = runCmd([]string{"regions", "--format", "json", f}, "")
		require.NoError(t, err, f)
		var rep struct {
			Aggregate []json.RawMessage `json:"aggregate"`
			Scopes    []struct {
				Regions []json.RawMessage `json:"regions"`
			} `json:"scopes"`
		}
		require.NoError(t, json.Unmarshal([]byte(js), &rep), f)
		n := len(rep.Aggregate)
		for _, sc := range rep.Scopes {
			n += len(sc.Regions)
		}
		assert.Len(t, rrows, n+1, f)
	}
}

// TestDiffCSV (issue 38): diff --format csv of a recorded run against its
// baseline, and of the recorded lease pair, reads back through encoding/csv
// with a row a compared stage, kernel and region, each side's value the
// JSON output's, unrounded, and each stage's cause the JSON's (issue 51:
// the lease pair's stages are the host's).
func TestDiffCSV(t *testing.T) {
	t.Parallel()
	diffCSV(t, "../../golden/perf/tiny-llama.json", "../../fixtures/runs/tiny-llama")
	stages := diffCSV(t, "../../fixtures/runs/tiny-llama", "../../fixtures/runs/tiny-llama-lease2")
	require.Len(t, stages, 2)
	for _, r := range stages {
		assert.Equal(t, []string{"host", "host"}, []string{r[11], r[12]}, "%s: verdict and cause", r[1])
	}
}

// diffCSV checks diff --format csv of run B against run A against the JSON
// output, and returns its stage rows.
func diffCSV(t *testing.T, runA, runB string) [][]string {
	t.Helper()
	args := []string{runA, runB}
	out, _, err := runCmd(append([]string{"diff", "--format", "csv"}, args...), "")
	require.NoError(t, err)
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	require.NoError(t, err)
	require.Equal(t, []string{"part", "name", "device", "status", "a", "b", "unit", "delta", "delta_pct", "p_value", "low_power", "verdict", "cause"}, rows[0])
	js, _, err := runCmd(append([]string{"diff", "--format", "json"}, args...), "")
	require.NoError(t, err)
	var res struct {
		Stages []struct {
			Name string `json:"name"`
			A    struct {
				MeanMS float64 `json:"mean_ms"`
			} `json:"a"`
			Cause string `json:"cause"`
		} `json:"stages"`
		Kernels []struct {
			Name string `json:"kernel_name"`
			A    *struct {
				TotalMS float64 `json:"total_ms"`
			} `json:"a"` // null: the kernel is not in A's list
		} `json:"kernels"`
		Regions []json.RawMessage `json:"regions"`
		MFU     []struct {
			Name string   `json:"name"`
			A    *float64 `json:"a"`
		} `json:"mfu"`
	}
	require.NoError(t, json.Unmarshal([]byte(js), &res))
	byPart := map[string][][]string{}
	for _, r := range rows[1:] {
		byPart[r[0]] = append(byPart[r[0]], r)
	}
	require.Len(t, byPart["stages"], len(res.Stages))
	require.Len(t, byPart["kernels"], len(res.Kernels))
	assert.Len(t, byPart["regions"], len(res.Regions))
	require.Len(t, byPart["mfu"], len(res.MFU))
	for i, m := range res.MFU {
		row := byPart["mfu"][i]
		assert.Equal(t, []string{m.Name, "fraction"}, []string{row[1], row[6]}, "MFU as summary.json holds it")
		if m.A != nil {
			a, err := strconv.ParseFloat(row[4], 64)
			require.NoError(t, err)
			assert.Equal(t, *m.A, a, m.Name)
		}
	}
	for i, s := range res.Stages {
		assert.Equal(t, s.Name, byPart["stages"][i][1])
		a, err := strconv.ParseFloat(byPart["stages"][i][4], 64)
		require.NoError(t, err)
		assert.Equal(t, s.A.MeanMS, a, s.Name)
		assert.Equal(t, s.Cause, byPart["stages"][i][12], s.Name)
	}
	for i, k := range res.Kernels {
		assert.Equal(t, k.Name, byPart["kernels"][i][1], "the name whole")
		assert.Empty(t, byPart["kernels"][i][12], "a cause is a stage's")
		if k.A == nil {
			assert.Empty(t, byPart["kernels"][i][4], "no value where a side has none")
			continue
		}
		a, err := strconv.ParseFloat(byPart["kernels"][i][4], 64)
		require.NoError(t, err)
		assert.Equal(t, k.A.TotalMS, a, k.Name)
	}
	return byPart["stages"]
}
