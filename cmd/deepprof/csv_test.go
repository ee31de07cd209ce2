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
