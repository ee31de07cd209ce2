package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/rundir"
)

var kills = flag.Int("kills", 37, "rounds of TestReportKilled, every third beside a second report (issue 27 asks 200)")

// TestReportKilled (issues 16 and 27): deepprof report killed with SIGKILL
// at seeded random points, every third round while a second report of the
// same run is under way. Right after a kill with no second report (the
// first round's at once), every file of the run is the one before the
// rebuild or the one an uninterrupted rebuild writes, and the manifest is
// truthful (a file it calls complete is there at its size; a complete run
// has no missing file). A second report, which waits for the lock, ends
// with exit 0, the run byte-identical to an uninterrupted rebuild
// (manifest.json but for its rebuilt time) and no temporary file behind.
// The recorded run is killedRun.
func TestReportKilled(t *testing.T) {
	t.Parallel() // mostly waits on real processes
	if testing.Short() {
		t.Skip("kills real processes: about 8 s")
	}
	report := reportCommand(t)
	src := killedCopy(t)
	oldFiles := runFiles(t, src)
	want := filepath.Join(t.TempDir(), "want")
	require.NoError(t, os.CopyFS(want, os.DirFS(src)))
	start := time.Now()
	cmd := report(want)
	require.NoError(t, cmd.Run(), "%s", cmd.Stderr)
	whole := time.Since(start)
	newFiles := runFiles(t, want)
	require.NotEqual(t, string(oldFiles["kernels.md"]), string(newFiles["kernels.md"]), "the run before the rebuild and after: kernels.md told apart")

	rng := rand.New(rand.NewPCG(27, 200)) // seeded: the same kill points each time
	killed := 0
	for i := range *kills {
		dir := filepath.Join(t.TempDir(), "run")
		require.NoError(t, os.CopyFS(dir, os.DirFS(src)))
		a := report(dir)
		require.NoError(t, a.Start())
		var b *exec.Cmd
		if i%3 == 2 {
			time.Sleep(time.Duration(rng.Int64N(int64(whole) / 2)))
			b = report(dir)
			require.NoError(t, b.Start())
		}
		if i > 0 { // the first round kills it before it can write anything
			time.Sleep(time.Duration(rng.Int64N(int64(whole))))
		}
		if a.Process.Kill() == nil {
			killed++
		}
		_ = a.Wait()
		if b == nil {
			got := visibleFiles(t, dir)
			for name, g := range got {
				if name == rundir.ManifestJSON {
					continue
				}
				o, isOld := oldFiles[name]
				n, isNew := newFiles[name]
				assert.True(t, isOld && bytes.Equal(g, o) || isNew && bytes.Equal(g, n), "kill %d: %s is neither the file before the rebuild nor the one after", i, name)
			}
			for name := range oldFiles {
				if _, ok := got[name]; !ok && name != rundir.LockFile {
					_, isNew := newFiles[name]
					assert.False(t, isNew, "kill %d: %s was removed and not written again", i, name)
				}
			}
			if truthfulManifest(t, dir, i) == rundir.StatusComplete {
				// A complete manifest is the one from before the rebuild,
				// with the files from before it, or the rebuild's own.
				m := stableManifest(t, got[rundir.ManifestJSON])
				files := oldFiles
				if bytes.Equal(m, newFiles[rundir.ManifestJSON]) {
					files = newFiles
				} else {
					assert.Equal(t, string(oldFiles[rundir.ManifestJSON]), string(m), "kill %d: a complete manifest neither before nor after", i)
				}
				for name, w := range files {
					if name != rundir.ManifestJSON {
						assert.Equal(t, string(w), string(got[name]), "kill %d: the manifest says complete: %s", i, name)
					}
				}
			}
			b = report(dir)
			require.NoError(t, b.Start())
		}
		require.NoError(t, b.Wait(), "round %d: the second report: %s", i, b.Stderr)
		got := runFiles(t, dir)
		assert.Equal(t, keys(newFiles), keys(got), "round %d: the same files", i)
		for name, w := range newFiles {
			assert.Equal(t, string(w), string(got[name]), "round %d: %s", i, name)
		}
	}
	t.Logf("%d of %d reports killed before they ended (an uninterrupted rebuild took %v)", killed, *kills, whole)
}

