package model

import (
	"errors"
	"fmt"
	"math"
)

// Tolerances are how far a run may move from its baseline, in percent of
// the baseline, per part. A zero field takes the default (DefaultTolerances).
type Tolerances struct {
	StagePct  float64 `json:"stage_pct" yaml:"stage_pct" koanf:"stage_pct"`
	KernelPct float64 `json:"kernel_pct" yaml:"kernel_pct" koanf:"kernel_pct"`
	RegionPct float64 `json:"region_pct" yaml:"region_pct" koanf:"region_pct"`
	MFUPct    float64 `json:"mfu_pct" yaml:"mfu_pct" koanf:"mfu_pct"`
}

// DefaultTolerances is 10% for every part.
func DefaultTolerances() Tolerances { return Tolerances{10, 10, 10, 10} }

// Thresholds are tolerances as fractions of the baseline (0.1 for 10%), per
// part: the share of A a change must exceed to count.
type Thresholds struct {
	Stage  float64 `json:"stage"`
	Kernel float64 `json:"kernel"`
	Region float64 `json:"region"`
	MFU    float64 `json:"mfu"`
}

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
	var errs [4]error
	f.Stage, errs[0] = frac("stage_pct", t.StagePct, def.StagePct)
	f.Kernel, errs[1] = frac("kernel_pct", t.KernelPct, def.KernelPct)
	f.Region, errs[2] = frac("region_pct", t.RegionPct, def.RegionPct)
	f.MFU, errs[3] = frac("mfu_pct", t.MFUPct, def.MFUPct)
	return f, errors.Join(errs[:]...)
}
