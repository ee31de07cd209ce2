package kernels_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/sebdah/goldie/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/kernels"
	"github.com/llm-perf-opt/deepprof/internal/ncu"
)

func read(t *testing.T, path string) map[string][]facts.Rule {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	rules, err := kernels.RulesFromReader(ncu.NewReader(f, path, ncu.Options{}), path)
	require.NoError(t, err)
	return rules
}

// TestRecordedDetails: the rules of a real deep pass (ncu 2025.3.1, H200,
// Llama-3-8B widths), every kernel's, ordered by estimated speedup.
func TestRecordedDetails(t *testing.T) {
	rules := read(t, "../../fixtures/runs/cupti-llama3-8b-4l/ncu/details.csv.gz")
	n := 0
	for k, rs := range rules {
		for i, r := range rs {
			n++
			assert.LessOrEqual(t, r.Launches, r.Of, "%s %s", k, r.Name)
			assert.NotContains(t, r.Advice, "https://", "links are left out of the one line")
			assert.LessOrEqual(t, len([]rune(r.Advice)), 241)
			if i > 0 && rs[i-1].SpeedupPct != nil && r.SpeedupPct != nil {
				assert.GreaterOrEqual(t, *rs[i-1].SpeedupPct, *r.SpeedupPct, "ordered by estimated speedup")
			}
		}
	}
	assert.Greater(t, n, 50)
	b, err := json.MarshalIndent(rules, "", "  ")
	require.NoError(t, err)
	goldie.New(t, goldie.WithFixtureDir("../../golden/advice"), goldie.WithNameSuffix(".json")).Assert(t, "cupti-llama3-8b-4l-rules", b)
}

// TestSpeedupIsWeighted: a rule firing on one launch of two counts its
// estimate by that launch's share of the kernel's time.
func TestSpeedupIsWeighted(t *testing.T) {
	head := `"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value","Rule Name","Rule Type","Rule Description","Estimated Speedup Type","Estimated Speedup"` + "\n"
	row := func(id, dur string) string {
		return `"` + id + `","1","p","h","k","1","7","(1, 1, 1)","(1, 1, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","us","` + dur + `"` + "\n"
	}
	rule := func(id, sp string) string {
		return `"` + id + `","1","p","h","k","1","7","(1, 1, 1)","(1, 1, 1)","0","9.0","Occupancy","","","","AchievedOccupancy","OPT","Low occupancy. See the Guide (https://x.example/) for more details.","local","` + sp + `"` + "\n"
	}
	in := head + row("0", "3") + rule("0", "40") + row("1", "1")
	rules, err := kernels.RulesFromReader(ncu.NewReader(strings.NewReader(in), "synthetic.csv", ncu.Options{}), "synthetic.csv")
	require.NoError(t, err)
	require.Len(t, rules["k"], 1)
	r := rules["k"][0]
	require.NotNil(t, r.SpeedupPct)
	assert.InDelta(t, 30.0, *r.SpeedupPct, 1e-9, "40% on 3 of 4 µs")
	assert.Equal(t, 1, r.Launches)
	assert.Equal(t, 2, r.Of)
	assert.Equal(t, "Low occupancy.", r.Advice)
	assert.True(t, kernels.Actionable(r))

	for _, bad := range []string{"NaN", "-1", "0x1p3", "Inf", "ten"} {
		_, err := kernels.RulesFromReader(ncu.NewReader(strings.NewReader(head+row("0", "3")+rule("0", bad)), "synthetic.csv", ncu.Options{}), "synthetic.csv")
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), "synthetic.csv:2: launch 0: rule AchievedOccupancy: estimated speedup")
	}
}

func TestOneLine(t *testing.T) {
	for in, want := range map[string]string{
		"This kernel grid is too small to fill the available resources on this device, resulting in only 0.0 full waves across all SMs. Look at Launch Statistics for more details.": "This kernel grid is too small to fill the available resources on this device, resulting in only 0.0 full waves across all SMs. Look at Launch Statistics for more details.",
		"A. See the Hardware Model (https://docs.nvidia.com/x) description for more details.":                                                                                        "A.",
		"Uses x (https://docs.nvidia.com/x) here.": "Uses x here.",
		"": "",
	} {
		assert.Equal(t, want, kernels.OneLine(in))
	}
	long := strings.Repeat("word ", 100)
	got := kernels.OneLine(long)
	assert.True(t, strings.HasSuffix(got, "…"))
	assert.LessOrEqual(t, len(got), 243)
}
