// Package deepproftest profiles a program from a Go test and asserts on it.
//
// It runs deepprof profiling sessions as Go tests in your own module, in
// the spirit of testscript and goldie: a session is a test step, what it
// measured is typed data (Run), and what you expect of it is an assertion
// whose failure names the run directory and the numbers.
//
// Put profiling tests behind a build tag of your own (//go:build gpu), so
// that go test ./... stays fast and GPU-free:
//
//	func TestDecodeStaysMemoryBound(t *testing.T) {
//		m := deepproftest.Preflight(t) // skips without a GPU, ncu or Python; fails when broken
//		run := deepproftest.Profile(t, m, deepproftest.Options{
//			Command: []string{"python3", "generate.py", "--tokens", "32"},
//		})
//		run.RegionShareAtLeast("decode_all", 50)
//		run.BoundIs(1, "memory-bound")
//		run.StageWithin("decode_step", 25) // ms, mean over its instances
//		run.StructureMatches("generate")   // golden/structure/generate.json
//		run.Baseline("generate", deepproftest.DefaultTolerances()) // golden/perf/generate.json
//	}
//
// Golden files are written from a run under go test -update and compared
// with later runs: the structure (kernel names, call counts, regions)
// exactly, the times within tolerances. -update is a flag your test
// package registers (goldie registers it; or var _ = flag.Bool("update",
// false, "rewrite golden files")); this package reads it by name and
// registers none, so it never clashes with yours. GOLDIE_UPDATE=1 does
// the same without a flag.
//
// Open reads a run directory that is already there (a recorded run, or one
// of an earlier test), with no GPU; a run that is not complete fails the
// test (OpenPartial reads one).
package deepproftest
