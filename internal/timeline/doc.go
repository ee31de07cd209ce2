// Package timeline turns CUPTI record files into a timeline: every kernel,
// copy and launch call attributed to its NVTX ranges.
//
// A Timeline is made from CUPTI record files (package cupti, one file per
// CUDA process), kept per process: kernels, copies and launch calls, each
// attributed to the NVTX ranges open at its launch, and every range
// instance with its CPU start and end. Launches gives its kernels as
// model.Launch values for the kernel and region aggregators. What the
// timeline tells (phases, stages, the steady state, communication) is
// package phases'; package render writes the Perfetto trace of it.
//
// # Attribution
//
// A kernel is attributed to the NVTX push/pop stack that was open on the
// thread that launched it when it was launched: the kernel's correlation id
// names its launch call (an A record: thread, CPU start), and that thread's
// push and pop events, in time order, say which ranges were open at the
// call's start. A range pushed at the very nanosecond of the call counts as
// open; one popped at that nanosecond, as closed. Memcpys and memsets are
// attributed the same way. This is what ncu's NVTX stack column gives each
// launch, so regions read alike whichever tool recorded them. Start/end
// ranges do not nest and are not part of a stack; their wall times are kept
// (phases.Stages). All kernels of a CUDA graph share the graph launch's
// correlation id, so they share its attribution.
//
// A correlation id may have more than one A record: a runtime launch
// (cudaLaunchKernel) and the driver call it makes (cuLaunchKernel) share
// one, and recordings of earlier versions of the library hold both
// (fixtures/cupti). The earliest-starting A of a correlation id is its
// launch call (the first in the file at a tie); the others are left out of
// APIs and counted in Process.SharedCorrelation. The calls nest on one
// thread, so the choice decides only the launch latency, measured from the
// outermost call as the program made it.
//
// A kernel whose launch call is missing from its file (dropped records, a
// file cut short) belongs to no range, and the process's Problems say how
// many. A pop with no open range is ignored and counted among the
// Problems, not an error: CUPTI gives no callback for nvtxRangePushW, so
// its pop arrives alone (fixtures/cupti/h100-nvtx-more). A range still
// open when its file ends is a Problem too; its instance ends with the last
// kernel or copy attributed to it. A file with a header and nothing else
// (a forked child that ended with _exit, so no buffer was ever written) is
// a process with no records, cut short (Process.Truncation).
//
// Records arrive in any time order (CUPTI delivers buffers as they
// complete), so a process's records are held in memory until it is built:
// memory grows with the number of records (BenchmarkAttribution; its
// figures are in docs/measurements.md, "Readers and benchmarks").
package timeline
