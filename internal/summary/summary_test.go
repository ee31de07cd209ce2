package summary_test

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/kernels"
	"github.com/llm-perf-opt/deepprof/internal/machine"
	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/summary"
	"github.com/llm-perf-opt/deepprof/internal/workload"
)

// TestCountFLOPs checks the closed form against a token-by-token count of
// the same model: every token multiplies every weight once and attends to
// the keys before it (its own included).
func TestCountFLOPs(t *testing.T) {
	m := workload.Model{MatmulParams: 1000, Layers: 3, Heads: 4, HeadDim: 8}
	for _, c := range []struct{ prompt, gen, batch int64 }{{64, 4, 1}, {1, 1, 1}, {7, 13, 2}, {512, 0, 4}} {
		f, err := summary.CountFLOPs(m, workload.Tokens{Prompt: c.prompt * c.batch, Generated: c.gen * c.batch}, c.batch)
		require.NoError(t, err)
		perToken := func(keys int64) float64 {
			return 2*float64(m.MatmulParams) + 2*2*float64(m.Layers*m.Heads*m.HeadDim*keys) // QKᵀ and AV, 2 FLOPs a MAC
		}
		var pre, dec float64
		for i := int64(1); i <= c.prompt; i++ {
			pre += perToken(i)
		}
		for j := int64(1); j <= c.gen; j++ {
			dec += perToken(c.prompt + j)
		}
		assert.InDelta(t, float64(c.batch)*pre, f.Prefill, 1e-6, "prefill %+v", c)
		assert.InDelta(t, float64(c.batch)*dec, f.Decode, 1e-6, "decode %+v", c)
	}
	_, err := summary.CountFLOPs(workload.Model{Layers: 2}, workload.Tokens{Prompt: 1}, 1)
	assert.EqualError(t, err, "the model's facts (a workload report's model, or model.* in the profile) have no matmul_params, heads, head_dim (the default workload reports them)")
}

