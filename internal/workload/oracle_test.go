package workload

import (
	"slices"
	"strings"
	"testing"

	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const doc = `{
 "tool": "torch.profiler", "torch": "2.11", "activities": ["CUDA"], "repeats": 3, "domain": "", "device": "H100",
 "phases": [{"range": "prefill", "kernel_ms": 10, "launches": 100}, {"range": "decode_all", "kernel_ms": 30, "launches": 900}],
 "kernels": [{"name": "b", "total_ms": 5, "calls": 10}, {"name": "a", "total_ms": 20, "calls": 500}]
}`

func TestReadAndCheck(t *testing.T) {
	f, err := Read([]byte(doc), "o.json")
	require.NoError(t, err)
	assert.Equal(t, "a", mustTop(t, f))
	rows := Check(f, Measured{
		Phases:  map[string]OraclePhase{"prefill": {KernelMS: 10.2, Launches: 100}, "decode_all": {KernelMS: 31.5, Launches: 900}},
		Kernels: map[string]OracleKernel{"a": {TotalMS: 20.5, Calls: 500}, "b": {TotalMS: 5, Calls: 11}},
	})
	require.Len(t, rows, 4)
	assert.True(t, rows[0].OK, "prefill +2 %% is within 3 %%")
	assert.False(t, rows[1].OK, "decode +5 %% is outside 3 %%")
	assert.Contains(t, rows[1].Why, "+5.0 %")
	assert.Equal(t, "kernel a", rows[2].What, "kernels in the oracle's order of time")
	assert.True(t, rows[2].OK)
	assert.Contains(t, rows[3].Why, "launches differ: oracle 10, timeline 11")
	assert.False(t, Passed(rows))
	assert.False(t, Passed(nil), "no rows is no check")
}

func mustTop(t *testing.T, f *Figures) string {
	t.Helper()
	rows := Check(f, Measured{})
	for _, r := range rows {
		assert.Equal(t, "not in the timeline", r.Why)
	}
	return rows[len(f.Phases)].What[len("kernel "):]
}

func TestReadErrorsArePositioned(t *testing.T) {
	for _, c := range []struct{ doc, want string }{
		{"{\n\"tool\": 1}", "o.json:2:"},
		{"{\n\"phases\": []}", "o.json:1: no phases"},
		{"{\"phases\": [\n{\"range\": \"p\", \"kernel_ms\": -1}]}", `o.json:2: phase "p"`},
		{"{\"phases\": [{\"range\": \"p\"}],\n\"kernels\": [\n{\"name\": \"k\", \"calls\": 0}]}", `o.json:3: kernel "k"`},
		{"{\"bogus\": 1}", "o.json:1:"},
		{"{\"phases\": [{\"range\": \"p\"}],\n\"overhead\": {\"profiled_ms\": [1, 0], \"plain_ms\": [1]}}", "o.json:2: overhead"},
		{"{\"phases\": [{\"range\": \"p\"}],\n\"overhead\": {\"profiled_ms\": [1], \"plain_ms\": [-3]}}", "o.json:2: overhead"},
	} {
		_, err := Read([]byte(c.doc), "o.json")
		if assert.Error(t, err, c.doc) {
			assert.Contains(t, err.Error(), c.want)
		}
	}
}

const ranksDoc = `{
 "tool": "torch.profiler", "torch": "2.11", "activities": ["CUDA"], "repeats": 1, "domain": "", "device": "H200",
 "phases": [{"range": "prefill", "kernel_ms": 20, "launches": 200}],
 "kernels": [{"name": "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", "total_ms": 4, "calls": 16}, {"name": "gemm", "total_ms": 16, "calls": 184}],
 "ranks": [
  {"rank": 0, "device": 0, "collective_ms": 2, "collective_launches": 8,
   "phases": [{"range": "prefill", "kernel_ms": 10, "launches": 100}],
   "kernels": [{"name": "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", "total_ms": 2, "calls": 8}]},
  {"rank": 1, "device": 1, "collective_ms": 2, "collective_launches": 8,
   "phases": [{"range": "prefill", "kernel_ms": 10, "launches": 100}],
   "kernels": [{"name": "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", "total_ms": 2, "calls": 8}]}
 ]
}`

func TestRanks(t *testing.T) {
	f, err := Read([]byte(ranksDoc), "o.json")
	require.NoError(t, err)
	require.Len(t, f.Ranks, 2)
	assert.Equal(t, RankFigures{Rank: 1, Device: 1, CollectiveMS: 2, CollectiveLaunches: 8,
		Phases:  []OraclePhase{{Range: "prefill", KernelMS: 10, Launches: 100}},
		Kernels: []OracleKernel{{Name: "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", TotalMS: 2, Calls: 8}}}, f.Ranks[1])
	m := Measured{
		Phases:      map[string]OraclePhase{"prefill": {KernelMS: 20, Launches: 200}},
		Kernels:     map[string]OracleKernel{"ncclDevKernel_AllReduce_Sum_bf16_RING_LL": {TotalMS: 4, Calls: 16}, "gemm": {TotalMS: 16, Calls: 184}},
		Collectives: map[model.DeviceID]OraclePhase{0: {KernelMS: 2.09, Launches: 8}, 1: {KernelMS: 1.91, Launches: 8}},
	}
	rows := Check(f, m)
	require.Len(t, rows, 6)
	assert.Equal(t, "collectives rank 0 (device 0)", rows[3].What)
	assert.Equal(t, CollectiveTolerance, rows[3].Tolerance)
	assert.True(t, rows[3].OK, "+4.5 %% is within 5 %%")
	assert.True(t, rows[4].OK, "-4.5 %% is within 5 %%")
	// Figures without per-call durations cannot give the collectives net
	// of waiting: the check cannot pass.
	assert.False(t, rows[5].OK)
	assert.Contains(t, rows[5].Why, "no per-call collective durations")
	assert.False(t, Passed(rows))

	m.Collectives = map[model.DeviceID]OraclePhase{0: {KernelMS: 2.2, Launches: 8}, 1: {KernelMS: 2, Launches: 9}}
	rows = Check(f, m)
	assert.False(t, rows[3].OK)
	assert.Contains(t, rows[3].Why, "+10.0 %")
	assert.Contains(t, rows[4].Why, "launches differ: oracle 8, timeline 9")

	m.Collectives = map[model.DeviceID]OraclePhase{0: {KernelMS: 2, Launches: 8}}
	rows = Check(f, m)
	assert.True(t, rows[3].OK)
	assert.Equal(t, "not in the timeline", rows[4].Why)

	// Without ranks, the rows are those of a single process, whatever the
	// timeline holds.
	f.Ranks = nil
	assert.Len(t, Check(f, m), 3)
}

func TestRanksSharingADeviceFail(t *testing.T) {
	f, err := Read([]byte(strings.Replace(ranksDoc, `"rank": 1, "device": 1`, `"rank": 1, "device": 0`, 1)), "o.json")
	require.NoError(t, err)
	rows := Check(f, Measured{Collectives: map[model.DeviceID]OraclePhase{0: {KernelMS: 4, Launches: 16}}})
	assert.Contains(t, rows[len(rows)-2].Why, "ranks [0 1] all ran on device 0")
}

// ranksCallsDoc: SYNTHETIC two ranks with per-call durations: rank 0
// waited in its first all-reduce (1.6 ms against rank 1's 0.1), rank 1 in
// its second (0.8 against 0.1).
const ranksCallsDoc = `{
 "tool": "torch.profiler", "torch": "2.11", "activities": ["CUDA"], "repeats": 1, "domain": "", "device": "H200",
 "phases": [{"range": "prefill", "kernel_ms": 22.6, "launches": 204}],
 "kernels": [{"name": "gemm", "total_ms": 20, "calls": 200}, {"name": "nccl_ar", "total_ms": 2.6, "calls": 4}],
 "ranks": [
  {"rank": 0, "device": 0, "collective_ms": 1.7, "collective_launches": 2,
   "phases": [{"range": "prefill", "kernel_ms": 11.7, "launches": 102}],
   "kernels": [{"name": "nccl_ar", "total_ms": 1.7, "calls": 2}], "collective_calls_ms": {"prefill": [1.6, 0.1]}},
  {"rank": 1, "device": 1, "collective_ms": 0.9, "collective_launches": 2,
   "phases": [{"range": "prefill", "kernel_ms": 10.9, "launches": 102}],
   "kernels": [{"name": "nccl_ar", "total_ms": 0.9, "calls": 2}], "collective_calls_ms": {"prefill": [0.1, 0.8]}}
 ]
}`

// TestRanksPerCall: with per-call durations, the phases are compared with
// their collectives left out, the collectives net of waiting (each call's
// shortest over the ranks) within 5 %, and each rank's collectives with
// their waits shown but not judged: the timeline's run waited elsewhere
// (rank 1 in the first call) and still passes.
func TestRanksPerCall(t *testing.T) {
	f, err := Read([]byte(ranksCallsDoc), "o.json")
	require.NoError(t, err)
	m := Measured{
		Phases:          map[string]OraclePhase{"prefill": {KernelMS: 20.2 + 2.7, Launches: 204}},
		Kernels:         map[string]OracleKernel{"gemm": {TotalMS: 20.2, Calls: 200}, "nccl_ar": {TotalMS: 2.7, Calls: 4}},
		Collectives:     map[model.DeviceID]OraclePhase{0: {KernelMS: 0.2, Launches: 2}, 1: {KernelMS: 2.5, Launches: 2}},
		CollectiveCalls: map[model.DeviceID]map[string][]float64{0: {"prefill": {0.1, 0.1}}, 1: {"prefill": {2.4, 0.1}}},
		CollectiveNames: map[string]bool{"nccl_ar": true},
	}
	rows := Check(f, m)
	var what []string
	for _, r := range rows {
		what = append(what, r.What)
	}
	assert.Equal(t, []string{"phase prefill (collectives left out)", "kernel gemm",
		"collectives rank 0 (device 0), waits included", "collectives rank 1 (device 1), waits included",
		"collectives net of waiting (each call's shortest duration over the ranks; a generate's, the median over the generates)"}, what)
	// Compute: 22.6 - 2.6 = 20 against 22.9 - 2.7 = 20.2 (+1 %), 200 launches.
	assert.InDelta(t, 20.0, rows[0].OracleMS, 1e-9)
	assert.InDelta(t, 20.2, rows[0].TimedMS, 1e-9)
	assert.Equal(t, int64(200), rows[0].TimedLaunches)
	assert.True(t, rows[0].OK)
	assert.False(t, rows[2].OK, "0.2 against 1.7: the wait moved")
	assert.True(t, rows[2].Informational)
	// Net: min(1.6, 0.1) + min(0.1, 0.8) = 0.2 against 0.1 + 0.1 = 0.2.
	assert.InDelta(t, 0.2, rows[4].OracleMS, 1e-9)
	assert.InDelta(t, 0.2, rows[4].TimedMS, 1e-9)
	assert.Equal(t, int64(2), rows[4].OracleLaunches)
	assert.True(t, rows[4].OK)
	assert.True(t, Passed(rows))

	_, err = Read([]byte(strings.Replace(ranksCallsDoc, "[0.1, 0.8]", "[0.1, -0.8]", 1)), "o.json")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `o.json:9: rank 1: collective_calls_ms["prefill"][1]: want a finite duration >= 0`)

	// A rank that made one call less cannot be paired call by call.
	m.CollectiveCalls[1]["prefill"] = []float64{2.4}
	rows = Check(f, m)
	assert.False(t, rows[len(rows)-1].OK)
	assert.Contains(t, rows[len(rows)-1].Why, "different numbers of collective calls")
}

