package phases

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/synth"
)

// TestNestedLargestBeforeFinish (issue 53): the nested regions a scope
// lists are chosen before they are finished, depth by depth; they and
// what is left out are those of finishing every nested region and then
// keeping the MaxPhases largest, on a SYNTHETIC program with a range per
// iteration, ranges nested inside the first, and its warm-up left out.
func TestNestedLargestBeforeFinish(t *testing.T) {
	c := synth.Small(7)
	c.DecodeSteps, c.NumberSteps, c.Nest = 3*MaxPhases, true, 4
	var rec bytes.Buffer
	require.NoError(t, synth.Write(&rec, c))
	tl := synth.Timeline(t, rec.String())
	for _, steady := range []*Steady{nil, SteadyState(tl, nil)} {
		opt := Options{Depth: 1, NestedDepth: 4, Steady: steady}
		got := Of(tl, opt)
		require.NotEmpty(t, got.Scopes)
		for _, sc := range got.Scopes {
			var all []facts.Phase
			for d := opt.Depth + 1; d <= opt.NestedDepth; d++ {
				for _, ss := range of(tl, Options{Depth: d, Steady: steady}, 0, true, spanCache{}).Scopes {
					if ss.ProcessID == sc.ProcessID && ss.Device == sc.Device {
						all = append(all, ss.Phases...)
					}
				}
			}
			require.Greater(t, len(all), MaxPhases)
			want, out := largest(all)
			assert.Equal(t, want, sc.Nested)
			assert.Equal(t, out, sc.NestedLeftOut)
		}
	}
}
