package harness_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/rundir"
	"github.com/llm-perf-opt/deepprof/internal/synth"
)

// recordedOneEach is the default tiny-llama session of an H100 whose deep
// pass profiled one launch of each top kernel (fixtures/README.md).
const recordedOneEach = "../fixtures/runs/h100-tiny-llama-one-each"

// TestRecordedOneLaunchEach (issue 25): rebuilt from its recording, a deep
// pass of one launch of each top kernel (ncu --kernel-id, one invocation
// number for all) gives every top kernel a bound, each from one launch
// configuration, and says in the summary and kernels.json which share of
// the kernel's time that configuration ran (by the CUPTI timeline), down
// to a third where the invocation fell on the lighter one (a bound then
// partly measured); the kernels profiled hold the 85 % the plan asked.
func TestRecordedOneLaunchEach(t *testing.T) {
	t.Parallel()
	dir := synth.RawRun(t, recordedOneEach)
	r := rebuilt(t, dir)
	assert.Equal(t, "complete", r.manifest.Status)
	notes := strings.Join(r.manifest.Notes, "\n")
	assert.Contains(t, notes, "deep pass on the top 18 kernel(s) by exact name (18 mangled name(s)): one launch of each, its invocation 8")
	assert.Contains(t, notes, "ncu-deep: ncu ended the program once the 18 planned launches were profiled (--kill; 10 pass(es) a launch)")

	var s struct {
		Kernels struct {
			DeepShare float64 `json:"deep_share"`
			Rows      []struct {
				Display string `json:"display_name"`
				Bound   struct{ Class string }
				Sampled *struct {
					Configs, Of int
					Share       float64
				}
			}
		}
	}
	require.NoError(t, json.Unmarshal([]byte(readFile(t, filepath.Join(dir, rundir.SummaryJSON))), &s))
	require.Len(t, s.Kernels.Rows, 10)
	partial := 0
	for _, row := range s.Kernels.Rows {
		assert.NotEqual(t, "unknown", row.Bound.Class, row.Display)
		if assert.NotNil(t, row.Sampled, row.Display) {
			assert.Equal(t, 1, row.Sampled.Configs, "%s: one launch, one configuration", row.Display)
			assert.Positive(t, row.Sampled.Share, row.Display)
			assert.LessOrEqual(t, row.Sampled.Share, 1.0, row.Display)
			if row.Sampled.Of > 1 {
				partial++
				assert.Less(t, row.Sampled.Share, 1.0, row.Display)
			}
		}
	}
	assert.Equal(t, 7, partial, "seven of the ten ran in more than one configuration")
	assert.InDelta(t, 0.332, s.Kernels.Rows[1].Sampled.Share, 0.001, "its invocation 8 ran the lighter of two")
	// The plan's kernels hold 85 % of the time by name; the deep pass's
	// share is of the configurations it measured, weighted by their time.
	assert.InDelta(t, 0.684, s.Kernels.DeepShare, 0.001)
	assert.Contains(t, readFile(t, filepath.Join(dir, rundir.StakeholderSummary)), "partly measured (33.2% of its time; latency-bound there, 1 of 2 configs)")
}