// TestNetOfWaitingByGenerate: SYNTHETIC per-call durations of 3
// generates, 2 calls each, on 2 ranks (the recorded 2-H100 run's shape:
// one generate whose calls both ran slow on both ranks). The net is a
// generate's, the median over the generates, so that generate does not
// move it; the tolerance widens with the oracle's own spread between
// generates; and calls that 3 generates cannot share are said.
func TestNetOfWaitingByGenerate(t *testing.T) {
	f, err := Read([]byte(strings.ReplaceAll(strings.Replace(ranksCallsDoc, `"repeats": 1`, `"repeats": 3`, 1),
		`"collective_launches": 2`, `"collective_launches": 6`)), "o.json")
	require.NoError(t, err)
	f.Ranks[0].CollectiveCallsMS = map[string][]float64{"prefill": {0.5, 0.1, 0.5, 0.1, 5.0, 1.0}}
	f.Ranks[1].CollectiveCallsMS = map[string][]float64{"prefill": {0.1, 0.5, 0.1, 0.5, 1.0, 5.0}}
	m := Measured{CollectiveCalls: map[model.DeviceID]map[string][]float64{
		0: {"prefill": {0.1, 0.1, 0.1, 0.1, 0.1, 0.1}}, 1: {"prefill": {0.1, 0.104, 0.1, 0.1, 0.1, 0.1}}}}
	r := netRow(f, m, true)
	// Oracle generates: 0.2, 0.2 and 2.0 (the slow one); median 0.2.
	assert.Equal(t, []float64{0.2, 0.2, 2.0}, r.OracleRepeatsMS)
	assert.InDelta(t, 0.2, r.OracleMS, 1e-9)
	assert.InDelta(t, 0.2, r.TimedMS, 1e-9)
	assert.Equal(t, int64(6), r.OracleLaunches)
	assert.True(t, r.OK, r.Why)
	assert.InDelta(t, CollectiveTolerance, r.Tolerance, 1e-9, "the oracle's generates agree but for one: its spread (MAD 0) adds nothing")
	assert.Contains(t, r.Why, "the median of 3; the oracle's generates [0.2000, 0.2000, 2.0000] ms")

	// Generates that spread: 0.2, 0.24, 0.3 (MAD 0.04, 16.7 %): the
	// tolerance is 3 times that, 50 %, and 0.28 against 0.24 passes.
	f.Ranks[0].CollectiveCallsMS["prefill"] = []float64{0.1, 0.1, 0.12, 0.12, 0.15, 0.15}
	f.Ranks[1].CollectiveCallsMS["prefill"] = []float64{0.1, 0.1, 0.12, 0.12, 0.15, 0.15}
	m.CollectiveCalls[0]["prefill"] = []float64{0.14, 0.14, 0.14, 0.14, 0.14, 0.14}
	m.CollectiveCalls[1]["prefill"] = []float64{0.14, 0.14, 0.14, 0.14, 0.14, 0.14}
	r = netRow(f, m, true)
	assert.InDelta(t, 0.5, r.Tolerance, 1e-9)
	assert.InDelta(t, 0.28/0.24-1, r.Diff, 1e-9)
	assert.True(t, r.OK, r.Why)

	// Two generates: the median is their mean and the deviation half their
	// range, no measure of spread; the tolerance stays 5 %.
	f2 := *f
	f2.Repeats = 2
	f2.Ranks = slices.Clone(f.Ranks)
	for i := range f2.Ranks {
		f2.Ranks[i].CollectiveCallsMS = map[string][]float64{"prefill": {0.1, 0.1, 1.0, 1.0}}
	}
	m2 := Measured{CollectiveCalls: map[model.DeviceID]map[string][]float64{
		0: {"prefill": {0.1, 0.1, 0.1, 0.1}}, 1: {"prefill": {0.1, 0.1, 0.1, 0.1}}}}
	r = netRow(&f2, m2, true)
	assert.InDelta(t, CollectiveTolerance, r.Tolerance, 1e-9)
	assert.False(t, r.OK, "0.2 against 1.1: a slow generate of two is not outvoted")

	// Five calls a rank do not split into 3 generates.
	m.CollectiveCalls[0]["prefill"] = m.CollectiveCalls[0]["prefill"][:5]
	m.CollectiveCalls[1]["prefill"] = m.CollectiveCalls[1]["prefill"][:5]
	r = netRow(f, m, true)
	assert.False(t, r.OK)
	assert.Contains(t, r.Why, "not the same number in each of the 3 generates")
}

