// Package machine is the GPU a session profiles, its peaks, the profilers.
//
// It says which GPU a session profiles and records what that GPU and its
// driver were (the provenance written to env.json), gives the GPU's
// published peaks (LookupPeak: the denominators of MFU and the roofline's
// roofs), and finds the profiler executables (ncu, nsys) with their
// versions.
//
// ParseDevice turns a device= setting ("cuda:1", "0", "GPU-<uuid>",
// "MIG-<uuid>") into a Selection, ParseVisible does the same for a
// CUDA_VISIBLE_DEVICES value naming several GPUs ("1,0") or none (every
// GPU), and Selection.CUDAVisibleDevices says what the workload gets in
// CUDA_VISIBLE_DEVICES. Collect asks NVML, through go-nvml's nvml.Interface
// so that tests run on mocks without a GPU, for the driver, CUDA and NVML
// versions, for every GPU's name, UUID, PCI bus, memory, compute
// capability, clocks, power limit and MIG state, and for how each pair of
// the GPUs the workload may use is linked (NVLinks, PCIe path, P2P status,
// as nvidia-smi topo -m shows it). Every NVML failure becomes an error
// naming the call at once; only the fields a GPU legitimately does not
// support are left zero and listed in Provenance.Unsupported.
//
// Find looks for a profiler on the filesystem only: it runs nothing, and
// it reads no environment variable itself (the caller passes an Env,
// usually EnvFromOS). Probe runs "TOOL --version" with an argv, never
// through a shell, and hands the output to ParseNcuVersion or
// ParseNsysVersion, pure functions tested on what the real tools print.
//
// It does not run workloads or profiles (building ncu's argv is package
// ncu's job, running it the session's), set clocks or change MIG modes: it
// reads, and only through NVML. Importing it needs cgo (go-nvml's
// bindings), but neither a GPU nor libnvidia-ml.so: the library is opened
// when Init is called.
package machine
