package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReportCommand(t *testing.T) {
	now = func() time.Time { return time.Date(2026, 11, 21, 23, 0, 0, 0, time.UTC) }
	main := filepath.Join(t.TempDir(), "20261121T230000Z-abcdef")
	require.NoError(t, os.MkdirAll(filepath.Join(main, "ncu"), 0o755))
	raw, err := os.ReadFile(twoproc)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(main, "ncu", "raw.csv"), raw, 0o644))

	out, _, err := runCmd([]string{"report", "--top", "5", main}, "")
	require.NoError(t, err)
	assert.Contains(t, out, "derived files rebuilt")
	for _, f := range []string{"kernels.md", "kernels.json", "report.md", "manifest.json", "ncu/regions/report.md", "ncu/regions/report.json"} {
		assert.FileExists(t, filepath.Join(main, f))
	}
	m, err := os.ReadFile(filepath.Join(main, "manifest.json"))
	require.NoError(t, err)
	assert.Contains(t, string(m), `"finished": "2026-11-21T23:00:00Z"`)

	_, _, err = runCmd([]string{"report", filepath.Join(main, "nope")}, "")
	require.Error(t, err)
	assert.Equal(t, 1, exitCode(err))
	_, _, err = runCmd([]string{"report"}, "")
	assert.Equal(t, 2, exitCode(err))
}

// TestReportBadConfig: a run whose config.yaml cannot be read is rebuilt
// with the default report settings, and says so on stderr and in its
// manifest.
func TestReportBadConfig(t *testing.T) {
	main := filepath.Join(t.TempDir(), "run")
	require.NoError(t, os.MkdirAll(filepath.Join(main, "ncu"), 0o755))
	raw, err := os.ReadFile(twoproc)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(main, "ncu", "raw.csv"), raw, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(main, "config.yaml"), []byte("report:\n  top_n: many\n"), 0o644))

	_, stderr, err := runCmd([]string{"report", main}, "")
	require.NoError(t, err)
	assert.Contains(t, stderr, "deepprof: warning: ")
	assert.Contains(t, stderr, "report.top_n")
	assert.Contains(t, stderr, "the derived files use the default report settings")
	m, err := os.ReadFile(filepath.Join(main, "manifest.json"))
	require.NoError(t, err)
	assert.Contains(t, string(m), "derived files made with the default report settings: config.yaml could not be read")
	assert.FileExists(t, filepath.Join(main, "stakeholder_summary.md"))
}
