package summary

import (
	"fmt"
	"strings"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/machine"
	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/workload"
)

// BytesFormula is how a decode's bytes are counted, as the report prints it.
const BytesFormula = "bytes(decode of G tokens) = G·M·s + B·2·L·Hkv·d·s·(G·P + G(G+1)/2), where M is the weights every " +
	"token multiplies (matmul_params), s the bytes of the dtype, B the batch, L layers, Hkv key/value heads of " +
	"dimension d, P the prompt's tokens: each step reads every weight once and every sequence's keys and values so far. " +
	"MBU = bytes / (decode time × peak bandwidth); a step's floor = bytes / G / peak bandwidth."

// BytesAssumptions are what the bytes formula leaves out.
var BytesAssumptions = []string{
	"each decode step reads every weight once, whatever the batch (the batch shares them)",
	"the KV cache is read whole at every step; activations, norms and the embedding lookups are left out (small beside weights and cache)",
	"key/value heads as the report gives them (grouped-query attention), else as many as the query heads",
	"a mixture-of-experts model reads only its routed experts: this formula counts every weight",
}

// dtypeBytes is the bytes of one element of a model dtype, 0 when unknown.
func dtypeBytes(dtype string) float64 {
	switch machine.Dtype(dtype) {
	case "bf16", "fp16":
		return 2
	case "fp32":
		return 4
	}
	switch strings.ToLower(dtype) {
	case "fp8", "float8_e4m3fn", "float8_e5m2", "int8":
		return 1
	}
	return 0
}

// DecodeBytes counts what one decode stage of the report's generate reads
// (BytesFormula).
func DecodeBytes(m workload.Model, t workload.Tokens, batch int64) (float64, error) {
	s := dtypeBytes(m.Dtype)
	var miss []string
	for _, f := range []struct {
		name string
		ok   bool
	}{{"matmul_params", m.MatmulParams > 0}, {"layers", m.Layers > 0}, {"heads", m.Heads > 0}, {"head_dim", m.HeadDim > 0},
		{"a known dtype", s > 0}, {"generated tokens", t.Generated > 0}} {
		if !f.ok {
			miss = append(miss, f.name)
		}
	}
	if len(miss) > 0 {
		return 0, fmt.Errorf("the workload's model has no %s", strings.Join(miss, ", "))
	}
	if batch <= 0 {
		batch = 1
	}
	kv := m.KVHeads
	if kv <= 0 {
		kv = m.Heads
	}
	b := float64(batch)
	P, G := float64(t.Prompt)/b, float64(t.Generated)/b
	return G*float64(m.MatmulParams)*s + b*2*float64(m.Layers)*float64(kv)*float64(m.HeadDim)*s*(G*P+G*(G+1)/2), nil
}

func serving(in Inputs, peak *machine.Peak, st facts.Stages) facts.Serving {
	out := facts.Serving{BytesFormula: BytesFormula, BytesAssumptions: BytesAssumptions}
	var pre, dec *facts.Stage
	for i := range st.Rows {
		r := &st.Rows[i]
		if r.Phase == model.Prefill && pre == nil {
			pre = r
		}
		if r.Phase == model.Decode && dec == nil {
			dec = r
		}
	}
	f := func(v float64) *float64 { return &v }
	if pre != nil && pre.Recorded != nil || dec != nil && dec.Recorded != nil {
		out.From = "stage 1"
		if st.AloneSource != "" { // not stage 1's: the detached repeats
			out.From = "the CUPTI run, library detached"
		}
	}
	if pre != nil && pre.MeanMS > 0 {
		out.TTFTMS = f(pre.MeanMS)
	}
	var why []string
	batch := max(st.Batch, 1)
	out.BatchUnknown = in.Workload == nil || !in.Workload.BatchGiven()
	// The stages come from the CUPTI run's ranges: TPOT is its steady
	// step, TTFT its time to the first token (phases.DecodeSteps).
	steps := in.Decode
	if !st.FromRanges || steps == nil || steps.SteadySteps == 0 || steps.StepMS <= 0 {
		steps = nil
	}
	if steps != nil && steps.TTFTMS != nil {
		out.TTFTMS = f(*steps.TTFTMS)
	}
	var tpot, tpotSD *float64
	var decMS float64 // one decode stage's time, G tokens a sequence
	g := 0.0
	if in.Workload != nil {
		g = float64(in.Workload.Tokens.Generated) / float64(batch)
	}
	switch {
	case steps != nil:
		tpot, tpotSD = f(steps.StepMS), steps.StepSDMS
		decMS = g * steps.StepMS
		out.Steps = steps
	case dec != nil && dec.MeanMS > 0 && g > 0:
		tpot, decMS = f(dec.MeanMS/g), dec.MeanMS
		if dec.N > 1 {
			tpotSD = f(dec.SDMS / g)
		}
	}
	switch {
	case tpot == nil && (dec == nil || dec.MeanMS <= 0):
		why = append(why, "no decode stage (phases.decode names it)")
	case tpot == nil:
		why = append(why, "no generated token count (the workload report's tokens, or model.generated_tokens), and no decode range that repeats once a token")
	case g <= 0:
		out.TPOTMS, out.TPOTSDMS = tpot, tpotSD
		out.DecodeTokensPerS = f(float64(batch) / (*tpot / 1e3))
		why = append(why, "no MBU: no generated token count (the workload report's tokens, or model.generated_tokens)")
	default:
		out.TPOTMS, out.TPOTSDMS = tpot, tpotSD
		out.DecodeTokensPerS = f(float64(in.Workload.Tokens.Generated) / (decMS / 1e3))
		bytes, err := DecodeBytes(in.Workload.Model, in.Workload.Tokens, batch)
		switch {
		case err != nil:
			why = append(why, "no MBU: "+err.Error())
		case peak == nil || peak.MemoryTBps <= 0:
			why = append(why, "no MBU: no peak bandwidth for this GPU (report.peak_memory_tbps)")
		default:
			out.DecodeBytes = bytes
			out.StepFloorMS = f(bytes / g / peak.BytesPerSec() * 1e3)
			out.MBU = f(bytes / (decMS / 1e3) / peak.BytesPerSec())
		}
	}
	if out.MBU != nil && *out.MBU > 1 {
		// More than the memory can move: the figures are wrong, not the GPU.
		why = append(why, fmt.Sprintf("implausible: the workload's figures give an MBU of %.3g%%, over 100%%: check its tokens and the model.* facts", 100**out.MBU))
		out.MBU, out.StepFloorMS, out.DecodeBytes = nil, nil, 0
	}
	out.Missing = strings.Join(why, "; ")
	return out
}
