package harness_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/cupti"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
	"github.com/llm-perf-opt/deepprof/internal/synth"
	"github.com/llm-perf-opt/deepprof/internal/timeline"
)

// TestRecordedRanksKeptApart (issue 28): two recorded 2-H100 runs whose
// ranks each saw its GPU as device 0, one where the launcher's ranks each
// saw only their own GPU (DEEPPROF_VISIBLE_PER_RANK), one merged from two
// "nodes" of one rank each (TestStage2TwoNodes). Rebuilt with no GPU, each
// keeps its ranks apart: their records name two GPUs by UUID, the
// timeline numbers them by rank, the tables have a device per rank, the
// summary names the ranks as the launcher numbered them, and the oracle
// check passes.
func TestRecordedRanksKeptApart(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		run      string
		machines int
	}{
		{"../fixtures/runs/h100x2-tp2-visible-per-rank", 1},
		{"../fixtures/runs/h100x2-two-nodes-merged", 2},
	} {
		t.Run(filepath.Base(c.run), func(t *testing.T) {
			dir := synth.RawRun(t, c.run)
			r := rebuilt(t, dir)
			assert.Equal(t, "complete", r.manifest.Status, r.manifest.Reason)
			run, err := rundir.Open(dir)
			require.NoError(t, err)
			tl, err := timeline.Load(rundir.TimelineCupti, rundir.CuptiFiles(run), run.Open)
			require.NoError(t, err)
			ordinal0 := map[string]bool{}
			for _, p := range tl.Processes {
				for _, n := range p.Notes {
					if d, uuid, ok := cupti.DeviceUUID(n); ok && d == 0 {
						ordinal0[uuid] = true
					}
				}
			}
			assert.Len(t, ordinal0, 2, "two GPUs, each some rank's device 0")
			require.Len(t, tl.GPUs, 2)
			machines := map[string]bool{}
			for i, g := range tl.GPUs {
				assert.Equal(t, []int{i}, g.Ranks, "device %d is rank %d's GPU", i, i)
				assert.True(t, ordinal0[g.UUID], g.UUID)
				machines[g.Machine] = true
			}
			assert.Len(t, machines, c.machines)

			var kj struct {
				Kernels []struct{ Device int }
			}
			require.NoError(t, json.Unmarshal([]byte(readFile(t, filepath.Join(dir, rundir.KernelsJSON))), &kj))
			devices := map[int]bool{}
			for _, k := range kj.Kernels {
				devices[k.Device] = true
			}
			assert.Equal(t, map[int]bool{0: true, 1: true}, devices)
			assert.Contains(t, r.findings, "the rest is waiting for rank 0 (process ")

			// Per-rank stage times, from the workload report: shown where
			// the ranks differ by more than their spread, said where not.
			var sj struct {
				Stages struct {
					Rows []struct {
						Name       string
						Ranks      []struct{ Rank int }
						RanksAgree int `json:"ranks_agree"`
					}
				}
			}
			require.NoError(t, json.Unmarshal([]byte(readFile(t, filepath.Join(dir, rundir.SummaryJSON))), &sj))
			require.NotEmpty(t, sj.Stages.Rows)
			for _, row := range sj.Stages.Rows {
				assert.True(t, len(row.Ranks) == 2 || row.RanksAgree == 2, "%s: per rank or agreeing", row.Name)
			}
			assert.Contains(t, r.summary, "Per rank: the stages above are rank 0's")

			var check struct{ Passed bool }
			require.NoError(t, json.Unmarshal([]byte(readFile(t, filepath.Join(dir, rundir.OracleCheckJSON))), &check))
			assert.True(t, check.Passed, "the oracle check, each torch.profiler rank on its rank's GPU")
		})
	}
}
