// The phases of a CUPTI timeline, as data: what phases.json holds.
// Package phases makes them.

package facts

// CommunicationSplit divides a phase's busy time on one device between
// communication kernels (NCCL collectives and the like:
// phases.Options.Communication) and the others, compute. Each is the union of
// its kernels' intervals inside the phase's spans, whichever phase launched
// them, as BusyNS is, so ComputeNS + CommunicationNS - OverlapNS = BusyNS.
type CommunicationSplit struct {
	// ComputeNS is the time some non-communication kernel runs.
	ComputeNS int64 `json:"compute_ns"`
	// CommunicationNS is the time some communication kernel runs. In a
	// collective every rank waits for the last to join, so a rank's
	// communication time holds its wait for the slower ranks.
	CommunicationNS int64 `json:"communication_ns"`
	// OverlapNS is the time both run at once (a collective on one stream
	// beside compute on another).
	OverlapNS int64 `json:"overlap_ns"`
	// ExposedCommunicationNS is CommunicationNS - OverlapNS: communication
	// with no compute beside it.
	ExposedCommunicationNS int64 `json:"exposed_communication_ns"`
	// Collectives counts the phase's own communication kernels (launched
	// inside it), as Phase.Kernels counts all of them.
	Collectives int64 `json:"collectives"`
}

// RankBalance compares one phase's compute time (CommunicationSplit's
// ComputeNS) across the scopes, one process on one device, that launched
// kernels in it: under torchrun, its ranks.
type RankBalance struct {
	// Phase is the region's path; "" for the whole run.
	Phase string `json:"phase"`
	// Ranks counts the scopes compared.
	Ranks int `json:"ranks"`
	// Busy is the time any kernel runs (compute and communication, each
	// counted once): the imbalance's measure.
	MaxBusyNS int64 `json:"max_busy_ns"`
	MinBusyNS int64 `json:"min_busy_ns"`
	// Compute, and communication, the split of it.
	MaxComputeNS       int64 `json:"max_compute_ns"`
	MinComputeNS       int64 `json:"min_compute_ns"`
	MaxCommunicationNS int64 `json:"max_communication_ns"`
	MinCommunicationNS int64 `json:"min_communication_ns"`
	// Imbalance is MaxBusyNS / MinBusyNS; nil with fewer than two ranks
	// or a rank with no kernel time.
	Imbalance *float64 `json:"imbalance,omitempty"`
	// Straggler is the rank the others wait for, nil with fewer than two
	// ranks: with collectives, the one with the least communication time
	// (a collective's kernel runs until the last rank joins it, so the
	// others' communication time holds their wait for it: a rank late on
	// the host is found as well as one slow on the GPU); without, the one
	// with the most compute. The first in scope order at a tie.
	Straggler *Rank `json:"straggler,omitempty"`
	// StragglerBy says which rule named it: StragglerWaitsLeast or
	// StragglerComputesMost.
	StragglerBy string `json:"straggler_by,omitempty"`
	// NetCommunicationNS is the collectives net of waiting: a collective's
	// kernel runs on every rank until the last one joins it, so the i-th
	// collective of each rank, shortest over the ranks, is the collective
	// itself, the rest on the others their wait; summed over the phase's
	// CollectiveCalls (per rank). Nil with fewer than two ranks, or ranks
	// that made different numbers of collective calls.
	NetCommunicationNS *int64 `json:"net_communication_ns,omitempty"`
	CollectiveCalls    int    `json:"collective_calls,omitempty"`
}

// Rank names a scope: one process on one device.
type Rank struct {
	ProcessID int64    `json:"process_id"`
	Device    DeviceID `json:"device"`
}

// PhaseReport is what the timeline tells per phase, per process and device.
type PhaseReport struct {
	Depth                int          `json:"depth"`
	LaunchBoundIdleShare float64      `json:"launch_bound_idle_share"`
	Scopes               []PhaseScope `json:"scopes"`
	// Balance compares each phase's compute time across the scopes that
	// launched kernels in it (the ranks of a tensor-parallel run), the
	// phases in order of first appearance, then the whole run; nil unless
	// the run has a communication kernel, or processes with kernels on
	// more than one device between them.
	Balance []RankBalance `json:"balance,omitempty"`
}

// PhaseScope is one process on one device.
type PhaseScope struct {
	ProcessID int64    `json:"process_id"`
	Device    DeviceID `json:"device"`
	// Rank is the process's global rank as its launcher numbered it
	// ($RANK, in the record file's header); nil when the records do not say.
	Rank *int `json:"rank,omitempty"`
	// Run is the whole run on the device: from its first kernel or copy to
	// its last.
	Run Phase `json:"run"`
	// Phases are the NVTX regions at the report's depth that launched work
	// on the device, in order of their first instance's start.
	Phases []Phase `json:"phases"`
	// Nested are the regions inside the phases (Options.NestedDepth),
	// by depth, then in order of their first instance's start.
	Nested []Phase `json:"nested,omitempty"`
	// PhasesLeftOut and NestedLeftOut sum the phases and nested regions
	// past the most a scope lists (phases.MaxPhases, the largest by kernel
	// time kept); nil when none is.
	PhasesLeftOut *LeftOut `json:"phases_left_out,omitempty"`
	NestedLeftOut *LeftOut `json:"nested_left_out,omitempty"`
}

// LeftOut sums the regions a list leaves out.
type LeftOut struct {
	Regions  int   `json:"regions"`
	Kernels  int64 `json:"kernels"`
	KernelNS int64 `json:"kernel_ns"`
}

