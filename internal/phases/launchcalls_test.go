package phases_test

import (
	"io"
	"iter"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/phases"
	"github.com/llm-perf-opt/deepprof/internal/timeline"
)

// TestLaunchCalls: a phase's launch calls are those of its own kernels,
// each call once (a CUDA graph launch starts several kernels), timed on
// the host from the API record's start to its end; the warm-up's are
// apart. SYNTHETIC: three instances of "step", the first a warm-up (1,000
// ns against 100); the second launches k twice (calls of 5 ns), the third
// launches a graph of two kernels in one call of 30 ns.
func TestLaunchCalls(t *testing.T) {
	file := header(3) +
		n("push", 1000, 1, "", "step") + a(1010, 1, 1) + k(1020, 1030, 0, 7, 1, "k") + n("pop", 2000, 1, "", "") +
		n("push", 3000, 1, "", "step") + a(3010, 1, 2) + k(3020, 3030, 0, 7, 2, "k") + a(3040, 1, 3) + k(3050, 3060, 0, 7, 3, "k") + n("pop", 3100, 1, "", "") +
		n("push", 4000, 1, "", "step") + "A\t4010\t4040\t1\t4\tdriver\t307\tcuGraphLaunch\n" + k(4050, 4060, 0, 7, 4, "g1") + k(4060, 4070, 0, 7, 4, "g2") + n("pop", 4100, 1, "", "") +
		"E\t0\t0\n"
	tl := build(t, file)
	rep := phases.Of(tl, phases.Options{Depth: 1, Steady: phases.SteadyState(tl, nil)})
	require.Len(t, rep.Scopes, 1)
	require.Len(t, rep.Scopes[0].Phases, 1)
	p := rep.Scopes[0].Phases[0]
	assert.Equal(t, 2, p.Instances)
	assert.Equal(t, int64(4), p.Kernels)
	assert.Equal(t, int64(3), p.LaunchCalls.Count, "the graph's one call, the two launches' two")
	assert.Equal(t, int64(5+5+30), p.LaunchCalls.NS)
	require.NotNil(t, p.Warmup)
	assert.Equal(t, int64(1), p.Warmup.LaunchCalls.Count)
	assert.Equal(t, int64(5), p.Warmup.LaunchCalls.NS)
	assert.Equal(t, int64(4), rep.Scopes[0].Run.LaunchCalls.Count, "the whole run: every call")
}

// TestLaunchCallsRecorded: on every recorded run with a CUPTI timeline,
// each phase's launch calls are the distinct API records of its own
// steady-state kernels, found here by walking the kernels, with their
// time on the host; in a launch-bound phase their host time per launch is
// below the phase's wall time per launch (the measure it replaces, kernel
// time and the program's own time included).
func TestLaunchCallsRecorded(t *testing.T) {
	phasesSeen := 0
	for dir, tl := range recordedTimelines(t) {
		steady := phases.SteadyState(tl, []string{""})
		rep := phases.Of(tl, phases.Options{Depth: 1, Domains: []string{""}, Steady: steady})
		for si, sc := range rep.Scopes {
			p := tl.Processes[0]
			for _, q := range tl.Processes {
				if q.Header.PID == sc.ProcessID {
					p = q
				}
			}
			for _, ph := range sc.Phases {
				calls := map[*timeline.API]bool{}
				var ns int64
				for i := range p.Kernels {
					kx := p.Kernel(i)
					top := kx.Range
					for r := kx.Range; r != nil; r = r.Parent {
						if r.Domain == "" {
							top = r
						}
					}
					if kx.API == nil || top == nil || int64(kx.Device) != int64(sc.Device) || top.Path() != ph.Name || steady.LaunchInWarmup(kx.Range, kx.Start, []string{""}) || calls[kx.API] {
						continue
					}
					calls[kx.API] = true
					ns += kx.API.End - kx.API.Start
				}
				assert.Equal(t, int64(len(calls)), ph.LaunchCalls.Count, "%s scope %d %s", dir, si, ph.Name)
				assert.Equal(t, ns, ph.LaunchCalls.NS, "%s scope %d %s", dir, si, ph.Name)
				if ph.LaunchBound && ph.LaunchCalls.Count > 0 {
					phasesSeen++
					hostPerLaunch := float64(ph.LaunchCalls.NS) / float64(ph.Kernels)
					wallPerLaunch := float64(ph.SpanNS) / float64(ph.Kernels)
					assert.Less(t, hostPerLaunch, wallPerLaunch, "%s %s: the launch calls' host time per launch against the wall per launch", dir, ph.Name)
				}
			}
		}
	}
	assert.Greater(t, phasesSeen, 20, "launch-bound phases with launch calls recorded")
}

// recordedTimelines are the CUPTI timelines of the recorded runs, by their
// record folder; a recording the timeline refuses is left out (another
// test's).
func recordedTimelines(t *testing.T) iter.Seq2[string, *timeline.Timeline] {
	t.Helper()
	runs, err := filepath.Glob("../../fixtures/runs/*/timeline/cupti")
	require.NoError(t, err)
	return func(yield func(string, *timeline.Timeline) bool) {
		for _, dir := range runs {
			files, err := filepath.Glob(filepath.Join(dir, "cupti-*.tsv*"))
			require.NoError(t, err)
			tl, err := timeline.Load("cupti", files, func(name string) (io.ReadCloser, error) { return os.Open(name) })
			if err != nil {
				continue
			}
			if !yield(dir, tl) {
				return
			}
		}
	}
}
