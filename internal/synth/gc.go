package synth

import (
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// TestGCPercent is the garbage collector's target (GOGC) for test
// processes and the processes they start: a test's heap is small and
// short-lived, so it is collected a quarter as often as Go's default
// would.
const TestGCPercent = 400

// CollectLess sets TestGCPercent for this process and, through GOGC, for
// those it starts, unless GOGC is set already or benchmarks run (their
// time and memory are measured under Go's default, or under the target a
// benchmark sets: BenchmarkLongRun the command's). A package's
// TestMain calls it first.
func CollectLess() {
	if os.Getenv("GOGC") != "" || benchmarking(os.Args[1:]) {
		return
	}
	debug.SetGCPercent(TestGCPercent)
	os.Setenv("GOGC", strconv.Itoa(TestGCPercent))
}

// benchmarking reports whether a test binary's arguments ask it to run
// benchmarks (-test.bench with a pattern, as go test passes -bench).
func benchmarking(args []string) bool {
	for i, a := range args {
		name, value, hasValue := strings.Cut(strings.TrimPrefix(a, "-"), "=")
		if name != "-test.bench" && name != "test.bench" {
			continue
		}
		if !hasValue && i+1 < len(args) {
			value = args[i+1]
		}
		return value != ""
	}
	return false
}
