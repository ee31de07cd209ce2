// The comparison of two runs (deepprof diff, a baseline check), as data:
// what diff.json holds. Package compare makes it.

package facts

// Verdict is what a row's change means.
type Verdict string

// The verdicts.
const (
	Unchanged   Verdict = "unchanged"   // |Δ| within the threshold
	Noise       Verdict = "noise"       // beyond the threshold, not significant by the noise test
	Regression  Verdict = "regression"  // slower (MFU: lower); fails the comparison
	Improvement Verdict = "improvement" // faster (MFU: higher); reported, never fails
	Reported    Verdict = "reported"    // shown for information (appeared, disappeared...)
	NotAvail    Verdict = "n/a"         // a side has no value
	// Host: a stage's wall slower beyond the rule while its GPU work is
	// unchanged and it is launch-bound: the host's doing; reported, fails
	// only when the comparison gates the host (Thresholds.GateHost).
	Host Verdict = "host"
)

// The causes of a stage's change (DiffStage.Cause).
const (
	CauseGPU  = "gpu"  // its GPU work changed, or its wall is the GPU's (GPU-bound)
	CauseHost = "host" // its GPU work is unchanged and it is launch-bound: the host moved it
)

// Kernel row statuses.
const (
	Matched     = "matched"
	Appeared    = "appeared"    // in B's list only, slower than A's smallest listed kernel
	Disappeared = "disappeared" // in A's list only, slower than B's smallest listed kernel
	// EnteredList: in B's list only, no slower than A's smallest listed
	// kernel: it may have been just under A's top-N cut.
	EnteredList = "entered list"
	// LeftList: in A's list only, no slower than B's smallest listed kernel.
	LeftList = "left list"
)

// DiffSide names one compared run.
type DiffSide struct {
	Source string `json:"source"`
	RunID  string `json:"run_id"`
	Model  string `json:"model,omitempty"`
	Device string `json:"device,omitempty"`
	// Read are the files read, relative to Source; empty for a baseline
	// file (Source itself).
	Read []string `json:"read"`
}

// DiffResult is a comparison of run B against run A.
type DiffResult struct {
	A          DiffSide   `json:"a"`
	B          DiffSide   `json:"b"`
	Thresholds Thresholds `json:"thresholds"`
	NoiseTest  string     `json:"noise_test"`
	Alpha      float64    `json:"alpha"`
	Rule       string     `json:"rule"` // the verdict rule in words

	Regression  bool     `json:"regression"`
	Regressions []string `json:"regressions"` // one line each, plain text
	// HostMoves are the stages whose wall the host moved (verdict Host),
	// one line each: reported, not failing.
	HostMoves    []string      `json:"host_moves"`
	Improvements []string      `json:"improvements"` // one line each, plain text
	Missing      []DiffMissing `json:"missing"`      // parts not compared for want of a file
	// Incomplete says a required part could not be compared (Missing).
	Incomplete bool     `json:"incomplete"`
	Notes      []string `json:"notes"`

	Stages  []DiffStage  `json:"stages"`
	Kernels []DiffKernel `json:"kernels"`
	Regions []DiffRegion `json:"regions"`
	// RegionsSource says which region totals were compared.
	RegionsSource string    `json:"regions_source"`
	MFU           []DiffMFU `json:"mfu"`
	// NoMFU says neither run has summary.json's mfu: the MFU rows are
	// all not available, for that one reason.
	NoMFU bool `json:"no_mfu,omitempty"`
}

// DiffChange is a row's difference, B − A.
type DiffChange struct {
	DeltaMS  *float64 `json:"delta_ms"`
	DeltaPct *float64 `json:"delta_pct"` // 100 × Δ / A; null when A is 0 or a side is absent
	Verdict  Verdict  `json:"verdict"`
}

