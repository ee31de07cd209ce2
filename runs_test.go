package deepprof_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/harness/artifacts"
	"github.com/llm-perf-opt/deepprof/harness/config"
	"github.com/llm-perf-opt/deepprof/harness/session"
)

// derived are the files `deepprof report MAIN` makes from a run's raw
// exports (region directories are compared whole).
var derived = []string{artifacts.KernelsMD, artifacts.KernelsJSON, artifacts.ReportMD, artifacts.RegionsDir,
	artifacts.StakeholderSummary, session.SummaryJSON, session.OperatorsMD, session.ChartsDir}

// TestRecordedRunsRebuild takes each run directory recorded on a GPU
// (fixtures/runs, see fixtures/README.md), deletes its derived files,
// rebuilds them from the raw exports with the run's own config.yaml, and
// requires every one to come back byte for byte.
func TestRecordedRunsRebuild(t *testing.T) {
	runs, err := filepath.Glob("fixtures/runs/*")
	require.NoError(t, err)
	require.NotEmpty(t, runs)
	for _, src := range runs {
		t.Run(filepath.Base(src), func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), filepath.Base(src))
			require.NoError(t, os.CopyFS(dst, os.DirFS(src)))
			for _, d := range derived {
				require.NoError(t, os.RemoveAll(filepath.Join(dst, d)))
			}
			cfg, err := config.Parse(filepath.Join(src, artifacts.ConfigYAML))
			require.NoError(t, err)
			dc, err := session.DeriveConfigFor(cfg)
			require.NoError(t, err)
			run, err := artifacts.Open(dst)
			require.NoError(t, err)
			require.NoError(t, session.Rebuild(run, dc))

			n := 0
			require.NoError(t, filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
				require.NoError(t, err)
				rel, _ := filepath.Rel(src, p)
				if d.IsDir() || !isDerived(rel) {
					return nil
				}
				want, err := os.ReadFile(p)
				require.NoError(t, err)
				got, err := os.ReadFile(filepath.Join(dst, rel))
				require.NoError(t, err, rel)
				assert.Equal(t, string(want), string(got), rel)
				n++
				return nil
			}))
			assert.GreaterOrEqual(t, n, 14, "derived files compared")
		})
	}
}

func isDerived(rel string) bool {
	rel = filepath.ToSlash(rel)
	for _, d := range derived {
		if rel == d || len(rel) > len(d) && rel[:len(d)+1] == d+"/" {
			return true
		}
	}
	return false
}
