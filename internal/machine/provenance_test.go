package machine

import (
	"encoding/json"
	"errors"
	"os"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/sebdah/goldie/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The facts of the H200 recorded in testdata/h200-recorded.json (see
// testdata/README.md).
const (
	h200UUID   = "GPU-a534c9a9-6a07-4cfe-15db-62d7cae8e4d1"
	h200Memory = 150754820096 // NVML's total, 143771 MiB; CUDA reports 150109880320
)

// h200 returns a mock of the recorded H200 at PCI bus busID.
func h200(uuid, busID string) *mock.Device {
	return &mock.Device{
		GetNameFunc: func() (string, nvml.Return) { return "NVIDIA H200", nvml.SUCCESS },
		GetUUIDFunc: func() (string, nvml.Return) { return uuid, nvml.SUCCESS },
		GetPciInfoFunc: func() (nvml.PciInfo, nvml.Return) {
			var p nvml.PciInfo
			copy(p.BusId[:], busID)
			return p, nvml.SUCCESS
		},
		GetMemoryInfoFunc: func() (nvml.Memory, nvml.Return) {
			return nvml.Memory{Total: h200Memory, Free: h200Memory - 512<<20, Used: 512 << 20}, nvml.SUCCESS
		},
		GetCudaComputeCapabilityFunc: func() (int, int, nvml.Return) { return 9, 0, nvml.SUCCESS },
		GetMaxClockInfoFunc: func(c nvml.ClockType) (uint32, nvml.Return) {
			switch c {
			case nvml.CLOCK_SM:
				return 1980, nvml.SUCCESS
			case nvml.CLOCK_MEM:
				return 3201, nvml.SUCCESS
			}
			return 0, nvml.ERROR_INVALID_ARGUMENT
		},
		GetClockInfoFunc: func(c nvml.ClockType) (uint32, nvml.Return) {
			if c == nvml.CLOCK_SM {
				return 375, nvml.SUCCESS
			}
			return 0, nvml.ERROR_INVALID_ARGUMENT
		},
		GetEnforcedPowerLimitFunc: func() (uint32, nvml.Return) { return 700000, nvml.SUCCESS },
		GetMigModeFunc: func() (int, int, nvml.Return) {
			return nvml.DEVICE_MIG_DISABLE, nvml.DEVICE_MIG_DISABLE, nvml.SUCCESS
		},
	}
}

// machine returns a mock NVML with driver 580.159.04, CUDA 13.0 and devs.
func machine(devs ...*mock.Device) *mock.Interface {
	return &mock.Interface{
		InitFunc:                       func() nvml.Return { return nvml.SUCCESS },
		ShutdownFunc:                   func() nvml.Return { return nvml.SUCCESS },
		SystemGetDriverVersionFunc:     func() (string, nvml.Return) { return "580.159.04", nvml.SUCCESS },
		SystemGetCudaDriverVersionFunc: func() (int, nvml.Return) { return 13000, nvml.SUCCESS },
		SystemGetNVMLVersionFunc:       func() (string, nvml.Return) { return "13.580.159.04", nvml.SUCCESS },
		DeviceGetCountFunc:             func() (int, nvml.Return) { return len(devs), nvml.SUCCESS },
		DeviceGetHandleByIndexFunc: func(n int) (nvml.Device, nvml.Return) {
			if n < 0 || n >= len(devs) {
				return nil, nvml.ERROR_INVALID_ARGUMENT
			}
			return devs[n], nvml.SUCCESS
		},
	}
}

// twoH200 returns a machine of two H200s; the second is a made-up twin.
func twoH200() *mock.Interface {
	return machine(
		h200(h200UUID, "00000000:00:06.0"),
		h200("GPU-0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0", "00000000:00:07.0"),
	)
}

// withMIG turns dev's MIG mode on, with instances of its 7 slots in use.
func withMIG(dev *mock.Device, instances int) *mock.Device {
	dev.GetMigModeFunc = func() (int, int, nvml.Return) {
		return nvml.DEVICE_MIG_ENABLE, nvml.DEVICE_MIG_ENABLE, nvml.SUCCESS
	}
	dev.GetMaxMigDeviceCountFunc = func() (int, nvml.Return) { return 7, nvml.SUCCESS }
	dev.GetMigDeviceHandleByIndexFunc = func(n int) (nvml.Device, nvml.Return) {
		if n < instances {
			return &mock.Device{}, nvml.SUCCESS
		}
		return nil, nvml.ERROR_NOT_FOUND
	}
	return dev
}

func marshal(t *testing.T, p Provenance) []byte {
	t.Helper()
	b, err := json.MarshalIndent(p, "", "  ")
	require.NoError(t, err)
	return append(b, '\n')
}

// TestCollectHealthyH200 checks the mock of the recorded H200 against the
// recording, then against golden/gpu/. Regenerate the golden with:
// go test ./internal/machine/ -run TestCollectHealthyH200 -update
func TestCollectHealthyH200(t *testing.T) {
	lib := machine(h200(h200UUID, "00000000:00:06.0"))
	p, err := Collect(lib, Selection{})
	require.NoError(t, err)
	got := marshal(t, p)

	recorded, err := os.ReadFile("testdata/h200-recorded.json")
	require.NoError(t, err)
	assert.JSONEq(t, string(recorded), string(recordedFields(t, recorded, got)), "mock differs from the real H200's recording")
	assert.Len(t, lib.InitCalls(), 1)
	assert.Len(t, lib.ShutdownCalls(), 1)

	g := goldie.New(t, goldie.WithFixtureDir("../../golden/gpu"), goldie.WithNameSuffix(""))
	g.Assert(t, "collect-h200.json", got)
}

// recordedFields returns got with only the top-level fields the recording
// has: it was made before Collect wrote used and topology.
func recordedFields(t *testing.T, recorded, got []byte) []byte {
	t.Helper()
	var rec, all map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(recorded, &rec))
	require.NoError(t, json.Unmarshal(got, &all))
	for k := range all {
		if _, ok := rec[k]; !ok {
			delete(all, k)
		}
	}
	b, err := json.Marshal(all)
	require.NoError(t, err)
	return b
}

func TestCollectSelectsSecondGPU(t *testing.T) {
	second := "GPU-0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0"
	for _, sel := range []Selection{{Index: 1}, {UUID: second}} {
		t.Run(sel.String(), func(t *testing.T) {
			p, err := Collect(twoH200(), sel)
			require.NoError(t, err)
			assert.Equal(t, 2, p.DeviceCount)
			require.Len(t, p.GPUs, 2)
			assert.Equal(t, p.GPUs[1], p.Selected)
			assert.Equal(t, 1, p.Selected.Index)
			assert.Equal(t, second, p.Selected.UUID)
			assert.Equal(t, "00000000:00:07.0", p.Selected.PCIBusID)
			assert.Equal(t, sel.CUDAVisibleDevices(), p.CUDAVisibleDevices)
			assert.Nil(t, p.MIGDevice)
		})
	}
}

func TestCollectNoSuchGPU(t *testing.T) {
	found := "2 GPUs found: 0 NVIDIA H200 (GPU-a534c9a9-6a07-4cfe-15db-62d7cae8e4d1), 1 NVIDIA H200 (GPU-0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0)"
	for _, tc := range []struct {
		sel  Selection
		want string
	}{
		{Selection{Index: 2}, "device=cuda:2: no such GPU; " + found},
		{Selection{UUID: "GPU-ffffffff-0000-0000-0000-000000000000"}, "device=GPU-ffffffff-0000-0000-0000-000000000000: no such GPU; " + found},
	} {
		t.Run(tc.sel.String(), func(t *testing.T) {
			lib := twoH200()
			_, err := Collect(lib, tc.sel)
			require.EqualError(t, err, tc.want)
			assert.Len(t, lib.ShutdownCalls(), 1)
		})
	}
}

func TestCollectMIGEnabledNeedsInstance(t *testing.T) {
	for _, sel := range []Selection{{}, {UUID: h200UUID}} {
		t.Run(sel.String(), func(t *testing.T) {
			_, err := Collect(machine(withMIG(h200(h200UUID, "00000000:00:06.0"), 2)), sel)
			require.EqualError(t, err, "GPU 0 (NVIDIA H200) has MIG enabled: choose a MIG instance with device=MIG-<uuid> (nvidia-smi -L lists them)")
		})
	}
}

func TestCollectMIGInstance(t *testing.T) {
	const migUUID = "MIG-4f7c9a0e-1b2d-5e6f-8a9b-0c1d2e3f4a5b"
	parent := withMIG(h200(h200UUID, "00000000:00:06.0"), 2)
	parent.GetIndexFunc = func() (int, nvml.Return) { return 0, nvml.SUCCESS }
	// A made-up 1g.18gb instance: H200 MIG values were not recorded.
	migDev := &mock.Device{
		GetNameFunc: func() (string, nvml.Return) { return "NVIDIA H200 MIG 1g.18gb", nvml.SUCCESS },
		GetMemoryInfoFunc: func() (nvml.Memory, nvml.Return) {
			return nvml.Memory{Total: 17716740096}, nvml.SUCCESS
		},
		GetDeviceHandleFromMigDeviceHandleFunc: func() (nvml.Device, nvml.Return) { return parent, nvml.SUCCESS },
	}
	lib := machine(parent)
	lib.DeviceGetHandleByUUIDFunc = func(uuid string) (nvml.Device, nvml.Return) {
		if uuid == migUUID {
			return migDev, nvml.SUCCESS
		}
		return nil, nvml.ERROR_NOT_FOUND
	}

	p, err := Collect(lib, Selection{UUID: migUUID})
	require.NoError(t, err)
	assert.Equal(t, &MIGDevice{UUID: migUUID, Name: "NVIDIA H200 MIG 1g.18gb", MemoryTotalBytes: 17716740096}, p.MIGDevice)
	assert.Equal(t, migUUID, p.CUDAVisibleDevices)
	assert.Equal(t, p.GPUs[0], p.Selected)
	assert.Equal(t, MIGInfo{Enabled: true, Instances: 2}, p.Selected.MIG)
	require.Len(t, lib.DeviceGetHandleByUUIDCalls(), 1)
	assert.Equal(t, migUUID, lib.DeviceGetHandleByUUIDCalls()[0].S)

	_, err = Collect(lib, Selection{UUID: "MIG-00000000-0000-0000-0000-000000000000"})
	require.EqualError(t, err, "nvml: DeviceGetHandleByUUID(MIG-00000000-0000-0000-0000-000000000000): ERROR_NOT_FOUND (1 GPU found: 0 NVIDIA H200 (GPU-a534c9a9-6a07-4cfe-15db-62d7cae8e4d1) MIG enabled)")
	assert.ErrorIs(t, err, nvml.ERROR_NOT_FOUND)
}

func TestCollectMIGPendingAfterReset(t *testing.T) {
	dev := h200(h200UUID, "00000000:00:06.0")
	dev.GetMigModeFunc = func() (int, int, nvml.Return) {
		return nvml.DEVICE_MIG_DISABLE, nvml.DEVICE_MIG_ENABLE, nvml.SUCCESS
	}
	p, err := Collect(machine(dev), Selection{})
	require.NoError(t, err)
	assert.Equal(t, MIGInfo{Pending: true}, p.Selected.MIG)
}

func TestCollectNotSupported(t *testing.T) {
	dev := h200(h200UUID, "00000000:00:06.0")
	notSupported := func(nvml.ClockType) (uint32, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
	dev.GetMaxClockInfoFunc = notSupported
	dev.GetClockInfoFunc = notSupported
	dev.GetEnforcedPowerLimitFunc = func() (uint32, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
	dev.GetMigModeFunc = func() (int, int, nvml.Return) { return 0, 0, nvml.ERROR_NOT_SUPPORTED }

	p, err := Collect(machine(dev), Selection{})
	require.NoError(t, err)
	assert.Equal(t, []string{
		"gpus[0].max_sm_clock_mhz",
		"gpus[0].max_mem_clock_mhz",
		"gpus[0].sm_clock_mhz",
		"gpus[0].power_limit_w",
		"gpus[0].mig",
	}, p.Unsupported)
	g := p.Selected
	assert.Zero(t, g.MaxSMClockMHz)
	assert.Zero(t, g.MaxMemClockMHz)
	assert.Zero(t, g.SMClockMHz)
	assert.Zero(t, g.PowerLimitW)
	assert.Zero(t, g.MIG)
	assert.Equal(t, "NVIDIA H200", g.Name)
	assert.Equal(t, uint64(h200Memory), g.MemoryTotalBytes)
}

func TestCollectNoDriver(t *testing.T) {
	for _, ret := range []nvml.Return{nvml.ERROR_LIBRARY_NOT_FOUND, nvml.ERROR_DRIVER_NOT_LOADED} {
		t.Run(ret.Error(), func(t *testing.T) {
			lib := &mock.Interface{InitFunc: func() nvml.Return { return ret }}
			_, err := Collect(lib, Selection{})
			require.EqualError(t, err, "nvml: Init: "+ret.Error()+": no NVIDIA GPU found: no NVIDIA driver or NVML library (libnvidia-ml.so.1); deepprof profiles NVIDIA GPUs: run it on a GPU machine")
			assert.ErrorIs(t, err, ErrNoGPU)
			assert.ErrorIs(t, err, ret)
			assert.Empty(t, lib.ShutdownCalls())
		})
	}

	lib := &mock.Interface{InitFunc: func() nvml.Return { return nvml.ERROR_NO_PERMISSION }}
	_, err := Collect(lib, Selection{})
	require.EqualError(t, err, "nvml: Init: ERROR_NO_PERMISSION")
	assert.False(t, errors.Is(err, ErrNoGPU))

	_, err = Collect(machine(), Selection{})
	require.EqualError(t, err, "nvml: DeviceGetCount() = 0: no NVIDIA GPU found; deepprof profiles NVIDIA GPUs: run it on a GPU machine")
	assert.ErrorIs(t, err, ErrNoGPU)
}

// TestCollectFailureNamesCall breaks one NVML call at a time: Collect stops
// there with an error naming the call and wrapping its Return, and still
// shuts NVML down.
func TestCollectFailureNamesCall(t *testing.T) {
	for _, tc := range []struct {
		want string
		ret  nvml.Return
		fail func(lib *mock.Interface, devs []*mock.Device)
	}{
		{"nvml: SystemGetDriverVersion(): ERROR_UNKNOWN", nvml.ERROR_UNKNOWN, func(lib *mock.Interface, _ []*mock.Device) {
			lib.SystemGetDriverVersionFunc = func() (string, nvml.Return) { return "", nvml.ERROR_UNKNOWN }
		}},
		{"nvml: SystemGetCudaDriverVersion(): ERROR_FUNCTION_NOT_FOUND", nvml.ERROR_FUNCTION_NOT_FOUND, func(lib *mock.Interface, _ []*mock.Device) {
			lib.SystemGetCudaDriverVersionFunc = func() (int, nvml.Return) { return 0, nvml.ERROR_FUNCTION_NOT_FOUND }
		}},
		{"nvml: DeviceGetHandleByIndex(1): ERROR_GPU_IS_LOST", nvml.ERROR_GPU_IS_LOST, func(lib *mock.Interface, devs []*mock.Device) {
			lib.DeviceGetHandleByIndexFunc = func(n int) (nvml.Device, nvml.Return) {
				if n == 1 {
					return nil, nvml.ERROR_GPU_IS_LOST
				}
				return devs[n], nvml.SUCCESS
			}
		}},
		{"nvml: DeviceGetName(0): ERROR_UNKNOWN", nvml.ERROR_UNKNOWN, func(_ *mock.Interface, devs []*mock.Device) {
			devs[0].GetNameFunc = func() (string, nvml.Return) { return "", nvml.ERROR_UNKNOWN }
		}},
		{"nvml: DeviceGetMemoryInfo(1): ERROR_NO_PERMISSION", nvml.ERROR_NO_PERMISSION, func(_ *mock.Interface, devs []*mock.Device) {
			devs[1].GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) { return nvml.Memory{}, nvml.ERROR_NO_PERMISSION }
		}},
		{"nvml: DeviceGetMaxClockInfo(0, CLOCK_MEM): ERROR_GPU_IS_LOST", nvml.ERROR_GPU_IS_LOST, func(_ *mock.Interface, devs []*mock.Device) {
			devs[0].GetMaxClockInfoFunc = func(c nvml.ClockType) (uint32, nvml.Return) {
				if c == nvml.CLOCK_MEM {
					return 0, nvml.ERROR_GPU_IS_LOST
				}
				return 1980, nvml.SUCCESS
			}
		}},
		{"nvml: DeviceGetEnforcedPowerLimit(1): ERROR_UNKNOWN", nvml.ERROR_UNKNOWN, func(_ *mock.Interface, devs []*mock.Device) {
			devs[1].GetEnforcedPowerLimitFunc = func() (uint32, nvml.Return) { return 0, nvml.ERROR_UNKNOWN }
		}},
		{"nvml: DeviceGetMigDeviceHandleByIndex(0, 1): ERROR_UNKNOWN", nvml.ERROR_UNKNOWN, func(_ *mock.Interface, devs []*mock.Device) {
			withMIG(devs[0], 1)
			devs[0].GetMigDeviceHandleByIndexFunc = func(n int) (nvml.Device, nvml.Return) {
				if n == 1 {
					return nil, nvml.ERROR_UNKNOWN
				}
				return &mock.Device{}, nvml.SUCCESS
			}
		}},
		{"nvml: Shutdown: ERROR_UNINITIALIZED", nvml.ERROR_UNINITIALIZED, func(lib *mock.Interface, _ []*mock.Device) {
			lib.ShutdownFunc = func() nvml.Return { return nvml.ERROR_UNINITIALIZED }
		}},
	} {
		t.Run(tc.want, func(t *testing.T) {
			devs := []*mock.Device{
				h200(h200UUID, "00000000:00:06.0"),
				h200("GPU-0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0", "00000000:00:07.0"),
			}
			lib := machine(devs...)
			tc.fail(lib, devs)
			p, err := Collect(lib, Selection{})
			require.EqualError(t, err, tc.want)
			assert.ErrorIs(t, err, tc.ret)
			assert.Zero(t, p)
			assert.Len(t, lib.ShutdownCalls(), 1)
		})
	}
}
