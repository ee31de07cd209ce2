package rebuild

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/config"
	"github.com/llm-perf-opt/deepprof/internal/regions"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
	"github.com/llm-perf-opt/deepprof/internal/synth"
)

// countOpens counts, until the test ends, the opens of each ncu export
// through openExportFile.
func countOpens(t *testing.T) map[string]int {
	t.Helper()
	opens := map[string]int{}
	orig := openExportFile
	openExportFile = func(run *rundir.Run, rel string) (io.ReadCloser, error) {
		opens[rel]++
		return orig(run, rel)
	}
	t.Cleanup(func() { openExportFile = orig })
	return opens
}

// TestRebuildReadsEachExportOnce rebuilds each recorded run (fixtures/runs)
// with its own config.yaml and counts the opens of its ncu exports: the
// timing export (the kernel table and the run's regions) and the deep
// pass's (the sample by region and the classification) are each read once
// per rebuild. One recorded run of each shape (exportShape) is rebuilt:
// the reads follow the files a run has, and the root package rebuilds
// every recorded run.
func TestRebuildReadsEachExportOnce(t *testing.T) {
	runs, err := filepath.Glob("../../fixtures/runs/*")
	require.NoError(t, err)
	require.NotEmpty(t, runs)
	shapes := map[string]string{}
	for _, src := range runs {
		run, err := rundir.Open(src)
		require.NoError(t, err)
		shape := exportShape(run)
		if first, ok := shapes[shape]; ok {
			t.Logf("%s: the shape of %s (%s)", filepath.Base(src), first, shape)
			continue
		}
		shapes[shape] = filepath.Base(src)
		t.Run(filepath.Base(src), func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), filepath.Base(src))
			require.NoError(t, synth.RawCopy(dst, src))
			cfg, err := config.Parse(filepath.Join(src, rundir.ConfigYAML))
			require.NoError(t, err)
			dc, err := settingsFor(cfg)
			require.NoError(t, err)
			run, err := rundir.Open(dst)
			require.NoError(t, err)

			opens := countOpens(t)
			require.NoError(t, rebuild(run, dc))
			want := map[string]int{}
			deep := run.HasExport(rundir.NcuRaw) // a run killed before its deep pass ended has none
			// Each export, or each rank's (a multi-GPU run), once.
			for _, rel := range []string{rundir.NcuRaw, rundir.NcuDetails, rundir.NcuTimingRaw} {
				if run.HasExport(rel) {
					for _, f := range run.ExportFiles(rel) {
						want[f] = 1
					}
				}
			}
			assert.Equal(t, want, opens)
			m := run.Manifest()
			for _, rel := range []string{rundir.KernelsJSON, rundir.RegionsJSON, rundir.RegionsSampleJSON, rundir.StakeholderSummary} {
				if rel == rundir.RegionsSampleJSON && !deep {
					continue
				}
				a, ok := m.Find(rel)
				if assert.True(t, ok, rel) {
					assert.NotEqual(t, rundir.StatusMissing, a.Status, "%s: %s", rel, a.Reason)
				}
			}
		})
	}
}

// exportShape is what decides which exports a rebuild reads: the files of
// each ncu export (one, or one a rank), the CUPTI timeline, nsys's stats
// and whether the session set them aside as partial, and the workload
// reports.
func exportShape(run *rundir.Run) string {
	var b strings.Builder
	for _, rel := range []string{rundir.NcuRaw, rundir.NcuDetails, rundir.NcuTimingRaw} {
		n := 0
		if run.HasExport(rel) {
			n = len(run.ExportFiles(rel))
		}
		fmt.Fprintf(&b, "%s=%d ", rel, n)
	}
	fmt.Fprintf(&b, "cupti=%d ", len(rundir.CuptiFiles(run)))
	for _, rel := range []string{rundir.NsysKernSum, rundir.Stage1Report, rundir.TimelineReport} {
		fmt.Fprintf(&b, "%s=%t ", rel, run.Exists(rel))
	}
	if a, ok := run.Manifest().Find(rundir.NsysKernSum); ok {
		fmt.Fprintf(&b, "%s status=%s ", rundir.NsysKernSum, a.Status)
	}
	return b.String()
}

// TestRebuildDeepPassOnly: a run with only the deep pass's export (no
// timeline) makes its kernel table, its regions, the sample and the
// classification from one read of it.
func TestRebuildDeepPassOnly(t *testing.T) {
	run, err := rundir.Create(t.TempDir(), "run", t0)
	require.NoError(t, err)
	copyFixture(t, run, "h200-llama-decode-roofline/raw.csv", rundir.NcuRaw)
	opens := countOpens(t)
	require.NoError(t, rebuild(run, settings{TopN: 10, Regions: regions.DefaultConfig()}))
	assert.Equal(t, map[string]int{rundir.NcuRaw: 1}, opens)
	src := run.Manifest().Sources
	require.NotNil(t, src)
	assert.Equal(t, rundir.NcuRaw, src.Kernels.Path)
	assert.Equal(t, rundir.NcuRaw, src.Regions.Path)
	for _, rel := range []string{rundir.KernelsJSON, rundir.RegionsJSON, rundir.RegionsSampleJSON} {
		assert.FileExists(t, run.Path(rel))
	}
	b, err := os.ReadFile(run.Path(rundir.SummaryJSON))
	require.NoError(t, err)
	assert.NotContains(t, string(b), "no deep-pass export", "the classification was made")
}
