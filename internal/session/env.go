package session

// Environment variables the library reads or that load it.
const (
	EnvCUDAInjection = "CUDA_INJECTION64_PATH" // the CUDA driver loads this library at cuInit
	EnvNVTXInjection = "NVTX_INJECTION64_PATH" // NVTX loads this library at its first call
	EnvOutDir        = "DEEPPROF_CUPTI_DIR"    // where each process writes cupti-<pid>.tsv

	// EnvSkipDomains names the NVTX domains the library leaves out,
	// comma-separated; unset, it leaves out XLA's "TSL" (XLA annotates every
	// thunk there once a tool is attached), empty, none. The session does
	// not set it: workload.env may.
	EnvSkipDomains = "DEEPPROF_CUPTI_SKIP_DOMAINS"
)

// Env returns the environment additions ("KEY=value") that load the library
// at libPath into every CUDA process of a workload, children included (they
// inherit the environment), each writing its records into outDir, which must
// exist. The library is both the CUDA and the NVTX injection: it forwards
// NVTX to CUPTI itself, so NVTX ranges are recorded from the first NVTX call,
// before cuInit too.
func Env(libPath, outDir string) []string {
	return []string{
		EnvCUDAInjection + "=" + libPath,
		EnvNVTXInjection + "=" + libPath,
		EnvOutDir + "=" + outDir,
	}
}
