package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/model"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/rundir"
	"github.com/llm-perf-opt/deepprof/internal/synth"
	"github.com/llm-perf-opt/deepprof/internal/timeline"
)

// The recorded 2-GPU run whose ranks the merge tests replicate, and a
// recorded deep pass to stand for each rank's (the 2-GPU run's was cut
// short before it wrote one).
const (
	tp2Run  = "../../fixtures/runs/h200x2-tp2-lockstep"
	deepRun = "../../fixtures/runs/tiny-llama"
)

var tp2Records = []string{"cupti-835.tsv.gz", "cupti-836.tsv.gz"}

// TestMergeEightRanks: eight SYNTHETIC node run directories, one rank each
// (the 2-GPU recording's two ranks replicated by internal/synth, each with
// its own process id and device), merged by deepprof merge into one run:
// every rank's records and deep pass are in it, and its reports are per
// rank and together.
func TestMergeEightRanks(t *testing.T) {
	now = func() time.Time { return time.Date(2026, 11, 24, 23, 0, 0, 0, time.UTC) }
	dirs, err := synth.RankRuns(tp2Run, tp2Records, deepRun, t.TempDir(), 8)
	require.NoError(t, err)
	out := filepath.Join(t.TempDir(), "merged")
	stdout, _, err := runCmd(append([]string{"merge", "--out", out}, dirs...), "")
	require.NoError(t, err, stdout)
	assert.Contains(t, stdout, "merged 8 run directories")
	assert.Contains(t, stdout, "ranks [rank0 rank1 rank2 rank3 rank4 rank5 rank6 rank7]")

	run, err := rundir.Open(out)
	require.NoError(t, err)
	assert.Len(t, rundir.CuptiFiles(run), 8)
	assert.Len(t, run.ExportFiles(rundir.NcuRaw), 8, "every rank's deep pass")

	// Per rank: a kernel table row per device for the all-reduce.
	devices := kernelDevices(t, run)
	for d := range 8 {
		assert.True(t, devices[model.DeviceID(d)], "device %d in kernels.json", d)
	}

	// Together: the phases compare the eight ranks.
	var ph facts.PhaseReport
	b, err := os.ReadFile(run.Path(rundir.TimelinePhases))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &ph))
	assert.Len(t, ph.Scopes, 8)
	require.NotEmpty(t, ph.Balance)
	for _, bal := range ph.Balance {
		assert.Equal(t, 8, bal.Ranks, bal.Phase)
	}
	sum, err := os.ReadFile(run.Path(rundir.StakeholderSummary))
	require.NoError(t, err)
	assert.Contains(t, string(sum), "across 8 ranks")
	m := run.Manifest()
	assert.Contains(t, fmt.Sprint(m.Notes), "merged from 8 run directories")

	// A rank in two inputs is refused before anything is written.
	_, _, err = runCmd([]string{"merge", "--out", filepath.Join(t.TempDir(), "again"), dirs[0], dirs[0]}, "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is in two run directories")
	_, _, err = runCmd([]string{"merge", "--out", out, dirs[0]}, "")
	assert.Equal(t, 2, exitCode(err), "an existing --out")
	_, _, err = runCmd([]string{"merge", dirs[0]}, "")
	assert.Equal(t, 2, exitCode(err), "no --out")
}

// BenchmarkMergeRanks merges and rebuilds 2, 4 and 8 SYNTHETIC node run
// directories (TestMergeEightRanks's) as deepprof merge does; ns/rank and
// B/rank (bytes allocated) are its cost per rank, which must stay flat as
// the ranks grow (issue 17).
//
//	go test ./cmd/deepprof -run '^$' -bench MergeRanks -benchtime 3x
func BenchmarkMergeRanks(b *testing.B) {
	now = func() time.Time { return time.Date(2026, 11, 24, 23, 0, 0, 0, time.UTC) }
	for _, n := range []int{2, 4, 8} {
		b.Run(fmt.Sprintf("ranks=%d", n), func(b *testing.B) {
			dirs, err := synth.RankRuns(tp2Run, tp2Records, deepRun, b.TempDir(), n)
			if err != nil {
				b.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				out := filepath.Join(b.TempDir(), fmt.Sprintf("merged-%d", i))
				if _, _, err := runCmd(append([]string{"merge", "--out", out}, dirs...), ""); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/rank")
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N*n), "B/rank")
		})
	}
}

