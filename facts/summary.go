// The stakeholder summary, as data: what summary.json holds, every
// finding a typed claim with its figures. Package summary makes it.

package facts

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Communication is the section "Communication": what the CUPTI timeline
// tells of collectives against compute, per phase and rank (one process on
// one device), and how evenly the ranks compute. The timeline makes it only
// for a run with communication kernels, or several processes with kernels
// on more than one device (facts.PhaseReport.Balance); the summary has
// none otherwise.
type Communication struct {
	Rows    []CommunicationRow `json:"rows"`
	Balance []BalanceRow       `json:"balance"`
}

// CommunicationRow is one phase (or the whole run) on one rank: its busy
// time split between communication kernels and compute
// (timeline.CommunicationSplit), in ms.
type CommunicationRow struct {
	ProcessID int64    `json:"process_id"`
	Device    DeviceID `json:"device"`
	Rank      *int     `json:"rank,omitempty"` // as the launcher numbered it; nil when unknown
	// Phase is the NVTX region path; "" for the whole run.
	Phase           string  `json:"phase"`
	ComputeMS       float64 `json:"compute_ms"`
	CommunicationMS float64 `json:"communication_ms"`
	// OverlapMS is the time collectives run beside compute.
	OverlapMS float64 `json:"overlap_ms"`
	// ExposedCommunicationMS is CommunicationMS - OverlapMS.
	ExposedCommunicationMS float64 `json:"exposed_communication_ms"`
	Collectives            int64   `json:"collectives"`
	// Share is CommunicationMS over the busy time (compute and
	// communication, their overlap once); 0 when nothing ran.
	Share float64 `json:"communication_share"`
}

// Label is the row's phase for a sentence or a cell: its region, or "the
// whole run".
func (r CommunicationRow) Label() string {
	if r.Phase == "" {
		return "the whole run"
	}
	return r.Phase
}

// BalanceRow is one phase's compute across ranks
// (timeline.BalanceRow), in ms.
type BalanceRow struct {
	// Phase is the NVTX region path; "" for the whole run.
	Phase              string  `json:"phase"`
	Ranks              int     `json:"ranks"`
	MaxBusyMS          float64 `json:"max_busy_ms"`
	MinBusyMS          float64 `json:"min_busy_ms"`
	MaxComputeMS       float64 `json:"max_compute_ms"`
	MinComputeMS       float64 `json:"min_compute_ms"`
	MaxCommunicationMS float64 `json:"max_communication_ms"`
	MinCommunicationMS float64 `json:"min_communication_ms"`
	// Imbalance is MaxBusyMS / MinBusyMS; nil with fewer than two ranks
	// or one with no kernel time.
	Imbalance *float64 `json:"imbalance,omitempty"`
	// Straggler is the rank the others wait for (timeline.RankBalance);
	// nil with one rank. StraggerBy is the rule that named it.
	Straggler   *Rank  `json:"straggler,omitempty"`
	StragglerBy string `json:"straggler_by,omitempty"`
	// ByWait says the straggler was named by its wait (the least
	// communication time) rather than by its compute; StragglerRank is
	// its launcher's rank, nil when unknown.
	ByWait        bool `json:"straggler_by_wait,omitempty"`
	StragglerRank *int `json:"straggler_rank,omitempty"`
	// NetCommunicationMS is the collectives net of waiting (each call's
	// shortest duration over the ranks, timeline.RankBalance), over
	// CollectiveCalls per rank; nil when the ranks cannot be paired.
	NetCommunicationMS *float64 `json:"net_communication_ms,omitempty"`
	CollectiveCalls    int      `json:"collective_calls,omitempty"`
}

// Label is the balance's phase for a sentence or a cell: its region, or
// "the whole run".
func (b BalanceRow) Label() string {
	if b.Phase == "" {
		return "the whole run"
	}
	return b.Phase
}

// Whose names a process's device in a run of several: "process P, GPU D",
// or "rank R, process P, GPU D" where the launcher's rank is known.
func Whose(rank *int, pid int64, dev DeviceID) string {
	if rank == nil {
		return fmt.Sprintf("process %d, GPU %d", pid, dev)
	}
	return fmt.Sprintf("rank %d, process %d, GPU %d", *rank, pid, dev)
}

// WhoseParen is Whose as the findings write it after a phase: "process P
// (GPU D)", or "rank R (process P, GPU D)".
func WhoseParen(rank *int, pid int64, dev DeviceID) string {
	if rank == nil {
		return fmt.Sprintf("process %d (GPU %d)", pid, dev)
	}
	return fmt.Sprintf("rank %d (process %d, GPU %d)", *rank, pid, dev)
}

// DisplayNames gives each kernel name of a report a short name that no
// other in the list shares: its function name (Short), and for functions
// with several instances in the list, the first template argument that no
// other instance has ("elementwise_kernel<…, 4, …>"); "#1", "#2" are added
// where even that does not tell them apart. The full names stay in
// kernels.json and summary.json; the Markdown lists them under the table.
func DisplayNames(names []string) []string {
	out := make([]string, len(names))
	groups := map[string][]int{}
	for i, n := range names {
		out[i] = Short(n)
		groups[out[i]] = append(groups[out[i]], i)
	}
	for base, idx := range groups {
		if len(idx) < 2 {
			continue
		}
		args := make([][]string, len(idx))
		for j, i := range idx {
			args[j] = templateArgs(names[i])
		}
		// Each instance's telling argument, cut to the shortest length
		// (32 to 64 runes) at which the group's cuts still differ.
		tell := make([]string, len(idx))
		at := make([]int, len(idx))
		for j := range idx {
			at[j] = firstDiffering(args, j)
			if at[j] >= 0 {
				tell[j] = qualifier.ReplaceAllString(args[j][at[j]], "")
			}
		}
		cut := 32
		for ; cut < 64 && !distinctCuts(tell, cut); cut += 4 {
		}
		for j, i := range idx {
			if k := at[j]; k >= 0 {
				a := cutRunes(tell[j], cut)
				pre, post := "", ""
				if k > 0 {
					pre = "…, "
				}
				if k < len(args[j])-1 {
					post = ", …"
				}
				out[i] = base + "<" + pre + a + post + ">"
			}
		}
	}
	// Whatever is still shared (the same instance with other parameters,
	// or a cut that met another name) gets its rank in the list.
	seen := map[string]int{}
	for i, d := range out {
		if r := []rune(d); len(r) > maxDisplay {
			d = string(r[:maxDisplay-1]) + "…"
		}
		out[i] = d
		seen[d]++
	}
	count := map[string]int{}
	for i, d := range out {
		if seen[d] > 1 {
			count[d]++
			out[i] = fmt.Sprintf("%s #%d", d, count[d])
		}
	}
	return out
}

