package main

import (
	"os"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"

	"github.com/llm-perf-opt/deepprof/harness"
	"github.com/llm-perf-opt/deepprof/internal/machine"
)

// ncuVersionOutput is what ncu 2025.3.1 printed for --version on the H200
// (as the fake ncu of the scripts prints it).
const ncuVersionOutput = "NVIDIA (R) Nsight Compute Command Line Profiler\nCopyright (c) 2018-2025 NVIDIA Corporation\nVersion 2025.3.1.0 (build 36398880) (public-release)\n"

// fakePreflight makes the in-process commands see the machine of issue 12,
// whatever machine the tests run on: NVML without its library (machine.Collect's
// real error path), an ncu that prints its recorded version, the workload's
// files present, and a python3 without torch (its recorded output). It
// restores the real probes when the test ends.
func fakePreflight(t *testing.T) {
	t.Helper()
	noTorch, err := os.ReadFile("../../fixtures/logs/python-no-torch.txt")
	if err != nil {
		t.Fatal(err)
	}
	gpuErr := func() error {
		_, err := machine.Collect(&mock.Interface{InitFunc: func() nvml.Return { return nvml.ERROR_LIBRARY_NOT_FOUND }}, machine.Selection{})
		return err
	}()
	t.Cleanup(harness.UseTestMachine(harness.TestMachine{GPUErr: gpuErr, NcuVersion: ncuVersionOutput, PythonOutput: noTorch, PythonFails: true}))
}