// visibleFiles are runFiles but for the temporary files a killed writer
// leaves (the next rebuild removes them: TestReportKilled) and the lock
// file, which records its holder while held: a killed writer leaves its
// record (the next holder writes its own).
func visibleFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		if d.IsDir() && d.Name() == rundir.StagingDir {
			return filepath.SkipDir
		}
		if d.IsDir() || p == filepath.Join(dir, rundir.LockFile) {
			return nil
		}
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = b
		return nil
	}))
	return out
}

// truthfulManifest checks the run's manifest against its files: each
// derived file it calls complete is there, at the size it gives where it
// gives one; a complete run has no missing artifact. It returns the run's
// status.
func truthfulManifest(t *testing.T, dir string, round int) rundir.Status {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, rundir.ManifestJSON))
	require.NoError(t, err, "round %d", round)
	var m struct {
		Status    rundir.Status
		Artifacts []struct {
			Path, Kind string
			Status     rundir.Status
			Bytes      *int64
		}
	}
	require.NoError(t, json.Unmarshal(b, &m), "round %d", round)
	for _, a := range m.Artifacts {
		if a.Kind != "derived" {
			continue // the recorded inputs: the rebuild reads them, writes none
		}
		st, err := os.Stat(filepath.Join(dir, a.Path))
		switch a.Status {
		case rundir.StatusComplete:
			if assert.NoError(t, err, "round %d: the manifest calls %s complete", round, a.Path) && a.Bytes != nil && st.Mode().IsRegular() {
				assert.Equal(t, *a.Bytes, st.Size(), "round %d: %s's size in the manifest", round, a.Path)
			}
		case rundir.StatusMissing:
			assert.NotEqual(t, rundir.StatusComplete, m.Status, "round %d: a complete run with %s missing", round, a.Path)
		}
	}
	return m.Status
}

// runFiles are a run directory's files by relative path; manifest.json
// without its rebuilt time. A temporary file fails the test.
func runFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		if d.IsDir() {
			assert.NotEqual(t, rundir.StagingDir, d.Name(), "a temporary folder was left: %s", p)
			return nil
		}
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		rel, _ := filepath.Rel(dir, p)
		if rel == rundir.ManifestJSON {
			b = stableManifest(t, b)
		}
		out[filepath.ToSlash(rel)] = b
		return nil
	}))
	return out
}

// stableManifest drops what a rebuild writes differently on purpose: the
// rebuilt time.
func stableManifest(t *testing.T, b []byte) []byte {
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	delete(m, "rebuilt")
	out, err := json.MarshalIndent(m, "", " ")
	require.NoError(t, err)
	return out
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// killedRun is the recorded run the kill tests rebuild: a CUPTI timeline,
// its workload reports, ncu exports, regions and charts, and among the
// quickest of those to rebuild (a small trace).
const killedRun = "../../fixtures/runs/h200-default-tiny-llama"

// killedCopy is killedRun rebuilt once, uninterrupted, with --top 3: the
// run the kill tests start each round from. A recorded run's manifest
// keeps the sizes of the files its session wrote (rederive rewrites
// derived files, never the manifest), so a kill before the rebuild's first
// write would leave that manifest, not one deepprof wrote of these files.
// --top 3 makes its kernels.md differ from the one the rounds' rebuilds
// write, so that a file left from before a rebuild can be told from the
// rebuild's.
func killedCopy(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("deepprof")
	require.NoError(t, err)
	dir := filepath.Join(t.TempDir(), "base")
	require.NoError(t, os.CopyFS(dir, os.DirFS(killedRun)))
	out, err := exec.Command(bin, "report", "--top", "3", dir).CombinedOutput()
	require.NoError(t, err, "%s", out)
	return dir
}

// reportCommand makes "deepprof report DIR" commands of the test binary
// (as testscript.Main put it on PATH), their output kept apart.
func reportCommand(t *testing.T) func(dir string) *exec.Cmd {
	t.Helper()
	bin, err := exec.LookPath("deepprof")
	require.NoError(t, err)
	return func(dir string) *exec.Cmd {
		cmd := exec.Command(bin, "report", dir)
		cmd.Stdout, cmd.Stderr = new(bytes.Buffer), new(bytes.Buffer)
		return cmd
	}
}
