package kernels

import (
	"math"
	"strings"
	"testing"

	"github.com/sebdah/goldie/v2"
)

func sol(smPct, memPct float64) Metrics {
	return Metrics{Kernel: "k", Launches: 1, DurationNS: 1000, SMPct: smPct, MemPct: memPct, HasSOL: true}
}

// roof is a kernel of 1 ms that did flops FLOPs and moved bytes DRAM bytes.
func roof(flops, bytes float64) Metrics {
	return Metrics{Kernel: "k", Launches: 3, DurationNS: 1e6, FLOPs: flops, DRAMBytes: bytes, HasRoofline: true}
}

func TestClassifySOL(t *testing.T) {
	for _, tc := range []struct {
		name     string
		m        Metrics
		thr      float64
		class    string
		whyParts []string
	}{
		{"both just below the threshold", sol(59.999, 59.99), 60, LatencyBound, []string{"SM throughput 60.0%, memory throughput 60.0% of peak", "both below 60%"}},
		{"SM at the threshold", sol(60, 10), 60, ComputeBound, []string{"SM is the busier unit"}},
		{"memory at the threshold", sol(10, 60), 60, MemoryBound, []string{"memory is the busier unit"}},
		{"equal at the threshold: compute", sol(60, 60), 60, ComputeBound, nil},
		{"equal above: compute", sol(75, 75), 60, ComputeBound, nil},
		{"memory just ahead", sol(75, 75.0001), 60, MemoryBound, nil},
		{"zero threshold means the default", sol(59, 59), 0, LatencyBound, []string{"both below 60%"}},
		{"negative threshold means the default", sol(61, 1), -5, ComputeBound, nil},
		{"NaN threshold means the default", sol(59, 1), math.NaN(), LatencyBound, nil},
		{"a threshold of 80", sol(79.9, 70), 80, LatencyBound, []string{"both below 80%"}},
		{"a threshold of 80, met", sol(80, 70), 80, ComputeBound, nil},
		{"a threshold of 0.5", sol(0.6, 0.2), 0.5, ComputeBound, nil},
		// SOL is preferred when both are measured.
		{"SOL wins over roofline", func() Metrics { m := roof(1e9, 1e9); m.SMPct, m.MemPct, m.HasSOL = 10, 90, true; return m }(), 60, MemoryBound, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := Classify(tc.m, h200, tc.thr)
			if b.Class != tc.class || b.Rule != RuleSOL {
				t.Errorf("Classify = %+v, want %s by sol", b, tc.class)
			}
			for _, p := range tc.whyParts {
				if !strings.Contains(b.Why, p) {
					t.Errorf("Why %q lacks %q", b.Why, p)
				}
			}
		})
	}
}

func TestClassifyRoofline(t *testing.T) {
	// A GPU of 100 TFLOP/s and 1 TB/s: the ridge is at 100 FLOP/byte. The
	// kernels run 1 ms, so the roofs are 1e11 FLOPs and 1e9 bytes.
	peak := Peak{FLOPS: 100e12, BytesPerSec: 1e12}
	for _, tc := range []struct {
		name     string
		m        Metrics
		thr      float64
		class    string
		whyParts []string
	}{
		{"memory side at 60% of bandwidth", roof(6e8*99.99, 6e8), 60, MemoryBound, []string{"below the ridge at 100", "0.6 TB/s is 60.0% of the 1 TB/s DRAM roof"}},
		{"memory side just under 60%", roof(5.999e8*10, 5.999e8), 60, LatencyBound, []string{"60.0% of the 1 TB/s DRAM roof, below 60%"}},
		{"at the ridge: compute side", roof(100*6e8, 6e8), 60, ComputeBound, []string{"at or above the ridge at 100", "60 TFLOP/s is 60.0% of the 100 TFLOP/s compute roof"}},
		{"compute side just under 60%", roof(5.999e10, 1e8), 60, LatencyBound, []string{"compute roof, below 60%"}},
		{"compute side near the roof", roof(9e10, 1e8), 60, ComputeBound, nil},
		{"no DRAM traffic: compute side", roof(7e10, 0), 60, ComputeBound, []string{"intensity +Inf"}},
		{"nothing measured moved: latency", roof(0, 0), 60, LatencyBound, []string{"intensity 0 FLOP/byte"}},
		{"a pure copy at full bandwidth", roof(0, 9e8), 60, MemoryBound, []string{"90.0% of the 1 TB/s DRAM roof"}},
		{"a threshold of 95", roof(0, 9e8), 95, LatencyBound, []string{"below 95%"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := Classify(tc.m, peak, tc.thr)
			if b.Class != tc.class || b.Rule != RuleRoofline {
				t.Errorf("Classify = %+v, want %s by roofline", b, tc.class)
			}
			for _, p := range tc.whyParts {
				if !strings.Contains(b.Why, p) {
					t.Errorf("Why %q lacks %q", b.Why, p)
				}
			}
		})
	}
}

func TestClassifyUnknown(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    Metrics
		peak Peak
		why  string
	}{
		{"nothing measured", Metrics{Kernel: "k", Launches: 2, DurationNS: 10}, h200, "no SOL throughputs or roofline counters in the deep pass; profile with ncu=default or ncu=roofline"},
		{"roofline counters, no peak", roof(1, 1), Peak{}, "peak FLOP/s and DRAM bandwidth are unknown"},
		{"roofline counters, half a peak", roof(1, 1), Peak{FLOPS: 1e15}, "peak FLOP/s and DRAM bandwidth are unknown"},
		{"no launch", Metrics{HasSOL: true, SMPct: 90}, h200, "no profiled launch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := Classify(tc.m, tc.peak, 60)
			if b.Class != Unknown || b.Rule != "" || !strings.Contains(b.Why, tc.why) {
				t.Errorf("Classify = %+v, want unknown saying %q", b, tc.why)
			}
		})
	}
}

func TestMetricsDerived(t *testing.T) {
	m := roof(2e12, 4e9) // 1 ms
	if v, ok := m.Intensity(); !ok || v != 500 {
		t.Errorf("Intensity = %v, %v", v, ok)
	}
	if v, ok := m.FLOPS(); !ok || v != 2e15 {
		t.Errorf("FLOPS = %v, %v", v, ok)
	}
	if v, ok := m.BytesPerSec(); !ok || v != 4e12 {
		t.Errorf("BytesPerSec = %v, %v", v, ok)
	}
	if _, ok := roof(1, 0).Intensity(); ok {
		t.Error("Intensity with no DRAM bytes is ok")
	}
	if _, ok := sol(1, 1).FLOPS(); ok {
		t.Error("FLOPS without roofline counters is ok")
	}
}

func TestRuleText(t *testing.T) {
	g := goldie.New(t, goldie.WithFixtureDir(goldenDir), goldie.WithNameSuffix(""))
	g.Assert(t, "rule-text-default.txt", []byte(RuleText(0)+"\n"))
	if s := RuleText(75); !strings.Contains(s, "below 75% of peak") || strings.Contains(s, "60%") {
		t.Errorf("RuleText(75) = %q", s)
	}
}
