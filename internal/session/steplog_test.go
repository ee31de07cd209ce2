package session

import (
	"bytes"
	"context"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/rundir"
)

// TestStepLog (issue 16): a step's console output is kept whole when it is
// small, and cut to its head and tail, saying how much was dropped, when
// it is not; the writes' sizes do not matter.
func TestStepLog(t *testing.T) {
	t.Parallel()
	// SYNTHETIC output: numbered lines.
	var all bytes.Buffer
	for i := range 1000 {
		all.WriteString(strings.Repeat("x", i%7) + "line\n")
	}
	for _, chunk := range []int{1, 3, 64, 1 << 20} {
		l := newStepLog(100, 200)
		for b := all.Bytes(); len(b) > 0; {
			k := min(chunk, len(b))
			l.Write(b[:k])
			b = b[k:]
		}
		got := l.Bytes()
		n := all.Len()
		assert.True(t, bytes.HasPrefix(got, all.Bytes()[:100]), "chunk %d: the head", chunk)
		assert.True(t, bytes.HasSuffix(got, all.Bytes()[n-200:]), "chunk %d: the tail", chunk)
		assert.Contains(t, string(got), "==> deepprof: "+strconv.Itoa(n-300)+" bytes of this step's output dropped here (the log keeps its first 100 and last 200 bytes) <==", chunk)
	}
	small := newStepLog(100, 200)
	io.WriteString(small, "all of it\n")
	assert.Equal(t, "all of it\n", string(small.Bytes()))
	exact := newStepLog(4, 4)
	io.WriteString(exact, "12345678")
	assert.Equal(t, "12345678", string(exact.Bytes()), "head+tail bytes: nothing dropped")
}

// TestStepLogEndless: an endless output (SYNTHETIC zeros, 64 MiB) is kept
// in head+tail bytes.
func TestStepLogEndless(t *testing.T) {
	t.Parallel()
	l := newStepLog(stepLogHead, stepLogTail)
	n, err := io.Copy(l, io.LimitReader(zeroReader{}, 64<<20))
	require.NoError(t, err)
	require.EqualValues(t, 64<<20, n)
	assert.LessOrEqual(t, len(l.Bytes()), stepLogHead+stepLogTail+200)
	assert.EqualValues(t, 64<<20-stepLogHead-stepLogTail, l.dropped)
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// floodRunner is a step that prints n bytes (SYNTHETIC zeros) and exits 3.
type floodRunner struct{ n int64 }

func (f floodRunner) Run(ctx context.Context, c Command) (Result, error) {
	io.Copy(c.Stdout, io.LimitReader(zeroReader{}, f.n))
	io.WriteString(c.Stdout, "\nthe last line\n")
	return Result{ExitCode: 3}, nil
}

// TestStepLogCapped: a step that prints 40 MiB leaves a log of its head
// and tail, saying what was dropped, and its error still quotes its last
// lines.
func TestStepLogCapped(t *testing.T) {
	t.Parallel()
	run, err := rundir.Create(t.TempDir(), "run", time.Date(2026, 11, 21, 22, 30, 0, 0, time.UTC))
	require.NoError(t, err)
	s := &Session{Runner: floodRunner{40 << 20}}
	err = s.step(context.Background(), run, Step{ID: StepStage1, Argv: []string{"flood"}, Log: "flood.log"}, false)
	require.ErrorContains(t, err, "flood exited with status 3")
	assert.Contains(t, err.Error(), "the last line")
	fi, err := os.Stat(run.Path("flood.log"))
	require.NoError(t, err)
	assert.LessOrEqual(t, fi.Size(), int64(stepLogHead+stepLogTail+200))
	b, err := os.ReadFile(run.Path("flood.log"))
	require.NoError(t, err)
	assert.Contains(t, string(b), "bytes of this step's output dropped here")
}
