package example

import (
	"testing"

	"github.com/llm-perf-opt/deepprof/deepproftest"
)

// expectGenerate is what the team expects of generate.py on any GPU.
func expectGenerate(run *deepproftest.Run) {
	run.RegionShareAtLeast("decode_all", 20)   // decode holds a real share of the GPU time
	run.CategoryShareAtMost("elementwise", 60) // the matmuls, not the ReLUs, dominate
	run.StageWithin("decode_step", 50)         // ms, mean over its instances
}

// The same expectations hold on the recorded run of this test (an H100),
// with no GPU: go test . (no tag).
func TestExpectationsOnRecordedRun(t *testing.T) {
	expectGenerate(deepproftest.Open(t, "../../fixtures/runs/example-profile-my-script"))
}
