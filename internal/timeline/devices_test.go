package timeline

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/cupti"
)

// records is a SYNTHETIC record file: a header with the further fields
// extra, the notes, then one kernel on each of devices.
func records(pid int, extra string, notes []string, devices ...int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\tpid=%d\tppid=1\tcupti_api=1\tcuda_driver=1\tstart_ns=1\texe=/bin/x%s\n", cupti.Magic, pid, extra)
	for _, n := range notes {
		b.WriteString("X\t" + n + "\n")
	}
	for i, d := range devices {
		fmt.Fprintf(&b, "K\t%d\t%d\t%d\t1\t7\t%d\t1,1,1\t32,1,1\t8\t0\t0\t_Z1kv\tk()\n", 1000+10*i, 1005+10*i, d, i+1)
	}
	fmt.Fprintf(&b, "E\t%d\t0\n", len(notes)+len(devices))
	return b.String()
}

func build(t *testing.T, files ...string) *Timeline {
	t.Helper()
	b := NewBuilder()
	for i, f := range files {
		require.NoError(t, b.Read(strings.NewReader(f), fmt.Sprintf("cupti-%d.tsv", i)))
	}
	tl, err := b.Build()
	require.NoError(t, err)
	return tl
}

// devicesOf is each process's kernel devices, by process in the
// timeline's order.
func devicesOf(tl *Timeline) [][]uint32 {
	var out [][]uint32
	for _, p := range tl.Processes {
		var ds []uint32
		for i := range p.Kernels {
			ds = append(ds, p.Fn(&p.Kernels[i]).Device)
		}
		out = append(out, ds)
	}
	return out
}

// TestNumberDevices: the GPUs of a run are numbered across its processes,
// by rank, only where the ordinals do not tell them apart.
func TestNumberDevices(t *testing.T) {
	// Each rank sees only its own GPU, as device 0.
	tl := build(t,
		records(10, "\thost=h\trank=1", []string{"device.0\tGPU-b"}, 0),
		records(11, "\thost=h\trank=0", []string{"device.0\tGPU-a"}, 0))
	require.Len(t, tl.GPUs, 2)
	assert.Equal(t, GPU{Device: 0, UUID: "GPU-a", Machine: "h", Ranks: []int{0}}, tl.GPUs[0])
	assert.Equal(t, GPU{Device: 1, UUID: "GPU-b", Machine: "h", Ranks: []int{1}}, tl.GPUs[1])
	assert.Equal(t, [][]uint32{{1}, {0}}, devicesOf(tl), "process 10 is rank 1: its device 0 is GPU 1")

	// Two machines whose processes share an id and an ordinal, no UUID
	// read: told apart by machine.
	tl = build(t,
		records(10, "\thost=a\tnode=0\trank=0", []string{"device.0\tunknown"}, 0),
		records(10, "\thost=b\tnode=1\trank=1", []string{"device.0\tunknown"}, 0))
	require.Len(t, tl.Processes, 2)
	require.Len(t, tl.GPUs, 2)
	assert.Equal(t, "", tl.GPUs[0].UUID)
	assert.Equal(t, []int{0}, tl.GPUs[0].Ranks)
	assert.Equal(t, [][]uint32{{0}, {1}}, devicesOf(tl))

	// One machine, every rank seeing every GPU, each ordinal one GPU: the
	// ordinals stay (a rank may touch another's GPU).
	tl = build(t,
		records(10, "\thost=h\trank=0", []string{"device.0\tGPU-a", "device.1\tGPU-b"}, 0, 1),
		records(11, "\thost=h\trank=1", []string{"device.1\tGPU-b"}, 1))
	assert.Nil(t, tl.GPUs)
	assert.Equal(t, [][]uint32{{0, 1}, {1}}, devicesOf(tl))

	// Records written before the library named machines and GPUs.
	tl = build(t, records(10, "", nil, 0, 1), records(11, "", nil, 0))
	assert.Nil(t, tl.GPUs)
	assert.Equal(t, [][]uint32{{0, 1}, {0}}, devicesOf(tl))
}
