package harness

import (
	"bytes"
	"compress/gzip"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/phases"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
	"github.com/llm-perf-opt/deepprof/internal/timeline"
)

// TestRebuildTakesTheSessionsTimeline (issue 36): the rebuild that ends a
// session takes the timeline the session read of the run's records, after
// the session's queries of it, and writes every file as a rebuild that
// reads the records itself does. Recorded runs of one process, of a
// program with no range (inferred phases), of an automatic-ranges program
// and of two ranks.
func TestRebuildTakesTheSessionsTimeline(t *testing.T) {
	t.Parallel()
	at := func() time.Time { return time.Date(2026, 11, 27, 15, 0, 0, 0, time.UTC) }
	for _, name := range []string{"h200-default-tiny-llama", "h200-cpp-decode-loop", "h200-generate-gpu-auto", "h100x2-two-nodes-merged"} {
		t.Run(name, func(t *testing.T) {
			src := filepath.Join("../fixtures/runs", name)
			fresh, read := filepath.Join(t.TempDir(), name), filepath.Join(t.TempDir(), name)
			require.NoError(t, os.CopyFS(fresh, os.DirFS(src)))
			require.NoError(t, os.CopyFS(read, os.DirFS(src)))

			_, err := Report(fresh, ReportOptions{Now: at})
			require.NoError(t, err)

			run, err := rundir.Open(read)
			require.NoError(t, err)
			tl, err := timeline.Load(rundir.TimelineCupti, rundir.CuptiFiles(run), run.Open)
			require.NoError(t, err)
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
			require.NoError(t, reportRun(run, ReportOptions{Now: at}, tl))

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
				if strings.HasSuffix(rel, ".gz") {
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

func unzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	require.NoError(t, err)
	out, err := io.ReadAll(zr)
	require.NoError(t, err)
	return out
}