// TestMergeTwoNodesSharingIDs (issue 28): two SYNTHETIC nodes of two ranks
// each (internal/synth.NodeRuns), whose processes have the same ids (4200,
// 4201) and see the same device ordinals (0, 1) on both nodes, as two
// machines, or two launchers on one, give them: the merge keeps the four
// processes apart (the second node's record files renamed, and said so),
// and the rebuilt run has four devices, numbered by rank, each its GPU.
func TestMergeTwoNodesSharingIDs(t *testing.T) {
	now = func() time.Time { return time.Date(2026, 11, 24, 23, 0, 0, 0, time.UTC) }
	dirs, err := synth.NodeRuns(tp2Run, tp2Records, deepRun, t.TempDir(), 2, 2)
	require.NoError(t, err)
	out := filepath.Join(t.TempDir(), "merged")
	stdout, _, err := runCmd(append([]string{"merge", "--out", out}, dirs...), "")
	require.NoError(t, err, stdout)
	assert.Contains(t, stdout, "ranks [rank0 rank1 rank2 rank3]")

	run, err := rundir.Open(out)
	require.NoError(t, err)
	assert.Equal(t, []string{"timeline/cupti/cupti-4200-2.tsv", "timeline/cupti/cupti-4200.tsv", "timeline/cupti/cupti-4201-2.tsv", "timeline/cupti/cupti-4201.tsv"}, rundir.CuptiFiles(run))
	m := run.Manifest()
	assert.Equal(t, rundir.StatusComplete, m.Status, m.Reason)
	assert.Contains(t, fmt.Sprint(m.Notes), "timeline/cupti/cupti-4200.tsv of "+dirs[1]+" is timeline/cupti/cupti-4200-2.tsv: its process id also ran on synth-host/node0")

	tl, err := timeline.Load(rundir.TimelineCupti, rundir.CuptiFiles(run), run.Open)
	require.NoError(t, err)
	require.Len(t, tl.Processes, 4)
	require.Len(t, tl.GPUs, 4)
	for r, g := range tl.GPUs {
		assert.Equal(t, uint32(r), g.Device)
		assert.Equal(t, []int{r}, g.Ranks, "device %d is rank %d's GPU", r, r)
		assert.Equal(t, fmt.Sprintf("GPU-00000000-0000-4000-8000-%012d", r), g.UUID)
	}
	devices := kernelDevices(t, run)
	assert.Len(t, devices, 4, "a row per rank's GPU: %v", devices)
	var ph facts.PhaseReport
	b, err := os.ReadFile(run.Path(rundir.TimelinePhases))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &ph))
	assert.Len(t, ph.Scopes, 4)

	// Without the machine in the records (files written before it), the
	// same ids are still refused: they could be one node recorded twice.
	_, err = rundir.Make(dirs, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is in two run directories")
}

// TestMergeRefusesOtherRuns: merge joins the nodes of one multi-GPU run.
// Two recorded single-process runs (of one program, made apart) are
// refused, as are two SYNTHETIC nodes whose config.yaml name different
// programs; nothing is written.
func TestMergeRefusesOtherRuns(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "merged")
	_, _, err := runCmd([]string{"merge", "--out", out, "../../fixtures/runs/tiny-llama", "../../fixtures/runs/cupti-tiny-llama"}, "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "tiny-llama is not a node of a multi-GPU run (its config.yaml has no workload.launcher)")
	assert.NoDirExists(t, out)

	dirs, err := synth.NodeRuns(tp2Run, tp2Records, deepRun, t.TempDir(), 2, 1)
	require.NoError(t, err)
	cfg := filepath.Join(dirs[1], rundir.ConfigYAML)
	b, err := os.ReadFile(cfg)
	require.NoError(t, err)
	edited := strings.Replace(string(b), "--new-tokens=8", "--new-tokens=64", 1)
	require.NotEqual(t, string(b), edited, "the SYNTHETIC edit applies")
	require.NoError(t, os.WriteFile(cfg, []byte(edited), 0o644))
	_, _, err = runCmd([]string{"merge", "--out", out, dirs[0], dirs[1]}, "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--new-tokens=64")
	assert.Contains(t, err.Error(), "the nodes of one run run one program")
	assert.NoDirExists(t, out)

	// issue 35: one program, profiled another way on one node
	require.NoError(t, os.WriteFile(cfg, []byte(strings.Replace(string(b), "set: basic", "set: full", 1)), 0o644))
	_, _, err = runCmd([]string{"merge", "--out", out, dirs[0], dirs[1]}, "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "were profiled with different ncu.set (basic against full)")
	assert.NoDirExists(t, out)

	// issue 35: a node holding a record its session did not make (a
	// single-GPU run's)
	require.NoError(t, os.WriteFile(cfg, b, 0o644))
	foreign := filepath.Join(dirs[1], filepath.FromSlash(rundir.TimelineCupti), "cupti-564.tsv.gz")
	rec, err := os.ReadFile("../../fixtures/runs/cupti-tiny-llama/timeline/cupti/cupti-564.tsv.gz")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(foreign, rec, 0o644))
	_, _, err = runCmd([]string{"merge", "--out", out, dirs[0], dirs[1]}, "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cupti-564.tsv.gz: its session did not record it")
	assert.NoDirExists(t, out)
	require.NoError(t, os.Remove(foreign))

	// issue 35: a node that cannot show how it was profiled
	require.NoError(t, os.Remove(cfg))
	_, _, err = runCmd([]string{"merge", "--out", out, dirs[0], dirs[1]}, "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "has no config.yaml")
	assert.NoDirExists(t, out)
}

// kernelDevices are the devices of the run's kernels.json rows.
func kernelDevices(t *testing.T, run *rundir.Run) map[model.DeviceID]bool {
	t.Helper()
	var ks struct {
		Kernels []model.KernelStats `json:"kernels"`
	}
	b, err := os.ReadFile(run.Path(rundir.KernelsJSON))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &ks))
	devices := map[model.DeviceID]bool{}
	for _, k := range ks.Kernels {
		devices[k.Device] = true
	}
	return devices
}
