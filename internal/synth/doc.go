// Package synth makes SYNTHETIC inputs for tests and benchmarks.
//
// Nothing it makes is measured, and nothing it makes is committed as a
// fixture: each input is made by this code, from real recordings where it
// can be, and says so (SYNTHETIC in its name, its run id or beside it). It
// holds:
//
//   - RepeatRows: a real ncu raw page's header and units rows, then its
//     launch rows repeated to any size, for benchmarks of the readers
//     (scripts/synth writes one to a file).
//   - Write, Config, Small: deepprof-cupti/1 recordings (CUPTI record
//     files), and WithoutNVTX, WithoutActivity: a real one with parts left
//     out.
//   - Fake: a fake nsys (below).
//   - Run and its Edits (ScaleKernel, RenameKernel, ScaleStage, ScaleRepeat,
//     Remove, WriteFile; StretchKernels and SlowRange, slowdowns planted
//     in a copy's CUPTI records): run directories for tests of run
//     comparison;
//     RawRun and RawCopy: the same without the derived files, for tests
//     that rebuild them; Read and Recorded: what a recorded run's files
//     say.
//   - RankRuns: node run directories of a multi-node session, for tests of
//     a merge.
//   - CollectLess: the garbage collector's setting for test processes.
//
// It is for tests and the scripts that make inputs; no command or library
// path of deepprof uses it.
//
// # CUPTI recordings
//
// A recording made by Write models an LLM generate: a weights copy, a
// "prefill" range of long kernels (the GPU is the bottleneck), then
// "decode_all" holding "decode_step" ranges of short kernels and a
// device-to-host copy each (prefill ends with one too; the CPU's launches
// are the bottleneck), on the main thread; a second thread with a range in
// the named domain "LLM" whose kernel runs on another stream beside the
// main thread's; a start/end range opened on one thread and closed on the
// other; marks; escaped characters in names. GPU records are written out of
// time order, in reversed chunks, as CUPTI delivers buffers when they
// complete. It streams: memory does not grow with the number of kernels,
// so a 1M-kernel recording can be written for a benchmark.
//
// # A fake nsys
//
// Fake answers `nsys --version`, `nsys profile`, `nsys export` and `nsys
// stats` from recorded Nsight Systems output, so that a session's nsys
// timeline runs with no GPU and no Nsight Systems. Session tests call
// Fake.Run from their Runner; the command's end-to-end scripts install it
// on PATH as the command "nsys". What it replays is real
// (fixtures/nsys/*/cuda_gpu_kern_sum.csv, and the output of the nsys
// bundled in Nsight Compute writing no report,
// fixtures/logs/nsys-bundled-no-report.txt); what it makes up is said where
// it does: the report and SQLite files are stand-ins, the nvtx_sum CSV is
// SyntheticNVTXSum, and the :base kernel summary groups the recorded rows
// by model.FunctionName (real nsys groups by the base names it recorded).
// It is not a model of nsys: it checks only what a session relies on (the
// report exists before stats and export read it; -o, --output and --report
// are given) and accepts every other option.
//
// # Run directories
//
// Run copies a recorded run with one thing changed (a kernel slowed or
// renamed, a stage scaled, a file removed or replaced). Its directory name,
// which is its run id, starts with "synthetic-" and says what was changed;
// its manifest's run_id and its mark (rundir.WriteMark) say the same.
// NotARun makes a folder deepprof did not make that its commands once took
// for a run, UserFiles are a person's files named like a run's, and Tree
// is what a test compares to show that nothing under a folder changed. Read reads what a recorded run's
// files say, so that tests derive what they expect from the fixture
// instead of typing its numbers.
package synth
