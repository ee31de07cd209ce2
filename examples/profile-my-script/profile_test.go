//go:build gpu

// The profiling test a user writes for their own program: go test -tags gpu .
// (without a GPU, ncu or PyTorch it skips, saying why).
package example

import (
	"testing"

	"github.com/llm-perf-opt/deepprof/deepproftest"
)

func TestGenerateProfile(t *testing.T) {
	m := deepproftest.Preflight(t)
	run := deepproftest.Profile(t, m, deepproftest.Options{
		Command: []string{"python3", "generate.py"},
	})
	run.RegionShareAtLeast("decode_all", 20)   // decode holds a real share of the GPU time
	run.CategoryShareAtMost("elementwise", 60) // the matmuls, not the ReLUs, dominate
	run.StageWithin("decode_step", 50)         // ms, mean over its instances
	// After a first run with -update has written golden/perf/generate.json:
	// run.Baseline("generate", tolerance.Default())
	t.Logf("run directory: %s", run.Dir)
}
