package summary

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/llm-perf-opt/deepprof/harness/nvtx"
)

// Narrative is the summary's reading of its own numbers: which phase
// dominates, the top bottlenecks, and what follows from them. Every
// sentence is made from the data above it; a missing input makes fewer
// sentences, never invented ones.
type Narrative struct {
	DominantPhase string     `json:"dominant_phase,omitempty"`
	DominantShare float64    `json:"dominant_share,omitempty"` // of the top-level stages' wall time
	GPUBusy       []PhaseGPU `json:"gpu_busy,omitempty"`
	// LaunchBound are the phases the CUPTI timeline shows idle for more
	// than Phases.LaunchBoundIdleShare of their wall time.
	LaunchBound     []PhaseRow `json:"launch_bound,omitempty"`
	Bottlenecks     []Kernel   `json:"bottlenecks"`
	Recommendations []string   `json:"recommendations"`
	Lines           []string   `json:"lines"`
}

// PhaseGPU compares a phase's kernel time (the timeline pass, one run of
// the workload) with its wall time in the plain run.
type PhaseGPU struct {
	Phase  string  `json:"phase"`
	Region string  `json:"region"`
	GPUMS  float64 `json:"gpu_ms"`
	WallMS float64 `json:"wall_ms"`
	Busy   float64 `json:"busy"` // GPUMS / WallMS
	// Instances, when set, are the range instances of the profiled run
	// that the region's kernel time was divided by (stages read from the
	// same run's NVTX ranges): GPUMS is then a mean per instance, like
	// WallMS.
	Instances int `json:"instances,omitempty"`
}

// busyLow is the share of a phase's wall time under which the GPU is
// said to wait on the host.
const busyLow = 0.5

func narrate(s *Summary) Narrative {
	var n Narrative
	say := func(format string, args ...any) { n.Lines = append(n.Lines, fmt.Sprintf(format, args...)) }

	var total float64
	var top *Stage
	for i, r := range s.Stages.Rows {
		if r.Parent != "" {
			continue
		}
		total += r.MeanMS
		if top == nil || r.MeanMS > top.MeanMS {
			top = &s.Stages.Rows[i]
		}
	}
	if top != nil && total > 0 {
		n.DominantPhase, n.DominantShare = top.Name, top.MeanMS/total
		over := fmt.Sprintf("mean over %d repeats", top.N)
		if top.WarmupMS != nil {
			over += ", its warm-up dropped"
		}
		say("%s dominates: %.1f%% of the generate's wall time (%.2f ms of %.2f ms, %s).",
			top.Name, 100*n.DominantShare, top.MeanMS, total, over)
	}

	n.LaunchBound = launchBound(s.Phases)
	timed := map[string]bool{} // regions the timeline measured: its rule, not the one below, speaks for them
	for _, r := range s.Phases.Rows {
		timed[r.Phase] = true
	}
	for _, r := range n.LaunchBound {
		say("%s", launchBoundLine(r, s.Phases.LaunchBoundIdleShare))
		n.Recommendations = append(n.Recommendations, launchBoundAdvice(r))
	}

	n.GPUBusy = gpuBusy(s)
	for _, g := range n.GPUBusy {
		if g.Busy < busyLow && !timed[g.Region] {
			say("In %s the GPU runs kernels for only %.0f%% of the wall time (%.2f ms of kernels in %.2f ms): the rest is the host (Python, framework, kernel launches).",
				g.Phase, 100*g.Busy, g.GPUMS, g.WallMS)
			n.Recommendations = append(n.Recommendations, fmt.Sprintf(
				"%s is host-bound (GPU busy %.0f%%): capture it with CUDA graphs (torch.compile mode=\"reduce-overhead\") or batch more requests per step before tuning kernels.",
				g.Phase, 100*g.Busy))
		}
	}

	for i, k := range s.Kernels.Rows {
		if i == 3 {
			break
		}
		n.Bottlenecks = append(n.Bottlenecks, k)
	}
	if len(n.Bottlenecks) > 0 {
		var parts []string
		for _, k := range n.Bottlenecks {
			parts = append(parts, fmt.Sprintf("%s (%s, %s, %.1f%% of kernel time)", k.Shown(), k.Category, k.Bound.Class, 100*k.Share))
		}
		say("The top bottlenecks by total GPU time: %s.", strings.Join(parts, "; "))
	}
	seen := map[string]bool{}
	for _, k := range n.Bottlenecks {
		r := recommend(k)
		if r != "" && !seen[r] {
			seen[r] = true
			n.Recommendations = append(n.Recommendations, r)
		}
	}
	var cats []string
	for _, c := range s.Kernels.ByCategory {
		if c.Category == "elementwise" || c.Category == "copy" || c.Category == "normalization" {
			if c.Share >= 0.2 {
				cats = append(cats, fmt.Sprintf("%s %.0f%%", c.Category, 100*c.Share))
			}
		}
	}
	if len(cats) > 0 {
		n.Recommendations = append(n.Recommendations, fmt.Sprintf(
			"Small elementwise, copy and normalization kernels take a large share (%s of kernel time): fuse them (torch.compile, fused norm/activation kernels).",
			strings.Join(cats, ", ")))
	}
	if m := s.MFU.Decode; m != nil && s.MFU.Prefill != nil && *m < *s.MFU.Prefill/10 {
		say("Decode reaches %.3g%% MFU against %.3g%% in prefill: one token per step reads every weight for little arithmetic.", 100**m, 100**s.MFU.Prefill)
	}
	if len(n.Recommendations) == 0 && len(n.Lines) > 0 {
		n.Recommendations = append(n.Recommendations, "No rule fired on this run's numbers: read the kernel table and the regions above.")
	}
	return n
}

