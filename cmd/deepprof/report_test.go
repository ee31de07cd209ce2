package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/rundir"
	"github.com/llm-perf-opt/deepprof/internal/synth"
)

func TestReportCommand(t *testing.T) {
	now = func() time.Time { return time.Date(2026, 11, 21, 23, 0, 0, 0, time.UTC) }
	main := filepath.Join(t.TempDir(), "20261121T230000Z-abcdef")
	require.NoError(t, synth.RawCopy(main, tinyRun))

	out, _, err := runCmd([]string{"report", "--top", "5", main}, "")
	require.NoError(t, err)
	assert.Contains(t, out, "derived files rebuilt")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.GreaterOrEqual(t, len(lines), 2)
	assert.Equal(t, "summary: "+filepath.Join(main, "stakeholder_summary.md"), lines[len(lines)-2], "ends with what a person reads, not the bookkeeping")
	assert.Equal(t, "report : "+filepath.Join(main, "report.html"), lines[len(lines)-1])
	for _, f := range []string{"kernels.md", "kernels.json", "report.md", "manifest.json", "ncu/regions/report.md", "ncu/regions/report.json",
		"ncu/regions-sample/report.md", "stakeholder_summary.md", "report.html"} {
		assert.FileExists(t, filepath.Join(main, f))
	}
	m, err := os.ReadFile(filepath.Join(main, "manifest.json"))
	require.NoError(t, err)
	assert.Contains(t, string(m), `"rebuilt": "2026-11-21T23:00:00Z"`)

	_, _, err = runCmd([]string{"report"}, "")
	assert.Equal(t, 2, exitCode(err))
}

// TestReportRefusesNonRunDirectory: deepprof report on an empty folder, or
// one like /tmp, exits 2 with one line saying what is missing, and writes
// nothing into it.
func TestReportRefusesNonRunDirectory(t *testing.T) {
	t.Parallel()
	likeTmp := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(likeTmp, "notes.txt"), []byte("x"), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(likeTmp, "systemd-private-1"), 0o700))
	onlyExport := t.TempDir() // an export, but no session wrote this directory
	require.NoError(t, os.MkdirAll(filepath.Join(onlyExport, "ncu"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(onlyExport, "ncu", "raw.csv"), []byte("x"), 0o644))
	for _, dir := range []string{t.TempDir(), likeTmp, onlyExport, filepath.Join(t.TempDir(), "nope")} {
		before := listTree(t, dir)
		out, stderr, err := runCmd([]string{"report", dir}, "")
		require.Error(t, err, dir)
		assert.Equal(t, 2, exitCode(err), dir)
		assert.Equal(t, dir+": not a run directory: ", err.Error()[:len(dir)+len(": not a run directory: ")])
		assert.NotContains(t, oneLine(err), "\n")
		assert.Empty(t, out)
		assert.Empty(t, stderr)
		assert.Equal(t, before, listTree(t, dir), "nothing written into %s", dir)
	}
}

// listTree lists every path under dir ("" for none).
func listTree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// TestReportBadConfig: a run whose config.yaml cannot be read is not
// rebuilt with other settings (the numbers would change): the error names
// the file and line and says what to do, and nothing is written.
func TestReportBadConfig(t *testing.T) {
	t.Parallel()
	main := filepath.Join(t.TempDir(), "run")
	require.NoError(t, os.MkdirAll(filepath.Join(main, "ncu"), 0o755))
	require.NoError(t, rundir.WriteMark(main, "run")) // a session stopped before its manifest
	raw, err := os.ReadFile(twoproc)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(main, "ncu", "raw.csv"), raw, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(main, "config.yaml"), []byte("report:\n  top_n: many\n"), 0o644))

	stdout, _, err := runCmd([]string{"report", main}, "")
	require.Error(t, err)
	assert.Equal(t, 1, exitCode(err))
	assert.Contains(t, err.Error(), filepath.Join(main, "config.yaml")+":2: report.top_n")
	assert.Contains(t, err.Error(), "mend config.yaml, or move it away to rebuild with the default settings")
	assert.Empty(t, stdout)
	assert.NoFileExists(t, filepath.Join(main, "stakeholder_summary.md"))
	assert.NoFileExists(t, filepath.Join(main, "manifest.json"))
}

// TestReportOfAKilledRun: a run its session marked partial (the program
// was killed) is rebuilt, and deepprof report says it is partial, with the
// session's reason, and exits 1: its numbers are not the whole program's.
func TestReportOfAKilledRun(t *testing.T) {
	now = func() time.Time { return time.Date(2026, 11, 21, 23, 0, 0, 0, time.UTC) }
	main := filepath.Join(t.TempDir(), "killed")
	require.NoError(t, os.CopyFS(main, os.DirFS("../../fixtures/runs/h200-killed-sigkill")))
	out, _, err := runCmd([]string{"report", main}, "")
	require.Error(t, err)
	assert.Equal(t, 1, exitCode(err))
	assert.Contains(t, out, "derived files rebuilt, and the run is partial: CUPTI timeline: python3 was killed by SIGKILL")
	assert.Contains(t, err.Error(), "is partial: CUPTI timeline: python3 was killed by SIGKILL")
	assert.FileExists(t, filepath.Join(main, "stakeholder_summary.md"))
}

// TestReportPrintsPathsAsData (issue 53): a run directory whose path holds
// a newline (a folder someone named so) is printed escaped: no line of
// report's output can be forged by it. SYNTHETIC folder name; the run is a
// raw copy of a recorded one.
func TestReportPrintsPathsAsData(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "run\nsummary : /etc/passwd")
	require.NoError(t, synth.RawCopy(dir, "../../fixtures/runs/corpus-cpp"))
	stdout, _, err := runCmd([]string{"report", dir}, "")
	require.NoError(t, err)
	for _, line := range strings.Split(stdout, "\n") {
		assert.False(t, strings.HasPrefix(line, "summary : /etc/passwd"), "a forged line: %q", line)
	}
	assert.Contains(t, stdout, `run\u000asummary : /etc/passwd: derived files rebuilt`)
}