// DiffStage compares one stage's repeats.
type DiffStage struct {
	Name string         `json:"name"`
	A    *RepeatSummary `json:"a"` // nil: the stage is not in A
	B    *RepeatSummary `json:"b"`
	Test string         `json:"test"`        // "welch" or "threshold only"
	P    *float64       `json:"p,omitempty"` // Welch's two-sided p-value
	// LowPower says a side has fewer than MinPowerSamples repeats: the
	// test can call a real change of this size noise.
	LowPower bool `json:"low_power,omitempty"`
	DiffChange
	// Work is the stage's GPU work and host time in each run, per
	// instance; nil when a run has no figures for it.
	Work *DiffWork `json:"work,omitempty"`
	// Cause says where the change comes from (CauseGPU, CauseHost); ""
	// when unknown or nothing changed.
	Cause string `json:"cause,omitempty"`
	// Why says in words what the cause stands on.
	Why string `json:"why,omitempty"`
	InRuns
}

// InRuns is a row's place in the spread between the runs of A, where A is
// a baseline of several runs of the program (each its own process).
type InRuns struct {
	// Between is the spread of A's figure between its runs; nil where A
	// has none.
	Between *Between `json:"between_runs,omitempty"`
	// WithinRuns says B's figure lies inside that spread, or beyond it by
	// no more than the threshold (and floor) of its nearest edge, though
	// it moved beyond them from A's own: noise, not a change.
	WithinRuns bool `json:"within_runs,omitempty"`
}

// DiffWork compares a stage's GPU work: what the GPU does per instance,
// apart from the wall time the host adds.
type DiffWork struct {
	A StageWork `json:"a"`
	B StageWork `json:"b"`
	// KernelPct, BusyPct and LaunchesPct are B's change from A, in
	// percent of A; null where A's is 0 or unknown.
	KernelPct   *float64 `json:"kernel_pct"`
	BusyPct     *float64 `json:"busy_pct"`
	LaunchesPct *float64 `json:"launches_pct"`
	// Verdict is the GPU work's: unchanged within the kernel threshold,
	// or regression (more) or improvement (less).
	Verdict Verdict `json:"verdict"`
}

// StageWork is one run's GPU work for a stage: from the timeline's phase
// rows (per steady-state instance), or from the region totals of every
// launch of a pass (Instances 0: the pass's totals).
type StageWork struct {
	// From names the figures' source: "phases" (summary.json's phase row
	// PHASE) or "regions" (summary.json's region REGION).
	From string `json:"from"`
	// Range is the phase's or region's name.
	Range string `json:"range"`
	// Instances are the steady-state instances the figures are per; 0
	// for a pass's totals.
	Instances int     `json:"instances"`
	KernelMS  float64 `json:"kernel_ms"` // the kernels' durations, summed
	// BusyMS is the time the GPU ran the stage's kernels; nil unknown.
	BusyMS   *float64 `json:"busy_ms"`
	Launches float64  `json:"launches"`
	// GapMS is the idle between the stage's kernels; nil unknown.
	GapMS *float64 `json:"gap_ms"`
	// HostUSPerLaunch is the stage's wall per instance over its launches
	// per instance: the host's time per launch while it is launch-bound;
	// nil unknown.
	HostUSPerLaunch *float64 `json:"host_us_per_launch"`
	// LaunchBound says the GPU waits on the host for most of the stage:
	// nil when unknown.
	LaunchBound *bool `json:"launch_bound"`
	// BoundWhy says what LaunchBound stands on.
	BoundWhy string `json:"bound_why,omitempty"`
}

// DiffKernel compares one kernel's totals.
type DiffKernel struct {
	Name   string          `json:"kernel_name"`
	Device DeviceID        `json:"device"`
	Status string          `json:"status"`
	A      *DiffKernelSide `json:"a"` // nil: not in A's list
	B      *DiffKernelSide `json:"b"`
	// ShareOfA is B's time as a share of A's kernel time, for a kernel
	// that appeared.
	ShareOfA *float64 `json:"share_of_a,omitempty"`
	// FloorMS is the least change that counts for this kernel: the larger
	// of the absolute floor (a share of A's kernel time) and twice the
	// spread of its launches' total; null where not judged.
	FloorMS *float64 `json:"floor_ms,omitempty"`
	DiffChange
	InRuns
}

