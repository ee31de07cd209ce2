package gpu

import (
	"fmt"
	"strconv"
	"strings"
)

// Selection is the one GPU a session profiles: a CUDA device index, or a GPU
// or MIG UUID. The zero Selection is cuda:0.
type Selection struct {
	// Index is the CUDA/NVML device index; ignored when UUID is set.
	Index int `json:"index"`
	// UUID is a GPU UUID ("GPU-…") or a MIG instance UUID ("MIG-…"), as
	// nvidia-smi -L prints them; empty when selecting by index.
	UUID string `json:"uuid,omitempty"`
}

// ParseDevice parses a device= setting: "cuda" (cuda:0), "cuda:N", "N",
// "GPU-<uuid>" or "MIG-<uuid>". Anything else, "cpu" included, is an error:
// deepprof profiles one NVIDIA GPU per session.
func ParseDevice(spec string) (Selection, error) {
	s := strings.TrimSpace(spec)
	switch {
	case s == "":
		return Selection{}, fmt.Errorf("device=%q: empty; use cuda, cuda:N, GPU-<uuid> or MIG-<uuid>", spec)
	case strings.EqualFold(s, "cpu"):
		return Selection{}, fmt.Errorf("device=%s: deepprof profiles NVIDIA GPUs, not the CPU; use cuda, cuda:N, GPU-<uuid> or MIG-<uuid>", s)
	case strings.ContainsAny(s, ", \t"):
		return Selection{}, fmt.Errorf("device=%q: one device per session; use cuda:N, GPU-<uuid> or MIG-<uuid>", spec)
	case strings.HasPrefix(s, "GPU-"), strings.HasPrefix(s, "MIG-"):
		if len(s) == len("GPU-") {
			return Selection{}, fmt.Errorf("device=%s: UUID missing after %q (nvidia-smi -L lists them)", s, s)
		}
		return Selection{UUID: s}, nil
	case strings.EqualFold(s, "cuda"):
		return Selection{}, nil
	}
	idx := s
	if len(s) > len("cuda:") && strings.EqualFold(s[:len("cuda:")], "cuda:") {
		idx = s[len("cuda:"):]
	}
	n, err := strconv.Atoi(idx)
	if err != nil || n < 0 || strings.HasPrefix(idx, "+") {
		return Selection{}, fmt.Errorf("device=%s: want cuda, cuda:N, N, GPU-<uuid> or MIG-<uuid> (N a device index from 0)", s)
	}
	return Selection{Index: n}, nil
}

// IsMIG reports whether the selection names a MIG instance.
func (s Selection) IsMIG() bool { return strings.HasPrefix(s.UUID, "MIG-") }

// CUDAVisibleDevices is the value the workload gets in CUDA_VISIBLE_DEVICES:
// the UUID when one was given, else the index.
func (s Selection) CUDAVisibleDevices() string {
	if s.UUID != "" {
		return s.UUID
	}
	return strconv.Itoa(s.Index)
}

// String returns the selection as ParseDevice accepts it: "cuda:N" or the UUID.
func (s Selection) String() string {
	if s.UUID != "" {
		return s.UUID
	}
	return "cuda:" + strconv.Itoa(s.Index)
}
