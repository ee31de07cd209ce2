package rebuild

import (
	"bytes"
	"encoding/csv"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llm-perf-opt/deepprof/internal/input"
	"github.com/llm-perf-opt/deepprof/internal/workload"

	"github.com/sebdah/goldie/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/machine"
	"github.com/llm-perf-opt/deepprof/internal/regions"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
	"github.com/llm-perf-opt/deepprof/internal/summary"
)

var t0 = time.Date(2026, 11, 21, 22, 30, 0, 0, time.UTC)

func copyFixture(t *testing.T, run *rundir.Run, fixture, rel string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../../fixtures/ncu", fixture))
	require.NoError(t, err)
	require.NoError(t, rundir.WriteFileAtomic(run.Path(rel), b))
}

// TestRebuild assembles a run directory from recorded exports (the timing
// pass: the basic raw page; the deep pass: the roofline pages) and rebuilds
// every derived file from them, as `deepprof report MAIN` does.
func TestRebuild(t *testing.T) {
	t.Parallel()
	run, err := rundir.Create(t.TempDir(), "run", t0)
	require.NoError(t, err)
	copyFixture(t, run, "h200-llama-decode-basic/raw.csv", rundir.NcuTimingRaw)
	copyFixture(t, run, "h200-llama-decode-roofline/raw.csv", rundir.NcuRaw)
	copyFixture(t, run, "h200-llama-decode-roofline/details.csv", rundir.NcuDetails)

	require.NoError(t, rebuild(run, settings{TopN: 10, Regions: regions.DefaultConfig()}))
	require.NoError(t, run.WriteManifest(t0.Add(time.Minute)))

	g := goldie.New(t, goldie.WithFixtureDir("../../golden/session/rebuild"), goldie.WithNameSuffix(""))
	for _, rel := range []string{rundir.ReportMD, rundir.KernelsMD, rundir.KernelsJSON, rundir.ManifestJSON} {
		b, err := os.ReadFile(run.Path(rel))
		require.NoError(t, err, rel)
		g.Assert(t, rel, b)
	}
	assert.FileExists(t, run.Path(rundir.RegionsMD))
	assert.FileExists(t, run.Path(rundir.RegionsJSON))

	// Rebuilding again gives the same files.
	before, err := os.ReadFile(run.Path(rundir.KernelsMD))
	require.NoError(t, err)
	require.NoError(t, rebuild(run, settings{TopN: 10, Regions: regions.DefaultConfig()}))
	after, err := os.ReadFile(run.Path(rundir.KernelsMD))
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after))
}

// TestRebuildEmptyRun: nothing to read is not a crash: the manifest and
// report.md say what is missing and why.
func TestRebuildEmptyRun(t *testing.T) {
	t.Parallel()
	run, err := rundir.Create(t.TempDir(), "empty", t0)
	require.NoError(t, err)
	require.NoError(t, rebuild(run, settings{Regions: regions.DefaultConfig()}))
	m := run.Manifest()
	a, ok := m.Find(rundir.KernelsMD)
	require.True(t, ok)
	assert.Equal(t, rundir.StatusMissing, a.Status)
	assert.Contains(t, a.Reason, "no kernel export to read")
	b, err := os.ReadFile(run.Path(rundir.ReportMD))
	require.NoError(t, err)
	assert.Contains(t, string(b), "no deep-pass export")
}

// TestRebuildBadExport: a malformed export gives a positioned error, and the
// outputs it feeds are marked missing with that error.
func TestRebuildBadExport(t *testing.T) {
	t.Parallel()
	run, err := rundir.Create(t.TempDir(), "bad", t0)
	require.NoError(t, err)
	require.NoError(t, rundir.WriteFileAtomic(run.Path(rundir.NcuRaw), []byte("==PROF== Disconnected from process 1\n")))
	err = rebuild(run, settings{Regions: regions.DefaultConfig()})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ncu/raw.csv:1: no CSV data")
	a, _ := run.Manifest().Find(rundir.KernelsMD)
	assert.Equal(t, rundir.StatusMissing, a.Status)
	assert.Contains(t, a.Reason, "ncu/raw.csv:1:")
}

