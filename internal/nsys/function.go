package nsys

import "github.com/llm-perf-opt/deepprof/internal/model"

// ReportKernSumBase is the kernel summary over base (function) names, as
// `nsys stats --report` takes it.
//
// What NVIDIA documents, and what this package relies on:
//
//   - The Nsight Systems Post-Collection Analysis Guide
//     (https://docs.nvidia.com/nsight-systems/AnalysisGuide/index.html,
//     "Statistical Reports Shipped With Nsight Systems") lists the report as
//     cuda_gpu_kern_sum[:nvtx-name][:base|:mangled], and so does the usage
//     text of nsys's own report script (reports/cuda_gpu_kern_sum.py,
//     2020-2024): "base - Optional argument, if given, will cause summary to
//     be over the base name of the kernel, rather than the templated name."
//     Arguments follow the report name after ':'.
//   - The columns stay those of the plain report (Time (%), Total Time (ns),
//     Instances, Avg, Med, Min, Max, StdDev, Name); with :base, Name holds the
//     base name. In the versions of the script that show it, :base groups by
//     the shortName column of CUPTI_ACTIVITY_KIND_KERNEL instead of
//     demangledName.
//   - What the base name looks like is not shown there. The session assumes
//     it is what Nsight Compute calls the function name (--kernel-name-base
//     function): "vectorized_elementwise_kernel" for
//     "void at::native::vectorized_elementwise_kernel<4, …>(int, T2, T3)".
//     That is unverified on real hardware (no usable nsys on the GPU machines
//     here): model.FunctionName derives the same names from the demangled ones,
//     and is checked against what ncu printed for every launch of the
//     recorded H200 sessions.
//   - The file `nsys stats --output PREFIX` writes for a report with
//     arguments is not documented in what was found; model.NsysStatsCSVPath
//     gives the name for a report without arguments only. Callers look for
//     PREFIX_cuda_gpu_kern_sum*.csv.
const ReportKernSumBase = model.NsysReportKernSum + ":base"