// Narrative is the summary's reading of its own numbers: the findings that
// open the report (at most MaxFindings lines, each a number and what it
// means) and what to try, in order. Every sentence is made from the data
// above it; a missing input makes fewer sentences, never invented ones.
type Narrative struct {
	DominantPhase string     `json:"dominant_phase,omitempty"`
	DominantShare float64    `json:"dominant_share,omitempty"` // of the top-level stages' wall time
	GPUBusy       []PhaseGPU `json:"gpu_busy,omitempty"`
	// LaunchBound are the phases the CUPTI timeline shows idle for more
	// than Phases.LaunchBoundIdleShare of their wall time.
	LaunchBound []PhaseRow `json:"launch_bound,omitempty"`
	// Lines are the findings, at most MaxFindings.
	Lines []string `json:"lines"`
	// Claims are what the findings claim of a bound, each with the figures
	// it stands on and the rule that makes them support it: a claim is
	// made only where its figures do.
	Claims          []Claim          `json:"claims"`
	Recommendations []Recommendation `json:"recommendations"`
	// Order says once how Recommendations are ordered.
	Order string `json:"order,omitempty"`
}

// Recommendation is one thing to try, with what it rests on.
type Recommendation struct {
	// Kind is "phase" (the host sets a phase's pace), "kernels" (what
	// bounds a group of top kernels, deepprof's rule) or "ncu" (one of
	// ncu's rules on one top kernel).
	Kind string `json:"kind"`
	Text string `json:"text"`
	// SavesMS is what the what-if ladder says it can save per instance
	// (phase advice); absent where no ladder gives it.
	SavesMS *float64 `json:"saves_ms,omitempty"`
	// Kernels are the numbers (#) in Top Kernels of the kernels it is
	// about.
	Kernels []int `json:"kernels,omitempty"`
	// EstSavingPct is, for ncu's rules, the sum over the kernels of ncu's
	// estimated speedup of each times its share: the share of all kernel
	// time estimated saved, in percent.
	EstSavingPct *float64 `json:"est_saving_pct,omitempty"`
}

// UnmarshalJSON reads a recommendation, or the plain string a summary.json
// written before recommendations had kinds holds.
func (r *Recommendation) UnmarshalJSON(b []byte) error {
	var text string
	if err := json.Unmarshal(b, &text); err == nil {
		*r = Recommendation{Kind: "unknown", Text: text}
		return nil
	}
	type plain Recommendation
	return json.Unmarshal(b, (*plain)(r))
}

// Texts are the recommendations' texts, in order.
func (n Narrative) Texts() []string {
	out := make([]string, len(n.Recommendations))
	for i, r := range n.Recommendations {
		out[i] = r.Text
	}
	return out
}

// PhaseGPU compares a phase's kernel time (the timeline pass, one run of
// the workload) with its wall time in the plain run.
type PhaseGPU struct {
	Phase  string  `json:"phase"`
	Region string  `json:"region"`
	GPUMS  float64 `json:"gpu_ms"`
	WallMS float64 `json:"wall_ms"`
	Busy   float64 `json:"busy"` // GPUMS / WallMS
	// Instances, when set, are the range instances of the profiled run
	// that the kernel time was divided by: a CUPTI timeline's steady-state
	// instances of the phase, their own kernels' time (the warm-up's
	// apart), or the instances of stages read from the same run's NVTX
	// ranges: GPUMS is then a mean per instance, like WallMS.
	Instances int `json:"instances,omitempty"`
}

// Shown is the kernel's display name, or its short name when it has none
// (a summary.json written before display names).
func (k KernelRow) Shown() string {
	if k.Display != "" {
		return k.Display
	}
	return Short(k.Name)
}

// Short is a kernel name cut for a sentence: its function name without
// template arguments or parameters.
func Short(name string) string {
	s, _ := Signature(name)
	s = strings.ReplaceAll(s, "(anonymous namespace)::", "")
	s = strings.ReplaceAll(s, "<unnamed>::", "") // ncu's spelling of an anonymous namespace
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}

// Claim is what a finding claims of a bound, with the figures it stands on.
type Claim struct {
	Kind    string             `json:"kind"`
	Subject string             `json:"subject,omitempty"`
	Figures map[string]float64 `json:"figures"`
	Rule    string             `json:"rule"`
}

// Phases is the section "GPU busy and idle per phase": what the run's CUPTI
// timeline tells of each NVTX phase (package timeline's PhaseReport at one
// depth), one row per phase and the whole run, per process and device.
type Phases struct {
	Depth int `json:"depth,omitempty"`
	// LaunchBoundIdleShare is the rule's threshold: a phase with kernels
	// idle for more than this share of its wall span is launch-bound where
	// the gaps between its kernels make at least half of the idle time
	// (facts.Phase.LaunchBound).
	LaunchBoundIdleShare float64    `json:"launch_bound_idle_share,omitempty"`
	Rows                 []PhaseRow `json:"rows"`
	Missing              string     `json:"missing,omitempty"`
	// LeftOut are the phases and the regions inside them that the rows
	// leave out, past the most a scope lists (phases.MaxPhases), summed.
	LeftOut []PhasesLeftOut `json:"left_out,omitempty"`
}

