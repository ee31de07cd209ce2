// Package phases analyses a CUPTI timeline: its phases and stages in
// steady state, phases inferred where it has no ranges, its kernel table
// and the deep pass's targets, and communication against compute across
// ranks.
//
// A phase is the NVTX ranges of one name at one depth; its figures (kernel
// time, GPU busy and idle, gaps, launch latency, copies) count the kernels
// launched inside its ranges. The warm-up decision (Steady) is made once
// per stage and every instance-based figure uses it. It computes; it
// renders nothing and runs nothing.
//
// # Communication
//
// In a run with collective kernels (the ranks of a tensor-parallel run
// under torchrun, one process per GPU), or with several processes with
// kernels on more than one device between them, each phase's busy
// time on a device is split between communication kernels and compute,
// with the time they overlap, and the ranks' compute is compared
// (PhaseReport.Balance: imbalance and straggler). Which kernel is
// communication is the caller's rule (Options.Communication: package
// kernels' category); this package holds no name rule and does not
// import kernels.
package phases
