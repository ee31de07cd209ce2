// Package cuptilib builds deepprof's CUPTI injection library and says how to
// load it into a workload.
//
// The library's C source (src/deepprof_cupti.c) is embedded in the binary.
// Build compiles it with the machine's C compiler, as an argv (never through a
// shell), against the CUDA toolkit's CUPTI headers and libcupti, on first use
// only: the result is cached under a folder named by the hash of the source,
// the compiler's argv and the CUDA and CUPTI versions, and written atomically
// (built in a temporary folder, then renamed). A machine without CUDA, CUPTI's
// headers or a compiler gets an error that says what was looked for and what to
// set. Env gives the environment that loads the library into every CUDA process
// of a workload, children included.
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
//	X  key value                                                             a note (dropped_records, nvtx, api, cupti_error)
//	E  records dropped                                                       the last line, at a normal exit only
//
// Kernels, copies and sets come from CUPTI's Activity API; API calls and NVTX
// from its Callback API, enabled only for the runtime and driver functions
// whose names start with cudaLaunch, cudaGraphLaunch, cudaMemcpy, cudaMemset
// (and the cu… equivalents), and for the NVTX domain; a driver call made inside
// a traced runtime call (cudaLaunchKernel's cuLaunchKernel, same correlation
// id) is not written, so a launch has one A record, the call the program made. NVTX reaches CUPTI through
// this library: NVTX_INJECTION64_PATH names it too, and its
// InitializeInjectionNvtx2 starts recording (so domains created and ranges
// pushed before cuInit are seen) and hands NVTX to libcupti's own. thread_id is
// the OS thread id (gettid) in both A and N records; an empty domain is NVTX's
// default domain; registered strings and domain handles are written as their
// text. A file without its E line was cut short (crash, kill): what came before
// its last complete line is valid: every second the library asks CUPTI for
// the buffers whose records are complete and writes its own buffer out. A
// process that ends with _exit (a bare fork's child) runs no exit handler:
// its file holds what was written before.
//
// The Go reader of these files is package cupti; this package is not for
// reading them.
package session
