package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/rundir"
	"github.com/llm-perf-opt/deepprof/internal/synth"
)

const cuptiRun = "../../fixtures/runs/cupti-tiny-llama"

// usersFiles are a person's files dropped into a run: beside the region
// tables (in ncu/regions/ and in a region's folder, in both region
// reports), in charts/ and timeline/, and at the top.
var usersFiles = map[string]string{
	"ncu/regions/NOTES.md":                    "SYNTHETIC: my notes on the regions\n",
	"ncu/regions/prefill/my_comment.txt":      "SYNTHETIC: prefill looks slow\n",
	"ncu/regions/decode_all/sub/mine.md":      "SYNTHETIC: a folder of mine in a region's\n",
	"ncu/regions-sample/prefill/my_notes.txt": "SYNTHETIC: about the sample\n",
	"charts/my_chart.svg":                     "<svg><!-- SYNTHETIC: mine --></svg>\n",
	"timeline/my_trace_notes.txt":             "SYNTHETIC: notes on the trace\n",
	"my_notes.txt":                            "SYNTHETIC: notes on this run\n",
}

// dropFiles writes files into dir.
func dropFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
}

// TestReportKeepsUsersFiles (issue 53): a rebuild replaces and removes
// only the files deepprof wrote. A person's files in ncu/regions/ and in a
// region's folder, in charts/, timeline/ and the run's top folder stay,
// byte for byte, through the first rebuild of a recorded run (copied raw,
// and copied whole, derived files and all) and through a second; the
// region tables are the rebuild's all the same. ncu/regions/ was replaced
// whole, its notes gone without a word.
func TestReportKeepsUsersFiles(t *testing.T) {
	t.Parallel()
	raw := filepath.Join(t.TempDir(), "raw")
	require.NoError(t, synth.RawCopy(raw, cuptiRun))
	whole := filepath.Join(t.TempDir(), "whole")
	require.NoError(t, os.CopyFS(whole, os.DirFS(cuptiRun)))
	for _, main := range []string{raw, whole} {
		dropFiles(t, main, usersFiles)
		for round := range 2 {
			_, _, err := runCmd([]string{"report", main}, "")
			require.NoError(t, err, "%s, rebuild %d", main, round+1)
			for rel, content := range usersFiles {
				b, err := os.ReadFile(filepath.Join(main, filepath.FromSlash(rel)))
				if assert.NoError(t, err, "%s, rebuild %d: %s is gone", main, round+1, rel) {
					assert.Equal(t, content, string(b), "%s, rebuild %d: %s", main, round+1, rel)
				}
			}
			for _, rel := range []string{"ncu/regions/report.md", "ncu/regions/prefill/kernels.md", "ncu/regions/decode_all/kernels.json", "charts/top_kernels.svg"} {
				want, err := os.ReadFile(filepath.Join(cuptiRun, filepath.FromSlash(rel)))
				require.NoError(t, err)
				got, err := os.ReadFile(filepath.Join(main, filepath.FromSlash(rel)))
				require.NoError(t, err)
				assert.Equal(t, string(want), string(got), "%s: the rebuild's own, as recorded", rel)
			}
		}
	}
}

// TestReportRefusesAnOccupiedName (issue 53): a file at a derived file's
// name that the manifest does not list as deepprof's (charts/roofline.svg
// of a run whose roofline was skipped) is neither replaced nor removed: the
// rebuild is refused before it writes anything (exit 1, the file named,
// what to do), and the run is as it was. The skipped chart's "earlier
// copy" was removed as the rebuild's own.
func TestReportRefusesAnOccupiedName(t *testing.T) {
	t.Parallel()
	main := filepath.Join(t.TempDir(), "run")
	require.NoError(t, synth.RawCopy(main, cuptiRun))
	mine := map[string]string{"charts/roofline.svg": "<svg><!-- SYNTHETIC: my roofline --></svg>\n"}
	dropFiles(t, main, mine)
	before := synth.Tree(t, main)

	stdout, _, err := runCmd([]string{"report", main}, "")
	require.Error(t, err)
	assert.Equal(t, 1, exitCode(err))
	assert.Equal(t, filepath.Join(main, "charts", "roofline.svg")+": a file deepprof did not write (its manifest does not list it as deepprof's) where deepprof report writes its own: nothing was rebuilt, nothing removed; move it away and run deepprof report again", oneLine(err))
	assert.Empty(t, stdout)
	after := synth.Tree(t, main)
	delete(after, rundir.LockFile) // the lock a rebuild holds, deepprof's
	assert.Empty(t, synth.Changed(before, after), "nothing written, nothing removed")

	// Moved away, the rebuild goes ahead, and the file is the user's still.
	require.NoError(t, os.Rename(filepath.Join(main, "charts", "roofline.svg"), filepath.Join(main, "roofline-mine.svg")))
	_, _, err = runCmd([]string{"report", main}, "")
	require.NoError(t, err)
	b, err := os.ReadFile(filepath.Join(main, "roofline-mine.svg"))
	require.NoError(t, err)
	assert.Equal(t, mine["charts/roofline.svg"], string(b))
	assert.NoFileExists(t, filepath.Join(main, "charts", "roofline.svg"), "skipped: not drawn")
}

// TestReportRefusesAnOccupiedNameOfASession: where a session stopped
// before its manifest, the derived-named files in its run are its own;
// a folder at a derived file's name is no file of deepprof's, whoever made
// it, and is refused as one (nothing removed).
func TestReportRefusesAnOccupiedNameOfASession(t *testing.T) {
	t.Parallel()
	main := filepath.Join(t.TempDir(), "run")
	require.NoError(t, synth.RawCopy(main, cuptiRun))
	require.NoError(t, os.Remove(filepath.Join(main, rundir.ManifestJSON)))
	require.NoError(t, os.MkdirAll(filepath.Join(main, "kernels.md", "mine"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(main, "kernels.md", "mine", "a.txt"), []byte("SYNTHETIC\n"), 0o644))
	before := synth.Tree(t, main)
	_, _, err := runCmd([]string{"report", main}, "")
	require.Error(t, err)
	assert.Equal(t, 1, exitCode(err))
	assert.True(t, strings.HasPrefix(oneLine(err), filepath.Join(main, "kernels.md")+": a file deepprof did not write"), oneLine(err))
	after := synth.Tree(t, main)
	delete(after, rundir.LockFile)
	assert.Empty(t, synth.Changed(before, after))
}
