// Package nsys is Nsight Systems: its argv, and its stats exports read.
//
// It builds Nsight Systems command lines and reads what `nsys stats
// --format csv` writes, for the timeline stage of a session: one nsys
// capture (optionally gated to an NVTX range), then the per-kernel
// summary (cuda_gpu_kern_sum) from which the top-N kernels by total GPU time
// are picked for the deep ncu pass, and the per-range summary (nvtx_sum).
//
// What it is for:
//   - Capture.Args, StatsArgs, ExportSQLiteArgs: argv for `nsys profile`,
//     `nsys stats` and `nsys export`, as slices for exec.Command: no shell, no
//     quoting, the profiled program last.
//   - ResolveReport: find the report nsys wrote (.nsys-rep or, before
//     2021.4, .qdrep), and say plainly when only a .qdstrm was left behind.
//   - KernelSumReader, RangeSumReader: streaming readers of the two stats
//     CSVs, shaped like bufio.Scanner (Scan, Record, Err). A malformed row is
//     a non-fatal *SyntaxError record that prints "file:line: msg"; only I/O
//     errors and an input that cannot be read at all (empty, no header, a
//     missing Name or Total Time column, a column without a known unit) end
//     the read. Times are converted to nanoseconds once, at parse time, from
//     the unit each header names in parentheses ("Total Time (ns)").
//   - TopN, Coverage, Table: the top-N kernels as model.KernelStats rows (the
//     kernels.json contract), how much of the GPU time they cover, and a
//     whole summary as a model.KernelTable (to which the session applies
//     the ncu timing pass's coverage rule).
//   - ReportKernSumBase: the kernel summary over base (function) names, the
//     names the deep ncu pass filters on (model.FunctionName derives the
//     same from demangled names, as ncu --kernel-name-base function writes
//     them).
//
// A fake nsys that replays recorded stats, for tests, is synth.Fake.
//
// What it is not for: it does not run nsys, look for it on PATH, or check its
// version (the session does, and decides what to do when there is no usable
// Nsight Systems); it does not read .nsys-rep or SQLite files; it does not
// render anything (package render does).
package nsys