// PhasesLeftOut is what the rows of one process's device leave out: the
// smaller phases, or the smaller regions inside them (Nested).
type PhasesLeftOut struct {
	ProcessID int64    `json:"process_id"`
	Device    DeviceID `json:"device"`
	Rank      *int     `json:"rank,omitempty"`
	Nested    bool     `json:"nested,omitempty"`
	Regions   int      `json:"regions"`
	Kernels   int64    `json:"kernels"`
	KernelMS  float64  `json:"kernel_ms"`
}

// PhaseRow is one phase (or the whole run) on one device of one process.
type PhaseRow struct {
	ProcessID int64    `json:"process_id"`
	Device    DeviceID `json:"device"`
	Rank      *int     `json:"rank,omitempty"` // as the launcher numbered it; nil when unknown
	// Phase is the NVTX region path; "" for the whole run.
	Phase string `json:"phase"`
	// Nested is true for a region inside a phase ("decode_all/
	// decode_step"): its time is part of its phase's row.
	Nested bool `json:"nested,omitempty"`
	// Instances are the steady-state instances the row's figures sum (the
	// warm-up ones are in Warmup).
	Instances int `json:"instances"`
	// Measured are the instances left out of the row's figures, not by the
	// warm-up rule, because they held, or overlapped a peer's, one of
	// deepprof's library's measurements (Phase.Measured); nil when none.
	Measured *PhaseMeasured `json:"measured,omitempty"`
	// WallMS sums the instances' spans on the GPU (from the earlier of
	// the range's start and its first kernel or copy to the later of its
	// end and its last).
	WallMS float64 `json:"wall_ms"`
	// WallPerInstanceMS is WallMS per steady-state instance (0 with none).
	WallPerInstanceMS float64 `json:"wall_per_instance_ms"`
	Kernels           int64   `json:"kernels"`
	KernelMS          float64 `json:"kernel_ms"` // the phase's own kernels' durations, summed
	BusyMS            float64 `json:"busy_ms"`   // time in the spans that the phase's own kernels run: at most KernelMS
	IdleMS            float64 `json:"idle_ms"`   // WallMS - BusyMS
	Busy              float64 `json:"busy"`      // BusyMS / WallMS
	Idle              float64 `json:"idle"`      // IdleMS / WallMS
	Gaps              int64   `json:"gaps"`      // idle holes between two kernels
	GapMS             float64 `json:"gap_ms"`
	// LargestGap is the longest hole, with the kernels on either side;
	// nil when there is none.
	LargestGap *PhaseGap `json:"largest_gap,omitempty"`
	// LaunchLatencyMedianUS is the median of launch call start to kernel
	// start; nil when no kernel's launch call is known.
	LaunchLatencyMedianUS *float64 `json:"launch_latency_median_us"`
	// LaunchCalls and LaunchCallMS are the launch calls of the phase's own
	// kernels and their summed time on the host (facts.Phase.LaunchCalls);
	// LaunchCallUS is their mean, the host's own cost of a launch; nil
	// when no launch call is recorded.
	LaunchCalls  int64    `json:"launch_calls"`
	LaunchCallMS float64  `json:"launch_call_ms"`
	LaunchCallUS *float64 `json:"launch_call_us"`
	Memcpys      int64    `json:"memcpys"`
	MemcpyMS     float64  `json:"memcpy_ms"`
	LaunchBound  bool     `json:"launch_bound"`
	// HostAhead says the phase is idle with small gaps and a long launch
	// latency: the host is ahead, the GPU sets the pace (facts.Phase).
	HostAhead bool `json:"host_ahead,omitempty"`
	// Warmup is the phase's warm-up instances, left out of the figures
	// above (one warm-up decision: phases.Steady); nil when none.
	Warmup *PhaseWarmup `json:"warmup,omitempty"`
}

// PhaseMeasured is a phase row's instances left out for one of deepprof's
// library's measurements: how many, their wall time and their kernels'.
type PhaseMeasured struct {
	Instances int     `json:"instances"`
	WallMS    float64 `json:"wall_ms"`
	KernelMS  float64 `json:"kernel_ms"`
}

// PhaseWarmup is what a phase's warm-up instances cost, shown apart.
type PhaseWarmup struct {
	Instances  int       `json:"instances"`
	WallMS     float64   `json:"wall_ms"`
	KernelMS   float64   `json:"kernel_ms"`
	BusyMS     float64   `json:"busy_ms"`
	GapMS      float64   `json:"gap_ms"`
	LargestGap *PhaseGap `json:"largest_gap,omitempty"`
	// OneTimeSetup says the largest gap is one-time setup: at least
	// OneTimeSetupMinMS, and OneTimeSetupFactor times the steady state's
	// largest (kernel plans chosen, autotuning, lazy module loading).
	OneTimeSetup bool `json:"one_time_setup,omitempty"`
	// Steps, where the warm-up is the leading steps of the phase's one
	// instance (the steady state over its steps: a solve whose first
	// iteration is a one-time set-up), is how many, and SteadySteps how
	// many are left in the row's figures; 0 otherwise.
	Steps       int `json:"steps,omitempty"`
	SteadySteps int `json:"steady_steps,omitempty"`
}

// PhaseGap is one idle gap between two kernels.
type PhaseGap struct {
	MS       float64 `json:"ms"`
	Before   string  `json:"before"` // the kernel whose end opens it
	After    string  `json:"after"`  // the kernel whose start closes it
	Instance int     `json:"instance"`
}

// Label is the row's phase for a sentence or a cell: its region, or "the
// whole run".
func (r PhaseRow) Label() string {
	if r.Phase == "" {
		return "the whole run"
	}
	return r.Phase
}

