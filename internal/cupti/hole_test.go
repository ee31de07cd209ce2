package cupti

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// zeroes reads as many zero bytes as asked, counting them: a sparse hole.
type zeroes struct{ n, read int64 }

func (z *zeroes) Read(p []byte) (int, error) {
	if z.read >= z.n {
		return 0, io.EOF
	}
	k := min(int64(len(p)), z.n-z.read)
	clear(p[:k])
	z.read += k
	return int(k), nil
}

// TestHoleStopsTheRead (issue 53): a record file with a 10 GB hole of
// zeros after its records (SYNTHETIC: a header, a note, then the hole)
// is read up to MaxRun of the hole, not to its end (34-83 s before); the
// records before it are kept and the file is said cut, with the line.
func TestHoleStopsTheRead(t *testing.T) {
	hole := &zeroes{n: 10 << 30}
	in := io.MultiReader(strings.NewReader(Magic+"\tpid=7\tppid=1\tcupti_api=1\tcuda_driver=2\tstart_ns=100\texe=/bin/x\nX\tapi\t3 launch calls traced\n"), hole)
	r := NewReader(in, "cupti-7.tsv")
	n := 0
	for r.Scan() {
		n++
	}
	require.NoError(t, r.Err())
	assert.Equal(t, 2, n, "the header and the note before the hole")
	assert.LessOrEqual(t, hole.read, int64(MaxRun+1<<20), "stops within MaxRun of the hole")
	assert.Equal(t, "line 3 runs past 64 MiB with no line end (a hole of zeros, or not a record file): reading stopped there, what came before is kept", r.Truncation())
}

// TestNamesKeepInvalidBytesApart (issue 53): two kernels whose names differ
// only in a byte that is not UTF-8 (SYNTHETIC) read as two valid UTF-8
// names, the byte written as text; before, JSON and the renderers made
// each U+FFFD, one name, and baseline and diff refused the run ("listed
// twice") after report called it complete.
func TestNamesKeepInvalidBytesApart(t *testing.T) {
	k := func(corr int, name string) string {
		return fmt.Sprintf("K\t100\t200\t0\t1\t7\t%d\t1,1,1\t32,1,1\t16\t0\t0\t%s\t%s\n", corr, name, name)
	}
	in := Magic + "\tpid=7\tppid=1\tcupti_api=1\tcuda_driver=2\tstart_ns=100\texe=/bin/x\n" + k(1, "gemm\xfe") + k(2, "gemm\xff") + k(3, "gemm")
	r := NewReader(strings.NewReader(in), "cupti-7.tsv")
	var names []string
	for r.Scan() {
		if kr, ok := r.Record().(*KernelRecord); ok {
			names = append(names, kr.Demangled)
			assert.True(t, utf8.ValidString(kr.Mangled))
		}
	}
	require.NoError(t, r.Err())
	assert.Equal(t, []string{`gemm\xfe`, `gemm\xff`, "gemm"}, names)
}
