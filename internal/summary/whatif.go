package summary

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/llm-perf-opt/deepprof/internal/model"
)

// WhatIf is the what-if ladder: for each phase in steady state (and one
// decode step), what it takes now and the floors below it, each with the
// time it would save and the lever that reaches it.
type WhatIf struct {
	Rows []WhatIfRow `json:"rows"`
	// Rule says how each rung is computed, once.
	Rule    string `json:"rule"`
	Missing string `json:"missing,omitempty"`
}

// WhatIfRule is the ladder's rule in words, as the report prints it.
const WhatIfRule = "Per steady-state instance, from the CUPTI timeline (warm-up instances left out): now is the instance's wall " +
	"span on the GPU; the GPU-busy floor is the time its own kernels keep the GPU busy (what it would take if the host never " +
	"kept the GPU waiting: the most CUDA graphs or fewer launches can give); the bandwidth floor is the bytes it must read " +
	"(decode: serving's bytes formula; prefill: every weight once) at the GPU's peak bandwidth; the compute floor its FLOPs " +
	"(the MFU formula) at the GPU's peak FLOP/s. A floor is null, with the reason, where the model's facts or the peaks are unknown."

// WhatIfRow is one phase's ladder (or one decode step's).
type WhatIfRow struct {
	Phase     string         `json:"phase"` // the region's path
	ProcessID int64          `json:"process_id"`
	Device    model.DeviceID `json:"device"`
	Rank      *int           `json:"rank,omitempty"`
	// Kind is "prefill", "decode" or "decode step" (a range inside the
	// decode phase: one step); "" for a phase of neither.
	Kind      string  `json:"kind,omitempty"`
	Instances int     `json:"instances"`
	NowMS     float64 `json:"now_ms"`
	GPUBusyMS float64 `json:"gpu_busy_ms"`
	// LaunchesPerInstance and HostUSPerLaunch (now over the launches: the
	// host's time per launch while the phase is launch-bound).
	LaunchesPerInstance float64  `json:"launches_per_instance"`
	HostUSPerLaunch     *float64 `json:"host_us_per_launch"`
	LaunchBound         bool     `json:"launch_bound"`
	BandwidthFloorMS    *float64 `json:"bandwidth_floor_ms"`
	BandwidthFloorWhy   string   `json:"bandwidth_floor_why,omitempty"`
	ComputeFloorMS      *float64 `json:"compute_floor_ms"`
	ComputeFloorWhy     string   `json:"compute_floor_why,omitempty"`
	// Rungs are the floors that are known, each with what it saves
	// against now, highest floor first.
	Rungs []Rung `json:"rungs"`
}

// Rung is one floor of a ladder.
type Rung struct {
	Floor   string  `json:"floor"` // FloorBusy, FloorBandwidth or FloorCompute
	MS      float64 `json:"ms"`
	SavesMS float64 `json:"saves_ms"` // now - ms, at least 0
	Lever   string  `json:"lever"`
}

// KindDecodeStep is the kind of a ladder row that is one decode step.
const KindDecodeStep = "decode step"

// The ladder's floors, and the lever that reaches each.
const (
	FloorBusy      = "gpu_busy"
	FloorBandwidth = "bandwidth"
	FloorCompute   = "compute"

	LeverBusy      = "CUDA graphs (torch.compile mode=\"reduce-overhead\"), larger batches or fewer, fused kernels"
	LeverBandwidth = "faster kernels that read each byte once at full bandwidth"
	LeverCompute   = "less arithmetic (a smaller or quantized model, fewer tokens)"
)

