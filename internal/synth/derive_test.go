package synth

import (
	"bytes"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/cupti"
)

// The derived recordings read as the shapes they stand for: the real
// recording's kernels without its ranges; nothing but the header and end.
func TestDerived(t *testing.T) {
	rec, err := os.ReadFile("../../fixtures/cupti/h100-nvtx-ranges/ranges/cupti-631.tsv")
	require.NoError(t, err)
	count := func(b []byte) map[byte]int {
		n := map[byte]int{}
		for line := range bytes.Lines(b) {
			n[line[0]]++
		}
		return n
	}
	all := count(rec)
	require.Positive(t, all['N'])

	no := WithoutNVTX(rec)
	n := count(no)
	assert.Zero(t, n['N'])
	assert.Equal(t, all['K'], n['K'])
	assert.Equal(t, all['A'], n['A'])
	assert.Equal(t, all['E'], n['E'])

	idle := WithoutActivity(rec)
	assert.Equal(t, map[byte]int{'#': 1, 'X': all['X'], 'E': 1}, count(idle))

	for name, b := range map[string][]byte{"without NVTX": no, "without activity": idle} {
		r := cupti.NewReader(bytes.NewReader(b), name)
		for r.Scan() {
			_, bad := r.Record().(*cupti.SyntaxError)
			assert.False(t, bad, "%s: %v", name, r.Record())
		}
		assert.NoError(t, r.Err(), name)
		assert.NotNil(t, r.End(), "%s: the end line is kept", name)
	}
}