// Phase is one NVTX region at a chosen depth (its steady-state instances:
// Options.Steady), or the whole run. An instance spans from the
// earlier of its range's start and its first kernel or copy on the device
// to the later of its range's end and its last one: work launched in a
// range runs after the range's CPU side ends. The phase is busy while one
// of its own kernels (launched inside it) runs: the union of their
// intervals, never more than their sum, so another phase's kernels running
// in the window are not this phase's; copies do not make it busy (their
// time is reported beside). Idle is the rest of the span; the gaps are its
// holes between two of its kernels. Devices are the process's CUDA device
// ordinals, so the busy time of one device is not merged across processes.
type Phase struct {
	// Name is the region's path ("decode_all/decode_step", "LLM@prefill");
	// "" for the whole run.
	Name      string `json:"name"`
	Instances int    `json:"instances"`
	// SpanNS sums the instances' spans.
	SpanNS int64 `json:"span_ns"`
	// Kernels and KernelNS count the phase's own kernels (launched inside
	// it); kernels that overlap count twice.
	Kernels  int64 `json:"kernels"`
	KernelNS int64 `json:"kernel_ns"`
	BusyNS   int64 `json:"busy_ns"` // time in the spans that the phase's own kernels run
	IdleNS   int64 `json:"idle_ns"` // SpanNS - BusyNS
	// IdleShare is IdleNS over SpanNS (0 when the span is empty).
	IdleShare float64 `json:"idle_share"`
	// QueuedNS is the part of IdleNS in which other kernels of its process
	// run on its device: the phase's kernels may wait behind them.
	QueuedNS int64 `json:"queued_ns"`
	// LaunchBound says the GPU waits on the phase's launches: it has
	// kernels, IdleShare passes LaunchBoundIdleShare, and the gaps between
	// its own kernels make at least half of its idle time. HostAhead says
	// it is idle as much, with smaller gaps and a long median launch
	// latency: its kernels wait in a queue, the GPU sets the pace
	// (phases.HostAheadLatencyNS).
	LaunchBound bool `json:"launch_bound"`
	HostAhead   bool `json:"host_ahead,omitempty"`
	// Gaps are the idle holes between one of the phase's own kernels' end
	// and the next one's start within an instance's span (the lead-in before the
	// first kernel and the tail after the last are in IdleNS, not here).
	Gaps GapStats `json:"gaps"`
	// Latency is from each of the phase's kernels' launch call start to
	// its start.
	Latency Latency `json:"launch_latency"`
	// LaunchCalls are the host's launch calls of the phase's own kernels,
	// each call once however many kernels it launched (a CUDA graph's):
	// their number and their time on the host, each from its CUPTI API
	// record's start to its end.
	LaunchCalls LaunchCalls `json:"launch_calls"`
	Memcpy      CopyStats   `json:"memcpy"`
	Memset      CopyStats   `json:"memset"`
	// Communication splits BusyNS between communication kernels and the
	// others; nil unless the run has a communication kernel
	// (Options.Communication), or processes with kernels on more
	// than one device between them.
	Communication *CommunicationSplit `json:"communication,omitempty"`
	// Warmup is the same figures over the phase's warm-up instances
	// (Options.Steady), left out of the ones above; nil when none.
	Warmup *Phase `json:"warmup,omitempty"`
	// Measured is the same figures over the phase's instances left out of
	// the ones above, not by the warm-up rule, because they held, or
	// overlapped a peer's, one of deepprof's library's measurements (the
	// GPU's queue drained, a launch replayed); nil when none.
	Measured *Phase `json:"measured,omitempty"`
	// LeadingSteps, in a Warmup, is how many warm-up steps it holds where
	// it is the leading part of a phase's one instance (a one-time set-up
	// in its first steps), not instances of its own, and LeadingOf how
	// many steps that instance holds in all; 0 otherwise.
	LeadingSteps int `json:"leading_steps,omitempty"`
	LeadingOf    int `json:"leading_of,omitempty"`
}

// GapStats summarize the idle gaps between kernels.
type GapStats struct {
	SumNS   int64 `json:"sum_ns"`
	Count   int64 `json:"count"`
	Largest []Gap `json:"largest"` // longest first, ties by time
}

// Gap is one idle gap.
type Gap struct {
	// AtNS is where it starts, in ns from the process's start_ns.
	AtNS int64 `json:"at_ns"`
	NS   int64 `json:"ns"`
	// Before is the kernel whose end opens the gap, After the one whose
	// start closes it.
	Before string `json:"before"`
	After  string `json:"after"`
	// Instance counts the phase's instances from 1, in start order.
	Instance int `json:"instance"`
}

// Latency summarizes launch latencies: a kernel's start minus its launch
// call's start, over the kernels whose call is known.
type Latency struct {
	Count    int64   `json:"count"`
	MeanNS   float64 `json:"mean_ns"`
	MedianNS float64 `json:"median_ns"`
	MaxNS    int64   `json:"max_ns"`
}

// LaunchCalls sum launch calls (cudaLaunchKernel, cuLaunchKernel,
// cudaGraphLaunch and the like) on the host.
type LaunchCalls struct {
	Count int64 `json:"count"`
	NS    int64 `json:"ns"`
}

// CopyStats sum memcpys or memsets.
type CopyStats struct {
	Count int64  `json:"count"`
	NS    int64  `json:"ns"`
	Bytes uint64 `json:"bytes"`
}
