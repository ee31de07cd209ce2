//go:build gpu

// The profiling test a user writes for their own program: go test -tags gpu .
// (without a GPU, ncu or PyTorch it skips, saying why).
package example

import (
	"strings"
	"testing"

	"github.com/llm-perf-opt/deepprof/deepproftest"
)

func TestGenerateProfile(t *testing.T) {
	m := deepproftest.Preflight(t)
	run := deepproftest.Profile(t, m, deepproftest.Options{
		Command: []string{"python3", "generate.py"},
	})
	expectGenerate(run)
	// The kernels cuBLAS picks and the times are the GPU's: one golden of
	// each per GPU model, written by the first -update on it.
	name := strings.ReplaceAll(m.GPU.Name, " ", "-") + "-generate"
	run.StructureMatches(name)     // kernel names, call counts, regions: golden/structure
	run.Baseline(name, tolerances) // times, by tolerance: golden/perf
	t.Logf("run directory: %s", run.Dir)
}
