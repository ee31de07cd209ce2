package input

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMaybe(t *testing.T) {
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	_, err := zw.Write([]byte(strings.Repeat("ID,Kernel Name\n", 200)))
	require.NoError(t, err)
	require.NoError(t, zw.Close())

	r, err := Maybe(bufio.NewReader(bytes.NewReader(z.Bytes())))
	require.NoError(t, err)
	b, err := io.ReadAll(r)
	require.NoError(t, err)
	assert.Equal(t, strings.Repeat("ID,Kernel Name\n", 200), string(b))

	plain, err := Maybe(bufio.NewReader(strings.NewReader("ID,Kernel Name\n")))
	require.NoError(t, err)
	b, _ = io.ReadAll(plain)
	assert.Equal(t, "ID,Kernel Name\n", string(b), "not gzip: read as it is")

	// synthetic: the stream cut in half
	cut, err := Maybe(bufio.NewReader(bytes.NewReader(z.Bytes()[:z.Len()/2])))
	require.NoError(t, err)
	_, err = io.ReadAll(cut)
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	assert.Contains(t, err.Error(), "the gzip data ends early (the file was cut short)")
}