// Serving are the figures LLM serving quotes, from the stage times and
// the model's facts: time to first token, time per output token, decode
// throughput, and model bandwidth utilization (MBU), decode being bound by
// memory bandwidth rather than FLOPs.
type Serving struct {
	// TTFTMS is the prefill stage's mean time: the prompt read and the
	// first token out.
	TTFTMS *float64 `json:"ttft_ms"`
	// TPOTMS is the decode stage's mean time over the tokens it generates
	// per sequence (the inter-token latency); TPOTSDMS its spread over the
	// stage's repeats.
	TPOTMS   *float64 `json:"tpot_ms"`
	TPOTSDMS *float64 `json:"tpot_sd_ms,omitempty"`
	// DecodeTokensPerS is the decode's tokens per second, every sequence
	// of the batch counted; one sequence's where BatchUnknown.
	DecodeTokensPerS *float64 `json:"decode_tokens_per_s"`
	// BatchUnknown says that no batch size was given (the workload
	// report's, or model.batch): DecodeTokensPerS counts one sequence.
	BatchUnknown bool `json:"batch_unknown,omitempty"`
	// DecodeBytes is what one decode stage must read from memory
	// (BytesFormula); StepFloorMS the least a decode step can take at the
	// GPU's peak bandwidth; MBU the bytes over the decode's time against
	// that peak.
	DecodeBytes float64  `json:"decode_bytes,omitempty"`
	StepFloorMS *float64 `json:"step_floor_ms"`
	MBU         *float64 `json:"mbu"`
	// BytesFormula and BytesAssumptions say how DecodeBytes is counted;
	// Missing what the figures lack, when some are absent.
	// From says which run the times are of: "stage 1" (the program alone)
	// where the stages are the CUPTI run's beside stage 1's; "" where they
	// are the stages' own.
	From string `json:"from,omitempty"`
	// Steps is where TPOT and TTFT come from when the decode's steps are
	// in the timeline (Decode); nil when they come from the stages.
	Steps            *Decode  `json:"steps,omitempty"`
	BytesFormula     string   `json:"bytes_formula"`
	BytesAssumptions []string `json:"bytes_assumptions"`
	Missing          string   `json:"missing,omitempty"`
}

// Format is summary.json's format key: its shape's name and version,
// changed only when a key changes meaning or goes (new keys may come).
const Format = "deepprof-summary/1"

// Summary is the stakeholder summary's data: summary.json.
type Summary struct {
	// Format names the shape of summary.json (Format).
	Format      string      `json:"format"`
	RunID       string      `json:"run_id"`
	Environment Environment `json:"environment"`
	Stages      Stages      `json:"stages"`
	MFU         MFU         `json:"mfu"`
	Serving     Serving     `json:"serving"`
	Operators   Operators   `json:"operators"`
	Kernels     Kernels     `json:"kernels"`
	Regions     Regions     `json:"regions"`
	Phases      Phases      `json:"phases"`
	// WhatIf is the what-if ladder of each phase in steady state.
	WhatIf WhatIf `json:"whatif"`
	// Communication is nil (absent from summary.json) unless the run has
	// communication kernels, or processes with kernels on several devices.
	Communication *Communication `json:"communication,omitempty"`
	Narrative     Narrative      `json:"narrative"`
	// Anomalies are what the recording holds that changes these numbers;
	// absent when none.
	Anomalies []string `json:"anomalies,omitempty"`
	// Trace is the run's timeline trace (Inputs.Trace); absent when none.
	Trace string `json:"trace,omitempty"`
	// Partial is why the session did not finish (Inputs.SessionPartial):
	// the first finding says it; absent when it did.
	Partial string `json:"partial,omitempty"`
}

// Environment is where the run ran.
type Environment struct {
	GPU               string            `json:"gpu,omitempty"`
	MemoryBytes       uint64            `json:"memory_bytes,omitempty"`
	ComputeCapability string            `json:"compute_capability,omitempty"`
	Driver            string            `json:"driver,omitempty"`
	CUDA              string            `json:"cuda,omitempty"`
	Tools             map[string]string `json:"tools,omitempty"`
	Frameworks        map[string]string `json:"frameworks,omitempty"`
	Model             *Model            `json:"model,omitempty"`
	// ModelFrom says where the model's facts come from when the program
	// wrote no report: its framework (timeline/model.json); "" otherwise.
	ModelFrom string `json:"model_from,omitempty"`
	Dtype     string `json:"dtype,omitempty"`
	// Peak is what MFU and the roofline use; nil with PeakMissing when
	// the GPU or dtype is not in the table and the profile gives none.
	Peak        *Peak  `json:"peak,omitempty"`
	PeakMissing string `json:"peak_missing,omitempty"`
	Missing     string `json:"missing,omitempty"`

	// GPUsUsed names the GPUs the workload could use, in CUDA order
	// ("GPU 1 NVIDIA H200"), and GPULinks how each pair is linked ("GPU 0
	// – GPU 1: 18 NVLinks (NV18)"); both empty with one GPU.
	GPUsUsed []string `json:"gpus_used,omitempty"`
	GPULinks []string `json:"gpu_links,omitempty"`

	// Program is what kind of program ran, as the run's records show it
	// (summary.ProgramOf): the launch-bound advice and the ladder's
	// levers are chosen by it.
	Program Program `json:"program"`
}

// Model is the model's identity, as the workload reports it, and the
// shapes its FLOPs per token are counted from (zero when the workload does
// not report them).
type Model struct {
	Name   string `json:"name"`
	Arch   string `json:"arch"`
	Params int64  `json:"params"`
	Dtype  string `json:"dtype"`

	// MatmulParams counts the weights every token multiplies: each linear
	// layer's, the output head's included even when it shares the
	// embedding's weights. Embeddings are lookups and not counted.
	MatmulParams int64 `json:"matmul_params,omitempty"`
	Layers       int64 `json:"layers,omitempty"`
	HiddenSize   int64 `json:"hidden_size,omitempty"`
	Heads        int64 `json:"heads,omitempty"`
	KVHeads      int64 `json:"kv_heads,omitempty"`
	HeadDim      int64 `json:"head_dim,omitempty"`
	VocabSize    int64 `json:"vocab_size,omitempty"`
}

