package kernels

import (
	"fmt"
	"math"

	"github.com/llm-perf-opt/deepprof/facts"
)

// DefaultThresholdPct is the SOL level below which neither unit counts as
// busy: ncu's own guidance flags throughputs under 60% of peak as latency
// issues.
const DefaultThresholdPct = 60

// Bound classes.
const (
	MemoryBound  = "memory-bound"
	ComputeBound = "compute-bound"
	LatencyBound = "latency-bound"
	Unknown      = "unknown"
)

// Rules.
const (
	RuleSOL      = "sol"
	RuleRoofline = "roofline"
)

// Peak is a GPU's peak compute and DRAM bandwidth; 0 means unknown. They
// should hold at the clocks ncu profiled at: ncu locks the GPU to its base
// clock by default, and datasheet peaks (at boost clock) make every kernel
// look further from its roof than it was.
type Peak struct {
	FLOPS       float64 // FLOP/s
	BytesPerSec float64 // DRAM byte/s
}

// effective returns the threshold in use: DefaultThresholdPct for a value
// that is not positive.
func effective(thresholdPct float64) float64 {
	if !(thresholdPct > 0) {
		return DefaultThresholdPct
	}
	return thresholdPct
}

// Classify says what bounds a kernel. It uses the SOL rule when m has SOL
// throughputs, else the roofline rule when m has FLOPs and DRAM bytes and
// peak is known; see the package documentation and RuleText. A threshold
// that is not positive means DefaultThresholdPct.
func Classify(m Metrics, peak Peak, thresholdPct float64) facts.Bound {
	thr := effective(thresholdPct)
	switch {
	case m.Launches == 0 || m.DurationNS <= 0:
		return facts.Bound{Class: Unknown, Why: "no profiled launch with a duration in the deep pass"}
	case m.HasSOL:
		return classifySOL(m, thr)
	case m.HasRoofline && peak.FLOPS > 0 && peak.BytesPerSec > 0:
		return classifyRoofline(m, peak, thr)
	case m.HasRoofline:
		return facts.Bound{Class: Unknown, Why: "FLOPs and DRAM bytes were measured, but not the SOL throughputs, and the GPU's peak FLOP/s and DRAM bandwidth are unknown"}
	default:
		return facts.Bound{Class: Unknown, Why: "no SOL throughputs or roofline counters in the deep pass; profile with ncu=default or ncu=roofline"}
	}
}

func classifySOL(m Metrics, thr float64) facts.Bound {
	nums := fmt.Sprintf("SM throughput %.1f%%, memory throughput %.1f%% of peak", m.SMPct, m.MemPct)
	switch {
	case math.Max(m.SMPct, m.MemPct) < thr:
		return facts.Bound{Class: LatencyBound, Rule: RuleSOL, Why: fmt.Sprintf("%s: both below %g%%, so neither unit is kept busy", nums, thr)}
	case m.SMPct >= m.MemPct:
		return facts.Bound{Class: ComputeBound, Rule: RuleSOL, Why: fmt.Sprintf("%s: SM is the busier unit", nums)}
	default:
		return facts.Bound{Class: MemoryBound, Rule: RuleSOL, Why: fmt.Sprintf("%s: memory is the busier unit", nums)}
	}
}

func classifyRoofline(m Metrics, peak Peak, thr float64) facts.Bound {
	sec := m.DurationNS * 1e-9
	achF, achB := m.FLOPs/sec, m.DRAMBytes/sec
	ridge := peak.FLOPS / peak.BytesPerSec
	intensity := math.Inf(1)
	if m.DRAMBytes > 0 {
		intensity = m.FLOPs / m.DRAMBytes
	} else if m.FLOPs == 0 {
		intensity = 0
	}
	var class, side string
	var frac float64
	if intensity < ridge {
		class, frac = MemoryBound, achB/peak.BytesPerSec
		side = fmt.Sprintf("%.3g TB/s is %.1f%% of the %.3g TB/s DRAM roof", achB/1e12, 100*frac, peak.BytesPerSec/1e12)
	} else {
		class, frac = ComputeBound, achF/peak.FLOPS
		side = fmt.Sprintf("%.3g TFLOP/s is %.1f%% of the %.3g TFLOP/s compute roof", achF/1e12, 100*frac, peak.FLOPS/1e12)
	}
	where := "below"
	if class == ComputeBound {
		where = "at or above"
	}
	nums := fmt.Sprintf("intensity %.3g FLOP/byte, %s the ridge at %.3g; achieved %s", intensity, where, ridge, side)
	if 100*frac < thr {
		return facts.Bound{Class: LatencyBound, Rule: RuleRoofline, Why: fmt.Sprintf("%s, below %g%%", nums, thr)}
	}
	return facts.Bound{Class: class, Rule: RuleRoofline, Why: nums}
}

// RuleText describes the rules, with the threshold in use, in plain
// sentences the report can print.
func RuleText(thresholdPct float64) string {
	thr := effective(thresholdPct)
	return fmt.Sprintf("Each kernel is classified from its deep-pass ncu metrics. "+
		"SOL rule (used when the pass measured ncu's Speed Of Light throughputs, sm__throughput and gpu__compute_memory_throughput, as duration-weighted means over the kernel's launches): "+
		"if both the SM and the memory throughput are below %[1]g%% of peak, the kernel is latency-bound (neither unit is kept busy: too little parallel work, launch overhead or stalls); "+
		"otherwise it is compute-bound when the SM throughput is at least the memory throughput, and memory-bound when not. "+
		"Roofline rule (used when there are no SOL throughputs but FLOP counts, DRAM bytes and the GPU's peaks are known): "+
		"a kernel whose arithmetic intensity (FLOPs per DRAM byte) is below the ridge point (peak FLOP/s divided by peak DRAM bytes/s) is memory-bound, otherwise compute-bound; "+
		"if it achieves less than %[1]g%% of the roof that bounds it (DRAM bandwidth when memory-bound, peak FLOP/s when compute-bound), it is latency-bound. "+
		"The roofline rule sees DRAM traffic only, so a kernel working out of L2 cache looks latency-bound by it. "+
		"With neither, the class is unknown.", thr)
}
