package cupti

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestIdentityFields: the host, node and rank fields the library writes are
// read as further header fields, and a device note gives the GPU's UUID; a
// file written before them reads as it did.
func TestIdentityFields(t *testing.T) {
	in := Magic + "\tpid=7\tppid=1\tcupti_api=1\tcuda_driver=1\tstart_ns=1\texe=/bin/x\thost=gpu-a\tnode=1\trank=3\tlocal_rank=1\n" +
		"X\tdevice.1\tGPU-6d3e350d-1384-1fc1-e989-d3d8230c67ba\n" +
		"X\tdevice.2\tunknown\n" +
		"E\t2\t0\n"
	r := NewReader(strings.NewReader(in), "f.tsv")
	var h *Header
	var notes []Note
	for r.Scan() {
		switch rec := r.Record().(type) {
		case *Header:
			h = rec
		case *Note:
			notes = append(notes, *rec)
		case *SyntaxError:
			t.Fatal(rec)
		}
	}
	require.NoError(t, r.Err())
	require.NotNil(t, h)
	assert.Equal(t, "gpu-a/node1", h.Machine())
	rank, ok := h.Rank()
	assert.True(t, ok)
	assert.Equal(t, 3, rank)
	assert.Equal(t, "1", h.Get(KeyLocalRank))
	require.Len(t, notes, 2)
	d, uuid, ok := DeviceUUID(notes[0])
	assert.True(t, ok)
	assert.Equal(t, uint32(1), d)
	assert.Equal(t, "GPU-6d3e350d-1384-1fc1-e989-d3d8230c67ba", uuid)
	_, _, ok = DeviceUUID(notes[1])
	assert.False(t, ok, "a UUID the library could not read")
	assert.Equal(t, notes[0].Key, DeviceNote(1, uuid).Key)

	old := Header{}
	assert.Equal(t, "", old.Machine())
	_, ok = old.Rank()
	assert.False(t, ok)
}
