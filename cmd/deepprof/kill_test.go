package main

import (
	"bytes"
	"encoding/json"
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

// TestReportKilled (issue 16): deepprof report killed with SIGKILL at
// seeded random points, then run again, leaves every file of the run
// byte-identical to an uninterrupted rebuild (manifest.json but for its
// rebuilt time) and no temporary file behind. The recorded run is
// killedRun.
func TestReportKilled(t *testing.T) {
	t.Parallel() // beside TestReportKilledBesideAnother: both mostly wait on real processes
	if testing.Short() {
		t.Skip("kills real processes: about 10 s")
	}
	report := reportCommand(t)
	src := killedCopy(t)

	want := filepath.Join(t.TempDir(), "want")
	require.NoError(t, os.CopyFS(want, os.DirFS(src)))
	start := time.Now()
	cmd := report(want)
	require.NoError(t, cmd.Run(), "%s", cmd.Stderr)
	whole := time.Since(start)
	wantFiles := runFiles(t, want)

	rng := rand.New(rand.NewPCG(16, 7)) // seeded: the same kill points each time
	killed := 0
	for i := range 24 {
		dir := filepath.Join(t.TempDir(), "run")
		require.NoError(t, os.CopyFS(dir, os.DirFS(src)))
		cmd := report(dir)
		require.NoError(t, cmd.Start())
		time.Sleep(time.Duration(rng.Int64N(int64(whole))))
		if cmd.Process.Kill() == nil {
			killed++
		}
		_ = cmd.Wait()
		again := report(dir)
		require.NoError(t, again.Run(), "kill %d: the rebuild after the kill: %s", i, again.Stderr)
		got := runFiles(t, dir)
		assert.Equal(t, keys(wantFiles), keys(got), "kill %d: the same files", i)
		for name, b := range wantFiles {
			assert.Equal(t, string(b), string(got[name]), "kill %d: %s", i, name)
		}
	}
	t.Logf("%d of 24 runs killed before they ended (an uninterrupted rebuild took %v)", killed, whole)
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
