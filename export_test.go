package deepprof_test

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llm-perf-opt/deepprof/internal/model"

	"github.com/sebdah/goldie/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/ncu"
	"github.com/llm-perf-opt/deepprof/internal/render"
)

// dumpLaunches is how many parsed launches of each export the golden dump shows.
const dumpLaunches = 3

// ncuFixtures lists every recorded ncu CSV export under fixtures/ncu.
func ncuFixtures(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, pat := range []string{"fixtures/ncu/*/*.csv", "fixtures/ncu/*/*.csv.gz"} {
		m, err := filepath.Glob(pat)
		require.NoError(t, err)
		out = append(out, m...)
	}
	require.NotEmpty(t, out, "no fixtures found: run the tests from the repository root")
	return out
}

func openFixture(t *testing.T, path string) *ncu.Reader {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return ncu.NewReader(f, path, ncu.Options{})
}

// TestExportGoldens runs every recorded export through the reader and the
// kernel table: a dump of the first parsed launches, kernels.md and
// kernels.json (or, for an export without durations, the error) are compared
// with golden/export/. Regenerate with: go test . -run TestExportGoldens -update
func TestExportGoldens(t *testing.T) {
	t.Parallel()
	for _, path := range ncuFixtures(t) {
		rel := strings.TrimPrefix(filepath.ToSlash(path), "fixtures/ncu/")
		t.Run(rel, func(t *testing.T) {
			g := goldie.New(t, goldie.WithFixtureDir("golden/export"), goldie.WithNameSuffix(""))

			r := openFixture(t, path)
			var dump bytes.Buffer
			n := 0
			var total float64
			for r.Scan() {
				switch rec := r.Record().(type) {
				case *model.SyntaxError:
					t.Fatalf("real export has a bad row: %v", rec)
				case *model.Launch:
					if n < dumpLaunches {
						dump.WriteString(rec.String())
					}
					n++
					total += rec.Duration.Base
				}
			}
			require.NoError(t, r.Err())
			fmt.Fprintf(&dump, "== %s page, %d columns, %d launches, %s ns in all, %d line(s) before the header\n",
				r.Format(), len(r.Header()), n, strconvG(total), len(r.ToolLines()))
			g.Assert(t, rel+".launches.txt", dump.Bytes())

			tab, err := ncu.KernelTable(openFixture(t, path), path)
			if err != nil {
				g.Assert(t, rel+".kernels.err", []byte(err.Error()+"\n"))
				return
			}
			var md, js bytes.Buffer
			require.NoError(t, render.KernelsMarkdown(&md, tab))
			require.NoError(t, render.KernelsJSON(&js, tab, nil, nil))
			g.Assert(t, rel+".kernels.md", md.Bytes())
			g.Assert(t, rel+".kernels.json", js.Bytes())
		})
	}
}

func strconvG(f float64) string { return fmt.Sprintf("%.6g", f) }

func kernelTable(t *testing.T, path string) model.KernelTable {
	t.Helper()
	tab, err := ncu.KernelTable(openFixture(t, path), path)
	require.NoError(t, err)
	return tab
}

// TestSameReportThreePages reads one report exported three ways: the raw
// page, the raw page with --print-units base, and the details page (whose
// Duration is rounded to 0.01 us). They must give the same kernels and calls;
// raw and base the same totals; details totals within its rounding.
func TestSameReportThreePages(t *testing.T) {
	t.Parallel()
	dir := "fixtures/ncu/h200-llama-decode-basic/"
	raw := kernelTable(t, dir+"raw.csv")
	base := kernelTable(t, dir+"raw-units-base.csv")
	details := kernelTable(t, dir+"details.csv.gz")
	require.Equal(t, int64(412), raw.Launches)

	byName := func(tab model.KernelTable) map[string]model.KernelStats {
		m := map[string]model.KernelStats{}
		for _, k := range tab.Kernels {
			m[k.Name] = k
		}
		return m
	}
	b, d := byName(base), byName(details)
	require.Len(t, b, len(raw.Kernels))
	require.Len(t, d, len(raw.Kernels))
	for _, k := range raw.Kernels {
		require.Contains(t, b, k.Name)
		require.Contains(t, d, k.Name)
		assert.Equal(t, k.Calls, b[k.Name].Calls, k.Name)
		assert.Equal(t, k.Calls, d[k.Name].Calls, k.Name)
		assert.InDelta(t, k.TotalMS, b[k.Name].TotalMS, 1e-12, k.Name)
		// Each details Duration is rounded to 0.01 us: half of that per call.
		bound := float64(k.Calls) * 0.005e-3
		assert.InDelta(t, k.TotalMS, d[k.Name].TotalMS, bound, k.Name)
	}
	assert.InEpsilon(t, raw.TotalMS, details.TotalMS, 0.001, "details total within 0.1%")
	assert.InDelta(t, raw.TotalMS, base.TotalMS, 1e-12)
}

// TestLogFileCapture reads a --log-file capture (==PROF== lines before the
// header, ns units) of a second run of the same workload: the same kernels
// and calls as the report's raw page, its own durations.
func TestLogFileCapture(t *testing.T) {
	t.Parallel()
	dir := "fixtures/ncu/h200-llama-decode-basic/"
	r := openFixture(t, dir+"log-file.csv")
	tab, err := ncu.KernelTable(r, "log-file.csv")
	require.NoError(t, err)
	assert.Equal(t, []string{
		"==PROF== Connected to process 5375 (/usr/bin/python3.12)",
		"==PROF== Disconnected from process 5375",
	}, r.ToolLines())
	raw := kernelTable(t, dir+"raw.csv")
	require.Equal(t, raw.Launches, tab.Launches)
	calls := map[string]int64{}
	for _, k := range raw.Kernels {
		calls[k.Name] = k.Calls
	}
	for _, k := range tab.Kernels {
		assert.Equal(t, calls[k.Name], k.Calls, k.Name)
	}
	assert.NotEqual(t, raw.TotalMS, tab.TotalMS, "a second run has its own durations")
	assert.False(t, math.IsNaN(tab.TotalMS))
}
