package harness_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/harness"
)

// TestDryRunCheckoutPython (issue 53): a dry run in a checkout whose
// profiles/ give the interpreter a PYTHONPATH holding a sitecustomize.py
// does not start the interpreter with it. The interpreter is this
// machine's python3, which does run the sitecustomize when started with
// that PYTHONPATH: the command line's, below.
func TestDryRunCheckoutPython(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3 on PATH: the sitecustomize would not run anyway")
	}
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	files := map[string]string{
		"profiles/stage2.yaml": "defaults: [ncu/default, nsys/default, workloads/tiny-llama]\n" +
			"workload:\n  env:\n    PYTHONPATH: site\n",
		"site/sitecustomize.py": "open('ran-sitecustomize', 'w').close()\n",
	}
	for rel, body := range files {
		require.NoError(t, os.MkdirAll(filepath.Dir(rel), 0o755))
		require.NoError(t, os.WriteFile(rel, []byte(body), 0o644))
	}
	preflight := func(overrides ...string) string {
		t.Helper()
		s, err := harness.NewProfile(harness.ProfileOptions{DryRun: true, Overrides: append([]string{"ncu.path=/nonexistent/ncu"}, overrides...)})
		require.NoError(t, err)
		var b strings.Builder
		require.NoError(t, s.WritePreflight(&b))
		return b.String()
	}

	out := preflight()
	assert.NoFileExists(t, "ran-sitecustomize", "the dry run started python3 with the profile file's PYTHONPATH")
	assert.Contains(t, out, "  skip  workload: ")
	assert.Contains(t, out, "workload.env.PYTHONPATH is from a profile file (profiles/stage2.yaml:4)")

	// The same PYTHONPATH from the command line is the user's to run.
	preflight("workload.env.PYTHONPATH=site")
	assert.FileExists(t, "ran-sitecustomize", "python3 runs a sitecustomize on its PYTHONPATH: the check above means something")
}

// TestDryRunImportsNothingHere (issue 53): the dry run's import check
// (python3 -c "import torch, transformers") does not import a torch.py of
// the directory it runs in: python -c puts that directory first on
// sys.path, where the workload's own run has its script's folder.
func TestDryRunImportsNothingHere(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3 on PATH")
	}
	t.Chdir(t.TempDir())
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	require.NoError(t, os.WriteFile("torch.py", []byte("open('ran-torch', 'w').close()\n"), 0o644))
	s, err := harness.NewProfile(harness.ProfileOptions{DryRun: true, Overrides: []string{"ncu.path=/nonexistent/ncu"}})
	require.NoError(t, err)
	var b strings.Builder
	require.NoError(t, s.WritePreflight(&b))
	assert.Contains(t, b.String(), "workload: ")
	assert.NoFileExists(t, "ran-torch", "the import check imported ./torch.py")
}
