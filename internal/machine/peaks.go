package machine

import (
	"strings"

	"github.com/llm-perf-opt/deepprof/facts"
)

// Peak is a GPU's dense peak throughput for one data type and its DRAM
// bandwidth (facts.Peak).
type Peak = facts.Peak

// peakRow is one GPU of the table, by its NVML name.
type peakRow struct {
	name       string
	bf16, fp32 float64 // TFLOPS; fp16 dense tensor peak equals bf16 on every GPU here
	tbps       float64
	source     string
}

// peaks holds NVIDIA's published dense peaks (the datasheets' tensor
// figures without sparsity: half of the "with sparsity" number; fp32 is
// the CUDA-core figure, as PyTorch does not use TF32 for matmuls by
// default). Names are exactly as NVML reports them.
var peaks = []peakRow{
	{"NVIDIA H200", 989.4, 66.9, 4.8, "NVIDIA H200 Tensor Core GPU datasheet (SXM)"},
	{"NVIDIA H200 NVL", 835.5, 60.3, 4.8, "NVIDIA H200 Tensor Core GPU datasheet (NVL)"},
	{"NVIDIA H100 80GB HBM3", 989.4, 66.9, 3.35, "NVIDIA H100 Tensor Core GPU datasheet (SXM)"},
	{"NVIDIA H100 PCIe", 756.5, 51.2, 2.0, "NVIDIA H100 Tensor Core GPU datasheet (PCIe)"},
	{"NVIDIA H100 NVL", 835.5, 60.3, 3.9, "NVIDIA H100 Tensor Core GPU datasheet (NVL)"},
	{"NVIDIA A100-SXM4-80GB", 312, 19.5, 2.039, "NVIDIA A100 Tensor Core GPU datasheet (SXM4 80GB)"},
	{"NVIDIA A100-SXM4-40GB", 312, 19.5, 1.555, "NVIDIA A100 Tensor Core GPU datasheet (SXM4 40GB)"},
	{"NVIDIA A100 80GB PCIe", 312, 19.5, 1.935, "NVIDIA A100 Tensor Core GPU datasheet (PCIe 80GB)"},
	{"NVIDIA A100-PCIE-40GB", 312, 19.5, 1.555, "NVIDIA A100 Tensor Core GPU datasheet (PCIe 40GB)"},
	{"NVIDIA L40S", 362.05, 91.6, 0.864, "NVIDIA L40S datasheet"},
	{"NVIDIA L4", 121, 30.3, 0.3, "NVIDIA L4 datasheet"},
}

// Dtype reduces a dtype's spellings (bf16, bfloat16, torch.bfloat16,
// float16, fp32...) to bf16, fp16 or fp32; anything else is returned as
// given.
func Dtype(s string) string {
	switch strings.TrimPrefix(strings.ToLower(s), "torch.") {
	case "bf16", "bfloat16":
		return "bf16"
	case "fp16", "float16", "half":
		return "fp16"
	case "fp32", "float32", "float":
		return "fp32"
	}
	return s
}

// LookupPeak finds the peak for a GPU by its NVML name and a dtype; false
// when the GPU or the dtype is not in the table (never a guess).
func LookupPeak(name, dtype string) (Peak, bool) {
	for _, r := range peaks {
		if r.name != name {
			continue
		}
		var tf float64
		switch Dtype(dtype) {
		case "bf16", "fp16":
			tf = r.bf16
		case "fp32":
			tf = r.fp32
		default:
			return Peak{}, false
		}
		return Peak{TFLOPS: tf, MemoryTBps: r.tbps, Source: r.source + ", dense " + Dtype(dtype)}, true
	}
	return Peak{}, false
}

// KnownPeakGPUs lists the NVML names of the table, for messages.
func KnownPeakGPUs() []string {
	out := make([]string, len(peaks))
	for i, r := range peaks {
		out[i] = r.name
	}
	return out
}