// recommend is the next step that follows from a bottleneck's category and
// bound; "" when none does.
func recommend(k Kernel) string {
	name := k.Shown()
	switch k.Category + "/" + k.Bound.Class {
	case "gemm/memory-bound":
		return fmt.Sprintf("%s (GEMM/GEMV) is memory-bound: it streams weights for few tokens. Batch more sequences per step, or use lower-precision weights (FP8/INT8) to cut the bytes read.", name)
	case "gemm/compute-bound":
		return fmt.Sprintf("%s (GEMM) is compute-bound: only less arithmetic helps, e.g. FP8 tensor cores where accuracy allows.", name)
	case "gemm/latency-bound":
		return fmt.Sprintf("%s (GEMM) is latency-bound: too little work per launch to fill the GPU. Larger batches, or fusing the projections (QKV, gate/up) into one GEMM.", name)
	case "attention/memory-bound", "attention/latency-bound":
		return fmt.Sprintf("%s (attention) is %s: use a fused attention kernel for decode (FlashAttention/FlashInfer decode kernels, paged KV cache).", name, k.Bound.Class)
	case "attention/compute-bound":
		return fmt.Sprintf("%s (attention) is compute-bound: a newer FlashAttention version or FP8 attention is the lever.", name)
	case "elementwise/memory-bound", "elementwise/latency-bound", "normalization/memory-bound", "normalization/latency-bound",
		"copy/memory-bound", "copy/latency-bound", "reduction/latency-bound", "reduction/memory-bound":
		return fmt.Sprintf("%s (%s) is %s: fuse it with its neighbours (torch.compile) so its data stays on chip and its launch disappears.", name, k.Category, k.Bound.Class)
	case "communication/memory-bound", "communication/latency-bound", "communication/compute-bound":
		return fmt.Sprintf("%s (communication) is on the critical path: overlap it with compute or reduce the tensor-parallel degree.", name)
	}
	return ""
}

// gpuBusy compares each phase's kernel time in the timeline pass (one run
// of the workload under the profiler: the kernels' own durations) with the
// plain run's mean wall time. Only with every launch counted: a sampled
// region total says nothing about the phase.
func gpuBusy(s *Summary) []PhaseGPU {
	if s.Regions.Sampled || len(s.Regions.Rows) == 0 {
		return nil
	}
	names := phaseRegions(s)
	var out []PhaseGPU
	for _, st := range s.Stages.Rows {
		// A workload report's phases were pushed as the ranges it names;
		// stages read from NVTX ranges are those ranges.
		reg, ok := names[st.Phase]
		instances := 0
		if s.Stages.Source != "" {
			reg, ok, instances = st.Name, st.Phase != "", len(st.MS)
		}
		if !ok || st.MeanMS <= 0 {
			continue
		}
		for _, r := range s.Regions.Rows {
			if r.Name == reg && r.TotalMS > 0 {
				g := PhaseGPU{Phase: st.Name, Region: reg, GPUMS: r.TotalMS, WallMS: st.MeanMS, Instances: instances}
				if instances > 0 {
					g.GPUMS = r.TotalMS / float64(instances)
				}
				g.Busy = g.GPUMS / g.WallMS
				out = append(out, g)
			}
		}
	}
	return out
}

// phaseRegions maps the workload's phases to the NVTX region names it
// pushed them as (its report's "ranges"; the defaults otherwise).
func phaseRegions(s *Summary) map[string]string {
	r := struct {
		Prefill string `json:"prefill"`
		Decode  string `json:"decode"`
		Domain  string `json:"domain"`
	}{Prefill: "prefill", Decode: "decode_all"}
	if s.workloadRanges != nil {
		_ = json.Unmarshal(s.workloadRanges, &r)
	}
	return map[string]string{
		"prefill": nvtx.Path([]nvtx.Range{{Domain: r.Domain, Name: r.Prefill}}),
		"decode":  nvtx.Path([]nvtx.Range{{Domain: r.Domain, Name: r.Decode}}),
	}
}

// Shown is the kernel's display name, or its short name when it has none
// (a summary.json written before display names).
func (k Kernel) Shown() string {
	if k.Display != "" {
		return k.Display
	}
	return Short(k.Name)
}

// Short is a kernel name cut for a sentence: its function name without
// template arguments or parameters.
func Short(name string) string {
	s := name
	s = strings.TrimPrefix(s, "void ")
	s = strings.ReplaceAll(s, "(anonymous namespace)::", "")
	s = strings.ReplaceAll(s, "<unnamed>::", "") // ncu's spelling of an anonymous namespace
	if i := strings.IndexAny(s, "<("); i > 0 {
		s = s[:i]
	}
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}
