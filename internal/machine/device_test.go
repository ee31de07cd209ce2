package machine

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseDevice(t *testing.T) {
	mig := "MIG-4f7c9a0e-1b2d-5e6f-8a9b-0c1d2e3f4a5b"
	gpu := "GPU-a534c9a9-6a07-4cfe-15db-62d7cae8e4d1"
	for _, tc := range []struct {
		spec, want, visible string
	}{
		{"cuda", "cuda:0", "0"},
		{"CUDA", "cuda:0", "0"},
		{"cuda:0", "cuda:0", "0"},
		{"cuda:1", "cuda:1", "1"},
		{" cuda:12 ", "cuda:12", "12"},
		{"0", "cuda:0", "0"},
		{"3", "cuda:3", "3"},
		{gpu, gpu, gpu},
		{mig, mig, mig},
		{"MIG-GPU-a534c9a9-6a07-4cfe-15db-62d7cae8e4d1/1/0", "MIG-GPU-a534c9a9-6a07-4cfe-15db-62d7cae8e4d1/1/0", "MIG-GPU-a534c9a9-6a07-4cfe-15db-62d7cae8e4d1/1/0"},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			sel, err := ParseDevice(tc.spec)
			require.NoError(t, err)
			assert.Equal(t, tc.want, sel.String())
			assert.Equal(t, tc.visible, sel.CUDAVisibleDevices())
			assert.Equal(t, tc.spec == mig || tc.want[:4] == "MIG-", sel.IsMIG())
		})
	}
}

func TestParseDeviceErrors(t *testing.T) {
	for _, tc := range []struct {
		spec, want string
	}{
		{"cpu", "device=cpu: deepprof profiles NVIDIA GPUs, not the CPU; use cuda, cuda:N, GPU-<uuid> or MIG-<uuid>"},
		{"", `device="": empty; use cuda, cuda:N, GPU-<uuid> or MIG-<uuid>`},
		{"cuda:-1", "device=cuda:-1: want cuda, cuda:N, N, GPU-<uuid> or MIG-<uuid> (N a device index from 0)"},
		{"cuda:", "device=cuda:: want cuda, cuda:N, N, GPU-<uuid> or MIG-<uuid> (N a device index from 0)"},
		{"cuda:x", "device=cuda:x: want cuda, cuda:N, N, GPU-<uuid> or MIG-<uuid> (N a device index from 0)"},
		{"+1", "device=+1: want cuda, cuda:N, N, GPU-<uuid> or MIG-<uuid> (N a device index from 0)"},
		{"gpu0", "device=gpu0: want cuda, cuda:N, N, GPU-<uuid> or MIG-<uuid> (N a device index from 0)"},
		{"0,1", `device="0,1": one device per session; use cuda:N, GPU-<uuid> or MIG-<uuid>`},
		{"MIG-", `device=MIG-: UUID missing after "MIG-" (nvidia-smi -L lists them)`},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			_, err := ParseDevice(tc.spec)
			require.EqualError(t, err, tc.want)
		})
	}
}

func TestSelectionZeroIsCUDA0(t *testing.T) {
	assert.Equal(t, "cuda:0", Selection{}.String())
	assert.Equal(t, "0", Selection{}.CUDAVisibleDevices())
}

func TestParseVisible(t *testing.T) {
	gpu := "GPU-a534c9a9-6a07-4cfe-15db-62d7cae8e4d1"
	mig := "MIG-4f7c9a0e-1b2d-5e6f-8a9b-0c1d2e3f4a5b"
	for _, tc := range []struct {
		value   string
		want    Selection
		str     string
		visible string
	}{
		{"", Selection{All: true}, "all GPUs", ""},
		{"  ", Selection{All: true}, "all GPUs", ""},
		{"1", Selection{Index: 1}, "cuda:1", "1"},
		{"1,0", Selection{Index: 1, More: []Selection{{Index: 0}}}, "cuda:1,cuda:0", "1,0"},
		{" 2, 0 ,1", Selection{Index: 2, More: []Selection{{Index: 0}, {Index: 1}}}, "cuda:2,cuda:0,cuda:1", "2,0,1"},
		{gpu + ",3", Selection{UUID: gpu, More: []Selection{{Index: 3}}}, gpu + ",cuda:3", gpu + ",3"},
		{mig, Selection{UUID: mig}, mig, mig},
	} {
		t.Run(tc.value, func(t *testing.T) {
			sel, err := ParseVisible(tc.value)
			require.NoError(t, err)
			assert.Equal(t, tc.want, sel)
			assert.Equal(t, tc.str, sel.String())
			assert.Equal(t, tc.visible, sel.CUDAVisibleDevices())
			assert.Equal(t, tc.value == mig, sel.IsMIG())
		})
	}
}

func TestParseVisibleErrors(t *testing.T) {
	for _, tc := range []struct {
		value, want string
	}{
		{"0,,1", `CUDA_VISIBLE_DEVICES=0,,1: "": want a device index from 0, GPU-<uuid> or MIG-<uuid>, separated by commas`},
		{"-1", `CUDA_VISIBLE_DEVICES=-1: "-1": want a device index from 0, GPU-<uuid> or MIG-<uuid>, separated by commas`},
		{"cuda:0", `CUDA_VISIBLE_DEVICES=cuda:0: "cuda:0": want a device index from 0, GPU-<uuid> or MIG-<uuid>, separated by commas`},
		{"+1", `CUDA_VISIBLE_DEVICES=+1: "+1": want a device index from 0, GPU-<uuid> or MIG-<uuid>, separated by commas`},
		{"GPU-", `CUDA_VISIBLE_DEVICES=GPU-: "GPU-": want a device index from 0, GPU-<uuid> or MIG-<uuid>, separated by commas`},
		{"0,1,0", "CUDA_VISIBLE_DEVICES=0,1,0: 0 is named twice"},
	} {
		t.Run(tc.value, func(t *testing.T) {
			_, err := ParseVisible(tc.value)
			require.EqualError(t, err, tc.want)
		})
	}
}

func TestSelectionDevices(t *testing.T) {
	sel := Selection{Index: 1, More: []Selection{{Index: 0, More: []Selection{{Index: 5}}}}}
	assert.Equal(t, []Selection{{Index: 1}, {Index: 0}}, sel.Devices())
	assert.Nil(t, Selection{All: true, Index: 3}.Devices())
	assert.Equal(t, []Selection{{}}, Selection{}.Devices())
}
