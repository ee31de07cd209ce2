package harness_test

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/harness"
	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
	"github.com/llm-perf-opt/deepprof/internal/synth"
)

// deepRun is a copy of the recorded CUPTI run whose record file is a
// SYNTHETIC one (synth.Write) with nest ranges nested one inside the other
// in its first decode step, a kernel at each level.
func deepRun(tb testing.TB, nest int) string {
	tb.Helper()
	dir := filepath.Join(tb.TempDir(), "run")
	require.NoError(tb, os.CopyFS(dir, os.DirFS(recordedCupti)))
	f, err := os.Create(filepath.Join(dir, "timeline", "cupti", "cupti-564.tsv.gz"))
	require.NoError(tb, err)
	zw := gzip.NewWriter(f)
	c := synth.Small(564)
	c.Nest = nest
	require.NoError(tb, synth.Write(zw, c))
	require.NoError(tb, zw.Close())
	require.NoError(tb, f.Close())
	return dir
}

// TestDeepNesting (issue 27): ranges nested past model.MaxRangeDepth are
// reported in their level-MaxRangeDepth range, with a note saying how many
// launches ran deeper; the report's regions stop at that depth, and a
// deeper range's path in the trace says how many levels it leaves out.
func TestDeepNesting(t *testing.T) {
	t.Parallel()
	dir := deepRun(t, 200)
	_, err := harness.Report(dir, harness.ReportOptions{})
	require.NoError(t, err)
	md := readFile(t, filepath.Join(dir, rundir.RegionsMD))
	assert.True(t, strings.Contains(md, "170 launches ran in ranges nested deeper than 32 levels"), "the note")
	js := readFile(t, filepath.Join(dir, rundir.RegionsJSON))
	// decode_all/decode_step/n1/.../n30 is 32 levels: the deepest listed
	assert.True(t, strings.Contains(js, `/n30"`), "the level-32 region is listed")
	assert.False(t, strings.Contains(js, "/n31"), "no region deeper than model.MaxRangeDepth")
	assert.Equal(t, 32, model.MaxRangeDepth)
	trace := readGzip(t, filepath.Join(dir, rundir.TimelineTrace))
	assert.True(t, strings.Contains(trace, "levels deeper)"), "a deeper range's path says what it leaves out")
}

// BenchmarkDeepNesting rebuilds a run with ranges nested 100,000 deep (a
// SYNTHETIC record; issue 35's target: at most 10 s and 500 MB of peak
// memory; docs/measurements.md has the figures).
func BenchmarkDeepNesting(b *testing.B) {
	dir := deepRun(b, 100_000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := harness.Report(dir, harness.ReportOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

func readGzip(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	require.NoError(t, err)
	var b strings.Builder
	_, err = io.Copy(&b, zr)
	require.NoError(t, err)
	return b.String()
}