// whatIf builds the ladder from the phase rows (their steady-state
// instances) and, where known, the model's facts and the GPU's peaks.
func whatIf(in Inputs, s *Summary) WhatIf {
	out := WhatIf{Rule: WhatIfRule, Rows: []WhatIfRow{}}
	if s.Phases.Missing != "" {
		out.Missing = s.Phases.Missing
		return out
	}
	var flops FLOPs
	var ferr, berr error
	var decodeBytes float64
	batch := max(s.Stages.Batch, 1)
	switch {
	case in.Workload == nil:
		ferr = fmt.Errorf("no model facts (no workload report, no model.* in the profile)")
		berr = ferr
	default:
		flops, ferr = CountFLOPs(in.Workload.Model, in.Workload.Tokens, batch)
		decodeBytes, berr = DecodeBytes(in.Workload.Model, in.Workload.Tokens, batch)
	}
	peak := s.Environment.Peak
	generated := int64(0)
	if in.Workload != nil && batch > 0 {
		generated = in.Workload.Tokens.Generated / batch
	}
	top := ""
	for _, r := range s.Phases.Rows {
		if r.Phase == "" || r.Kernels == 0 || r.Instances == 0 {
			continue
		}
		kind := ""
		if !r.Nested {
			top = r.Phase
			kind = phaseKind(s, r.Phase)
		} else if phaseKind(s, top) == model.Decode && strings.Count(r.Phase, "/") == 1 && strings.HasPrefix(r.Phase, top+"/") {
			kind = KindDecodeStep
		} else {
			continue
		}
		w := WhatIfRow{Phase: r.Phase, ProcessID: r.ProcessID, Device: r.Device, Rank: r.Rank, Kind: kind, Instances: r.Instances,
			NowMS: r.PerInstance(r.WallMS), GPUBusyMS: r.PerInstance(r.BusyMS), LaunchesPerInstance: r.PerInstance(float64(r.Kernels)),
			LaunchBound: r.LaunchBound}
		if r.LaunchBound && w.LaunchesPerInstance > 0 {
			us := w.NowMS * 1e3 / w.LaunchesPerInstance
			w.HostUSPerLaunch = &us
		}
		// Per instance: a prefill phase instance is one prefill, a decode
		// phase instance one decode of every generated token, a step one
		// token.
		var fl, by float64
		var fwhy, bwhy string
		switch kind {
		case model.Prefill:
			fl, by = flops.Prefill, 0
			if in.Workload != nil {
				by = float64(in.Workload.Model.MatmulParams) * dtypeBytes(in.Workload.Model.Dtype)
			}
			if by <= 0 {
				bwhy = "the model's matmul_params or dtype are unknown"
			}
		case model.Decode, KindDecodeStep:
			fl, by = flops.Decode, decodeBytes
			if kind == KindDecodeStep {
				if generated <= 0 {
					fl, by = 0, 0
					fwhy, bwhy = "no generated token count", "no generated token count"
				} else {
					fl, by = fl/float64(generated), by/float64(generated)
				}
			}
			if berr != nil && bwhy == "" {
				bwhy = berr.Error()
			}
		default:
			fwhy = "the phase is neither prefill nor decode (phases.prefill, phases.decode name them)"
			bwhy = fwhy
		}
		if ferr != nil && fwhy == "" {
			fwhy = ferr.Error()
		}
		switch {
		case fwhy != "":
			w.ComputeFloorWhy = fwhy
		case peak == nil || peak.TFLOPS <= 0:
			w.ComputeFloorWhy = "no peak FLOP/s for this GPU and dtype: " + orWhy(s.Environment.PeakMissing, "set report.peak_tflops")
		case fl > 0:
			v := fl / peak.FLOPS() * 1e3
			w.ComputeFloorMS = &v
		default:
			w.ComputeFloorWhy = "no FLOPs counted"
		}
		switch {
		case bwhy != "":
			w.BandwidthFloorWhy = bwhy
		case peak == nil || peak.MemoryTBps <= 0:
			w.BandwidthFloorWhy = "no peak bandwidth for this GPU (report.peak_memory_tbps)"
		case by > 0:
			v := by / peak.BytesPerSec() * 1e3
			w.BandwidthFloorMS = &v
		default:
			w.BandwidthFloorWhy = "no bytes counted"
		}
		w.Rungs = rungs(w)
		out.Rows = append(out.Rows, w)
	}
	if len(out.Rows) == 0 {
		out.Missing = "no phase launched kernels in its steady-state instances"
	}
	return out
}

// rungs are w's known floors, highest first, each with what it saves.
func rungs(w WhatIfRow) []Rung {
	rs := []Rung{{Floor: FloorBusy, MS: w.GPUBusyMS, Lever: LeverBusy}}
	if w.BandwidthFloorMS != nil {
		rs = append(rs, Rung{Floor: FloorBandwidth, MS: *w.BandwidthFloorMS, Lever: LeverBandwidth})
	}
	if w.ComputeFloorMS != nil {
		rs = append(rs, Rung{Floor: FloorCompute, MS: *w.ComputeFloorMS, Lever: LeverCompute})
	}
	slices.SortStableFunc(rs, func(a, b Rung) int { return cmp.Compare(b.MS, a.MS) })
	for i := range rs {
		rs[i].SavesMS = max(w.NowMS-rs[i].MS, 0)
	}
	return rs
}
