package example

import (
	"flag"
	"testing"

	"github.com/llm-perf-opt/deepprof/deepproftest"
)

// -update rewrites the golden files from the run (deepproftest reads the
// flag by name; a package that uses goldie has it already).
var _ = flag.Bool("update", false, "rewrite golden/structure and golden/perf from this run")

// expectGenerate is what the team expects of generate.py on any GPU.
func expectGenerate(run *deepproftest.Run) {
	run.RegionShareAtLeast("decode_all", 20)   // decode holds a real share of the GPU time
	run.CategoryShareAtMost("elementwise", 60) // the matmuls, not the ReLUs, dominate
	run.StageWithin("decode_step", 50)         // ms, mean over its instances
}

// tolerances of the baseline: the defaults, 10 % for every part. A decode
// step of this script is mostly Python: its wall moves with the host from
// one machine to the next, and the baseline's check reports such a move
// (its GPU work unchanged, the stage launch-bound) without failing on it.
var tolerances = deepproftest.DefaultTolerances()

// recorded is the run this test made on an H100 with -update: the one its
// golden files were written from.
const recorded = "../../fixtures/runs/example-profile-my-script"

// The same expectations hold on the recorded run, with no GPU: go test .
// (no tag).
func TestExpectationsOnRecordedRun(t *testing.T) {
	expectGenerate(deepproftest.Open(t, recorded))
}

// The recorded run against golden files of its own (the GPU test's may be
// rewritten by a later -update on a GPU; these stay the recording's).
func TestGoldensOfRecordedRun(t *testing.T) {
	run := deepproftest.Open(t, recorded)
	run.StructureMatches("recorded")
	run.Baseline("recorded", tolerances)
}
