package rebuild

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/regions"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
)

// rankRecords is a SYNTHETIC record file of one rank of a tensor-parallel
// run: thread 1 opens "decode_all" at 100 ms and closes it at 110 ms, and
// launches a GEMM on stream 7, an all-reduce on stream 20, and a second
// GEMM on stream 7, on the rank's device. Times are [start, end] in ns.
func rankRecords(pid, dev int, kernels ...[2]int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "#deepprof-cupti/1\tpid=%d\tppid=1\tcupti_api=1\tcuda_driver=2\tstart_ns=1000\texe=/usr/bin/python3\n", pid)
	fmt.Fprintf(&b, "N\tpush\t100000000\t1\t0\t\tdecode_all\nN\tpop\t110000000\t1\t0\t\t\n")
	names := []string{"gemm_kernel", "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", "gemm_kernel"}
	streams := []int{7, 20, 7}
	for i, k := range kernels {
		corr := i + 1
		fmt.Fprintf(&b, "A\t%d\t%d\t1\t%d\truntime\t211\tcudaLaunchKernel\n", 100000100+i, 100000105+i, corr)
		fmt.Fprintf(&b, "K\t%d\t%d\t%d\t1\t%d\t%d\t1,1,1\t32,1,1\t8\t0\t0\t_Z%s\t%s\n", k[0], k[1], dev, streams[i], corr, names[i], names[i])
	}
	b.WriteString("E\t0\t0\n")
	return b.String()
}

// TestCommunicationSection: a run directory of two ranks (pid 10 on GPU 0,
// pid 11 on GPU 1) gets the communication split in timeline/phases.json,
// summary.json and a Communication section in the stakeholder summary,
// with a finding.
func TestCommunicationSection(t *testing.T) {
	t.Parallel()
	run, err := rundir.Create(t.TempDir(), "tp2", t0)
	require.NoError(t, err)
	// Rank 0: compute 101-105 and 106-108 ms (6 ms), all-reduce 104-107
	// (3 ms), both at once 104-105 and 106-107 (2 ms), exposed 105-106.
	// Rank 1: compute 101-109 and 109-109.2 (8.2 ms), all-reduce
	// 108.5-109.5 (1 ms), overlapped 108.5-109.2 (0.7 ms), exposed 0.3.
	files := map[string]string{
		"cupti-10.tsv": rankRecords(10, 0, [2]int{101e6, 105e6}, [2]int{104e6, 107e6}, [2]int{106e6, 108e6}),
		"cupti-11.tsv": rankRecords(11, 1, [2]int{101e6, 109e6}, [2]int{108_500_000, 109_500_000}, [2]int{109e6, 109_200_000}),
	}
	for name, text := range files {
		require.NoError(t, rundir.WriteFileAtomic(run.Path(rundir.TimelineCupti+"/"+name), []byte(text)))
	}
	require.NoError(t, rebuild(run, settings{Regions: regions.DefaultConfig()}))

	var ph facts.PhaseReport
	require.NoError(t, json.Unmarshal(must(os.ReadFile(run.Path(rundir.TimelinePhases))), &ph))
	require.Len(t, ph.Scopes, 2)
	require.Len(t, ph.Scopes[0].Phases, 1)
	assert.Equal(t, &facts.CommunicationSplit{ComputeNS: 6e6, CommunicationNS: 3e6, OverlapNS: 2e6, ExposedCommunicationNS: 1e6, Collectives: 1},
		ph.Scopes[0].Phases[0].Communication)
	assert.Equal(t, &facts.CommunicationSplit{ComputeNS: 8_200_000, CommunicationNS: 1e6, OverlapNS: 700_000, ExposedCommunicationNS: 300_000, Collectives: 1},
		ph.Scopes[1].Phases[0].Communication)
	require.Len(t, ph.Balance, 2)
	assert.Equal(t, &facts.Rank{ProcessID: 11, Device: 1}, ph.Balance[0].Straggler)

	var s facts.Summary
	require.NoError(t, json.Unmarshal(must(os.ReadFile(run.Path(rundir.SummaryJSON))), &s))
	require.NotNil(t, s.Communication)
	assert.Len(t, s.Communication.Rows, 4, "decode_all and the whole run of each rank")

	md := string(must(os.ReadFile(run.Path(rundir.StakeholderSummary))))
	want := "## Communication\n\n" +
		"| phase | process | GPU | compute ms | communication ms | overlapped ms | exposed ms | collectives |\n" +
		"|---|---:|---:|---:|---:|---:|---:|---:|\n" +
		"| decode\\_all | 10 | 0 | 6.000 | 3.000 | 2.000 | 1.000 | 1 |\n" +
		"| (whole run) | 10 | 0 | 6.000 | 3.000 | 2.000 | 1.000 | 1 |\n" +
		"| decode\\_all | 11 | 1 | 8.200 | 1.000 | 0.700 | 0.300 | 1 |\n" +
		"| (whole run) | 11 | 1 | 8.200 | 1.000 | 0.700 | 0.300 | 1 |\n" +
		"\n" +
		"- decode\\_all: GPU busy 8.500 ms max / 7.000 ms min across 2 ranks (imbalance 1.21x); compute 8.200 / 6.000 ms. The straggler is process 11 (GPU 1): it spends the least time in collectives (1.000 ms against up to 3.000 ms), so the others wait for it. The collectives themselves take 1.000 ms (1 call per rank, net of waiting).\n" +
		"- The whole run: GPU busy 8.500 ms max / 7.000 ms min across 2 ranks (imbalance 1.21x); compute 8.200 / 6.000 ms. The straggler is process 11 (GPU 1): it spends the least time in collectives (1.000 ms against up to 3.000 ms), so the others wait for it. The collectives themselves take 1.000 ms (1 call per rank, net of waiting).\n"
	assert.Contains(t, md, want)
	assert.Less(t, strings.Index(md, "## GPU busy and idle per phase"), strings.Index(md, "## Communication"))
	assert.Less(t, strings.Index(md, "## Communication"), strings.Index(md, "## Top Kernels"))
	// decode_all on rank 0: 3 ms of its 7 ms busy.
	assert.Contains(t, md, "- Communication takes 42.9% of decode\\_all's GPU time on process 10 (GPU 0): 3.000 ms of collectives, 1.000 ms of them exposed (no compute beside them); the collectives themselves take 1.000 ms, the rest is waiting for process 11 (GPU 1).\n")
	assert.Contains(t, string(must(os.ReadFile(run.Path(rundir.ReportHTML)))), "<h2 id=\"communication\">", "report.html renders the summary's Markdown")
}
