package summary

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/machine"
	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/workload"
)

// Formula is the FLOP count MFU uses, as the report prints it.
const Formula = "FLOPs(token) = 2·M + 4·L·H·d·c, where M is the weights every token multiplies " +
	"(matmul_params), L layers, H query heads of dimension d, and c the keys the token attends to " +
	"(prefill token i of P: c = i; decode token j after a P-token prompt: c = P + j). " +
	"Prefill: B·(2·M·P + 4·L·H·d·P(P+1)/2); decode of G tokens: B·(2·M·G + 4·L·H·d·(G·P + G(G+1)/2)). " +
	"MFU = FLOPs / (mean stage time × peak)."

// Assumptions are what the formula leaves out, as the report prints them.
var Assumptions = []string{
	"forward pass only; a multiply-add is 2 FLOPs",
	"every linear layer's weights (the output head's included) are multiplied once per token; embeddings are lookups",
	"attention counts QKᵀ and AV with the causal mask (the keys a token may attend to), whatever a kernel computes beyond them",
	"norms, activations, softmax and rotary embeddings are left out (a small share)",
	"a mixture-of-experts model's M counts the experts a token runs (deepprof's workloads: num_experts_per_tok of them); a program's model.matmul_params should too",
	"time is stage 1's (the program alone) mean wall time per stage, host overhead included; the peak is the GPU's dense peak for the model's dtype",
}

// FactsHint says what the model.* facts are, for a program that writes no
// workload report.
const FactsHint = "model.matmul_params: the weights every token multiplies, embeddings left out; model.layers, model.heads " +
	"(query heads), model.head_dim; model.dtype; model.prompt_tokens: the tokens one prefill stage processes; " +
	"model.generated_tokens: the tokens one decode stage generates, both the whole batch's; model.batch: the sequences they are shared among"

// missingFacts are the model.* overrides MFU still needs, as KEY=...
func missingFacts(w *workload.Report) []string {
	var out []string
	for _, f := range []struct {
		key string
		ok  bool
	}{{"model.matmul_params", w.Model.MatmulParams > 0}, {"model.layers", w.Model.Layers > 0}, {"model.heads", w.Model.Heads > 0},
		{"model.head_dim", w.Model.HeadDim > 0}, {"model.dtype", w.Model.Dtype != ""},
		{"model.prompt_tokens", w.Tokens.Prompt > 0}, {"model.generated_tokens", w.Tokens.Generated > 0}} {
		if !f.ok {
			out = append(out, f.key+"=…")
		}
	}
	return out
}

// FLOPs are a generate's prefill and decode FLOP counts.
type FLOPs struct{ Prefill, Decode float64 }

// CountFLOPs counts the FLOPs of one generate of the workload report; an
// error names the facts the report lacks.
func CountFLOPs(m workload.Model, t workload.Tokens, batch int64) (FLOPs, error) {
	var miss []string
	for _, f := range []struct {
		name string
		v    int64
	}{{"matmul_params", m.MatmulParams}, {"layers", m.Layers}, {"heads", m.Heads}, {"head_dim", m.HeadDim}} {
		if f.v <= 0 {
			miss = append(miss, f.name)
		}
	}
	if len(miss) > 0 {
		return FLOPs{}, fmt.Errorf("the model's facts (a workload report's model, or model.* in the profile) have no %s (the default workload reports them)", strings.Join(miss, ", "))
	}
	if batch <= 0 {
		batch = 1
	}
	b := float64(batch)
	P, G := float64(t.Prompt)/b, float64(t.Generated)/b
	M, attn := float64(m.MatmulParams), 4*float64(m.Layers)*float64(m.Heads)*float64(m.HeadDim)
	return FLOPs{
		Prefill: b * (2*M*P + attn*P*(P+1)/2),
		Decode:  b * (2*M*G + attn*(G*P+G*(G+1)/2)),
	}, nil
}