// Peak is a GPU's dense peak throughput for one data type and its DRAM
// bandwidth: the denominators of MFU and the roofline's roofs.
type Peak struct {
	TFLOPS     float64 `json:"tflops"`      // dense (no sparsity) tensor-core peak for the dtype; CUDA-core peak for fp32
	MemoryTBps float64 `json:"memory_tbps"` // DRAM bandwidth, TB/s
	Source     string  `json:"source"`      // where the numbers come from
}

// FLOPS and BytesPerSec are the peak in base units.
func (p Peak) FLOPS() float64       { return p.TFLOPS * 1e12 }
func (p Peak) BytesPerSec() float64 { return p.MemoryTBps * 1e12 }

// Program is what kind of program a run profiled, from what the run holds:
// its executables, its kernels' names and its CUDA graph launches.
type Program struct {
	Kind ProgramKind `json:"kind"`
	// Exe is the executable of the processes that launched kernels (a
	// Python interpreter where one of them is); "" when no record file
	// names one.
	Exe string `json:"exe,omitempty"`
	// Kernel is a kernel whose name decided Kind; "" when the executable
	// alone did, or nothing did.
	Kernel string `json:"kernel,omitempty"`
	// GraphLaunches are the CUDA graph launches the records hold
	// (cudaGraphLaunch, cuGraphLaunch): the program already launches
	// graphs where it is above 0.
	GraphLaunches int `json:"graph_launches"`
}

// ProgramKind is a Program's kind.
type ProgramKind string

// The kinds of program.
const (
	ProgramUnknown      ProgramKind = "unknown"       // neither the executable nor the kernels show it
	ProgramPyTorch      ProgramKind = "pytorch"       // PyTorch in eager mode
	ProgramTorchCompile ProgramKind = "torch.compile" // PyTorch with torch.compile's (Inductor's) kernels
	ProgramJAX          ProgramKind = "jax"           // JAX (XLA) from Python
	ProgramNative       ProgramKind = "native"        // a C/C++ (native) executable
)

// AloneStage1 is how the summary names stage 1 as where the stages'
// alone figures come from (Stages.AloneSource).
const AloneStage1 = "stage 1 (the program alone, no profiler, a process of its own)"

// Stages are the workload's stage times over repeats.
type Stages struct {
	Tokens  *Tokens `json:"tokens,omitempty"`
	Batch   int64   `json:"batch,omitempty"`
	Rows    []Stage `json:"rows"`
	Missing string  `json:"missing,omitempty"`
	// Source is where the wall times come from when not from the plain run
	// of stage 1 (Inputs.WorkloadSource); FromRanges says they are the
	// NVTX ranges' own (the program wrote no workload report).
	Source     string `json:"source,omitempty"`
	FromRanges bool   `json:"from_ranges,omitempty"`
	// AloneSource is where the rows' times come from where they are the
	// program alone's (a row with Recorded) and not stage 1's
	// (AloneStage1): rundir.SourceAloneDetached.
	AloneSource string `json:"alone_source,omitempty"`
	// AloneMissing is why the program alone's times are not the rows':
	// stage 1's report is there and cannot be read.
	AloneMissing string `json:"alone_missing,omitempty"`
}

// Tokens counts the prompt and generated tokens of one repeat.
type Tokens struct {
	Prompt    int64 `json:"prompt"`
	Generated int64 `json:"generated"`
}

// Stage is one stage's wall time over repeats. Sub-stages (Parent set) are
// inside their parent's time. MeanMS, SDMS, N and WarmupMS are package
// model's summary of MS: the same numbers deepprof diff and baselines show
// for the stage. Where the run has the program alone's repeats (stage 1,
// or the CUPTI run's after the library detached: Stages.AloneSource) while
// its stages come from the CUPTI run's report, MS are the program alone's
// and Recorded holds the CUPTI run's own.
type Stage struct {
	Name   string `json:"name"`
	Parent string `json:"parent,omitempty"`
	// Phase is "prefill" or "decode" for the stages the profile's
	// phases.prefill and phases.decode name, "" for the others.
	Phase string `json:"phase,omitempty"`
	StageTimes
	// Recorded is the stage in the CUPTI run's own repeats, the library
	// recording (the run the phases and kernels come from), where MS are
	// the program alone's; nil where MS are that run's already.
	Recorded *StageTimes `json:"recorded,omitempty"`
	Tokens   int64       `json:"tokens,omitempty"` // tokens the stage produced or read
	TokensS  float64     `json:"tokens_per_s,omitempty"`
	// Processes are the stage's statistics per process, when its instances
	// come from the NVTX ranges of more than one (the row above pools
	// them), in process id order.
	Processes []StageProcess `json:"processes,omitempty"`
	// Ranks are the stage's statistics per rank, from the workload
	// report's ranks (its stages are rank 0's), when they differ by more
	// than their spread (RanksDiffer); RanksAgree counts the ranks when they
	// do not.
	Ranks      []StageRank `json:"ranks,omitempty"`
	RanksAgree int         `json:"ranks_agree,omitempty"`
}

// StageTimes are a stage's times in one run (a process's, a rank's), with
// package model's statistics of them (the warm-up rule applied).
type StageTimes struct {
	MS     []float64 `json:"ms"` // every repeat, as the run reported them
	MeanMS float64   `json:"mean_ms"`
	SDMS   float64   `json:"sd_ms"` // sample standard deviation; 0 with one repeat
	N      int       `json:"n"`     // repeats used: all, or all but a dropped warm-up
	// WarmupMS is the first repeat when the warm-up rule dropped it (with
	// 3 or more repeats, the first ones over 1.5× the median of the
	// others, per step), the dropped repeats' sum when it dropped
	// WarmupN of them; it is in MS, not in the mean, sd or tokens/s.
	WarmupMS *float64 `json:"warmup_ms,omitempty"`
	WarmupN  int      `json:"warmup_n,omitempty"`
	// Steps, beside MS, is each repeat's steps where a repeat holds
	// several (a decode_all of its decode_step instances); StepMS is then
	// the kept repeats' time per step (their sum over their StepsKept
	// steps): a decode given per token, repeats of different lengths
	// never averaged as equals.
	Steps     []float64 `json:"steps,omitempty"`
	StepMS    *float64  `json:"step_ms,omitempty"`
	StepsKept int       `json:"steps_kept,omitempty"`
}

