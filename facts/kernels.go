// What ncu says of a kernel, as data: its rules and its bound. Package
// kernels makes them.

package facts

// Rule is one ncu rule as it fired on one kernel, over the kernel's
// profiled launches.
type Rule struct {
	Name    string `json:"rule"`
	Section string `json:"section"`
	// Severity is ncu's Rule Type: ERR, WRN, OPT (an optimization
	// opportunity) or INF.
	Severity string `json:"severity"`
	// SpeedupPct is ncu's estimated speedup of the kernel, in percent of
	// its duration: the duration-weighted mean over the kernel's profiled
	// launches, a launch on which the rule did not fire counting 0. Nil
	// when ncu gave no estimate on any launch.
	SpeedupPct *float64 `json:"est_speedup_pct,omitempty"`
	// SpeedupType is ncu's "Estimated Speedup Type" (local: of the
	// kernel's own time; global: of the kernel's time on the whole GPU).
	SpeedupType string `json:"est_speedup_type,omitempty"`
	// CappedPct is set, in the summary's top kernels, where SpeedupPct
	// passes what the kernel's speed of light leaves
	// (KernelRow.SaveCapPct): the cap, which every figure built from the
	// estimate uses in place of SpeedupPct.
	CappedPct *float64 `json:"capped_pct,omitempty"`
	Launches  int      `json:"launches"`    // profiled launches the rule fired on
	Of        int      `json:"of_launches"` // profiled launches of the kernel
	// Advice is ncu's text cut to one line (its first sentences, links
	// left out); Description the whole text, from the launch with the
	// largest estimate.
	Advice      string `json:"advice"`
	Description string `json:"description"`
}

// Bound is a kernel's classification.
type Bound struct {
	Class string `json:"class"`          // MemoryBound, ComputeBound, LatencyBound or Unknown
	Rule  string `json:"rule,omitempty"` // RuleSOL, RuleRoofline, or "" when Unknown
	Why   string `json:"why"`            // one sentence with the numbers
}
