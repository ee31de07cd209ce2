// A kernel as data: its totals (kernels.json's rows), what ncu says of it
// (its rules and its bound) and the device it ran on. Packages ncu, nsys,
// phases and kernels make them.

package facts

import "strconv"

// DeviceID is a CUDA device as the process that used it numbers it: its
// ordinal among the devices the process saw (CUDA_VISIBLE_DEVICES applied).
// Readers convert a tool's spelling to it at their edge.
type DeviceID int

func (d DeviceID) String() string { return strconv.Itoa(int(d)) }

// KernelTotals are one kernel's totals on one device: the part of a
// kernels.json row that every reader of it (a diff, a baseline) keeps.
type KernelTotals struct {
	Name    string   `json:"kernel_name"`
	Device  DeviceID `json:"device"`
	TotalMS float64  `json:"total_ms"`
	Calls   int64    `json:"calls"`
}

// KernelStats is one row of kernels.json: a kernel's totals, its mean and,
// for a table made with spread, how its launches vary (written with its
// display name and ncu's rules beside them).
type KernelStats struct {
	KernelTotals
	MeanMS float64 `json:"mean_ms"`
	// Spread is present only for a table made with per-launch spread; its
	// fields then appear in kernels.json beside the others, and are absent
	// otherwise.
	*Spread
}

// Spread is how one kernel's launch durations vary.
type Spread struct {
	MinMS    float64 `json:"min_ms"`
	MedianMS float64 `json:"median_ms"` // the middle launch, or the mean of the two middle ones
	MaxMS    float64 `json:"max_ms"`
	// StdDevMS is the sample standard deviation (n - 1 in the
	// denominator); 0 for a single launch.
	StdDevMS float64 `json:"stddev_ms"`
}

// KernelTable is a kernel table with what it was made from: kernels.json's
// rows, every kernel of the table's scope.
type KernelTable struct {
	Source   string        // the input's name
	Launches int64         // launches aggregated
	TotalMS  float64       // their summed duration
	Count    int           // kernels before any top-N cut
	Kernels  []KernelStats // sorted by TotalMS descending, ties by name, then device
}

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