// TestRebuildSaysEachErrorOnce: one fault of the deep pass's export, which
// the kernel table, the regions and the sample each meet, is one error of
// the rebuild, however many outputs it leaves missing.
func TestRebuildSaysEachErrorOnce(t *testing.T) {
	t.Parallel()
	run, err := rundir.Create(t.TempDir(), "bad", t0)
	require.NoError(t, err)
	f, err := os.Open("../../fixtures/ncu/h200-llama-decode-roofline/raw.csv")
	require.NoError(t, err)
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	require.NoError(t, err)
	dur := slices.Index(rows[0], "gpu__time_duration.sum")
	require.Positive(t, dur)
	for i := range rows {
		rows[i] = slices.Delete(rows[i], dur, dur+1) // no launch has a duration
	}
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	require.NoError(t, w.WriteAll(rows))
	require.NoError(t, rundir.WriteFileAtomic(run.Path(rundir.NcuRaw), b.Bytes()))

	err = rebuild(run, settings{Regions: regions.DefaultConfig()})
	require.Error(t, err)
	const noDuration = "ncu/raw.csv:1: raw page has no gpu__time_duration.sum column"
	assert.Equal(t, 1, strings.Count(err.Error(), noDuration), err.Error())
	for _, rel := range []string{rundir.KernelsMD, rundir.RegionsMD, rundir.RegionsSampleMD} {
		a, _ := run.Manifest().Find(rel)
		assert.Equal(t, rundir.StatusMissing, a.Status, rel)
		assert.Contains(t, a.Reason, noDuration, rel)
	}
}

// TestRebuildSummaryFails (issue 16): a summary that cannot be written
// (here an MFU past the largest float64, from a SYNTHETIC peak of one
// denormal TFLOPS) leaves no summary of an earlier rebuild behind:
// stakeholder_summary.md, report.html and summary.json are recorded
// missing and removed, and the run is no longer complete; the next
// rebuild that succeeds makes them, and the run complete, again.
func TestRebuildSummaryFails(t *testing.T) {
	t.Parallel()
	run, err := rundir.Create(t.TempDir(), "run", t0)
	require.NoError(t, err)
	copyFixture(t, run, "h200-llama-decode-basic/raw.csv", rundir.NcuTimingRaw)
	b, err := os.ReadFile("../../fixtures/runs/tiny-llama/stage1/report.json")
	require.NoError(t, err)
	require.NoError(t, rundir.WriteFileAtomic(run.Path(rundir.Stage1Report), b))
	good := settings{Regions: regions.DefaultConfig(), Summary: summary.Options{PeakOverride: machine.Peak{TFLOPS: 989}}}
	bad := good
	bad.Summary.PeakOverride.TFLOPS = 5e-324

	require.NoError(t, rebuild(run, good))
	require.FileExists(t, run.Path(rundir.SummaryJSON))
	require.Equal(t, rundir.StatusComplete, run.Manifest().Status)

	err = rebuild(run, bad)
	require.Error(t, err)
	assert.ErrorContains(t, err, "summary.json: mfu.rows[0].mfu is +Inf", "the figure is named, not json: unsupported value")
	m := run.Manifest()
	assert.Equal(t, rundir.StatusPartial, m.Status, "a run without its summary is not complete")
	assert.Contains(t, m.Reason, "summary")
	for _, rel := range []string{rundir.StakeholderSummary, rundir.ReportHTML, rundir.SummaryJSON} {
		a, ok := m.Find(rel)
		require.True(t, ok, rel)
		assert.Equal(t, rundir.StatusMissing, a.Status, rel)
		assert.NoFileExists(t, run.Path(rel), "the earlier rebuild's %s is removed", rel)
	}

	require.NoError(t, rebuild(run, good))
	m = run.Manifest()
	assert.Equal(t, rundir.StatusComplete, m.Status, "the rebuild's own mark goes when the summary is made again")
	a, _ := m.Find(rundir.SummaryJSON)
	assert.Equal(t, rundir.StatusComplete, a.Status)
}

