package harness_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/harness"
)

// BenchmarkRebuildRecorded rebuilds recorded runs as `deepprof report`
// does: the default session's (the kill tests' run) and the CUPTI run with
// the most launches among the small ones.
func BenchmarkRebuildRecorded(b *testing.B) {
	for _, name := range []string{"h200-default-tiny-llama", "cupti-tiny-llama", "moe-h100"} {
		b.Run(name, func(b *testing.B) {
			dir := filepath.Join(b.TempDir(), "run")
			require.NoError(b, os.CopyFS(dir, os.DirFS(filepath.Join("..", "fixtures", "runs", name))))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := harness.Report(dir, harness.ReportOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
