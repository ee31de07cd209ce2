package phases

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/llm-perf-opt/deepprof/facts"
)

// TestJudge: launch-bound only where the GPU waits on launches (SYNTHETIC
// phases, after held-out programs'): a C++ set-up phase with no kernel is
// not judged; solve/iteration, idle 84% with gaps of 0.072 ms, a median
// launch latency of 622 µs and earlier work on the device, has the host
// ahead; a set-up whose device is idle too is neither; a decode whose idle is
// nearly all gaps between its kernels is launch-bound.
func TestJudge(t *testing.T) {
	ms := func(v float64) int64 { return int64(v * 1e6) }
	setup := facts.Phase{SpanNS: ms(5), IdleNS: ms(5), IdleShare: 1}
	judge(&setup)
	assert.False(t, setup.LaunchBound, "no kernel: not judged")
	assert.False(t, setup.HostAhead)

	solve := facts.Phase{Kernels: 40, SpanNS: ms(10), IdleNS: ms(8.4), IdleShare: 0.84,
		Gaps: facts.GapStats{SumNS: ms(0.072)}, Latency: facts.Latency{Count: 40, MedianNS: 622e3}, QueuedNS: ms(8)}
	judge(&solve)
	assert.False(t, solve.LaunchBound, "gaps make 0.9% of the idle")
	assert.True(t, solve.HostAhead, "its kernels waited 622 µs in a queue behind earlier work")

	// A Triton program's setup: 4 kernels, idle 100 % of 488 ms, gaps of
	// 35 ms, launches waiting 454 µs (module loading), and no other work
	// on the device: the host's own work, not a queue.
	lead := facts.Phase{Kernels: 4, SpanNS: ms(488.5), IdleNS: ms(488.46), IdleShare: 0.9999,
		Gaps: facts.GapStats{SumNS: ms(35.07)}, Latency: facts.Latency{Count: 4, MedianNS: 454e3}}
	judge(&lead)
	assert.False(t, lead.LaunchBound)
	assert.False(t, lead.HostAhead, "no earlier work on the device to queue behind")

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