// TestRebuildRefusesPipes (issues 16, 35): env.json and the oracle's files
// are read only as plain files: a named pipe (an endless SYNTHETIC input
// behind it) is refused at once, a reason the summary gives naming it as
// the run names it, not a read that hangs or memory that grows.
func TestRebuildRefusesPipes(t *testing.T) {
	input.LimitForTest(t, 1<<20)
	run, err := rundir.Create(t.TempDir(), "run", t0)
	require.NoError(t, err)
	copyFixture(t, run, "h200-llama-decode-basic/raw.csv", rundir.NcuTimingRaw)
	input.FIFOForTest(t, run.Path(rundir.EnvJSON))
	require.NoError(t, rebuild(run, settings{Regions: regions.DefaultConfig()}))
	b, err := os.ReadFile(run.Path(rundir.SummaryJSON))
	require.NoError(t, err)
	assert.Contains(t, string(b), `"missing": "env.json: not a regular file (a named pipe): deepprof reads only plain files"`, "named as the run names it: summary.json is the same on every machine")

	_, err = rundir.ParsePlain(run, rundir.OracleJSON, workload.ReadFigures)
	require.ErrorIs(t, err, os.ErrNotExist)
	require.NoError(t, os.MkdirAll(filepath.Dir(run.Path(rundir.OracleJSON)), 0o755))
	input.FIFOForTest(t, run.Path(rundir.OracleJSON))
	_, err = rundir.ParsePlain(run, rundir.OracleJSON, workload.ReadFigures)
	require.EqualError(t, err, rundir.OracleJSON+": not a regular file (a named pipe): deepprof reads only plain files")
}

// TestReadEnvBounded: env.json's reader, on an endless input.
func TestReadEnvBounded(t *testing.T) {
	input.LimitForTest(t, 1<<20)
	_, err := workload.ReadEnv(input.OverLimit(), "env.json")
	require.EqualError(t, err, "env.json: larger than 1 MiB: not a deepprof file?")
	_, err = workload.ReadEnv(strings.NewReader("{\n\"gpu\": 3}"), "env.json")
	require.ErrorContains(t, err, "env.json:2: json: cannot unmarshal number")
}

// TestSourcesAreRecordedInputs: every file the rebuild asks whether a run
// has (rundir.Recorded.Present) is a raw or provenance file of the layout;
// of any other, Present would say "not there" whatever is there.
func TestSourcesAreRecordedInputs(t *testing.T) {
	named := map[string]string{"OracleJSON": rundir.OracleJSON, "TimelineModel": rundir.TimelineModel,
		"Stage1Report": rundir.Stage1Report, "TimelineReport": rundir.TimelineReport}
	// Every Present[...] of the rebuild's code is one of named, or a
	// source table's path (choose).
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		require.NoError(t, err)
		ast.Inspect(f, func(n ast.Node) bool {
			ix, ok := n.(*ast.IndexExpr)
			if !ok {
				return true
			}
			if sel, ok := ix.X.(*ast.SelectorExpr); !ok || sel.Sel.Name != "Present" {
				return true
			}
			at := fset.Position(ix.Pos())
			switch key := ix.Index.(type) {
			case *ast.SelectorExpr:
				if id, ok := key.X.(*ast.Ident); ok && id.Name == "rundir" {
					assert.Contains(t, named, key.Sel.Name, "%s: Present[rundir.%s] is not checked here: add it to named", at, key.Sel.Name)
					return true
				}
				if id, ok := key.X.(*ast.Ident); ok && id.Name == "s" && key.Sel.Name == "path" {
					return true // a source table's path: checked below
				}
			}
			t.Errorf("%s: Present of a key this test cannot check", at)
			return true
		})
	}
	var asked []string
	for _, rel := range named {
		asked = append(asked, rel)
	}
	for _, s := range kernelSources {
		if s.present == nil {
			asked = append(asked, s.path)
		}
	}
	for _, s := range regionSources {
		if s.present == nil {
			asked = append(asked, s.path)
		}
	}
	for _, s := range stageSources {
		if s.present == nil {
			asked = append(asked, s.path)
		}
	}
	for _, rel := range asked {
		s, ok := rundir.Lookup(rel)
		require.True(t, ok, rel)
		assert.Contains(t, []rundir.Kind{rundir.Raw, rundir.Provenance}, s.Kind, rel)
		assert.False(t, s.Dir, rel)
	}
}

// TestExportSourcesAreListed: every ncu export a source table reads is one
// whose files rundir.Recorded lists (Exports): of any other, the rebuild
// would read its name alone, whatever files the run has.
func TestExportSourcesAreListed(t *testing.T) {
	var exports []string
	for _, s := range kernelSources {
		if s.export {
			exports = append(exports, s.path)
		}
	}
	for _, s := range regionSources {
		if s.export {
			exports = append(exports, s.path)
		}
	}
	exports = append(exports, rundir.NcuDetails)
	run, err := rundir.Create(t.TempDir(), "run", time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	for _, rel := range exports {
		require.NoError(t, run.Write(rel, []byte("SYNTHETIC\n")))
	}
	rec, err := run.MatchFiles()
	require.NoError(t, err)
	for _, rel := range exports {
		assert.Equal(t, []string{rel}, rec.Exports[rel], rel)
	}
}
