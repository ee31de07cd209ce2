//go:build gpu

package deepprof_test

// Multi-GPU sessions (issue 17): go test -tags gpu -run Stage2MultiGPU on a
// machine with 2 GPUs. A tensor-parallel tiny Llama (TP=2, random weights)
// runs under torchrun; the CUPTI library records every rank, torch.profiler
// checks each rank's NCCL time, and the deep pass is one ncu per rank, one
// rank at a time.

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/llm-perf-opt/deepprof/internal/model"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/harness"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
)

func TestStage2MultiGPU(t *testing.T) {
	tool, prov := preflight(t)
	if prov.DeviceCount < 2 {
		t.Skipf("needs 2 GPUs (a tensor-parallel workload, one rank per GPU); this machine has %d", prov.DeviceCount)
	}
	root := outDir(t)
	// One rank at a time: lockstep (every rank's ncu at once) deadlocked on
	// 2 H100s (fixtures/logs/h100x2-lockstep-deadlock).
	for _, mode := range []string{"one_at_a_time"} {
		t.Run(mode, func(t *testing.T) {
			id := "tp2-" + mode + "-" + time.Now().UTC().Format("150405")
			run := runSession(t, tool, root, id, "workloads=tiny-llama-tp2", "workload.launcher.deep_pass="+mode,
				"timeline.tool=cupti", "timeline.oracle=true")
			checkMultiGPU(t, run, true)
			for _, st := range run.Manifest().Steps {
				if strings.HasPrefix(st.Name, "ncu-deep") {
					t.Logf("deep pass (%s): %s %.1f s, exit %d", mode, st.Name, st.Seconds, st.ExitCode)
				}
			}
		})
	}
}

func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

func checkMultiGPU(t *testing.T, run *rundir.Run, oracle bool) {
	t.Helper()
	m := run.Manifest()
	require.Equal(t, rundir.StatusComplete, m.Status, "%s", m.Reason)
	// One CUPTI record file per rank (torchrun's own process may leave one
	// with no kernel: it loads torch, which opens no CUDA context).
	assert.GreaterOrEqual(t, len(rundir.CuptiFiles(run)), 2, "one CUPTI record file per rank")
	// Rank 0's deep pass always; the others' unless the timeline showed
	// every rank launching the same top kernels (deep_ranks=auto), as a
	// note says.
	oneRank := strings.Contains(strings.Join(m.Notes, "\n"), "deep pass: rank 0 alone")
	for _, r := range []string{"0", "1"} {
		for _, rel := range []string{rundir.NcuRaw, rundir.NcuDetails} {
			if r == "0" || !oneRank {
				assert.FileExists(t, run.Path(rundir.RankPath(r, rel)))
			}
		}
	}
	// Per-rank kernel tables: both devices, NCCL on both.
	var ks struct {
		Kernels []model.Kernel `json:"kernels"`
	}
	readJSON(t, run.Path(rundir.KernelsJSON), &ks)
	devices, nccl := map[model.DeviceID]bool{}, map[model.DeviceID]float64{}
	for _, k := range ks.Kernels {
		devices[k.Device] = true
		if strings.Contains(strings.ToLower(k.Name), "nccl") {
			nccl[k.Device] += k.TotalMS
		}
	}
	assert.True(t, devices[0] && devices[1], "kernels on both GPUs: %v", devices)
	assert.Greater(t, nccl[0], 0.0, "NCCL kernels on rank 0")
	assert.Greater(t, nccl[1], 0.0, "NCCL kernels on rank 1")
	t.Logf("NCCL kernel time: device 0 %.3f ms, device 1 %.3f ms", nccl[0], nccl[1])

	// The deep pass left the collectives out, and said so.
	notes := strings.Join(m.Notes, "\n")
	assert.Contains(t, notes, "collective kernel(s) left out")

	sum, err := os.ReadFile(run.Path(rundir.StakeholderSummary))
	require.NoError(t, err)
	assert.Contains(t, string(sum), "## Communication")
	assert.Contains(t, string(sum), "straggler")
	env, err := os.ReadFile(run.Path(rundir.EnvJSON))
	require.NoError(t, err)
	assert.Contains(t, string(env), `"topology"`)

	if oracle {
		// NCCL time per rank within 5 % of torch.profiler's.
		var c harness.OracleCheck
		readJSON(t, run.Path(rundir.OracleCheckJSON), &c)
		perRank, net := 0, 0
		for _, r := range c.Rows {
			t.Logf("oracle: %-60.60s oracle %9.3f ms (%5d)  timeline %9.3f ms (%5d)  %+.2f%%  %v %s", r.What, r.OracleMS, r.OracleLaunches, r.TimedMS, r.TimedLaunches, 100*r.Diff, r.OK, r.Why)
			switch {
			case strings.HasPrefix(r.What, "collectives rank "):
				// With their waits: shown, not judged.
				perRank++
				assert.True(t, r.Informational, r.What)
				assert.Equal(t, r.OracleLaunches, r.TimedLaunches, r.What)
			case strings.HasPrefix(r.What, "collectives net of waiting"):
				net++
				assert.True(t, r.OK, "NCCL time net of waiting within 5 %% of torch.profiler's: %s", r.Why)
			}
		}
		assert.Equal(t, 2, perRank, "a collectives row per rank")
		assert.Equal(t, 1, net, "the collectives net of waiting")
		assert.True(t, c.Passed, "the CUPTI timeline agrees with torch.profiler (%s)", run.Path(rundir.OracleCheckJSON))
	}
}
