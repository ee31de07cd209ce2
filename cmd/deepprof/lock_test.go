//go:build unix

package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/rundir"
)

// TestRegionsOutPlantedLock (issue 53): another user's world-writable
// .deepprof.lock, held, in a run directory in a shared folder such as
// /tmp: regions --out there ends at once, exit status 1, with one line
// naming the file and its owner, where it waited for ever without a word.
// Making a file another user's (nobody) needs root.
func TestRegionsOutPlantedLock(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("making a file another user's needs root (internal/rundir's TestLockOwnedByAnother covers the check)")
	}
	shared := t.TempDir()
	require.NoError(t, os.Chmod(shared, 0o1777))
	require.NoError(t, os.WriteFile(filepath.Join(shared, "manifest.json"), []byte(`{"run_id": "planted"}`), 0o644))
	require.NoError(t, rundir.WriteMark(shared, "planted")) // a run, so that regions --out takes its lock
	planted := filepath.Join(shared, ".deepprof.lock")
	f, err := os.OpenFile(planted, os.O_RDWR|os.O_CREATE, 0o666)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, f.Chmod(0o666))
	require.NoError(t, f.Chown(65534, 65534))
	require.NoError(t, syscall.Flock(int(f.Fd()), syscall.LOCK_EX))

	type result struct {
		stderr string
		err    error
	}
	done := make(chan result, 1)
	go func() {
		_, stderr, err := runCmd([]string{"regions", "--out", filepath.Join(shared, "mine"), basic + "raw.csv"}, "")
		done <- result{stderr, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("regions --out waits on a lock another user planted")
	}
	require.Error(t, r.err)
	assert.Equal(t, 1, exitCode(r.err))
	assert.Equal(t, planted+": the lock file belongs to uid 65534, not to you (uid 0), and deepprof takes no lock another user can hold: write elsewhere, or have its owner remove it", oneLine(r.err))
	assert.Empty(t, r.stderr, "refused before any wait")
	assert.NoFileExists(t, filepath.Join(shared, "mine", "report.md"))
}