// StageRank is one rank's times of a stage, from the workload report,
// with the same statistics (warm-up rule applied to the rank's own first
// repeat).
type StageRank struct {
	Rank int `json:"rank"`
	StageTimes
}

// StageProcess is one process's instances of a stage, with the same
// statistics (warm-up rule applied to the process's own first instance).
type StageProcess struct {
	ProcessID int64 `json:"process_id"`
	StageTimes
}

// MFU is model FLOPs utilization by scope (model, prefill, decode).
type MFU struct {
	Formula     string   `json:"formula"`
	Assumptions []string `json:"assumptions"`
	Rows        []MFURow `json:"rows"`
	Missing     string   `json:"missing,omitempty"`
	Model       *float64 `json:"model"`
	Prefill     *float64 `json:"prefill"`
	Decode      *float64 `json:"decode"`
	Peak        *Peak    `json:"peak,omitempty"`
}

// MFURow is one scope's FLOPs over its measured time.
type MFURow struct {
	Scope          string  `json:"scope"`
	FLOPs          float64 `json:"flops"`
	MeanMS         float64 `json:"mean_ms"`
	AchievedTFLOPS float64 `json:"achieved_tflops"`
	MFU            float64 `json:"mfu"`
}

// Operator is one row of the torch.profiler operator table.
type Operator struct {
	Name    string  `json:"name"`
	Calls   int64   `json:"calls"`
	TotalMS float64 `json:"total_ms"`
	CUDAMS  float64 `json:"cuda_ms,omitempty"`
}

// Operators is the workload's torch.profiler operator table.
type Operators struct {
	Rows    []Operator `json:"rows"`
	Dropped int        `json:"dropped,omitempty"` // rows with no CPU time: kernels, not operators
	Missing string     `json:"missing,omitempty"`
	// NotMade says the table was left out by choice (the CUPTI run stood
	// in for the stage 1 that makes it), not missing: no gap.
	NotMade bool `json:"not_made,omitempty"`
	// Detached says the table was made in the CUPTI run once the library
	// had detached CUPTI from the process (Stages.AloneSource), not in
	// stage 1.
	Detached bool `json:"detached,omitempty"`
}

// Kernels is the top-N kernel table with categories and bounds.
type Kernels struct {
	Source string `json:"source"`
	// TimedBy is the tool that timed the kernels, for the sentences that
	// depend on it (Source says it in words); not in summary.json.
	TimedBy Timer `json:"-"`
	// Scope says what the total counts, in the words every table uses:
	// ScopeRanges (with Ranges) or ScopeWholeRun.
	Scope  string   `json:"scope"`
	Ranges []string `json:"ranges,omitempty"`
	// Inferred says Ranges are phases inferred from the kernel stream
	// (the program pushed no range), not ranges the program pushed.
	Inferred bool `json:"ranges_inferred,omitempty"`
	// OutsideMS is the kernel time of the whole run outside Ranges (the
	// regions' whole-run total less the ranges' kernel time, warm-up
	// included); nil when not known.
	OutsideMS *float64 `json:"outside_ms,omitempty"`
	// Warmup is the kernel time of the scope's launches made in warm-up
	// instances (the one warm-up decision, phases.Steady): left out of
	// TotalMS, the rows and the categories for a scope of ranges
	// (Warmup.LeftOut), held in them for the whole run; nil where no
	// launch of the scope is in a warm-up, or where the table's source
	// has no warm-up decision (no CUPTI timeline).
	Warmup *KernelsWarmup `json:"warmup,omitempty"`
	// WarmupIncluded says the table holds warm-up launches it cannot tell
	// apart: its source has no warm-up decision and the stages dropped a
	// warm-up.
	WarmupIncluded bool           `json:"warmup_included,omitempty"`
	TotalMS        float64        `json:"total_ms"`
	Launches       int64          `json:"launches"`
	Rows           []KernelRow    `json:"rows"`
	ByCategory     []CategoryTime `json:"by_category"`
	BoundRule      string         `json:"bound_rule"`
	Missing        string         `json:"missing,omitempty"`
	BoundsNote     string         `json:"bounds_note,omitempty"`
	Roofline       []RooflinePt   `json:"roofline,omitempty"`
	// DeepShare is the share of TotalMS the deep pass measured: each
	// kernel it profiled counts with the time of the launch
	// configurations it measured (all of it where no timeline weighs
	// them); nil without deep metrics.
	DeepShare *float64 `json:"deep_share"`
	// DeepSource is what measured the deep metrics: DeepByNcu or
	// DeepByLibrary; "" without deep metrics.
	DeepSource  DeepSource `json:"deep_source,omitempty"`
	RooflineWhy string     `json:"roofline_missing,omitempty"`
	// RulesMissing says why the top kernels carry none of ncu's rules.
	RulesMissing string `json:"ncu_rules_missing,omitempty"`
}

// Timer is the tool that timed a table's kernels: what a sentence says of
// their times depends on it (ncu serializes the kernels, a timeline of the
// run does not).
type Timer string

// The kernels' timers.
const (
	TimedByCUPTI Timer = "cupti" // deepprof's CUPTI library, every launch of the run
	TimedByNsys  Timer = "nsys"  // nsys, every launch of the run
	// TimedByNcu is an ncu timing pass: every launch, kernels serialized
	// at base clocks.
	TimedByNcu Timer = "ncu"
	// TimedByDeepPass is the deep pass: a sample of launches, serialized.
	TimedByDeepPass Timer = "ncu-deep"
)

// DeepSource is what measured a run's deep metrics (the SOL throughputs,
// DRAM bytes and FLOPs the bounds and the roofline stand on).
type DeepSource string

// The deep metrics' sources.
const (
	// DeepByNcu is ncu's deep pass: the program started again under ncu.
	DeepByNcu DeepSource = "ncu"
	// DeepByLibrary is deepprof's CUPTI library, in the recorded run: CUPTI's
	// range profiler on one launch of each top kernel.
	DeepByLibrary DeepSource = "library"
)

