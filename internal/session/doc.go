// Package session runs a profiling session: preflight, steps, ranks, CUPTI.
//
// A Session runs a Stage 2 deep-profiling session into a new run directory
// (MAIN), step by step (docs/sessions.md): stage 1, the timeline, the deep
// ncu pass and its exports; its last step hands MAIN to package rebuild
// (rebuild.Run), which makes the derived files. Every external program
// is run through a Runner, so the whole flow runs in tests against fakes
// that replay recorded tool output; the argv of each step comes from
// packages ncu and nsys, parsing from ncu, nsys, kernels and regions, the
// run directory's layout and manifest from rundir. This package decides
// the order of steps, what each failure means for the run, and what lands
// where in MAIN. Beside it are the preflight, the rank wrapper of a
// multi-GPU workload and deepprof's CUPTI injection library (below).
//
// It renders nothing and rebuilds no report itself: rebuilding a run's
// reports is package rebuild's job, comparing runs package compare's.
//
// Decisions it makes on its own, each said in the plan or the manifest's
// notes: with timeline.tool=auto the timeline comes from nsys when a usable
// one is found (its version read), else from deepprof's CUPTI library when
// it can be built, else from an ncu timing pass, and an nsys that writes no
// report gives way to the next of them; a multi-GPU workload needs the
// CUPTI timeline; the deep pass filters on the function names of the
// timeline's top kernels (derived from their demangled names); under ncu
// the workload runs once (DEEPPROF_REPEATS=1); the timing pass always uses
// kernel replay; a deep pass whose range or app-range replay ncu refuses
// runs again with kernel replay, keeping the refused attempt's log as
// ncu/deep-range.log; an interrupted session keeps what it did and says
// "interrupted during STEP".
// Each step (a StepID) has a deadline from workload.timeout, ncu.timeout or
// nsys.timeout, by what runs it (Session.deadline; the dry run prints it);
// a step that reaches it is stopped like an interrupted one, recorded as
// timed out, and the run ends partial with the deadline to raise. The log
// of a stopped step is kept and not diagnosed.
//
// # Preflight
//
// Run checks, before a session starts anything, that this machine can run
// it: an NVIDIA GPU that NVML sees, a profiler that prints its version, the
// workload's files, and the workload's program (for a dry run of a Python
// workload whose imports are known, that its interpreter imports them; a
// session leaves that to its first step, whose failure names the missing
// module: MissingModule). Each check says
// what it found and, when it failed, what to do, so that deepprof profile
// stops in seconds with the reason instead of failing minutes later inside
// a step. The probes are functions (Probes): tests run every check with
// fakes, and System gives the real ones (NVML and the profiler's version
// through package machine, exec.LookPath, os.Stat, a child process run as
// an argv). The preflight decides nothing about the session's steps and
// runs nothing beyond those probes.
//
// # Ranks
//
// A multi-GPU workload (workload.launcher) runs every step under its
// launcher, needs the CUPTI timeline, and its deep pass is one ncu per
// rank, the collectives left out (withoutCollectives). Script, the wrapper
// the session writes into the run directory (rundir.NcuRankExec), and
// Exec, the argv that runs it under the launcher, start a profiler in
// every rank. One ncu per rank, never one ncu around the launcher: under
// one ncu (--target-processes all) the first collective fails, one rank
// serialized by kernel replay while the other waits in it
// (fixtures/logs/ncu-one-ncu-over-torchrun-nccl.txt).
//
// # The CUPTI library
//
// The library's C source (src/deepprof_cupti.c) is embedded in the binary.
// Build compiles it with the machine's C compiler, as an argv (never
// through a shell), against the CUDA toolkit's CUPTI headers and libcupti,
// on first use only: the result is cached under a folder named by the hash
// of the source, the compiler's argv and the CUDA and CUPTI versions, and
// written atomically (built in a temporary folder, then renamed). A machine
// without CUDA, CUPTI's headers or a compiler gets an error that says what
// was looked for and what to set. Env gives the environment that loads the
// library into every CUDA process of a workload, children included.
//
// What the library records, per process, in $DEEPPROF_CUPTI_DIR/cupti-<pid>.tsv
// (format deepprof-cupti/1: UTF-8, one record a line, fields separated by one
// TAB; in string fields `\` is written `\\`, TAB `\t`, LF `\n`, CR `\r`;
// timestamps are CUPTI's, in ns, one clock for GPU and CPU; records come in
// any time order):
//
//	#deepprof-cupti/1  pid= ppid= cupti_api= cuda_driver= start_ns= exe=   the header, first line
//	K  start end device context stream correlation grid(x,y,z) block(x,y,z)
//	   registers_per_thread static_shared_bytes dynamic_shared_bytes mangled_name demangled_name
//	C  start end device context stream correlation copy_kind bytes           a memcpy (HtoD DtoH DtoD HtoH PtoP other)
//	S  start end device context stream correlation bytes                     a memset
//	A  start end thread_id correlation api cbid function_name                the runtime/driver call that launched a K, C or S
//	N  kind ts thread_id id domain name                                      NVTX push, pop, start, end, mark
//	M  correlation metric value                                              a metric of a launch the library measured ($DEEPPROF_CUPTI_METRICS)
//	W  correlation start end                                                 the host time that measuring took (a reader cuts it out)
//	X  key value                                                             a note (dropped_records, nvtx, nvtx_skip, api, cupti_error, metrics)
//	E  records dropped                                                       the last line, at a normal exit only
//
// Kernels, copies and sets come from CUPTI's Activity API; API calls and
// NVTX from its Callback API, enabled only for the runtime and driver
// functions whose names start with cudaLaunch, cudaGraphLaunch, cudaMemcpy,
// cudaMemset (and the cu… equivalents), and for the NVTX domain; a driver
// call made inside a traced runtime call (cudaLaunchKernel's
// cuLaunchKernel, same correlation id) is not written, so a launch has one
// A record, the call the program made. NVTX reaches CUPTI through this
// library: NVTX_INJECTION64_PATH names it too, and its
// InitializeInjectionNvtx2 starts recording (so domains created and ranges
// pushed before cuInit are seen) and hands NVTX to libcupti's own. The
// NVTX domains named in $DEEPPROF_CUPTI_SKIP_DOMAINS (comma-separated; unset,
// XLA's "TSL", which XLA fills with a range per thunk once a tool is
// attached: a jitted decode step of 0.50 ms took 12.3 ms recorded on an
// H200; empty, none) are left out before they reach CUPTI: once libcupti has
// filled NVTX's function tables, the library wraps the domain functions it
// installed (nvtxDomainCreateA/W, nvtxDomainRangePushEx, nvtxDomainRangePop,
// nvtxDomainRangeStartEx, nvtxDomainRangeEnd, nvtxDomainMarkEx,
// nvtxDomainRegisterStringA/W, nvtxDomainDestroy), and a call in a left-out
// domain returns at once what NVTX returns with no tool attached. The note
// nvtx_skip says which domains were left out, or why none could be.
// thread_id is the OS thread id (gettid) in both A and N records; an empty
// domain is NVTX's default domain; registered strings and domain handles
// are written as their text. A file without its E line was cut short
// (crash, kill): what came before its last complete line is valid: every
// second the library asks CUPTI for the buffers whose records are complete
// and writes its own buffer out. A process that ends with _exit (a bare
// fork's child) runs no exit handler: its file holds what was written
// before.
//
// With $DEEPPROF_CUPTI_METRICS set (ncu.deep_source library or both), the
// library also measures those metrics itself on one launch of each of the
// launch configurations that run most of the GPU time, with CUPTI's range
// profiler (kernel replay), and writes M and W records: the source's
// comment "Deep metrics in this process" says how it chooses them.
//
// The Go reader of these files is package cupti; this package does not
// read them.
package session
