package model

import (
	"errors"
	"fmt"
	"math"

	"github.com/llm-perf-opt/deepprof/facts"
)

// Tolerances are how far a run may move from its baseline, in percent of
// the baseline, per part. A zero field takes the default (DefaultTolerances).
type Tolerances struct {
	StagePct  float64 `json:"stage_pct" yaml:"stage_pct" koanf:"stage_pct"`
	KernelPct float64 `json:"kernel_pct" yaml:"kernel_pct" koanf:"kernel_pct"`
	RegionPct float64 `json:"region_pct" yaml:"region_pct" koanf:"region_pct"`
	MFUPct    float64 `json:"mfu_pct" yaml:"mfu_pct" koanf:"mfu_pct"`
	// FloorPct is the absolute floor of a kernel's or region's change, in
	// percent of the run's kernel time; 0 takes the default (DefaultFloor).
	FloorPct float64 `json:"floor_pct,omitempty" yaml:"floor_pct,omitempty" koanf:"floor_pct"`
	// Gate names what fails besides the GPU work: GateGPU (the GPU work
	// and the walls of GPU-bound stages), GateHost (also a wall that moved
	// with the host alone); "" takes the baseline file's gate, else
	// GateGPU. Given, it wins over the file's.
	Gate string `json:"gate,omitempty" yaml:"gate,omitempty" koanf:"gate"`
}

// The gates: what a comparison fails on.
const (
	// GateGPU fails on a change of the GPU work and of a GPU-bound
	// stage's wall; a wall that moved with the host is reported.
	GateGPU = "gpu"
	// GateHost fails on those and on a wall that moved with the host.
	GateHost = "host"
)

// DefaultFloor is the absolute floor of a kernel's or region's change: 1%
// of the run's kernel time.
const DefaultFloor = 0.01

// DefaultTolerances is 10% for every part.
func DefaultTolerances() Tolerances {
	return Tolerances{StagePct: 10, KernelPct: 10, RegionPct: 10, MFUPct: 10}
}

// Thresholds are tolerances as fractions of the baseline (facts.Thresholds).
type Thresholds = facts.Thresholds

// Thresholds converts the tolerances to fractions, defaults filled in. A
// negative or non-finite tolerance is an error naming its key.
func (t Tolerances) Thresholds() (Thresholds, error) {
	def := DefaultTolerances()
	frac := func(key string, v, d float64) (float64, error) {
		switch {
		case v == 0:
			return d / 100, nil
		case !(v > 0) || math.IsInf(v, 0):
			return 0, fmt.Errorf("tolerance %s = %v: want a percentage > 0 (0 takes the default, %g)", key, v, d)
		}
		return v / 100, nil
	}
	var f Thresholds
	var errs [6]error
	f.Stage, errs[0] = frac("stage_pct", t.StagePct, def.StagePct)
	f.Kernel, errs[1] = frac("kernel_pct", t.KernelPct, def.KernelPct)
	f.Region, errs[2] = frac("region_pct", t.RegionPct, def.RegionPct)
	f.MFU, errs[3] = frac("mfu_pct", t.MFUPct, def.MFUPct)
	f.Floor, errs[4] = frac("floor_pct", t.FloorPct, 100*DefaultFloor)
	f.GateHost, errs[5] = ParseGate(t.Gate)
	return f, errors.Join(errs[:]...)
}

// ParseGate reads a gate's name ("" is GateGPU): whether a wall that moved
// with the host alone fails.
func ParseGate(g string) (host bool, err error) {
	switch g {
	case "", GateGPU:
		return false, nil
	case GateHost:
		return true, nil
	}
	return false, fmt.Errorf("gate %q: want %s (the default: fail on the GPU work and GPU-bound walls) or %s (fail on a wall the host moved too)", g, GateGPU, GateHost)
}