func TestRanksErrorsArePositioned(t *testing.T) {
	for _, c := range []struct{ old, new, want string }{
		{`"rank": 1, "device": 1, "collective_ms": 2`, `"rank": 1, "device": 1, "collective_ms": -2`, `o.json:9: rank 1: want a finite collective_ms >= 0`},
		{`"rank": 1, "device": 1`, `"rank": 0, "device": 1`, `o.json:9: ranks[1]: rank 0 appears twice`},
		{`"rank": 0, "device": 0`, `"rank": 0, "device": -1`, `o.json:6: ranks[0]: want rank >= 0 and device >= 0`},
		{`"collective_launches": 8,
   "phases": [{"range": "prefill", "kernel_ms": 10, "launches": 100}],
   "kernels": [{"name": "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", "total_ms": 2, "calls": 8}]}
 ]`, `"collective_launches": 8,
   "phases": [{"range": "prefill", "kernel_ms": 10, "launches": 100}],
   "kernels": [{"name": "k", "total_ms": 2, "calls": 0}]}
 ]`, `o.json:9: rank 1: kernel "k"`},
		{`"rank": 0, "device": 0,`, `"rank": 0, "device": 0, "bogus": 1,`, `o.json:1: json: unknown field "bogus"`},
	} {
		doc := strings.Replace(ranksDoc, c.old, c.new, 1)
		require.NotEqual(t, ranksDoc, doc, c.old)
		_, err := Read([]byte(doc), "o.json")
		if assert.Error(t, err, c.new) {
			assert.Contains(t, err.Error(), c.want)
		}
	}
}
