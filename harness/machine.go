// The machine as the facade names it: its GPU and its profilers.

package harness

import (
	"context"

	"github.com/llm-perf-opt/deepprof/internal/machine"
)

// Tool is a profiler found on this machine.
type Tool struct {
	Name, Path string
	// Version is the version it printed ("2025.3.1.0"); "" until probed.
	Version string
	version machine.Version
}

func toolOf(t machine.Tool) Tool {
	v := ""
	if t.Version != (machine.Version{}) {
		v = t.Version.String()
	}
	return Tool{Name: t.Name, Path: t.Path, Version: v, version: t.Version}
}

// GPU is the GPU a session would profile, as NVML names it.
type GPU struct {
	Name, UUID string
	Index      int
	// DeviceCount is how many GPUs NVML sees; Driver the driver's
	// version, CUDA the CUDA version it supports.
	DeviceCount  int
	Driver, CUDA string
}

// ErrNoGPU is FindGPU's error where there is no NVIDIA driver or GPU.
var ErrNoGPU = machine.ErrNoGPU

// FindGPU asks NVML for the first GPU of the machine.
func FindGPU() (GPU, error) {
	p, err := machine.Collect(machine.Open(), machine.Selection{})
	if err != nil {
		return GPU{}, err
	}
	g := p.Selected
	return GPU{Name: g.Name, UUID: g.UUID, Index: g.Index, DeviceCount: p.DeviceCount, Driver: p.Driver, CUDA: p.CUDADriverVersion}, nil
}

// FindNcu looks for Nsight Compute where deepprof does ($PATH,
// $CUDA_HOME/bin, the usual folders); it is not run.
func FindNcu() (Tool, error) {
	t, err := machine.Find("ncu", machine.EnvFromOS())
	return toolOf(t), err
}

// ProbeTool runs the profiler at path with --version and reads its version.
func ProbeTool(ctx context.Context, path string) (Tool, error) {
	t, err := machine.Probe(ctx, path)
	return toolOf(t), err
}
