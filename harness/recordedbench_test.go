package harness_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/harness"
)

// BenchmarkRebuildRecorded rebuilds recorded runs as `deepprof report`
// does: the default session's (the kill tests' run) and the CUPTI run with
// the most launches among the small ones; and, on a GPU machine, the run
// directories DEEPPROF_BENCH_RUNS lists (separated by the OS's list
// separator), rebuilt in place, too large to record.
func BenchmarkRebuildRecorded(b *testing.B) {
	runs := []string{"h200-default-tiny-llama", "cupti-tiny-llama", "moe-h100"}
	inPlace := filepath.SplitList(os.Getenv("DEEPPROF_BENCH_RUNS"))
	for _, name := range append(runs, inPlace...) {
		b.Run(filepath.Base(name), func(b *testing.B) {
			dir := name
			if !slices.Contains(inPlace, name) {
				dir = filepath.Join(b.TempDir(), "run")
				require.NoError(b, os.CopyFS(dir, os.DirFS(filepath.Join("..", "fixtures", "runs", name))))
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := harness.Report(dir, harness.ReportOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
