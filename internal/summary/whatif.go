package summary

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/model"
)

// WhatIfRule is the ladder's rule in words, as the report prints it.
const WhatIfRule = "Per steady-state instance, from the CUPTI timeline (warm-up instances left out): now is the instance's wall " +
	"span on the GPU; the GPU-busy floor is the time its own kernels keep the GPU busy (what it would take if the host never " +
	"kept the GPU waiting: the most CUDA graphs or fewer launches can give); the bandwidth floor is the bytes it must read " +
	"(decode: serving's bytes formula; prefill: every weight once) at the GPU's peak bandwidth; the compute floor its FLOPs " +
	"(the MFU formula) at the GPU's peak FLOP/s. A floor is null, with the reason, where the model's facts or the peaks are unknown."

// whatIf builds the ladder from the phase rows (their steady-state
// instances) and, where known, the model's facts and the GPU's peaks.
func whatIf(in Inputs, s *building) facts.WhatIf {
	out := facts.WhatIf{Rule: WhatIfRule, Rows: []facts.WhatIfRow{}}
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
			kind = facts.KindDecodeStep
		} else {
			continue
		}
		w := facts.WhatIfRow{Phase: r.Phase, ProcessID: r.ProcessID, Device: r.Device, Rank: r.Rank, Kind: kind, Instances: r.Instances,
			NowMS: PerInstance(r, r.WallMS), GPUBusyMS: PerInstance(r, r.BusyMS), LaunchesPerInstance: PerInstance(r, float64(r.Kernels)),
			LaunchBound: r.LaunchBound}
		if r.LaunchBound && w.LaunchesPerInstance > 0 {
			us := w.NowMS * 1e3 / w.LaunchesPerInstance
			w.HostUSPerLaunch = &us
		}
		if r.LaunchCallUS != nil {
			us, n, ms := *r.LaunchCallUS, PerInstance(r, float64(r.LaunchCalls)), PerInstance(r, r.LaunchCallMS)
			w.LaunchCallUS, w.LaunchCallsPerInstance, w.LaunchCallMSPerInstance = &us, &n, &ms
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
		case model.Decode, facts.KindDecodeStep:
			fl, by = flops.Decode, decodeBytes
			if kind == facts.KindDecodeStep {
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
		w.BindingFloor = bindingFloor(w)
		busy := leversOf(s.Environment.Program).busy
		if !w.LaunchBound {
			busy = facts.LeverNotLaunches
		}
		w.Rungs = rungs(w, busy)
		out.Rows = append(out.Rows, w)
	}
	if len(out.Rows) == 0 {
		out.Missing = "no phase launched kernels in its steady-state instances"
	}
	return out
}

// bindingFloor is the higher of w's known physical floors: a phase must
// both read its bytes and do its FLOPs, so the lower floor cannot be
// reached.
func bindingFloor(w facts.WhatIfRow) string {
	switch {
	case w.BandwidthFloorMS != nil && (w.ComputeFloorMS == nil || *w.BandwidthFloorMS >= *w.ComputeFloorMS):
		return facts.FloorBandwidth
	case w.ComputeFloorMS != nil:
		return facts.FloorCompute
	}
	return ""
}

// rungs are w's GPU-busy floor and its binding physical floor, highest
// first, each with what it saves, the GPU-busy floor's lever busy: the
// ladder stops at the binding floor.
func rungs(w facts.WhatIfRow, busy string) []facts.Rung {
	rs := []facts.Rung{{Floor: facts.FloorBusy, MS: w.GPUBusyMS, Lever: busy}}
	switch w.BindingFloor {
	case facts.FloorBandwidth:
		rs = append(rs, facts.Rung{Floor: facts.FloorBandwidth, MS: *w.BandwidthFloorMS, Lever: facts.LeverBandwidth})
	case facts.FloorCompute:
		rs = append(rs, facts.Rung{Floor: facts.FloorCompute, MS: *w.ComputeFloorMS, Lever: facts.LeverCompute})
	}
	slices.SortStableFunc(rs, func(a, b facts.Rung) int { return cmp.Compare(b.MS, a.MS) })
	for i := range rs {
		rs[i].SavesMS = max(w.NowMS-rs[i].MS, 0)
	}
	return rs
}
