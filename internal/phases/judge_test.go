package phases

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/llm-perf-opt/deepprof/internal/facts"
)

// TestJudge: launch-bound only where the GPU waits on launches (SYNTHETIC
// phases, after held-out programs'): a C++ set-up phase with no kernel is
// not judged; solve/iteration, idle 84% with gaps of 0.072 ms and a median
// launch latency of 622 µs, has the host ahead; a decode whose idle is
// nearly all gaps between its kernels is launch-bound.
func TestJudge(t *testing.T) {
	ms := func(v float64) int64 { return int64(v * 1e6) }
	setup := facts.Phase{SpanNS: ms(5), IdleNS: ms(5), IdleShare: 1}
	judge(&setup)
	assert.False(t, setup.LaunchBound, "no kernel: not judged")
	assert.False(t, setup.HostAhead)

	solve := facts.Phase{Kernels: 40, SpanNS: ms(10), IdleNS: ms(8.4), IdleShare: 0.84,
		Gaps: facts.GapStats{SumNS: ms(0.072)}, Latency: facts.Latency{Count: 40, MedianNS: 622e3}}
	judge(&solve)
	assert.False(t, solve.LaunchBound, "gaps make 0.9% of the idle")
	assert.True(t, solve.HostAhead, "its kernels waited 622 µs in a queue")

	decode := facts.Phase{Kernels: 400, SpanNS: ms(10), IdleNS: ms(9), IdleShare: 0.9,
		Gaps: facts.GapStats{SumNS: ms(8.8)}, Latency: facts.Latency{Count: 400, MedianNS: 8e3}}
	judge(&decode)
	assert.True(t, decode.LaunchBound)
	assert.False(t, decode.HostAhead)

	busy := decode
	busy.IdleShare, busy.IdleNS = 0.3, ms(3)
	judge(&busy)
	assert.False(t, busy.LaunchBound, "idle under the threshold")
}
