// Package timeline turns CUPTI record files (package cupti, one file per
// CUDA process) into a timeline, kept per process, and says what it tells:
// kernels attributed to NVTX ranges, as ncu launches for the kernel and
// region aggregators; per-phase GPU time, idle time, launch latency and
// copies; and the CPU wall time of each NVTX range instance. It reads and
// computes; it renders nothing (package report renders tables, package
// trace writes the Chrome trace) and runs nothing.
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
// (Stages). All kernels of a CUDA graph share the graph launch's
// correlation id, so they share its attribution.
//
// A kernel whose launch call is missing from its file (dropped records, a
// file cut short) belongs to no range, and the process's Problems say how
// many. A pop with no open range, and a range still open when its file
// ends, are Problems too; an open range's instance ends with the last
// kernel or copy attributed to it.
//
// Records arrive in any time order (CUPTI delivers buffers as they
// complete), so a process's records are held in memory until it is built:
// memory grows with the number of records: reading and attributing 1M
// kernels (with their launch calls) allocates about 0.6 GB.
package timeline
