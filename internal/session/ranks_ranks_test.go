package session

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestExec runs the wrapper as a launcher would, in rank 1, with echo as
// both the profiler and the program: the rank replaces the placeholder,
// --only leaves the profiler out of the other ranks, and the rank's folder
// of a placeholder path is made.
func TestExec(t *testing.T) {
	t.Parallel() // it waits on processes: beside the others that do
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 here: the wrapper is a Python script")
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "rank-exec.py")
	require.NoError(t, os.WriteFile(script, Script, 0o644))
	out := filepath.Join(dir, "ncu", "ranks", "rank{rank}", "deep")
	profiler := []string{"echo", "profiler", "-o", out}
	program := []string{"echo", "program", "at-{rank}"}
	for _, tc := range []struct {
		name string
		only int
		want string
	}{
		{"every rank", All, "profiler -o " + filepath.Join(dir, "ncu", "ranks", "rank1", "deep") + " echo program at-1"},
		{"this rank only", 1, "profiler -o " + filepath.Join(dir, "ncu", "ranks", "rank1", "deep") + " echo program at-1"},
		{"another rank only", 0, "program at-1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			argv := Exec(py, script, tc.only, profiler, program)
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Env = append(os.Environ(), "RANK=1")
			b, err := cmd.CombinedOutput()
			require.NoError(t, err, string(b))
			assert.Equal(t, tc.want, strings.TrimSpace(string(b)))
		})
	}
	assert.DirExists(t, filepath.Join(dir, "ncu", "ranks", "rank1"))

	// On a node of a multi-node run, --only is the node's local rank and
	// the files are named by the global one.
	argv := Exec(py, script, 1, profiler, program)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "RANK=3", "LOCAL_RANK=1")
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, string(b))
	assert.Equal(t, "profiler -o "+filepath.Join(dir, "ncu", "ranks", "rank3", "deep")+" echo program at-3", strings.TrimSpace(string(b)))

	// Outside a launcher it says what is missing.
	argv = Exec(py, script, All, profiler, program)
	cmd = exec.Command(argv[0], argv[1:]...)
	cmd.Env = slicesWithout(os.Environ(), "RANK=")
	b, err = cmd.CombinedOutput()
	require.Error(t, err)
	assert.Contains(t, string(b), "$RANK is not set")
}

func slicesWithout(env []string, prefix string) []string {
	var out []string
	for _, e := range env {
		if !strings.HasPrefix(e, prefix) {
			out = append(out, e)
		}
	}
	return out
}
