package workload

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadClock reads the clock lines of a recorded CUPTI run's log
// (scripts/corpus/decode_loop.cu on an H200) among the program's other
// lines.
func TestReadClock(t *testing.T) {
	name := "../../fixtures/runs/corpus-cpp/timeline/workload.log"
	f, err := os.Open(name)
	require.NoError(t, err)
	defer f.Close()
	got, err := ReadClock(f, name)
	require.NoError(t, err)
	require.Len(t, got, 3)
	for i, c := range got {
		assert.Equal(t, "decode_loop", c.Program)
		assert.Equal(t, i, c.Generate)
		assert.Equal(t, 16, c.Steps)
		require.NotNil(t, c.TPOTMS)
	}
	assert.Equal(t, 3.1266, got[0].TTFTMS)
	assert.Equal(t, 2.4445, *got[0].TPOTMS)
}

// TestReadClockErrors: a clock line that is not one is refused at its
// line; a program's other lines are not read.
func TestReadClockErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"hello\ndeepprof-clock {\"program\": \"p\"\n", "log:2: not a clock line: unexpected EOF"},
		{"deepprof-clock {\"tokens\": 3, \"steps\": 1, \"ttft_ms\": 1, \"tpot_ms\": 1}\n", "log:1: tokens 3 and steps 1: want steps = tokens - 1 >= 0"},
		{"deepprof-clock {\"tokens\": 2, \"steps\": 1, \"ttft_ms\": -1, \"tpot_ms\": 1}\n", "log:1: ttft_ms -1: want a finite time of at least 0"},
		{"deepprof-clock {\"tokens\": 2, \"steps\": 1, \"ttft_ms\": 1}\n", "log:1: no tpot_ms for 1 steps"},
		{"deepprof-clock {\"tokens\": 2, \"steps\": 1, \"ttft_ms\": 1, \"tpot_ms\": 1, \"extra\": 1}\n", "log:1: not a clock line: json: unknown field \"extra\""},
		{"deepprof-clock {\"tokens\": 2, \"steps\": 1, \"ttft_ms\": 1, \"tpot_ms\": 1} {}\n", "log:1: not a clock line: more after its JSON object"},
	} {
		_, err := ReadClock(strings.NewReader(c.in), "log")
		assert.EqualError(t, err, c.want, c.in)
	}
	got, err := ReadClock(strings.NewReader("deepprof-clockwork\nno clock\n"), "log")
	require.NoError(t, err)
	assert.Empty(t, got)
}
