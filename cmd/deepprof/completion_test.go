package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCompletion (issue 38): deepprof completion writes scripts that the
// shell reads (bash -n), made from the help's definitions: in bash, a
// command's prefix completes to the command, a flag's to the flag, the
// completion command to its shells. An unknown shell is a usage error.
func TestCompletion(t *testing.T) {
	t.Parallel()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash here")
	}
	dir := t.TempDir()
	for _, sh := range completionShells {
		out, _, err := runCmd([]string{"completion", sh}, "")
		require.NoError(t, err, sh)
		p := filepath.Join(dir, "deepprof."+sh)
		require.NoError(t, os.WriteFile(p, []byte(out), 0o644))
		switch sh {
		case "bash":
			b, err := exec.Command(bash, "-n", p).CombinedOutput()
			require.NoError(t, err, "bash -n: %s", b)
		case "zsh": // its bash part, under zsh's bashcompinit
			b, err := exec.Command(bash, "-n", p).CombinedOutput()
			require.NoError(t, err, "bash -n: %s", b)
			assert.True(t, strings.HasPrefix(out, "#compdef deepprof\n"))
		case "fish":
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				assert.True(t, strings.HasPrefix(line, "complete -c deepprof ") || strings.HasPrefix(line, "#"), line)
			}
			assert.Contains(t, out, "'__fish_seen_subcommand_from kernels' -l top")
		}
	}
	complete := func(words ...string) string {
		script := "source " + filepath.Join(dir, "deepprof.bash") + "\nCOMP_WORDS=(" + strings.Join(words, " ") + ")\nCOMP_CWORD=" +
			itoa(len(words)-1) + "\n_deepprof\necho \"${COMPREPLY[*]}\"\n"
		b, err := exec.Command(bash, "-c", script).CombinedOutput()
		require.NoError(t, err, "%s", b)
		return strings.TrimSpace(string(b))
	}
	assert.Equal(t, "kernels", complete("deepprof", "kern"))
	assert.Equal(t, "--top", complete("deepprof", "kernels", "--t"))
	assert.Equal(t, "--include", complete("deepprof", "regions", "--i"))
	assert.Equal(t, "--kernel-exclude --kernel-include", complete("deepprof", "regions", "--kernel-"))
	assert.Equal(t, "bash", complete("deepprof", "completion", "ba"))

	_, _, err = runCmd([]string{"completion", "tcsh"}, "")
	require.Error(t, err)
	assert.Equal(t, 2, exitCode(err))
}
