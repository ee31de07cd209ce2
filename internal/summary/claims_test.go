package summary_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/kernels"
	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/summary"
)

func pct(v float64) *float64 { return &v }

// oneGEMM is a run whose only kernel is a Triton GEMM at 75% of its SM
// peak (SYNTHETIC figures, after a held-out program's: ncu estimated 81.2%
// of its time could be saved), with the rules and samples given.
func oneGEMM(rules []facts.Rule, configs []string, configNS map[string]float64) summary.Inputs {
	gemm := "triton_tem_fused_addmm_0_matmul"
	tab := model.KernelTable{Source: "t", TotalMS: 100, Launches: 10, Kernels: []model.KernelStats{
		{KernelTotals: model.KernelTotals{Name: gemm, TotalMS: 100, Calls: 10}}}}
	in := summary.Inputs{RunID: "r", Kernels: &tab, KernelsSource: "t",
		Metrics: map[string]*kernels.Metrics{gemm: {Kernel: gemm, Launches: 2, DurationNS: 1e4, SMPct: 75, MemPct: 40, HasSOL: true, Configs: configs}},
		Rules:   map[string][]facts.Rule{gemm: rules}}
	if configNS != nil {
		in.ConfigNS = map[string]map[string]float64{gemm: configNS}
	}
	return in
}

// TestNcuEstimateCappedBySOL: a kernel at SOL S% can save at most 100 − S%
// of its time; where ncu estimates more, the findings say both, and every
// figure built from the estimate (the rule's sum in What to try) uses the
// cap.
func TestNcuEstimateCappedBySOL(t *testing.T) {
	rules := []facts.Rule{
		{Name: "AchievedOccupancy", Severity: "OPT", SpeedupPct: pct(81.2), Launches: 2, Of: 2, Advice: "occupancy"},
		{Name: "WorkloadImbalance", Severity: "OPT", SpeedupPct: pct(10), Launches: 2, Of: 2, Advice: "imbalance"},
	}
	s := summary.Build(oneGEMM(rules, nil, nil), summary.Options{})
	k := s.Kernels.Rows[0]
	require.NotNil(t, k.SaveCapPct)
	assert.InDelta(t, 25, *k.SaveCapPct, 1e-9, "100 − the higher of SM and memory throughput")

	lines := strings.Join(s.Narrative.Lines, "\n")
	assert.NotContains(t, lines, "up to 81.2%")
	assert.Contains(t, lines, "ncu estimates 81.2% of its time could be saved (AchievedOccupancy); at 75.0% of peak at most 25.0%")

	var occ, imb *facts.Recommendation
	for i, r := range s.Narrative.Recommendations {
		switch {
		case strings.HasPrefix(r.Text, "ncu's AchievedOccupancy"):
			occ = &s.Narrative.Recommendations[i]
		case strings.HasPrefix(r.Text, "ncu's WorkloadImbalance"):
			imb = &s.Narrative.Recommendations[i]
		}
	}
	require.NotNil(t, occ)
	require.NotNil(t, imb)
	assert.InDelta(t, 25, *occ.EstSavingPct, 1e-9, "the kernel's whole time at the cap, not ncu's 81.2%")
	assert.Contains(t, occ.Text, "#1 (ncu estimates 81.2% of its time; at 75.0% of peak at most 25.0%)")
	assert.Contains(t, occ.Text, "25.00% of all kernel time")
	assert.InDelta(t, 10, *imb.EstSavingPct, 1e-9, "an estimate under the cap is ncu's")
	assert.Contains(t, imb.Text, "#1 (up to 10.0% of its time)")
}

// TestBoundByMeasuredTime: a kernel's bound counts only where the launch
// configurations the deep pass measured ran at least half of its time;
// measured on 4.8% of it (SYNTHETIC, after a held-out MoE program's "1 of
// 4 configs, 4.8% of its time"), it is partly measured, claims no bound and
// gives no advice, and the deep pass's share is weighted by the measured
// configurations.
func TestBoundByMeasuredTime(t *testing.T) {
	byConfig := map[string]float64{"a": 4.8, "b": 50, "c": 30, "d": 15.2}
	s := summary.Build(oneGEMM(nil, []string{"a"}, byConfig), summary.Options{})
	k := s.Kernels.Rows[0]
	assert.True(t, k.PartlyMeasured)
	require.NotNil(t, s.Kernels.DeepShare)
	assert.InDelta(t, 0.048, *s.Kernels.DeepShare, 1e-9, "the measured configurations' time, not the kernel's")
	lines := strings.Join(s.Narrative.Lines, "\n")
	assert.Contains(t, lines, "is partly measured (4.8% of its time, 1 of 4 launch configurations): its bound is not claimed")
	assert.Empty(t, s.Narrative.Claims, "no bound claimed")
	for _, r := range s.Narrative.Recommendations {
		assert.NotEqual(t, "kernels", r.Kind, "no advice from the bound of a sliver: %s", r.Text)
	}

	s = summary.Build(oneGEMM(nil, []string{"a", "b"}, byConfig), summary.Options{})
	k = s.Kernels.Rows[0]
	assert.False(t, k.PartlyMeasured, "54.8% of its time: the bound is the kernel's")
	require.Len(t, s.Narrative.Claims, 1)
	assert.InDelta(t, 0.548, s.Narrative.Claims[0].Figures["measured_share"], 1e-9)
	assert.Equal(t, "kernels", s.Narrative.Recommendations[0].Kind)
}
