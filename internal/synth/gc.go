package synth

import (
	"os"
	"runtime/debug"
	"strconv"
)

// TestGCPercent is the garbage collector's target (GOGC) for test
// processes and the processes they start: a test's heap is small and
// short-lived, so it is collected a quarter as often as Go's default
// would.
const TestGCPercent = 400

// CollectLess sets TestGCPercent for this process and, through GOGC, for
// those it starts, unless GOGC is set already. A package's TestMain calls
// it first.
func CollectLess() {
	if os.Getenv("GOGC") != "" {
		return
	}
	debug.SetGCPercent(TestGCPercent)
	os.Setenv("GOGC", strconv.Itoa(TestGCPercent))
}
