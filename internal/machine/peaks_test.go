package machine_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/llm-perf-opt/deepprof/internal/machine"
)

func TestLookupPeak(t *testing.T) {
	for _, c := range []struct {
		name, dtype  string
		tflops, tbps float64
		ok           bool
	}{
		{"NVIDIA H200", "bfloat16", 989.4, 4.8, true}, // as the workload reports the dtype
		{"NVIDIA H200", "bf16", 989.4, 4.8, true},     // as the profile writes it
		{"NVIDIA H200", "float16", 989.4, 4.8, true},
		{"NVIDIA H200", "float32", 66.9, 4.8, true},
		{"NVIDIA H100 80GB HBM3", "torch.bfloat16", 989.4, 3.35, true},
		{"NVIDIA H200", "int8", 0, 0, false},             // a dtype the table has no figure for
		{"NVIDIA GeForce RTX 5090", "bf16", 0, 0, false}, // a GPU the table does not know
		{"nvidia h200", "bf16", 0, 0, false},             // NVML names match exactly
	} {
		p, ok := machine.LookupPeak(c.name, c.dtype)
		assert.Equal(t, c.ok, ok, "%s %s", c.name, c.dtype)
		assert.Equal(t, c.tflops, p.TFLOPS, "%s %s", c.name, c.dtype)
		assert.Equal(t, c.tbps, p.MemoryTBps, "%s %s", c.name, c.dtype)
		if ok {
			assert.Contains(t, p.Source, "datasheet")
		}
	}
}

func TestDtype(t *testing.T) {
	for in, want := range map[string]string{"bfloat16": "bf16", "BF16": "bf16", "torch.float16": "fp16", "half": "fp16",
		"float32": "fp32", "fp32": "fp32", "int8": "int8"} {
		assert.Equal(t, want, machine.Dtype(in), in)
	}
}
