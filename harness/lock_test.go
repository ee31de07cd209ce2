package harness_test

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/harness"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
)

// TestConcurrentReports (issue 27): two deepprof report of one run at once,
// twice, take turns (rundir.LockRun); both succeed and every derived file is the
// recorded run's. Without the lock, one failed on a vanished temporary file
// or removed the other's region reports.
func TestConcurrentReports(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "run")
	require.NoError(t, os.CopyFS(dir, os.DirFS(smallCupti)))
	for round := range 2 {
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i := range errs {
			wg.Go(func() { _, errs[i] = harness.Report(dir, harness.ReportOptions{}) })
		}
		wg.Wait()
		for i, err := range errs {
			require.NoError(t, err, "round %d, report %d", round, i)
		}
	}
	for _, rel := range []string{rundir.KernelsJSON, rundir.RegionsJSON, rundir.RegionsMD, rundir.SummaryJSON, rundir.TimelinePhases} {
		want, err := os.ReadFile(filepath.Join(smallCupti, rel))
		require.NoError(t, err)
		assert.Equal(t, string(want), readFile(t, filepath.Join(dir, rel)), rel)
	}
}
