package session

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestProgressSplitsLines: output arrives in pieces that cut lines (and a
// last line with no newline); each line is fed once, whole.
func TestProgressSplitsLines(t *testing.T) {
	t.Parallel()
	clock := time.Date(2026, 11, 21, 23, 0, 0, 0, time.UTC)
	now := func() time.Time { return clock }
	var out strings.Builder
	p := newProgress("ncu-deep", &out, false, now)
	log := `==PROF== Connected to process 8953 (/usr/bin/python3.12)
==PROF== Profiling "indexSelectSmallIndex" - 0: 0%....50%....100% - 1 pass
==PROF== Profiling "Kernel2" - 1: 0%....50%....100% - 1 pass
==PROF== Profiling "reduce_kernel" - 2: 0%....50%....100% - 1 pass`
	for i := 0; i < len(log); i += 7 {
		n, err := p.Write([]byte(log[i:min(i+7, len(log))]))
		assert.NoError(t, err)
		assert.Equal(t, min(7, len(log)-i), n)
	}
	assert.Empty(t, out.String(), "quiet until the pass ends")
	clock = clock.Add(12345 * time.Millisecond)
	assert.NoError(t, p.Close())
	assert.Equal(t, "ncu-deep: 3 launches profiled in 12.3s\n", out.String())
}

// TestProgressLiveLine: live, the line is rewritten in place, never wider
// than liveWidth, and blanked where a shorter line leaves characters.
func TestProgressLiveLine(t *testing.T) {
	t.Parallel()
	clock := time.Date(2026, 11, 21, 23, 0, 0, 0, time.UTC)
	now := func() time.Time { return clock }
	var out strings.Builder
	p := newProgress("ncu-timing", &out, true, now)
	long := strings.Repeat("k", 120)
	p.Write([]byte(`==PROF== Profiling "` + long + `" - 0: 0%....50%....100% - 1 pass` + "\n"))
	clock = clock.Add(100 * time.Millisecond)
	p.Write([]byte(`==PROF== Profiling "b" - 1: 0%....50%....100% - 1 pass` + "\n")) // too soon: not shown
	clock = clock.Add(200 * time.Millisecond)
	p.Write([]byte(`==PROF== Profiling "c" - 2: 0%....50%....100% - 1 pass` + "\n"))
	p.Close()
	frames := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\r")[1:]
	assert.Len(t, frames, 3)
	assert.Equal(t, "ncu-timing: 1 launch profiled, current: "+long[:liveWidth-len("ncu-timing: 1 launch profiled, current: ")-3]+"...", frames[0])
	assert.Equal(t, liveWidth, len(frames[1]), "padded over the longer line")
	assert.True(t, strings.HasPrefix(frames[1], "ncu-timing: 3 launches profiled, current: c, 0.3s  "), frames[1])
	assert.True(t, strings.HasPrefix(frames[2], "ncu-timing: 3 launches profiled in 0.3s  "), frames[2])
	assert.True(t, strings.HasSuffix(out.String(), " \n"))
}

// TestProgressStopped: a pass the session stopped says so on its summary
// line, after the launches it profiled.
func TestProgressStopped(t *testing.T) {
	t.Parallel()
	clock := time.Date(2026, 11, 21, 23, 0, 0, 0, time.UTC)
	now := func() time.Time { return clock }
	var out strings.Builder
	p := newProgress("ncu-deep", &out, false, now)
	p.Write([]byte(`==PROF== Profiling "Kernel2" - 0: 0%....50%....100% - 1 pass` + "\n"))
	clock = clock.Add(1800 * time.Second)
	e := &stoppedError{step: "ncu-deep", deadline: Deadline{Key: keyNcuTimeout, Value: "30m"}}
	p.Stopped(e.short())
	assert.NoError(t, p.Close())
	assert.Equal(t, "ncu-deep: 1 launch profiled in 1800.0s, then timed out (30m, ncu.timeout)\n", out.String())
}