func mfu(in Inputs, peak *machine.Peak, peakMissing string, st facts.Stages) facts.MFU {
	out := facts.MFU{Formula: Formula, Assumptions: Assumptions, Peak: peak}
	if in.StagesFromRanges {
		// The stage times are the program's NVTX ranges, not stage 1's.
		out.Assumptions = append(slices.Clone(Assumptions[:len(Assumptions)-1]),
			"time is the mean wall time of each phase's NVTX range instances in the CUPTI timeline (the profiler running), host overhead included; the peak is the GPU's dense peak for the model's dtype")
	}
	if !in.StagesFromRanges && in.WorkloadSource != "" && in.Alone == nil {
		// The stage times are the CUPTI run's report's, not stage 1's.
		why := "the profiler running"
		if st.AloneMissing != "" {
			why += "; stage 1's could not be read: " + oneLine(st.AloneMissing)
		}
		out.Assumptions = append(slices.Clone(Assumptions[:len(Assumptions)-1]),
			"time is the mean wall time per stage of "+in.WorkloadSource+" ("+why+"), host overhead included; the peak is the GPU's dense peak for the model's dtype")
	}
	if st.AloneSource != "" { // not stage 1's: the detached repeats
		out.Assumptions = append(slices.Clone(Assumptions[:len(Assumptions)-1]),
			"time is the program-alone mean wall time per stage, of the CUPTI run's repeats after the library detached CUPTI from the process (no profiler attached), host overhead included; the peak is the GPU's dense peak for the model's dtype")
	}
	switch {
	case in.Workload == nil:
		out.Missing = orWhy(in.WorkloadMissing, "no workload report")
		return out
	case in.StagesFromRanges && len(missingFacts(in.Workload)) > 0:
		out.Missing = "the program wrote no workload report, so its model facts come from the profile (or, for a transformers model under the automatic ranges, its config): give " +
			strings.Join(missingFacts(in.Workload), " ") + " as overrides (" + FactsHint + ")"
		return out
	case peak == nil:
		out.Missing = "no peak throughput: " + peakMissing
		return out
	}
	f, err := CountFLOPs(in.Workload.Model, in.Workload.Tokens, st.Batch)
	if err != nil {
		out.Missing = err.Error()
		return out
	}
	// The first top-level stage of each phase.
	means := map[string]float64{}
	for _, r := range st.Rows {
		if _, seen := means[r.Phase]; r.Phase != "" && !seen {
			means[r.Phase] = r.MeanMS
		}
	}
	row := func(scope string, flops, ms float64) *float64 {
		if ms <= 0 || flops <= 0 {
			return nil
		}
		achieved := flops / (ms / 1e3)
		v := achieved / peak.FLOPS()
		out.Rows = append(out.Rows, facts.MFURow{Scope: scope, FLOPs: flops, MeanMS: ms, AchievedTFLOPS: achieved / 1e12, MFU: v})
		return &v
	}
	pm, pok := means[model.Prefill]
	dm, dok := means[model.Decode]
	if pok && dok {
		out.Model = row("model (prefill + decode)", f.Prefill+f.Decode, model.RoundMS(pm+dm))
	}
	if pok {
		out.Prefill = row("prefill", f.Prefill, pm)
	}
	if dok {
		out.Decode = row("decode", f.Decode, dm)
	}
	if len(out.Rows) == 0 {
		out.Missing = "no stage is a prefill or a decode (phases.prefill, phases.decode name them)"
	}
	for _, r := range out.Rows {
		if r.MFU > 1 && !math.IsInf(r.MFU, 0) { // an infinite one is refused with the summary (input.CheckFinite)
			// More than the GPU can do: the figures are wrong, not the GPU.
			out.Missing = fmt.Sprintf("implausible: the workload's figures (its tokens, the model's facts) give %s an MFU of %.3g%% of the GPU's peak, over 100%%: check the report's tokens and the model.* facts",
				r.Scope, 100*r.MFU)
			out.Rows, out.Model, out.Prefill, out.Decode = nil, nil, nil, nil
			break
		}
	}
	return out
}
