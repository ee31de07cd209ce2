package render

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/regions"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
)

// hostileReport builds a report from synthetic launches whose range names
// try to leave the regions directory or break the Markdown.
func hostileReport(t *testing.T) *facts.RegionReport {
	t.Helper()
	names := []string{"..", "../../escape", "/abs", "a\x00b", "Prefill", "prefill", strings.Repeat("x/", 100),
		"# heading | cell *em* [link](http://x) <b>", ""}
	a, err := regions.New(regions.DefaultConfig())
	require.NoError(t, err)
	for i, n := range names {
		l := &model.Launch{ProcessID: int64(1 + i%2), Device: 0, Kernel: "k|<script>",
			Duration: model.Value{Base: float64(10 + i), Unit: "ns", Valid: true},
			NVTX:     &model.Stack{Levels: []model.Range{{Name: n}}}}
		require.NoError(t, a.Add("synthetic", l, false))
	}
	return a.Report("synthetic")
}

func TestWriteRegionsDirStaysInside(t *testing.T) {
	rep := hostileReport(t)
	parent := t.TempDir()
	dir := filepath.Join(parent, "regions")
	require.NoError(t, writeRegionsDir(dir, dir, rep))
	entries, err := os.ReadDir(parent)
	require.NoError(t, err)
	require.Len(t, entries, 1, "nothing written beside the regions directory")
	dirs := map[string]bool{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		rel, err := filepath.Rel(dir, p)
		require.NoError(t, err)
		require.True(t, rel == "." || filepath.IsLocal(rel), rel)
		if d.IsDir() && d.Name() == rundir.StagingDir {
			return filepath.SkipDir // the writer's own, swept by its caller
		}
		first, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
		assert.LessOrEqual(t, len(first), 80)
		if d.IsDir() && rel != "." && !strings.Contains(filepath.ToSlash(rel), "/") {
			assert.False(t, dirs[strings.ToLower(rel)], "case-insensitive clash %q", rel)
			dirs[strings.ToLower(rel)] = true
		}
		return nil
	}))
	assert.Len(t, dirs, len(rep.Aggregate), "one directory per region")
	var js map[string]any
	b, err := os.ReadFile(filepath.Join(dir, "report.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &js))
	assert.Contains(t, js, "aggregate")
	assert.Contains(t, js, "scopes")
}

// TestRegionsDirPaths: the paths a rebuild checks before it writes are
// the files it then writes, in order, with scopes of several processes
// (each with tables of its own) and with the aggregate off.
func TestRegionsDirPaths(t *testing.T) {
	for _, aggregate := range []bool{true, false} {
		rep := hostileReport(t)
		rep.AggregateEnabled = aggregate
		files, err := RegionsDirFiles(rep)
		require.NoError(t, err)
		paths, err := RegionsDirPaths(rep)
		require.NoError(t, err)
		var rels []string
		for _, f := range files {
			rels = append(rels, f.Rel)
		}
		assert.Equal(t, rels, paths)
		assert.Greater(t, len(paths), 2, "kernel tables")
	}
}

func TestRegionsMarkdownEscapes(t *testing.T) {
	var md bytes.Buffer
	require.NoError(t, RegionsMarkdown(&md, hostileReport(t)))
	s := md.String()
	assert.Contains(t, s, `\# heading \| cell \*em\* \[link\](http\://x) \<b\>`, "no autolink: the :// is escaped")
	assert.Contains(t, s, "(empty name)")
	assert.NotContains(t, s, "<script>")
	assert.NotContains(t, s, "\x00")
}

func TestMetricValue(t *testing.T) {
	for _, c := range []struct {
		v          float64
		unit, want string
	}{{5632, "byte", "5.632 Kbyte"}, {999, "byte", "999.000 byte"}, {1.485e9, "hz", "1.485 Ghz"},
		{12.3456, "%", "12.35 %"}, {0.5, "inst/cycle", "0.5 inst/cycle"}} {
		v, u := MetricValue(c.v, c.unit)
		assert.Equal(t, c.want, v+" "+u)
	}
}

// writeRegionsDir is the region report rep written into dir under root, as
// the rebuild writes it.
func writeRegionsDir(root, dir string, rep *facts.RegionReport) error {
	files, err := RegionsDirFiles(rep)
	if err != nil {
		return err
	}
	_, err = rundir.WriteFilesIn(root, dir, files)
	return err
}

// TestRegionsJSONIsTheEncoders: report.json, written a region at a time,
// is the bytes json.Encoder writes for the whole report (two-space
// indent, no HTML escaping), whatever is nil, empty or nested.
func TestRegionsJSONIsTheEncoders(t *testing.T) {
	full := hostileReport(t)
	full.Sample = "a <sample> & more"
	full.Aggregate[0].Metrics = []facts.RegionMetric{{Group: "sol", Name: "SM %", Unit: "%", Value: 12.5, Launches: 3}}
	noAggregate := hostileReport(t)
	noAggregate.Aggregate = nil
	emptyScope := hostileReport(t)
	emptyScope.Scopes[0].Regions = []facts.Region{}
	nilScope := hostileReport(t)
	nilScope.Scopes[1].Regions = nil
	nilLists := hostileReport(t)
	nilLists.Aggregate[1].Kernels, nilLists.Aggregate[1].Levels, nilLists.Notes = nil, nil, nil
	for name, rep := range map[string]*facts.RegionReport{
		"full": full, "no aggregate": noAggregate, "an empty scope": emptyScope, "a nil scope": nilScope, "nil lists": nilLists,
		"no scopes": {Source: "s", Scopes: []facts.RegionScope{}}, "nothing": {},
	} {
		var want, got bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		require.NoError(t, enc.Encode(rep), name)
		require.NoError(t, RegionsJSON(&got, rep), name)
		assert.Equal(t, want.String(), got.String(), name)
	}
}

// TestRegionsDirNotFinite: a region report holding a number that is not
// finite is refused, naming it, before any of its files is written (they
// are written as they are made).
func TestRegionsDirNotFinite(t *testing.T) {
	rep := hostileReport(t)
	rep.Scopes[1].Regions[0].Share = math.NaN()
	_, err := RegionsDirFiles(rep)
	assert.ErrorContains(t, err, "scopes[1].regions[0].share is NaN")
	var b bytes.Buffer
	assert.ErrorContains(t, RegionsJSON(&b, rep), "scopes[1].regions[0].share is NaN")
	assert.Zero(t, b.Len(), "nothing written")
}