// KernelsWarmup is the kernel time of a kernel table's scope that ran in
// warm-up instances.
type KernelsWarmup struct {
	MS       float64 `json:"ms"`
	Launches int64   `json:"launches"`
	// LeftOut says the table's total and rows leave it out (a scope of
	// ranges, in steady state); otherwise they hold it (the whole run).
	LeftOut bool `json:"left_out"`
	// MeasuredLaunches are those of its launches in instances left out of
	// the steady state for one of deepprof's library's measurements, not
	// by the warm-up rule.
	MeasuredLaunches int64 `json:"measured_launches,omitempty"`
}

// Of names, possessive, the instances its launches are of: "warm-up
// instances'", "measured instances'" or "warm-up and measured instances'".
func (w KernelsWarmup) Of() string {
	switch {
	case w.MeasuredLaunches == 0:
		return "warm-up instances'"
	case w.MeasuredLaunches >= w.Launches:
		return "measured instances'"
	}
	return "warm-up and measured instances'"
}

// WarmupText says what the kernel table's total holds of the warm-up, to
// follow the total and its scope in a sentence, the times with decimals
// places: ", in steady state (the warm-up's 28.020 ms left out)", ",
// 28.020 ms of it the warm-up", ", warm-up included" or "".
func (k Kernels) WarmupText(decimals int) string {
	what, whose := "the warm-up", "the warm-up's"
	if w := k.Warmup; w != nil && w.MeasuredLaunches > 0 {
		what, whose = "the warm-up and measured instances", "the "+w.Of()
		if w.MeasuredLaunches >= w.Launches {
			what = "the measured instances"
		}
	}
	switch w := k.Warmup; {
	case w != nil && w.LeftOut:
		return fmt.Sprintf(", in steady state (%s %.*f ms left out)", whose, decimals, w.MS)
	case w != nil:
		return fmt.Sprintf(", %.*f ms of it %s", decimals, w.MS, what)
	case k.WarmupIncluded:
		return ", warm-up included"
	}
	return ""
}

// The scopes of a total, in the words every table and sentence uses.
const (
	ScopeRanges   = "in the profiled ranges"
	ScopeWholeRun = "whole run"
)

// ScopeText is the kernel table's scope for a sentence: "in the profiled
// ranges (prefill, decode_all)", "in the profiled ranges (prefill,
// decode_all: inferred from the kernel stream)" or "in the whole run".
func (k Kernels) ScopeText() string {
	return ScopeText(k.Scope, k.Ranges, k.Inferred)
}

// ScopeText is a total's scope for a sentence (Kernels.ScopeText): scope
// is ScopeRanges or ScopeWholeRun; inferred says the ranges are phases
// inferred from the kernel stream.
func ScopeText(scope string, ranges []string, inferred bool) string {
	if scope != ScopeRanges {
		return "in the " + ScopeWholeRun
	}
	how := ""
	if inferred {
		how = ": inferred from the kernel stream"
	}
	return ScopeRanges + " (" + strings.Join(ranges, ", ") + how + ")"
}

// KernelRow is one top kernel.
type KernelRow struct {
	Name string `json:"kernel_name"`
	// Display is the short name the report shows, unique within it
	// (DisplayNames); Name is the full demangled one.
	Display  string  `json:"display_name"`
	TotalMS  float64 `json:"total_ms"`
	Calls    int64   `json:"calls"`
	Share    float64 `json:"share"` // of the table's total time, 0..1
	Category string  `json:"category"`
	Bound    Bound   `json:"bound"`
	// Spread is how the kernel's launch durations vary, when the kernel
	// table has it (a timeline's per-launch times); nil otherwise.
	Spread *Spread `json:"spread,omitempty"`
	// SMPct and MemPct are the deep pass's SOL throughputs (percent of
	// peak, duration-weighted over its launches); nil without them.
	SMPct  *float64 `json:"sm_throughput_pct,omitempty"`
	MemPct *float64 `json:"memory_throughput_pct,omitempty"`
	// Rules are ncu's rules on this kernel, by estimated speedup.
	Rules []Rule `json:"ncu_rules,omitempty"`
	// ShownRules are the rules the summary's table shows (indexes into
	// Rules): the actionable ones, at most MaxRulesPerKernel.
	ShownRules []int `json:"shown_rules,omitempty"`
	// Sampled is what of the kernel the deep pass profiled; nil without a
	// timeline to weigh its configurations.
	Sampled *Sample `json:"sampled,omitempty"`
	// PartlyMeasured says the configurations the deep pass measured ran
	// less than summary.MinMeasuredShare of the kernel's time (Sampled):
	// its bound holds for that part only, so it is not claimed and gives
	// no advice.
	PartlyMeasured bool `json:"partly_measured,omitempty"`
	// SOLPct is the kernel's speed of light: the higher of SMPct and
	// MemPct. SaveCapPct is the most of its time the kernel can save, in
	// percent: a kernel whose busier unit runs at SOLPct of its peak still
	// needs that share of its time at the peak, so at most 100 − SOLPct
	// can go. Both nil without SOL throughputs.
	SOLPct     *float64 `json:"sol_pct,omitempty"`
	SaveCapPct *float64 `json:"save_cap_pct,omitempty"`
	// FP32GEMM says the kernel is a GEMM that computes in FP32 on the FMA
	// pipe, not on the tensor cores (kernels.FP32GEMM, from its FLOP
	// counters where the deep pass measured them, else its name).
	FP32GEMM bool `json:"fp32_gemm,omitempty"`
}

// MaxRulesPerKernel is the most of ncu's rules the summary shows per top
// kernel; kernels.md and kernels.json hold every one.
const MaxRulesPerKernel = 2

// Sample is what of a kernel the deep pass profiled: the launch
// configurations it profiled of those the timeline saw, and the share of
// the kernel's time that those configurations ran.
type Sample struct {
	Configs int     `json:"configs"`
	Of      int     `json:"of"`
	Share   float64 `json:"share"` // 0..1
}

