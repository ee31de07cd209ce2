package oracle

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const doc = `{
 "tool": "torch.profiler", "torch": "2.11", "activities": ["CUDA"], "repeats": 3, "domain": "", "device": "H100",
 "phases": [{"range": "prefill", "kernel_ms": 10, "launches": 100}, {"range": "decode_all", "kernel_ms": 30, "launches": 900}],
 "kernels": [{"name": "b", "total_ms": 5, "calls": 10}, {"name": "a", "total_ms": 20, "calls": 500}]
}`

func TestReadAndCheck(t *testing.T) {
	f, err := Read([]byte(doc), "o.json")
	require.NoError(t, err)
	assert.Equal(t, "a", mustTop(t, f))
	rows := Check(f, Measured{
		Phases:  map[string]Phase{"prefill": {KernelMS: 10.2, Launches: 100}, "decode_all": {KernelMS: 31.5, Launches: 900}},
		Kernels: map[string]Kernel{"a": {TotalMS: 20.5, Calls: 500}, "b": {TotalMS: 5, Calls: 11}},
	})
	require.Len(t, rows, 4)
	assert.True(t, rows[0].OK, "prefill +2 %% is within 3 %%")
	assert.False(t, rows[1].OK, "decode +5 %% is outside 3 %%")
	assert.Contains(t, rows[1].Why, "+5.0 %")
	assert.Equal(t, "kernel a", rows[2].What, "kernels in the oracle's order of time")
	assert.True(t, rows[2].OK)
	assert.Contains(t, rows[3].Why, "launches differ: oracle 10, timeline 11")
	assert.False(t, Passed(rows))
	assert.False(t, Passed(nil), "no rows is no check")
}

func mustTop(t *testing.T, f *Figures) string {
	t.Helper()
	rows := Check(f, Measured{})
	for _, r := range rows {
		assert.Equal(t, "not in the timeline", r.Why)
	}
	return rows[len(f.Phases)].What[len("kernel "):]
}

func TestReadErrorsArePositioned(t *testing.T) {
	for _, c := range []struct{ doc, want string }{
		{"{\n\"tool\": 1}", "o.json:2:"},
		{"{\n\"phases\": []}", "o.json:1: no phases"},
		{"{\"phases\": [\n{\"range\": \"p\", \"kernel_ms\": -1}]}", `o.json:2: phase "p"`},
		{"{\"phases\": [{\"range\": \"p\"}],\n\"kernels\": [\n{\"name\": \"k\", \"calls\": 0}]}", `o.json:3: kernel "k"`},
		{"{\"bogus\": 1}", "o.json:1:"},
		{"{\"phases\": [{\"range\": \"p\"}],\n\"overhead\": {\"profiled_ms\": [1, 0], \"plain_ms\": [1]}}", "o.json:2: overhead"},
		{"{\"phases\": [{\"range\": \"p\"}],\n\"overhead\": {\"profiled_ms\": [1], \"plain_ms\": [-3]}}", "o.json:2: overhead"},
	} {
		_, err := Read([]byte(c.doc), "o.json")
		if assert.Error(t, err, c.doc) {
			assert.Contains(t, err.Error(), c.want)
		}
	}
}
