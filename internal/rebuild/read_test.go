package rebuild

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/config"
	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/phases"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
	"github.com/llm-perf-opt/deepprof/internal/synth"
	"github.com/llm-perf-opt/deepprof/internal/timeline"
)

// TestRebuildTakesTheSessionsTimeline (issue 36): the rebuild that ends a
// session takes the timeline the session read of the run's records, after
// the session's queries of it, and the trace of it begun while those ran
// (StartTrace), and writes every file as a rebuild that reads the
// records itself does. Recorded runs of one process, of a program with no
// range (inferred phases), of an automatic-ranges program and of two
// ranks.
func TestRebuildTakesTheSessionsTimeline(t *testing.T) {
	t.Parallel()
	at := func() time.Time { return time.Date(2026, 11, 27, 15, 0, 0, 0, time.UTC) }
	for _, name := range []string{"h200-default-tiny-llama", "h200-cpp-decode-loop", "h200-generate-gpu-auto", "h100x2-two-nodes-merged"} {
		t.Run(name, func(t *testing.T) {
			fresh, read := twoCopies(t, name, at)
			run, err := rundir.Open(read)
			require.NoError(t, err)
			tl, err := timeline.Load(rundir.TimelineCupti, rundir.CuptiFiles(run), run.Open)
			require.NoError(t, err)
			cfg, err := config.Parse(run.Path(rundir.ConfigYAML))
			require.NoError(t, err)
			traced := StartTrace(run, cfg, tl)
			// Begun but where the rebuild infers the phases of a program
			// that opened no range: the trace then shows them.
			assert.Equal(t, name != "h200-cpp-decode-loop", traced != nil, "trace begun")
			// What the session asks of it before the rebuild.
			all := func(*model.Launch) bool { return true }
			tab, err := phases.KernelTable(tl, rundir.TimelineCupti, all)
			require.NoError(t, err)
			var names []string
			for _, k := range tab.Kernels[:min(10, len(tab.Kernels))] {
				names = append(names, model.FunctionName(k.Name))
			}
			phases.TopProcessesOf(tl, names)
			phases.SameTopLaunches(tl, names)
			phases.Targets(tl, names, all)
			phases.ProfiledRanges(tl, []string{"prefill", "decode"}, "", model.Names{})
			require.NoError(t, reportRun(run, Options{Now: at}, tl, traced))

			n := 0
			require.NoError(t, filepath.WalkDir(fresh, func(p string, d fs.DirEntry, err error) error {
				require.NoError(t, err)
				if d.IsDir() {
					return nil
				}
				rel, _ := filepath.Rel(fresh, p)
				want, err := os.ReadFile(p)
				require.NoError(t, err)
				got, err := os.ReadFile(filepath.Join(read, rel))
				require.NoError(t, err, rel)
				if strings.HasSuffix(rel, ".gz") && !bytes.Equal(want, got) {
					// the same bytes are the same content: unpacked
					// only to compare what differs
					want, got = unzip(t, want), unzip(t, got)
				}
				assert.True(t, bytes.Equal(want, got), "%s differs", rel)
				n++
				return nil
			}))
			assert.Greater(t, n, 20)
		})
	}
}

// TestAnalyseReadsNothingOfTheRun: load reads every input the rebuild
// uses, so that analyse makes the same files from them with the run gone:
// recorded runs of the CUPTI timeline with the oracle's check and the deep
// pass, of inferred phases, of an automatic-ranges program, of two ranks,
// and of ncu exports alone.
func TestAnalyseReadsNothingOfTheRun(t *testing.T) {
	t.Parallel()
	at := func() time.Time { return time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC) }
	for _, name := range []string{"h200-in-run-default-check", "h200-cpp-decode-loop", "h200-generate-gpu-auto", "h100x2-two-nodes-merged", "llama3-8b-roofline"} {
		t.Run(name, func(t *testing.T) {
			fresh, gone := twoCopies(t, name, at)
			run, err := rundir.Open(gone)
			require.NoError(t, err)
			cfg, err := reportConfig(run)
			require.NoError(t, err)
			in := load(run, cfg)
			require.NoError(t, in.discardTrace())
			require.NoError(t, os.RemoveAll(gone))
			res := analyse(in)
			outs := renderFiles(res)
			outs = append(outs, renderSummary(res, nil)...)
			n := 0
			for _, o := range outs {
				if o.Data == nil {
					continue
				}
				want, err := os.ReadFile(filepath.Join(fresh, o.Rel))
				require.NoError(t, err, o.Rel)
				assert.Equal(t, string(want), string(o.Data), o.Rel)
				n++
			}
			assert.GreaterOrEqual(t, n, 4, "summary.json, kernels.json, the pages")
		})
	}
}