// CategoryTime is the time of one kernel category, over every kernel.
type CategoryTime struct {
	Category string  `json:"category"`
	TotalMS  float64 `json:"total_ms"`
	Share    float64 `json:"share"`
	Kernels  int     `json:"kernels"`
}

// RooflinePt is one top kernel on the roofline.
type RooflinePt struct {
	Kernel    string  `json:"kernel_name"`
	Intensity float64 `json:"flop_per_byte"`
	FLOPS     float64 `json:"flops_per_s"`
}

// Regions is the per-region breakdown.
type Regions struct {
	Source string `json:"source"`
	// TimedBy is the tool that timed the regions' kernels (Kernels.TimedBy);
	// not in summary.json.
	TimedBy  Timer       `json:"-"`
	Sampled  bool        `json:"sampled"`
	TotalMS  float64     `json:"total_ms"`
	Rows     []RegionRow `json:"rows"`
	Missing  string      `json:"missing,omitempty"`
	Outside  float64     `json:"outside_ms"`
	Launches int64       `json:"launches"`
	// SampleReport is the region report of the deep pass's sample (with
	// the metrics per region), relative to MAIN; "" when there is none.
	SampleReport string `json:"sample_report,omitempty"`
}

// RegionRow is one NVTX region's GPU time.
type RegionRow struct {
	Name     string  `json:"name"`
	Depth    int     `json:"depth"`
	TotalMS  float64 `json:"total_ms"`
	Launches int64   `json:"launches"`
	Share    float64 `json:"share"`
}

// Gaps names each section whose input is missing, with the reason.
func (s *Summary) Gaps() []string {
	var out []string
	for _, g := range []struct {
		section, why string
		// said says the gap is said already: MFU's by the stages it is
		// made from, the operators' where they are not made on purpose.
		said bool
	}{
		{"Environment", s.Environment.Missing, false},
		{"peak throughput", s.Environment.PeakMissing, false},
		{"Stages", s.Stages.Missing, false},
		{"MFU", s.MFU.Missing, s.Stages.Missing != ""},
		{"Top Operators", s.Operators.Missing, s.Operators.NotMade},
		{"Top Kernels", s.Kernels.Missing, false},
		{"kernel bounds", s.Kernels.BoundsNote, false},
		{"Per-Region Breakdown", s.Regions.Missing, false},
	} {
		if g.why != "" && !g.said {
			out = append(out, g.section+" ("+g.why+")")
		}
	}
	return out
}

// WhatIf is the what-if ladder: for each phase in steady state (and one
// decode step), what it takes now and the floors below it, each with the
// time it would save and the lever that reaches it.
type WhatIf struct {
	Rows []WhatIfRow `json:"rows"`
	// Rule says how each rung is computed, once.
	Rule    string `json:"rule"`
	Missing string `json:"missing,omitempty"`
}

// WhatIfRow is one phase's ladder (or one decode step's).
type WhatIfRow struct {
	Phase     string   `json:"phase"` // the region's path
	ProcessID int64    `json:"process_id"`
	Device    DeviceID `json:"device"`
	Rank      *int     `json:"rank,omitempty"`
	// Kind is "prefill", "decode" or "decode step" (a range inside the
	// decode phase: one step); "" for a phase of neither.
	Kind      string  `json:"kind,omitempty"`
	Instances int     `json:"instances"`
	NowMS     float64 `json:"now_ms"`
	GPUBusyMS float64 `json:"gpu_busy_ms"`
	// LaunchesPerInstance are the kernels the phase launches an instance.
	// HostUSPerLaunch is now over them, for a launch-bound phase: wall
	// time per launch, kernel time included, not the host's cost of a
	// launch, which LaunchCallUS is.
	LaunchesPerInstance float64  `json:"launches_per_instance"`
	HostUSPerLaunch     *float64 `json:"host_us_per_launch"`
	// LaunchCallUS is the mean host time of one of the phase's launch
	// calls in its steady instances (its CUPTI API record, start to end),
	// LaunchCallsPerInstance their number an instance (fewer than the
	// launches where a call launches a CUDA graph) and
	// LaunchCallMSPerInstance their time an instance; nil where no launch
	// call is recorded.
	LaunchCallUS            *float64 `json:"launch_call_us"`
	LaunchCallsPerInstance  *float64 `json:"launch_calls_per_instance"`
	LaunchCallMSPerInstance *float64 `json:"launch_call_ms_per_instance"`
	LaunchBound             bool     `json:"launch_bound"`
	BandwidthFloorMS        *float64 `json:"bandwidth_floor_ms"`
	BandwidthFloorWhy       string   `json:"bandwidth_floor_why,omitempty"`
	ComputeFloorMS          *float64 `json:"compute_floor_ms"`
	ComputeFloorWhy         string   `json:"compute_floor_why,omitempty"`
	// BindingFloor is the higher of the known physical floors
	// (FloorBandwidth or FloorCompute): the least the phase can take;
	// "" when neither is known.
	BindingFloor string `json:"binding_floor,omitempty"`
	// Rungs are the GPU-busy floor and the binding physical floor, each
	// with what it saves against now, highest floor first: no rung lies
	// below the binding floor.
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

// The ladder's floors, and the lever that reaches each (the GPU-busy
// floor's is the program kind's: summary's levers).
const (
	FloorBusy      = "gpu_busy"
	FloorBandwidth = "bandwidth"
	FloorCompute   = "compute"

	LeverBandwidth = "faster kernels that read each byte once at full bandwidth"
	// LeverNotLaunches is the GPU-busy floor's lever of a phase that is
	// not launch-bound: its idle is not the GPU waiting between its
	// launches, so no launch lever reaches that floor.
	LeverNotLaunches = "none of the launch levers: the idle is not the GPU waiting between this phase's launches (the host's own work before or after them, or a queue behind other work)"
	LeverCompute     = "less arithmetic (a smaller or quantized model, fewer tokens)"
)
