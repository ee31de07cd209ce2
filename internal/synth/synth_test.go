package synth

import (
	"bytes"
	"io"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRepeatRows(t *testing.T) {
	page, err := os.ReadFile("../../fixtures/ncu/h200-workload-crash-partial/raw.csv")
	require.NoError(t, err)
	lines := bytes.SplitAfter(page, []byte("\n"))
	r, err := RepeatRows(page, int64(3*len(page)))
	require.NoError(t, err)
	out, err := io.ReadAll(r)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, len(out), 3*len(page))
	assert.True(t, bytes.HasPrefix(out, append(append([]byte{}, lines[0]...), lines[1]...)), "header and units first")
	got := bytes.SplitAfter(out, []byte("\n"))
	got = got[:len(got)-1]
	rows := len(lines) - 3 // header, units, and the empty piece after the last newline
	require.Greater(t, len(got)-2, 2*rows)
	for i, l := range got[2:] {
		assert.True(t, bytes.HasPrefix(l, []byte(`"`+itoa(i)+`",`)), "row %d gets ID %d", i, i)
		orig := lines[2+i%rows]
		assert.Equal(t, string(orig[bytes.Index(orig, []byte(`",`)):]), string(l[bytes.Index(l, []byte(`",`)):]))
	}
	_, err = RepeatRows([]byte("\"ID\"\n"), 10)
	assert.Error(t, err)
}

func itoa(i int) string { return strconv.Itoa(i) }