// DiffKernelSide is one run's totals of a kernel.
type DiffKernelSide struct {
	TotalMS float64 `json:"total_ms"`
	Calls   int64   `json:"calls"`
}

// DiffRegion compares one region's totals.
type DiffRegion struct {
	Name string          `json:"name"`
	A    *DiffRegionSide `json:"a"` // nil: not in A
	B    *DiffRegionSide `json:"b"`
	// FloorMS is the least change that counts: the absolute floor, a
	// share of A's region kernel time; null where not judged.
	FloorMS *float64 `json:"floor_ms,omitempty"`
	DiffChange
}

// DiffRegionSide is one run's totals of a region.
type DiffRegionSide struct {
	TotalMS     float64 `json:"total_ms"`
	KernelCount int64   `json:"kernel_count"`
}

// DiffMFU compares one MFU figure.
type DiffMFU struct {
	Name     string   `json:"name"` // model, prefill or decode
	A        *float64 `json:"a"`
	B        *float64 `json:"b"`
	DeltaPct *float64 `json:"delta_pct"` // relative: 100 × (B − A) / A
	Verdict  Verdict  `json:"verdict"`
	Why      string   `json:"why,omitempty"` // why it is not available
}

// MinPowerSamples is the fewest repeats a side needs for Welch's test to
// have some power, as benchstat asks for its confidence intervals.
const MinPowerSamples = 4

// The parts of a run that are compared.
const (
	PartStages  = "stages"
	PartKernels = "kernels"
	PartRegions = "regions"
	PartMFU     = "mfu"
)

// DiffMissing is a part that could not be compared because a run lacks its file.
type DiffMissing struct {
	Run  string `json:"run,omitempty"` // "A" or "B" in a Result
	Part string `json:"part"`
	File string `json:"file"` // the path looked for
}

// Thresholds are the tolerances of a comparison as fractions of the
// baseline (0.1 for 10%), per part: the share of A a change must exceed to
// count.
type Thresholds struct {
	Stage  float64 `json:"stage"`
	Kernel float64 `json:"kernel"`
	Region float64 `json:"region"`
	MFU    float64 `json:"mfu"`
	// Floor is the absolute floor of a kernel's or region's change, a
	// fraction of A's kernel time: a change counts only beyond it too.
	Floor float64 `json:"floor"`
	// GateHost says a wall that moved with the host alone fails too.
	GateHost bool `json:"gate_host"`
}

// RepeatSummary is what a stage's repeats come to: the count, mean and
// sample standard deviation of its kept repeats, and the first repeat when
// the warm-up rule dropped it. It is all Welch's test needs, so a baseline
// file keeps it (these JSON names are that file's).
type RepeatSummary struct {
	N      int     `json:"n"` // repeats used (after a dropped warm-up)
	MeanMS float64 `json:"mean_ms"`
	SDMS   float64 `json:"sd_ms"` // sample standard deviation; 0 when N < 2
	// WarmupMS is the first repeat when the warm-up rule dropped it, the
	// sum of the dropped repeats when it dropped more than one.
	WarmupMS *float64 `json:"warmup_ms,omitempty"`
	// WarmupN is how many repeats the rule dropped when it dropped more
	// than one (0 otherwise: WarmupMS alone says whether it dropped one).
	WarmupN int `json:"warmup_n,omitempty"`
}

// Between is how one figure (a stage's mean, a kernel's total) varies
// between runs of one program, each its own process: N runs, the least
// and the most of their values. Repeats within one process cannot see it
// (a launch-bound stage's mean followed its host's speed by half between
// two processes).
type Between struct {
	N     int     `json:"n"`
	MinMS float64 `json:"min_ms"`
	MaxMS float64 `json:"max_ms"`
}
