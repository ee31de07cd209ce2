package compare_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/llm-perf-opt/deepprof/internal/input"

	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/compare"
)

// TestLoadBounded (issue 16): each file diff reads whole (kernels.json,
// the regions' report.json, summary.json, stage1/report.json,
// manifest.json) is read up to a cap: an endless one (SYNTHETIC zeros
// through a named pipe, as deepprof diff /dev/zero would read) is an error
// naming it, not memory that grows without end.
func TestLoadBounded(t *testing.T) {
	input.LimitForTest(t, 1<<20)
	for _, rel := range []string{"kernels.json", "ncu/regions/report.json", "summary.json", "stage1/report.json", "manifest.json"} {
		t.Run(rel, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "run")
			require.NoError(t, os.CopyFS(dir, os.DirFS("../../fixtures/runs/tiny-llama")))
			p := filepath.Join(dir, filepath.FromSlash(rel))
			require.NoError(t, os.Remove(p))
			input.FIFOForTest(t, p)
			_, err := compare.Load(dir)
			require.EqualError(t, err, p+": not a regular file (a named pipe): deepprof reads only plain files", "refused at once (issue 35)")
		})
	}
}
