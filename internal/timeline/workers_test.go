package timeline

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestParseWorkers: a record file is parsed by 2 workers on two cores
// (one worker would parse in sequence: the cutting goroutine and the
// parse then share one core), one per core but one above that, at most
// 8, and in sequence on one core.
func TestParseWorkers(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for procs, want := range map[int]int{1: 1, 2: 2, 3: 2, 4: 3, 9: 8, 64: 8} {
		runtime.GOMAXPROCS(procs)
		assert.Equal(t, want, parseWorkers(), "GOMAXPROCS %d", procs)
	}
}
