package ncu_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/llm-perf-opt/deepprof/internal/model"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/ncu"
)

// counter is a Handler that records the IDs it was given, and fails at
// launch failAt (when fails).
type counter struct {
	ids    []int64
	fails  bool
	failAt int64
	x      *model.Export
}

func (c *counter) Launch(x *model.Export, l *model.Launch) error {
	c.x = x
	if c.fails && l.ID == c.failAt {
		return fmt.Errorf("%s:%d: handler refuses launch %d", x.Source, l.Line, l.ID)
	}
	c.ids = append(c.ids, l.ID)
	return nil
}

// TestScan: one read of a recorded raw page gives every handler every
// launch, in order; a handler that fails gets no more launches and its own
// error, while the others go on.
func TestScan(t *testing.T) {
	data := readFixture(t, raw)
	want, rowErrs, err := readAll(data, raw)
	require.NoError(t, err)
	require.Empty(t, rowErrs)
	require.Greater(t, len(want), 3)

	a, b := &counter{}, &counter{fails: true, failAt: want[2].ID}
	r := ncu.NewReader(bytes.NewReader(data), raw, ncu.Options{})
	errs := ncu.Scan(r, raw, a, b)
	require.Len(t, errs, 2)
	assert.NoError(t, errs[0])
	assert.EqualError(t, errs[1], fmt.Sprintf("%s:%d: handler refuses launch %d", raw, want[2].Line, want[2].ID))
	require.Len(t, a.ids, len(want))
	for i, l := range want {
		assert.Equal(t, l.ID, a.ids[i])
	}
	assert.Equal(t, []int64{want[0].ID, want[1].ID}, b.ids, "no launch after the handler's error")
	assert.Equal(t, model.FormatRaw, a.x.Format)
	assert.Equal(t, raw, a.x.Source)
	assert.Contains(t, a.x.Header, model.DurationMetric)
	assert.Equal(t, len(want), r.Launches(), "one read")
}

// TestScanEndsForAll: a malformed row (SYNTHETIC: a recorded page with its
// fourth launch's ID made a word), an export with no launch, and handlers
// that all failed end the read.
func TestScanEndsForAll(t *testing.T) {
	lns := lines(readFixture(t, raw))
	bad := strings.Join(lns[:5], "") + `"x` + strings.TrimPrefix(lns[5], `"`) + strings.Join(lns[6:], "")
	a, b := &counter{}, &counter{}
	errs := ncu.Scan(ncu.NewReader(strings.NewReader(bad), "synthetic-bad-id.csv", ncu.Options{}), "synthetic-bad-id.csv", a, b)
	var se *model.SyntaxError
	require.True(t, errors.As(errs[0], &se), "%v", errs[0])
	assert.Equal(t, 6, se.Line)
	assert.Same(t, errs[0], errs[1], "both handlers get the row's error")
	assert.Len(t, a.ids, 3)

	head := strings.Join(lns[:2], "")
	errs = ncu.Scan(ncu.NewReader(strings.NewReader(head), "synthetic-no-launch.csv", ncu.Options{}), "synthetic-no-launch.csv", &counter{})
	assert.EqualError(t, errs[0], "synthetic-no-launch.csv:1: the export holds no kernel launches")

	data := readFixture(t, raw)
	r := ncu.NewReader(bytes.NewReader(data), raw, ncu.Options{})
	first, _, _ := readAll(data, raw)
	c := &counter{fails: true, failAt: first[0].ID}
	errs = ncu.Scan(r, raw, c)
	assert.Error(t, errs[0])
	assert.Equal(t, 1, r.Launches(), "the read stops once every handler has failed")
}