// TestOneLoadTwoAnalyses: the ranges the kernel table covers are decided
// by analyse, not read: the inputs loaded once, analysed with the run's
// nvtx.include and then with none, give the profiled ranges' table and
// then the whole run's.
func TestOneLoadTwoAnalyses(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "run")
	require.NoError(t, synth.RawCopy(dir, "../../fixtures/runs/h200-in-run-default-check"))
	run, err := rundir.Open(dir)
	require.NoError(t, err)
	cfg, err := reportConfig(run)
	require.NoError(t, err)
	require.NotEmpty(t, cfg.IncludeNames)
	in := load(run, cfg)
	require.NoError(t, in.discardTrace())

	ranges := analyse(in)
	in.cfg.Include, in.cfg.IncludeNames = nil, nil
	whole := analyse(in)
	require.NoError(t, ranges.kerr)
	require.NoError(t, whole.kerr)
	assert.Less(t, ranges.tab.Launches, whole.tab.Launches)
	assert.Equal(t, cfg.IncludeNames, ranges.summary.Kernels.Ranges)
	assert.Empty(t, whole.summary.Kernels.Ranges)
}

// TestRebuildTakesTheTraceBegun: the rebuild takes the trace begun of its
// timeline and does not write it again: a begun write that failed leaves
// the trace missing, with that write's error, and the run partial.
func TestRebuildTakesTheTraceBegun(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "run")
	require.NoError(t, os.CopyFS(dir, os.DirFS("../../fixtures/runs/h200-default-tiny-llama")))
	require.NoError(t, os.Remove(filepath.Join(dir, rundir.TimelineTrace)))
	run, err := rundir.Open(dir)
	require.NoError(t, err)
	tl, err := timeline.Load(rundir.TimelineCupti, rundir.CuptiFiles(run), run.Open)
	require.NoError(t, err)
	waited := 0
	traced := func() error { waited++; return errors.New("the disk was full (a test)") }
	err = reportRun(run, Options{}, tl, traced)
	require.ErrorContains(t, err, "the disk was full (a test)")
	assert.Equal(t, 1, waited)
	assert.NoFileExists(t, filepath.Join(dir, rundir.TimelineTrace))
	m := run.Manifest()
	assert.Equal(t, rundir.StatusPartial, m.Status)
	a, ok := m.Find(rundir.TimelineTrace)
	require.True(t, ok)
	assert.Equal(t, rundir.StatusMissing, a.Status)
	assert.Contains(t, a.Reason, "the disk was full (a test)")

	// Begun, but the session's timeline is not the records' any more
	// (Session.Timeline is then nil): waited for, then written again of
	// the rebuild's own reading, the begun write's failure not taken.
	waited = 0
	require.NoError(t, reportRun(run, Options{}, nil, traced))
	assert.Equal(t, 1, waited)
	assert.FileExists(t, filepath.Join(dir, rundir.TimelineTrace))
	a, ok = run.Manifest().Find(rundir.TimelineTrace)
	require.True(t, ok)
	assert.Equal(t, rundir.StatusComplete, a.Status)
}

// twoCopies copies the recorded run name twice, its raw files only
// (synth.RawCopy), and rebuilds the first (Report, stamped at): what the
// second, rebuilt another way, is compared with.
func twoCopies(t *testing.T, name string, at func() time.Time) (rebuilt, other string) {
	t.Helper()
	src := filepath.Join("../../fixtures/runs", name)
	rebuilt, other = filepath.Join(t.TempDir(), name), filepath.Join(t.TempDir(), name)
	require.NoError(t, synth.RawCopy(rebuilt, src))
	require.NoError(t, synth.RawCopy(other, src))
	run, err := rundir.Open(rebuilt)
	require.NoError(t, err)
	require.NoError(t, Report(run, Options{Now: at}))
	return rebuilt, other
}

func unzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	require.NoError(t, err)
	out, err := io.ReadAll(zr)
	require.NoError(t, err)
	return out
}
