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

// TestAutoRangesNeverMix (issue 54): the automatic ranges, run in Python
// over SYNTHETIC stand-ins of torch and transformers (testdata). Each
// generate() call is marked where it is called (TTFT starts there). A
// program with no ranges of its own gets prefill, decode_all and a
// decode_step a pass; a program whose forward hooks push its own ranges
// gets none of deepprof's: before, they were pushed on the same NVTX
// stack, and the program's pop closed decode_all after one step.
func TestAutoRangesNeverMix(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 on PATH")
	}
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sitecustomize.py"), autoRangeSite, 0o644))
	cmd := exec.Command(py, filepath.Join("testdata", "autorange_never_mix.py"))
	cmd.Env = append(os.Environ(), "PYTHONPATH="+dir+string(os.PathListSeparator)+filepath.Join("testdata", "autorange-stubs"),
		"PYTHONDONTWRITEBYTECODE=1", "DEEPPROF_MODEL_FACTS=", "DEEPPROF_AUTO_RANGES=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	require.Len(t, lines, 2, "%s", out)
	assert.Equal(t, "plain: mark deepprof:generate; push prefill; pop; push decode_all; push decode_step; pop; push decode_step; pop; pop", lines[0])
	assert.Equal(t, "hooks: mark deepprof:generate; push prefill; pop; push decode; pop; push decode; pop", lines[1])
}
