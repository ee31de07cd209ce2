package machine

import (
	"fmt"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/sebdah/goldie/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The topology mocks are made up: no multi-GPU machine was recorded.

// h200s returns n H200 mocks at PCI buses 00000000:0<6+k>.0, the first with
// the recorded UUID.
func h200s(n int) []*mock.Device {
	devs := make([]*mock.Device, n)
	for k := range devs {
		uuid := fmt.Sprintf("GPU-0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f%d", k)
		if k == 0 {
			uuid = h200UUID
		}
		devs[k] = h200(uuid, fmt.Sprintf("00000000:%02X:00.0", 6+k))
	}
	return devs
}

// wire gives every dev NVLinks, PCIe ancestors and P2P statuses: links[a][b]
// of dev a's links lead to dev b (the first ones, in b order; the rest are
// inactive), level is every pair's common ancestor and p2p every status.
// Remote buses are written in lower case with a 4-digit domain, as NVML may.
func wire(devs []*mock.Device, links [][]int, level nvml.GpuTopologyLevel, p2p nvml.GpuP2PStatus) {
	for a, dev := range devs {
		var remote []int // remote[n] is the dev link n leads to; -1 inactive
		for b, n := range links[a] {
			for range n {
				remote = append(remote, b)
			}
		}
		dev.GetNvLinkStateFunc = func(n int) (nvml.EnableState, nvml.Return) {
			if n >= nvml.NVLINK_MAX_LINKS {
				return 0, nvml.ERROR_INVALID_ARGUMENT
			}
			if n < len(remote) {
				return nvml.FEATURE_ENABLED, nvml.SUCCESS
			}
			return nvml.FEATURE_DISABLED, nvml.SUCCESS
		}
		dev.GetNvLinkRemoteDeviceTypeFunc = func(int) (nvml.IntNvLinkDeviceType, nvml.Return) {
			return nvml.NVLINK_DEVICE_TYPE_GPU, nvml.SUCCESS
		}
		dev.GetNvLinkRemotePciInfoFunc = func(n int) (nvml.PciInfo, nvml.Return) {
			var p nvml.PciInfo
			copy(p.BusId[:], fmt.Sprintf("0000:%02x:00.0", 6+remote[n]))
			return p, nvml.SUCCESS
		}
		dev.GetTopologyCommonAncestorFunc = func(nvml.Device) (nvml.GpuTopologyLevel, nvml.Return) { return level, nvml.SUCCESS }
		dev.GetP2PStatusFunc = func(nvml.Device, nvml.GpuP2PCapsIndex) (nvml.GpuP2PStatus, nvml.Return) { return p2p, nvml.SUCCESS }
	}
}

// pcieOnly makes devs GPUs without NVLink behind one host bridge: NVLink
// calls are not supported, P2P over NVLink is not supported, P2P reads are.
func pcieOnly(devs []*mock.Device) {
	for _, dev := range devs {
		dev.GetNvLinkStateFunc = func(int) (nvml.EnableState, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
		dev.GetTopologyCommonAncestorFunc = func(nvml.Device) (nvml.GpuTopologyLevel, nvml.Return) {
			return nvml.TOPOLOGY_HOSTBRIDGE, nvml.SUCCESS
		}
		dev.GetP2PStatusFunc = func(_ nvml.Device, i nvml.GpuP2PCapsIndex) (nvml.GpuP2PStatus, nvml.Return) {
			if i == nvml.P2P_CAPS_INDEX_NVLINK {
				return nvml.P2P_STATUS_NOT_SUPPORTED, nvml.SUCCESS
			}
			return nvml.P2P_STATUS_OK, nvml.SUCCESS
		}
	}
}

func visible(t *testing.T, value string) Selection {
	t.Helper()
	sel, err := ParseVisible(value)
	require.NoError(t, err)
	return sel
}

// TestCollectNVLinkPair: two H200s with 12 of their 18 NVLinks joined to
// each other. Regenerate the golden with:
// go test ./internal/machine/ -run TestCollectNVLinkPair -update
func TestCollectNVLinkPair(t *testing.T) {
	devs := h200s(2)
	wire(devs, [][]int{{0, 12}, {12, 0}}, nvml.TOPOLOGY_NODE, nvml.P2P_STATUS_OK)
	p, err := Collect(machine(devs...), visible(t, "0,1"))
	require.NoError(t, err)
	assert.Equal(t, "0,1", p.CUDAVisibleDevices)
	assert.Equal(t, []GPU{p.GPUs[0], p.GPUs[1]}, p.Used)
	assert.Equal(t, p.GPUs[0], p.Selected)
	assert.Equal(t, []Link{{GPUs: [2]int{0, 1}, Topo: "NV12", CommonAncestor: "numa_node", NVLinks: 12,
		P2PNVLink: "ok", P2PRead: "ok", Line: "GPU 0 – GPU 1: 12 NVLinks (NV12)"}}, p.Topology)
	assert.Empty(t, p.Unsupported)

	g := goldie.New(t, goldie.WithFixtureDir("../../golden/gpu"), goldie.WithNameSuffix(""))
	g.Assert(t, "collect-2xh200-nvlink12.json", marshal(t, p))
}

// TestCollectNVLinkCounts counts only the links that reach the other GPU
// of the pair, and spells one link in the singular.
func TestCollectNVLinkCounts(t *testing.T) {
	devs := h200s(3)
	wire(devs, [][]int{{0, 1, 4}, {1, 0, 0}, {4, 0, 0}}, nvml.TOPOLOGY_SYSTEM, nvml.P2P_STATUS_OK)
	p, err := Collect(machine(devs...), visible(t, ""))
	require.NoError(t, err)
	var lines []string
	for _, l := range p.Topology {
		lines = append(lines, l.Line)
	}
	assert.Equal(t, []string{
		"GPU 0 – GPU 1: 1 NVLink (NV1)",
		"GPU 0 – GPU 2: 4 NVLinks (NV4)",
		"GPU 1 – GPU 2: no NVLink; PCIe across NUMA nodes (SYS)",
	}, lines)
}

// TestCollectNVSwitch: every link of both GPUs goes to an NVSwitch (HGX
// boards), so each reaches the other: NV18, as nvidia-smi topo -m says.
func TestCollectNVSwitch(t *testing.T) {
	devs := h200s(2)
	wire(devs, [][]int{{0, 18}, {18, 0}}, nvml.TOPOLOGY_SYSTEM, nvml.P2P_STATUS_OK)
	for _, dev := range devs {
		dev.GetNvLinkRemoteDeviceTypeFunc = func(int) (nvml.IntNvLinkDeviceType, nvml.Return) {
			return nvml.NVLINK_DEVICE_TYPE_SWITCH, nvml.SUCCESS
		}
		dev.GetNvLinkRemotePciInfoFunc = nil // a switch's bus is not read
	}
	p, err := Collect(machine(devs...), visible(t, "1,0"))
	require.NoError(t, err)
	require.Len(t, p.Topology, 1)
	assert.Equal(t, 18, p.Topology[0].NVLinks)
	assert.Equal(t, "GPU 0 – GPU 1: 18 NVLinks (NV18)", p.Topology[0].Line)
}

func TestCollectPCIePair(t *testing.T) {
	devs := h200s(2)
	pcieOnly(devs)
	p, err := Collect(machine(devs...), visible(t, "0,1"))
	require.NoError(t, err)
	assert.Equal(t, []Link{{GPUs: [2]int{0, 1}, Topo: "PHB", CommonAncestor: "host_bridge",
		P2PNVLink: "not supported", P2PRead: "ok", Line: "GPU 0 – GPU 1: no NVLink; PCIe through a host bridge (PHB)"}}, p.Topology)
	assert.Equal(t, []string{"topology[0].nvlinks"}, p.Unsupported)
}

// TestCollectTopologyNotSupported: a query NVML does not support leaves its
// field zero and says so in Unsupported.
func TestCollectTopologyNotSupported(t *testing.T) {
	devs := h200s(2)
	pcieOnly(devs)
	devs[0].GetTopologyCommonAncestorFunc = func(nvml.Device) (nvml.GpuTopologyLevel, nvml.Return) {
		return 0, nvml.ERROR_NOT_SUPPORTED
	}
	devs[0].GetP2PStatusFunc = func(nvml.Device, nvml.GpuP2PCapsIndex) (nvml.GpuP2PStatus, nvml.Return) {
		return 0, nvml.ERROR_NOT_SUPPORTED
	}
	p, err := Collect(machine(devs...), visible(t, "0,1"))
	require.NoError(t, err)
	assert.Equal(t, []Link{{GPUs: [2]int{0, 1}, Line: "GPU 0 – GPU 1: no NVLink; PCIe path unknown"}}, p.Topology)
	assert.Equal(t, []string{"topology[0].common_ancestor", "topology[0].nvlinks", "topology[0].p2p_nvlink", "topology[0].p2p_read"}, p.Unsupported)
}

// TestCollectVisibleOrder: CUDA_VISIBLE_DEVICES=1,0 makes GPU 1 the CUDA
// device 0, the one profiled; the pair is still listed by NVML index.
func TestCollectVisibleOrder(t *testing.T) {
	devs := h200s(2)
	wire(devs, [][]int{{0, 18}, {18, 0}}, nvml.TOPOLOGY_SYSTEM, nvml.P2P_STATUS_OK)
	for _, value := range []string{"1,0", "GPU-0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f1,0"} {
		t.Run(value, func(t *testing.T) {
			p, err := Collect(machine(devs...), visible(t, value))
			require.NoError(t, err)
			assert.Equal(t, value, p.CUDAVisibleDevices)
			assert.Equal(t, []GPU{p.GPUs[1], p.GPUs[0]}, p.Used)
			assert.Equal(t, p.GPUs[1], p.Selected)
			require.Len(t, p.Topology, 1)
			assert.Equal(t, [2]int{0, 1}, p.Topology[0].GPUs)
			assert.Equal(t, "NV18", p.Topology[0].Topo)
		})
	}
}

// TestCollectAllGPUs: CUDA_VISIBLE_DEVICES unset uses every GPU, in index
// order, and links every pair.
func TestCollectAllGPUs(t *testing.T) {
	devs := h200s(3)
	pcieOnly(devs)
	p, err := Collect(machine(devs...), visible(t, ""))
	require.NoError(t, err)
	assert.Equal(t, "", p.CUDAVisibleDevices)
	assert.Equal(t, p.GPUs, p.Used)
	assert.Equal(t, p.GPUs[0], p.Selected)
	var pairs [][2]int
	for _, l := range p.Topology {
		pairs = append(pairs, l.GPUs)
	}
	assert.Equal(t, [][2]int{{0, 1}, {0, 2}, {1, 2}}, pairs)
	assert.Equal(t, []string{"topology[0].nvlinks", "topology[1].nvlinks", "topology[2].nvlinks"}, p.Unsupported)
}

// TestCollectOneGPUNoTopology: one used GPU has no pairs: an empty list,
// not null, and no topology call.
func TestCollectOneGPUNoTopology(t *testing.T) {
	for _, sel := range []Selection{{Index: 1}, visible(t, "1")} {
		devs := h200s(2) // no topology mocks: a call would panic
		p, err := Collect(machine(devs...), sel)
		require.NoError(t, err)
		assert.Equal(t, []GPU{p.GPUs[1]}, p.Used)
		require.NotNil(t, p.Topology)
		assert.Empty(t, p.Topology)
		assert.Contains(t, string(marshal(t, p)), `"topology": [],`)
	}
}

func TestCollectVisibleErrors(t *testing.T) {
	found := "3 GPUs found: 0 NVIDIA H200 (GPU-a534c9a9-6a07-4cfe-15db-62d7cae8e4d1), 1 NVIDIA H200 (GPU-0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f1), 2 NVIDIA H200 (GPU-0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f2)"
	for _, tc := range []struct {
		value, want string
	}{
		{"0,3", "CUDA_VISIBLE_DEVICES=0,3: 3: no such GPU; " + found},
		{"GPU-ffffffff-0000-0000-0000-000000000000,0", "CUDA_VISIBLE_DEVICES=GPU-ffffffff-0000-0000-0000-000000000000,0: GPU-ffffffff-0000-0000-0000-000000000000: no such GPU; " + found},
		{"0," + h200UUID, "CUDA_VISIBLE_DEVICES=0," + h200UUID + ": " + h200UUID + ": GPU 0 is named twice"},
	} {
		t.Run(tc.value, func(t *testing.T) {
			lib := machine(h200s(3)...)
			_, err := Collect(lib, visible(t, tc.value))
			require.EqualError(t, err, tc.want)
			assert.Len(t, lib.ShutdownCalls(), 1)
		})
	}

	devs := h200s(2)
	withMIG(devs[1], 1)
	_, err := Collect(machine(devs...), visible(t, ""))
	require.EqualError(t, err, "GPU 1 (NVIDIA H200) has MIG enabled: choose a MIG instance with device=MIG-<uuid> (nvidia-smi -L lists them)")
}

// TestCollectTopologyFailureNamesCall breaks one topology call at a time:
// Collect stops with an error naming the call and both GPUs, wrapping its
// Return, and still shuts NVML down.
func TestCollectTopologyFailureNamesCall(t *testing.T) {
	for _, tc := range []struct {
		want string
		ret  nvml.Return
		fail func(devs []*mock.Device)
	}{
		{"nvml: DeviceGetTopologyCommonAncestor(0, 1): ERROR_UNKNOWN", nvml.ERROR_UNKNOWN, func(devs []*mock.Device) {
			devs[0].GetTopologyCommonAncestorFunc = func(nvml.Device) (nvml.GpuTopologyLevel, nvml.Return) { return 0, nvml.ERROR_UNKNOWN }
		}},
		{"nvml: DeviceGetNvLinkState(1, 3): ERROR_GPU_IS_LOST", nvml.ERROR_GPU_IS_LOST, func(devs []*mock.Device) {
			devs[1].GetNvLinkStateFunc = func(n int) (nvml.EnableState, nvml.Return) {
				if n == 3 {
					return 0, nvml.ERROR_GPU_IS_LOST
				}
				return nvml.FEATURE_ENABLED, nvml.SUCCESS
			}
		}},
		{"nvml: DeviceGetNvLinkState(0, 0): ERROR_INVALID_ARGUMENT", nvml.ERROR_INVALID_ARGUMENT, func(devs []*mock.Device) {
			devs[0].GetNvLinkStateFunc = func(int) (nvml.EnableState, nvml.Return) { return 0, nvml.ERROR_INVALID_ARGUMENT }
		}},
		{"nvml: DeviceGetNvLinkRemoteDeviceType(0, 0): ERROR_UNKNOWN", nvml.ERROR_UNKNOWN, func(devs []*mock.Device) {
			devs[0].GetNvLinkRemoteDeviceTypeFunc = func(int) (nvml.IntNvLinkDeviceType, nvml.Return) { return 0, nvml.ERROR_UNKNOWN }
		}},
		{"nvml: DeviceGetNvLinkRemotePciInfo(0, 0): ERROR_NO_PERMISSION", nvml.ERROR_NO_PERMISSION, func(devs []*mock.Device) {
			devs[0].GetNvLinkRemotePciInfoFunc = func(int) (nvml.PciInfo, nvml.Return) { return nvml.PciInfo{}, nvml.ERROR_NO_PERMISSION }
		}},
		{"nvml: DeviceGetP2PStatus(0, 1, P2P_CAPS_INDEX_READ): ERROR_UNKNOWN", nvml.ERROR_UNKNOWN, func(devs []*mock.Device) {
			devs[0].GetP2PStatusFunc = func(_ nvml.Device, i nvml.GpuP2PCapsIndex) (nvml.GpuP2PStatus, nvml.Return) {
				if i == nvml.P2P_CAPS_INDEX_READ {
					return 0, nvml.ERROR_UNKNOWN
				}
				return nvml.P2P_STATUS_OK, nvml.SUCCESS
			}
		}},
	} {
		t.Run(tc.want, func(t *testing.T) {
			devs := h200s(2)
			wire(devs, [][]int{{0, 18}, {18, 0}}, nvml.TOPOLOGY_SYSTEM, nvml.P2P_STATUS_OK)
			tc.fail(devs)
			lib := machine(devs...)
			p, err := Collect(lib, visible(t, "1,0"))
			require.EqualError(t, err, tc.want)
			assert.ErrorIs(t, err, tc.ret)
			assert.Zero(t, p)
			assert.Len(t, lib.ShutdownCalls(), 1)
		})
	}
}

func TestBusID(t *testing.T) {
	for in, want := range map[string]string{
		"00000000:18:00.0": "0000:18:00.0",
		"0000:18:00.0":     "0000:18:00.0",
		"00000000:9A:00.0": "0000:9a:00.0",
		"odd":              "odd",
	} {
		assert.Equal(t, want, busID(in), in)
	}
}