// TestBuildNothing: a run with no inputs gives a summary whose every
// section says why it is empty, and no numbers.
func TestBuildNothing(t *testing.T) {
	s := summary.Build(summary.Inputs{RunID: "r", EnvMissing: "no env.json", WorkloadMissing: "no workload report",
		KernelsMissing: "no kernel export", MetricsMissing: "no deep pass", RegionsMissing: "no regions"}, summary.Options{})
	assert.Equal(t, "no workload report", s.Stages.Missing)
	assert.Equal(t, "no workload report", s.MFU.Missing)
	assert.Nil(t, s.MFU.Model)
	assert.Equal(t, "no workload report", s.Operators.Missing)
	assert.Equal(t, "no kernel export", s.Kernels.Missing)
	assert.Equal(t, "no regions", s.Regions.Missing)
	assert.Contains(t, s.Environment.PeakMissing, "the GPU is unknown")
	assert.Empty(t, s.Narrative.Lines)
	assert.Empty(t, s.Kernels.Rows)
	assert.Len(t, s.Gaps(), 6) // the MFU gap is the stage gap's, said once
	b, err := json.Marshal(s.MFU)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"model":null,"prefill":null,"decode":null`, "MFU that does not exist is null, not 0")
}

// TestBuildNarrative: the narrative follows the numbers it is given; the
// inputs are made up to reach each rule (no measurement is claimed).
func TestBuildNarrative(t *testing.T) {
	h200 := machine.GPU{Name: "NVIDIA H200", ComputeCapability: "9.0"}
	rep := &workload.Report{
		Model:  workload.Model{Name: "m", Dtype: "bfloat16", MatmulParams: 1e9, Layers: 16, Heads: 32, HeadDim: 128},
		Tokens: workload.Tokens{Prompt: 512, Generated: 8},
		Stages: map[string]workload.ReportStage{
			"prefill":        {MS: []float64{20, 22, 21}},
			"decode":         {MS: []float64{150, 151, 149}},
			"decode/attn0":   {MS: []float64{5, 5, 5}, Parent: "decode"},
			"prefill/attn0":  {MS: []float64{1, 1, 1}, Parent: "prefill"},
			"vision_encoder": {MS: []float64{3, 3, 3}},
		},
		Operators: []workload.Operator{{Name: "aten::mm", Calls: 10, TotalMS: 2, CUDAMS: 5}, {Name: "nvjet_x", Calls: 10, CUDAMS: 5}},
	}
	gemm := "nvjet_sm90_tst_64x8_64x16_2x1_v_bz_TNT"
	ew := "void at::vectorized_elementwise_kernel<4, at::CUDAFunctor_add<c10::BFloat16>>(int, T2, T3)"
	tab := model.KernelTable{Source: "t", TotalMS: 100, Launches: 30, Kernels: []model.KernelStats{
		{KernelTotals: model.KernelTotals{Name: gemm, TotalMS: 60, Calls: 10}}, {KernelTotals: model.KernelTotals{Name: ew, TotalMS: 40, Calls: 20}}}}
	s := summary.Build(summary.Inputs{RunID: "r", GPU: &h200, Workload: rep, Kernels: &tab, KernelsSource: "t",
		Metrics: map[string]*kernels.Metrics{
			gemm: {Kernel: gemm, Launches: 2, DurationNS: 1e4, SMPct: 10, MemPct: 80, HasSOL: true},
			ew:   {Kernel: ew, Launches: 2, DurationNS: 1e3, SMPct: 20, MemPct: 10, HasSOL: true},
		}}, summary.Options{})

	names := []string{}
	for _, r := range s.Stages.Rows {
		names = append(names, r.Name)
	}
	assert.Equal(t, []string{"prefill", "prefill/attn0", "decode", "decode/attn0", "vision_encoder"}, names, "stages in inference order, sub-stages after their parent")
	assert.Equal(t, "decode", s.Narrative.DominantPhase)
	assert.InDelta(t, 150.0/(150+21+3), s.Narrative.DominantShare, 1e-9, "sub-stages are not added to the total")
	require.NotNil(t, s.MFU.Decode)
	require.NotNil(t, s.MFU.Prefill)
	assert.Less(t, *s.MFU.Decode, *s.MFU.Prefill)
	assert.Equal(t, 1, s.Operators.Dropped, "the kernel row torch lists among operators")
	assert.Equal(t, "memory-bound", s.Kernels.Rows[0].Bound.Class)
	assert.Equal(t, "gemm", s.Kernels.Rows[0].Category)
	assert.Equal(t, "latency-bound", s.Kernels.Rows[1].Bound.Class)
	text := strings.Join(s.Narrative.Texts(), "\n")
	assert.Contains(t, text, "memory-bound GEMM/GEMV: it streams weights")
	assert.Contains(t, text, "fuse it with its neighbours")
	assert.Contains(t, text, "elementwise 40% of kernel time")
	assert.Empty(t, s.Narrative.GPUBusy, "no regions: no busy share")

	unknown := machine.GPU{Name: "NVIDIA GeForce RTX 5090"}
	s = summary.Build(summary.Inputs{GPU: &unknown, Workload: rep}, summary.Options{})
	assert.Contains(t, s.MFU.Missing, "NVIDIA GeForce RTX 5090 with bf16 is not in deepprof's peak table")
	s = summary.Build(summary.Inputs{GPU: &unknown, Workload: rep}, summary.Options{PeakOverride: machine.Peak{TFLOPS: 209.5}})
	assert.Empty(t, s.MFU.Missing)
	assert.Equal(t, "the profile (report.peak_tflops)", s.MFU.Peak.Source)
}

// TestBuildWarmup: a stage whose first repeat is a warm-up (SYNTHETIC
// repeats, as an earlier tiny-llama recording's decode had them: 118.7,
// 11.1, 11.3 ms) has package model's mean, the one deepprof diff and
// baselines use, in its row, its tokens/s and MFU, and the dropped repeat
// is kept in the row.
func TestBuildWarmup(t *testing.T) {
	h200 := machine.GPU{Name: "NVIDIA H200"}
	decode := []float64{118.67505100000386, 11.11253199999851, 11.272524999995426}
	prefill := []float64{3.1995339999966177, 3.2512160000024437, 2.977770000001101}
	rep := &workload.Report{
		Model:  workload.Model{Name: "m", Dtype: "bfloat16", MatmulParams: 1e9, Layers: 16, Heads: 32, HeadDim: 128},
		Tokens: workload.Tokens{Prompt: 64, Generated: 8},
		Stages: map[string]workload.ReportStage{"prefill": {MS: prefill}, "decode": {MS: decode}},
	}
	s := summary.Build(summary.Inputs{RunID: "r", GPU: &h200, Workload: rep}, summary.Options{})
	require.Len(t, s.Stages.Rows, 2)
	pre, dec := s.Stages.Rows[0], s.Stages.Rows[1]
	require.Equal(t, "decode", dec.Name)

	want := model.Summarize(decode)
	assert.Equal(t, want, model.Summary{N: dec.N, MeanMS: dec.MeanMS, SDMS: dec.SDMS, WarmupMS: dec.WarmupMS}, "the row is model.Summarize's summary")
	assert.InDelta(t, 11.1925285, dec.MeanMS, 1e-8, "warm-up dropped: not 47.0 ms")
	assert.Equal(t, 2, dec.N)
	require.NotNil(t, dec.WarmupMS)
	assert.Equal(t, decode[0], *dec.WarmupMS)
	assert.Equal(t, decode, dec.MS, "every repeat is kept in the row")
	assert.InDelta(t, 8/(want.MeanMS/1e3), dec.TokensS, 1e-9, "tokens/s over the kept repeats")

	assert.Nil(t, pre.WarmupMS, "prefill's first repeat is no warm-up")
	assert.Equal(t, 3, pre.N)

	f, err := summary.CountFLOPs(rep.Model, rep.Tokens, 1)
	require.NoError(t, err)
	require.NotNil(t, s.MFU.Decode)
	assert.InDelta(t, f.Decode/(want.MeanMS/1e3)/h200Peak(t), *s.MFU.Decode, 1e-12, "MFU over the kept repeats")
	for _, r := range s.MFU.Rows {
		if r.Scope == "decode" {
			assert.Equal(t, want.MeanMS, r.MeanMS)
		}
	}
	assert.Contains(t, strings.Join(s.Narrative.Lines, "\n"), "mean of 2 repeats, warm-up dropped")
}

func h200Peak(t *testing.T) float64 {
	p, ok := machine.LookupPeak("NVIDIA H200", "bf16")
	require.True(t, ok)
	return p.FLOPS()
}

// A program that wrote no workload report (issue 14): its stages are its
// NVTX ranges, the phases are named by phases.*, and MFU comes from the
// model.* facts of the profile, or a line says which facts are missing.
func TestBuildProgramFacts(t *testing.T) {
	h200 := machine.GPU{Name: "NVIDIA H200"}
	rep := &workload.Report{Stages: map[string]workload.ReportStage{
		"ctx":      {MS: []float64{4, 4}},
		"gen":      {MS: []float64{20, 22}},
		"gen_step": {MS: []float64{1, 1}, Parent: "gen"},
		"setup":    {MS: []float64{3}},
	}}
	in := summary.Inputs{RunID: "r", GPU: &h200, Workload: rep, WorkloadSource: "timeline/cupti (NVTX ranges)", StagesFromRanges: true}
	phases := model.Names{Prefill: []string{"ctx"}, Decode: []string{"gen*"}}

	s := summary.Build(in, summary.Options{Phases: phases})
	var names, phs []string
	for _, r := range s.Stages.Rows {
		names, phs = append(names, r.Name), append(phs, r.Phase)
	}
	assert.Equal(t, []string{"ctx", "gen", "gen_step", "setup"}, names, "the phases first, each sub-stage after its parent")
	assert.Equal(t, []string{"prefill", "decode", "", ""}, phs, "a sub-stage has no phase, even when a pattern matches it")
	assert.Equal(t, "gen", s.Narrative.DominantPhase, "of the ranges; setup is smaller")

	// The whole program's start-to-exit time beside the ranges is not a
	// stage they are a share of (the recorded VLM run's first finding had
	// said "(whole program) takes 99.6% of the stages' wall time").
	whole := *rep
	whole.Stages = maps.Clone(rep.Stages)
	whole.Stages[workload.WholeProgram] = workload.ReportStage{MS: []float64{38000, 32000}}
	sw := summary.Build(summary.Inputs{RunID: "r", GPU: &h200, Workload: &whole, WorkloadSource: in.WorkloadSource, StagesFromRanges: true}, summary.Options{Phases: phases})
	assert.Equal(t, "gen", sw.Narrative.DominantPhase)
	assert.InDelta(t, 21.0/(4+21+3), sw.Narrative.DominantShare, 1e-12)
	only := workload.Report{Stages: map[string]workload.ReportStage{workload.WholeProgram: {MS: []float64{10, 12}}}}
	so := summary.Build(summary.Inputs{RunID: "r", GPU: &h200, Workload: &only, WorkloadSource: in.WorkloadSource, StagesFromRanges: true}, summary.Options{})
	assert.Equal(t, workload.WholeProgram, so.Narrative.DominantPhase, "alone, it is what the run has")

	assert.Contains(t, s.MFU.Missing, "give model.matmul_params=… model.layers=… model.heads=… model.head_dim=… model.dtype=… model.prompt_tokens=… model.generated_tokens=… as overrides")
	assert.Same(t, rep, in.Workload, "the inputs are not changed")

	facts := summary.Facts{
		Model:  workload.Model{Dtype: "bf16", MatmulParams: 1e9, Layers: 16, Heads: 32, HeadDim: 128},
		Tokens: workload.Tokens{Prompt: 64},
	}
	s = summary.Build(in, summary.Options{Phases: phases, Facts: facts})
	assert.Equal(t, "the program wrote no workload report, so its model facts come from the profile (or, for a transformers model under the automatic ranges, its config): give model.generated_tokens=… as overrides ("+summary.FactsHint+")", s.MFU.Missing)

	facts.Tokens.Generated = 8
	s = summary.Build(in, summary.Options{Phases: phases, Facts: facts})
	require.Empty(t, s.MFU.Missing)
	f, err := summary.CountFLOPs(facts.Model, facts.Tokens, 1)
	require.NoError(t, err)
	require.NotNil(t, s.MFU.Prefill)
	require.NotNil(t, s.MFU.Decode)
	assert.InDelta(t, f.Prefill/(4.0/1e3)/h200Peak(t), *s.MFU.Prefill, 1e-12, "prefill: the ctx range's mean")
	assert.InDelta(t, f.Decode/(21.0/1e3)/h200Peak(t), *s.MFU.Decode, 1e-12, "decode: the gen range's mean, not gen_step's")
	assert.Equal(t, int64(64), s.Stages.Rows[0].Tokens)
	assert.Equal(t, int64(8), s.Stages.Rows[1].Tokens)
	require.NotNil(t, s.Environment.Model)
	assert.Equal(t, int64(1e9), s.Environment.Model.MatmulParams)

	// A workload report's own facts win over the profile's.
	own := *rep
	own.Model = workload.Model{Dtype: "fp16", MatmulParams: 2e9, Layers: 16, Heads: 32, HeadDim: 128}
	own.Tokens = workload.Tokens{Prompt: 32, Generated: 4}
	s = summary.Build(summary.Inputs{RunID: "r", GPU: &h200, Workload: &own}, summary.Options{Phases: phases, Facts: facts})
	assert.Equal(t, int64(2e9), s.Environment.Model.MatmulParams)
	assert.Equal(t, "fp16", s.Environment.Dtype)
	assert.Equal(t, int64(32), s.Stages.Rows[0].Tokens)
}

// TestRanksDiffer: a stage's times are shown per rank when the gap between
// the ranks' means is more than the largest of their sds.
func TestRanksDiffer(t *testing.T) {
	r := func(mean, sd float64) facts.StageRank {
		return facts.StageRank{StageTimes: facts.StageTimes{MeanMS: mean, SDMS: sd}}
	}
	assert.False(t, summary.RanksDiffer(nil))
	assert.False(t, summary.RanksDiffer([]facts.StageRank{r(5, 0)}), "one rank")
	assert.False(t, summary.RanksDiffer([]facts.StageRank{r(5, 0.3), r(5.2, 0.1)}), "0.2 apart, sd 0.3")
	assert.True(t, summary.RanksDiffer([]facts.StageRank{r(6.320, 0.248), r(6.721, 0.263)}), "0.401 apart, sd 0.263 (the recorded two-node prefill)")
	assert.True(t, summary.RanksDiffer([]facts.StageRank{r(1, 0), r(1, 0), r(1.001, 0)}), "any gap with no spread")
}

// TestProgramFactsUnderTheProfile (issue 39): for a program with no
// report, the profile's model.* overrides win over the facts its
// framework gave (timeline/model.json), which fill the rest: tokens,
// batch, the model's shape.
func TestProgramFactsUnderTheProfile(t *testing.T) {
	h200 := machine.GPU{Name: "NVIDIA H200"}
	rep := &workload.Report{Stages: map[string]workload.ReportStage{"prefill": {MS: []float64{2, 2, 2}}, "decode": {MS: []float64{31, 31, 31}}}}
	program := &workload.ModelFacts{Format: workload.ModelFactsFormat, From: "the transformers config of LlamaForCausalLM (timeline/model.json)",
		Model:  workload.Model{Name: "llama", Arch: "LlamaForCausalLM", Dtype: "bf16", MatmulParams: 1e9, Layers: 16, Heads: 32, KVHeads: 8, HeadDim: 128},
		Tokens: workload.Tokens{Prompt: 4 * 128, Generated: 4 * 31}, Batch: 4}
	s := summary.Build(summary.Inputs{RunID: "r", GPU: &h200, Workload: rep, StagesFromRanges: true, ProgramFacts: program},
		summary.Options{Facts: summary.Facts{Model: workload.Model{Layers: 8}, Tokens: workload.Tokens{Generated: 31}}})
	require.NotNil(t, s.Environment.Model)
	assert.Equal(t, int64(8), s.Environment.Model.Layers, "the profile's model.layers wins")
	assert.Equal(t, int64(1e9), s.Environment.Model.MatmulParams, "the program's fills the rest")
	assert.Equal(t, int64(8), s.Environment.Model.KVHeads)
	assert.Equal(t, int64(4), s.Stages.Batch, "the program's batch")
	assert.Contains(t, s.Environment.ModelFrom, "timeline/model.json")
	require.NotNil(t, s.Serving.TPOTMS, s.Serving.Missing)
	assert.InDelta(t, 31.0/(31.0/4), *s.Serving.TPOTMS, 1e-9, "the profile's 31 generated tokens over the program's batch of 4")
}

// TestAloneTimesEveryStageOrNone (SYNTHETIC reports): the program alone's
// repeats are the rows' where they time every stage the CUPTI run's
// report does, each row keeping the recorded ones beside it; where one
// stage (here a sub-stage) is missing from them, no row takes them: one
// table is one run's.
func TestAloneTimesEveryStageOrNone(t *testing.T) {
	rep := &workload.Report{
		Model:  workload.Model{Name: "m", Dtype: "bfloat16"},
		Tokens: workload.Tokens{Prompt: 64, Generated: 8},
		Stages: map[string]workload.ReportStage{"prefill": {MS: []float64{3, 3.2, 3.1}}, "decode": {MS: []float64{12, 12.4, 12.2}},
			"decode/attn": {MS: []float64{5, 5.1, 5.2}, Parent: "decode"}},
	}
	whole := &workload.Report{Stages: map[string]workload.ReportStage{"prefill": {MS: []float64{2, 2.1, 2.2}}, "decode": {MS: []float64{10, 10.2, 10.1}},
		"decode/attn": {MS: []float64{4, 4.1, 4.2}, Parent: "decode"}}}
	s := summary.Build(summary.Inputs{RunID: "r", Workload: rep, WorkloadSource: "timeline/report.json", Alone: whole}, summary.Options{})
	require.Len(t, s.Stages.Rows, 3)
	for _, r := range s.Stages.Rows {
		require.NotNil(t, r.Recorded, r.Name)
		assert.Equal(t, whole.Stages[r.Name].MS, r.MS, r.Name)
		assert.Equal(t, rep.Stages[r.Name].MS, r.Recorded.MS, r.Name)
	}
	assert.Equal(t, "stage 1", s.Serving.From)

	part := &workload.Report{Stages: map[string]workload.ReportStage{"prefill": whole.Stages["prefill"], "decode": whole.Stages["decode"]}}
	s = summary.Build(summary.Inputs{RunID: "r", Workload: rep, WorkloadSource: "timeline/report.json", Alone: part}, summary.Options{})
	require.Len(t, s.Stages.Rows, 3)
	for _, r := range s.Stages.Rows {
		assert.Nil(t, r.Recorded, r.Name)
		assert.Equal(t, rep.Stages[r.Name].MS, r.MS, "%s: the CUPTI run's, every row", r.Name)
	}
	assert.Empty(t, s.Serving.From)
}

// TestFP32GEMMLever: a compute-bound GEMM that computes in FP32 on the FMA
// pipe (kernels.FP32GEMM) is told to move onto TF32 or BF16 tensor cores,
// in its program kind's words, not that only less arithmetic helps; a
// compute-bound tensor-core GEMM still is. SYNTHETIC kernels and metrics
// (the recorded one: TestFP32GEMMLeverRecorded; other recorded runs'
// SGEMMs are latency-bound), the names of cuBLAS's kernel families.
func TestFP32GEMMLever(t *testing.T) {
	sgemm, nvjet := "ampere_sgemm_128x64_nn", "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT"
	tab := model.KernelTable{Source: "t", TotalMS: 100, Launches: 30, Kernels: []model.KernelStats{
		{KernelTotals: model.KernelTotals{Name: sgemm, TotalMS: 60, Calls: 10}}, {KernelTotals: model.KernelTotals{Name: nvjet, TotalMS: 40, Calls: 20}}}}
	metrics := map[string]*kernels.Metrics{
		sgemm: {Kernel: sgemm, Launches: 2, DurationNS: 1e4, SMPct: 90, MemPct: 30, HasSOL: true},
		nvjet: {Kernel: nvjet, Launches: 2, DurationNS: 1e4, SMPct: 85, MemPct: 40, HasSOL: true},
	}
	for _, c := range []struct {
		kind  facts.ProgramKind
		lever string
	}{
		{facts.ProgramPyTorch, "torch.backends.cuda.matmul.allow_tf32 = True"},
		{facts.ProgramTorchCompile, "torch.backends.cuda.matmul.allow_tf32 = True"},
		{facts.ProgramNative, "cublasSetMathMode(handle, CUBLAS_TF32_TENSOR_OP_MATH)"},
		{facts.ProgramJAX, `jax.default_matmul_precision("tensorfloat32")`},
		{facts.ProgramUnknown, "cublasSetMathMode(handle, CUBLAS_TF32_TENSOR_OP_MATH)"},
	} {
		s := summary.Build(summary.Inputs{RunID: "r", Kernels: &tab, KernelsSource: "t", Metrics: metrics, Program: facts.Program{Kind: c.kind}}, summary.Options{})
		require.Len(t, s.Kernels.Rows, 2)
		assert.True(t, s.Kernels.Rows[0].FP32GEMM, "the SGEMM")
		assert.False(t, s.Kernels.Rows[1].FP32GEMM, "nvjet")
		var fp32, other string
		for _, r := range s.Narrative.Recommendations {
			switch {
			case strings.HasPrefix(r.Text, "#1 "):
				fp32 = r.Text
			case strings.HasPrefix(r.Text, "#2 "):
				other = r.Text
			}
		}
		assert.Contains(t, fp32, "compute-bound FP32 GEMM: it runs on the FP32 FMA pipe, not the tensor cores. TF32 or BF16 tensor cores are the next step", c.kind)
		assert.Contains(t, fp32, c.lever, c.kind)
		assert.NotContains(t, fp32, "only less arithmetic helps", c.kind)
		assert.Contains(t, other, "compute-bound GEMM: only less arithmetic helps, e.g. FP8", c.kind)
		if c.kind != facts.ProgramPyTorch && c.kind != facts.ProgramTorchCompile {
			assert.NotContains(t, fp32, "torch", c.kind)
		}
	}
}
