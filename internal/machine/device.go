package machine

import (
	"fmt"
	"strconv"
	"strings"
)

// Selection is the GPUs a session's workload may use, as
// CUDA_VISIBLE_DEVICES names them: one CUDA device index or GPU or MIG UUID
// (ParseDevice, a device= setting), or the list of a CUDA_VISIBLE_DEVICES
// value (ParseVisible), or every GPU. The first device is the one profiled.
// The zero Selection is cuda:0.
type Selection struct {
	// Index is the CUDA/NVML device index; ignored when UUID is set.
	Index int `json:"index"`
	// UUID is a GPU UUID ("GPU-…") or a MIG instance UUID ("MIG-…"), as
	// nvidia-smi -L prints them; empty when selecting by index.
	UUID string `json:"uuid,omitempty"`
	// More are the devices after the first, in the order the CUDA
	// processes number them: CUDA_VISIBLE_DEVICES=1,0 is {Index: 1, More:
	// [{Index: 0}]}. Empty for one device; their own More and All are
	// ignored.
	More []Selection `json:"more,omitempty"`
	// All is CUDA_VISIBLE_DEVICES unset or empty: every GPU, in NVML's
	// index order. Index, UUID and More are then ignored.
	All bool `json:"all,omitempty"`
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

// ParseVisible parses a CUDA_VISIBLE_DEVICES value: "" (or unset) is every
// GPU; otherwise a comma-separated list of device indices, GPU UUIDs and
// MIG UUIDs, "1,0" or "GPU-…,GPU-…", each device once. Where CUDA quietly
// drops an entry it cannot read and every one after it, ParseVisible
// returns an error.
func ParseVisible(value string) (Selection, error) {
	if strings.TrimSpace(value) == "" {
		return Selection{All: true}, nil
	}
	var devs []Selection
	seen := map[string]bool{}
	for _, e := range strings.Split(value, ",") {
		e = strings.TrimSpace(e)
		var d Selection
		switch n, err := strconv.Atoi(e); {
		case strings.HasPrefix(e, "GPU-") && len(e) > len("GPU-"), strings.HasPrefix(e, "MIG-") && len(e) > len("MIG-"):
			d.UUID = e
		case err == nil && n >= 0 && !strings.HasPrefix(e, "+"):
			d.Index = n
		default:
			return Selection{}, fmt.Errorf("CUDA_VISIBLE_DEVICES=%s: %q: want a device index from 0, GPU-<uuid> or MIG-<uuid>, separated by commas", value, e)
		}
		if seen[d.CUDAVisibleDevices()] {
			return Selection{}, fmt.Errorf("CUDA_VISIBLE_DEVICES=%s: %s is named twice", value, e)
		}
		seen[d.CUDAVisibleDevices()] = true
		devs = append(devs, d)
	}
	if len(devs) > 1 {
		devs[0].More = devs[1:]
	}
	return devs[0], nil
}

// Devices returns the devices of the selection, first to last, each without
// More; nil for All.
func (s Selection) Devices() []Selection {
	if s.All {
		return nil
	}
	devs := []Selection{{Index: s.Index, UUID: s.UUID}}
	for _, d := range s.More {
		devs = append(devs, Selection{Index: d.Index, UUID: d.UUID})
	}
	return devs
}

// IsMIG reports whether the selection's first device is a MIG instance.
func (s Selection) IsMIG() bool { return !s.All && strings.HasPrefix(s.UUID, "MIG-") }

// CUDAVisibleDevices is the value the workload gets in CUDA_VISIBLE_DEVICES:
// each device's UUID when one was given, else its index, separated by
// commas; "" for All.
func (s Selection) CUDAVisibleDevices() string {
	var out []string
	for _, d := range s.Devices() {
		if d.UUID != "" {
			out = append(out, d.UUID)
		} else {
			out = append(out, strconv.Itoa(d.Index))
		}
	}
	return strings.Join(out, ",")
}

// String returns the selection as ParseDevice accepts it: "cuda:N" or the
// UUID. A list joins its devices with commas; All is "all GPUs".
func (s Selection) String() string {
	if s.All {
		return "all GPUs"
	}
	var out []string
	for _, d := range s.Devices() {
		if d.UUID != "" {
			out = append(out, d.UUID)
		} else {
			out = append(out, "cuda:"+strconv.Itoa(d.Index))
		}
	}
	return strings.Join(out, ",")
}
