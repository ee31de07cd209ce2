// The comparison of two runs (deepprof diff, a baseline check), as data:
// what diff.json holds. Package compare makes it.

package facts

import "github.com/llm-perf-opt/deepprof/internal/model"

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
	A          DiffSide         `json:"a"`
	B          DiffSide         `json:"b"`
	Thresholds model.Thresholds `json:"thresholds"`
	NoiseTest  string           `json:"noise_test"`
	Alpha      float64          `json:"alpha"`
	Rule       string           `json:"rule"` // the verdict rule in words

	Regression   bool          `json:"regression"`
	Regressions  []string      `json:"regressions"`  // one line each, plain text
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
	A    *model.Summary `json:"a"` // nil: the stage is not in A
	B    *model.Summary `json:"b"`
	Test string         `json:"test"`        // "welch" or "threshold only"
	P    *float64       `json:"p,omitempty"` // Welch's two-sided p-value
	// LowPower says a side has fewer than MinPowerSamples repeats: the
	// test can call a real change of this size noise.
	LowPower bool `json:"low_power,omitempty"`
	DiffChange
}

// DiffKernel compares one kernel's totals.
type DiffKernel struct {
	Name   string          `json:"kernel_name"`
	Device model.DeviceID  `json:"device"`
	Status string          `json:"status"`
	A      *DiffKernelSide `json:"a"` // nil: not in A's list
	B      *DiffKernelSide `json:"b"`
	// ShareOfA is B's time as a share of A's kernel time, for a kernel
	// that appeared.
	ShareOfA *float64 `json:"share_of_a,omitempty"`
	DiffChange
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
