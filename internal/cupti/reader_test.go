package cupti_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/llm-perf-opt/deepprof/internal/timeline"

	"github.com/google/go-cmp/cmp"
	"github.com/sebdah/goldie/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/cupti"
	"github.com/llm-perf-opt/deepprof/internal/synth"
)

// Recordings every reader test (and the fuzzer's seeds) runs on. The
// synthetic ones are written by package synth (TestSyntheticRecordings
// keeps them in step with it); the real ones were written by deepprof's
// CUPTI library on an H100 (fixtures/README.md says how each was made).
var recordings = []struct {
	name, path string
	canonical  bool // written by cupti.Writer: write(read(x)) == x byte for byte
}{
	{"synthetic-4242", "testdata/synthetic-4242.tsv", true},
	{"synthetic-4243-truncated", "testdata/synthetic-4243-truncated.tsv", false},
	{"synthetic-4244-nothreads", "testdata/synthetic-4244-nothreads.tsv", true},
	{"h100-nvtx-ranges-ranges-631", realDir + "h100-nvtx-ranges/ranges/cupti-631.tsv", false},
	{"h100-nvtx-ranges-domains-643", realDir + "h100-nvtx-ranges/domains/cupti-643.tsv", false},
	{"h100-nvtx-ranges-twoproc-655", realDir + "h100-nvtx-ranges/twoproc/cupti-655.tsv", false},
	{"h100-nvtx-ranges-twoproc-656-header-only", realDir + "h100-nvtx-ranges/twoproc/cupti-656.tsv", false},
	{"h100-nvtx-ranges-twoproc-exec-676", realDir + "h100-nvtx-ranges/twoproc-exec/cupti-676.tsv", false},
	{"h100-nvtx-ranges-twoproc-exec-677", realDir + "h100-nvtx-ranges/twoproc-exec/cupti-677.tsv", false},
	{"h100-nvtx-more-all-697", realDir + "h100-nvtx-more/all/cupti-697.tsv", false},
	{"h100-nvtx-more-killed-713", realDir + "h100-nvtx-more/killed/cupti-713.tsv", false},
	{"h100-torch-nvtx-727", realDir + "h100-torch-nvtx/cupti-727.tsv", false},
}

// realDir holds the real recordings.
const realDir = "../../fixtures/cupti/"

// TestRealRecordingsListed keeps the table above in step with the folder:
// every real recording is a row.
func TestRealRecordingsListed(t *testing.T) {
	files, err := filepath.Glob(realDir + "*/*/*.tsv")
	require.NoError(t, err)
	more, err := filepath.Glob(realDir + "*/*.tsv")
	require.NoError(t, err)
	files = append(files, more...)
	require.NotEmpty(t, files)
	listed := map[string]bool{}
	for _, rc := range recordings {
		listed[rc.path] = true
	}
	for _, f := range files {
		assert.True(t, listed[filepath.ToSlash(f)], "%s is not a row of recordings", f)
	}
}

// syntheticConfigs are the configurations of the committed synthetic files.
func syntheticConfigs() map[string]synth.Config {
	trunc := synth.Small(4243)
	trunc.Truncate = true
	plain := synth.Small(4244)
	plain.SideThread = false
	plain.Device = 1
	return map[string]synth.Config{
		"synthetic-4242.tsv":           synth.Small(4242),
		"synthetic-4243-truncated.tsv": trunc,
		"synthetic-4244-nothreads.tsv": plain,
	}
}

// TestSyntheticRecordings checks that the committed synthetic recordings are
// what package synth writes (-update rewrites them).
func TestSyntheticRecordings(t *testing.T) {
	g := goldie.New(t, goldie.WithFixtureDir("testdata"), goldie.WithNameSuffix(""))
	for name, c := range syntheticConfigs() {
		var b bytes.Buffer
		require.NoError(t, synth.Write(&b, c))
		g.Assert(t, name, b.Bytes())
	}
}

type readResult struct {
	header     *cupti.Header
	records    []cupti.Record
	errs       []*cupti.SyntaxError
	end        *cupti.End
	truncation string
	err        error
	count      int64 // Reader.Records
}

// sameError compares errors by their text.
func sameError(a, b error) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Error() == b.Error()
}

// TestParallelReaderAgrees reads every recording, and malformed files, in
// sequence and in parallel (batches of one line to many, 2 and 3 workers):
// the same records, errors, line numbers, end and truncation.
func TestParallelReaderAgrees(t *testing.T) {
	inputs := map[string][]byte{}
	for _, rc := range recordings {
		data, err := os.ReadFile(rc.path)
		require.NoError(t, err)
		inputs[rc.name] = data
	}
	k := "K\t100\t200\t0\t1\t7\t3\t1,1,1\t32,1,1\t16\t0\t0\t_Z1kv\tk()\n"
	inputs["after the E line"] = []byte(header + k + "E\t1\t0\n" + k + "Z\t1\n\nE\t1\t0\n")
	inputs["bad lines"] = []byte(header + k + "\n" + "KK\t1\n" + cupti.Magic + "\tpid=1\n" + "K\t1\n" + "Q\n" + k)
	inputs["too long"] = []byte(header + k + "X\tk\t" + strings.Repeat("a", cupti.MaxLine+10) + "\n" + k + "E\t2\t0\n")
	inputs["unfinished last line"] = []byte(header + k + k[:20])
	inputs["header only"] = []byte(header)
	inputs["empty"] = nil
	for name, data := range inputs {
		want := read(data, name)
		for _, workers := range []int{2, 3} {
			for _, size := range []int{1, 64, 4096, 1 << 20} {
				for _, reuse := range []bool{false, true} {
					got := readWith(data, name, func(r io.Reader, name string) *cupti.Reader {
						rd := cupti.NewParallelReaderSized(r, name, workers, size)
						if reuse {
							rd.ReuseRecords()
						}
						return rd
					})
					if d := cmp.Diff(want, got, cmp.AllowUnexported(readResult{}), cmp.Comparer(sameError)); d != "" {
						t.Errorf("%s, %d workers, batches of %d bytes, reuse %v:\n%s", name, workers, size, reuse, d)
					}
				}
			}
		}
	}
}

// TestParallelReaderClosed stops reading a parallel read early: Close ends
// its goroutines, and Scan then says no more.
func TestParallelReaderClosed(t *testing.T) {
	data, err := os.ReadFile(recordings[0].path)
	require.NoError(t, err)
	before := runtime.NumGoroutine()
	r := cupti.NewParallelReaderSized(bytes.NewReader(data), "x.tsv", 4, 64)
	for range 3 {
		require.True(t, r.Scan())
	}
	assert.Greater(t, runtime.NumGoroutine(), before)
	r.Close()
	assert.False(t, r.Scan())
	// Not assert.Eventually: it counts its own goroutines.
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	assert.LessOrEqual(t, runtime.NumGoroutine(), before, "goroutines left")
}

func read(data []byte, name string) readResult {
	return readWith(data, name, cupti.NewReader)
}

// readWith is read through a Reader that newReader makes.
func readWith(data []byte, name string, newReader func(io.Reader, string) *cupti.Reader) readResult {
	in, err := timeline.OpenRecords(bytes.NewReader(data), name)
	if err != nil {
		return readResult{err: err}
	}
	r := newReader(in, name)
	defer r.Close()
	var res readResult
	for r.Scan() {
		switch rec := r.Record().(type) {
		case *cupti.SyntaxError:
			res.errs = append(res.errs, rec)
		case *cupti.Header:
			res.header = rec
		default:
			res.records = append(res.records, copyRecord(rec))
		}
	}
	res.err = r.Err()
	res.end = r.End()
	res.truncation = r.Truncation()
	res.count = r.Records()
	return res
}

// copyRecord is a copy of a record a read may reuse (Reader.ReuseRecords).
func copyRecord(rec cupti.Record) cupti.Record {
	switch r := rec.(type) {
	case *cupti.KernelRecord:
		c := *r
		return &c
	case *cupti.API:
		c := *r
		return &c
	case *cupti.NVTX:
		c := *r
		return &c
	}
	return rec
}

func write(t testing.TB, res readResult) []byte {
	var b bytes.Buffer
	w := cupti.NewWriter(&b)
	if res.header != nil {
		require.NoError(t, w.Write(res.header))
	}
	for _, rec := range res.records {
		require.NoError(t, w.Write(rec))
	}
	require.NoError(t, w.Flush())
	return b.Bytes()
}

// noLines compares records without their line numbers.
var noLines = cmp.FilterPath(func(p cmp.Path) bool {
	sf, ok := p.Last().(cmp.StructField)
	return ok && sf.Name() == "Line"
}, cmp.Ignore())

// dump is a canonical text summary of a read, for golden files.
func dump(res readResult) string {
	var b strings.Builder
	h := res.header
	fmt.Fprintf(&b, "header: pid=%d ppid=%d cupti_api=%d cuda_driver=%d start_ns=%d exe=%q extra=%v\n",
		h.PID, h.PPID, h.CUPTIAPI, h.CUDADriver, h.StartNS, h.Exe, h.Extra)
	counts := map[string]int{}
	var order []string
	for _, rec := range res.records {
		k := fmt.Sprintf("%T", rec)
		if counts[k] == 0 {
			order = append(order, k)
		}
		counts[k]++
	}
	for _, k := range order {
		fmt.Fprintf(&b, "%s: %d\n", k, counts[k])
	}
	fmt.Fprintf(&b, "syntax errors: %d\n", len(res.errs))
	if res.end != nil {
		fmt.Fprintf(&b, "end: records=%d dropped=%d (line %d)\n", res.end.Records, res.end.Dropped, res.end.Line)
	}
	fmt.Fprintf(&b, "truncation: %q\n", res.truncation)
	for _, rec := range res.records {
		if k, ok := rec.(*cupti.KernelRecord); ok {
			fmt.Fprintf(&b, "first kernel: line %d, %d ns, device %d, stream %d, grid %s, block %s, %q\n",
				k.Line, k.End-k.Start, k.Device, k.Stream, k.Grid, k.Block, k.Name())
			break
		}
	}
	return b.String()
}

func TestRecordings(t *testing.T) {
	g := goldie.New(t, goldie.WithFixtureDir("../../golden/cupti"), goldie.WithNameSuffix(".txt"))
	for _, rc := range recordings {
		t.Run(rc.name, func(t *testing.T) {
			data, err := os.ReadFile(rc.path)
			require.NoError(t, err)
			res := read(data, rc.path)
			require.NoError(t, res.err)
			require.Empty(t, res.errs)
			require.NotNil(t, res.header)
			g.Assert(t, rc.name, []byte(dump(res)))

			// The E line counts the records before it.
			if res.end != nil {
				assert.Equal(t, uint64(len(res.records)-1), res.end.Records)
			}

			// Write, then read: the same records.
			out := write(t, res)
			if rc.canonical {
				assert.Equal(t, string(data), string(out), "a canonical file is written back byte for byte")
			}
			again := read(out, "rewritten")
			require.NoError(t, again.err)
			require.Empty(t, again.errs)
			if d := cmp.Diff(res.records, again.records, noLines); d != "" {
				t.Fatalf("records changed through write-then-read (-read +reread):\n%s", d)
			}
			if d := cmp.Diff(res.header, again.header, noLines); d != "" {
				t.Fatalf("header changed (-read +reread):\n%s", d)
			}

			// Gzip is recognized by its magic bytes.
			var z bytes.Buffer
			zw := gzip.NewWriter(&z)
			_, err = zw.Write(data)
			require.NoError(t, err)
			require.NoError(t, zw.Close())
			gz := read(z.Bytes(), rc.path+".gz")
			require.NoError(t, gz.err)
			assert.Empty(t, cmp.Diff(res.records, gz.records), "gzip input reads the same")
		})
	}
}

func TestTruncated(t *testing.T) {
	data, err := os.ReadFile("testdata/synthetic-4243-truncated.tsv")
	require.NoError(t, err)
	require.NotEqual(t, byte('\n'), data[len(data)-1], "the file ends in the middle of a line")
	res := read(data, "x.tsv")
	require.NoError(t, res.err, "a file cut short is not an error")
	assert.Nil(t, res.end)
	assert.Contains(t, res.truncation, "no E line")
	assert.Contains(t, res.truncation, "unfinished last line of")

	// Every complete line before the cut is read.
	complete := bytes.Count(data, []byte("\n"))
	assert.Len(t, res.records, complete-1, "all complete lines but the header")

	// Cut at every line end: each prefix reads without error, as far as it goes.
	lines := bytes.SplitAfter(data, []byte("\n"))
	for i := 1; i < len(lines); i += 7 {
		prefix := bytes.Join(lines[:i], nil)
		r := read(prefix, "prefix.tsv")
		require.NoError(t, r.err)
		require.Empty(t, r.errs)
		assert.Len(t, r.records, i-1)
		assert.NotEmpty(t, r.truncation)
	}

	// An empty file and a file holding half a header: cut short, nothing read.
	for _, in := range []string{"", "#deepprof-cupti/1\tpid=1"} {
		r := read([]byte(in), "e.tsv")
		require.NoError(t, r.err)
		assert.Nil(t, r.header)
		assert.Contains(t, r.truncation, "empty")
	}
}

const header = "#deepprof-cupti/1\tpid=7\tppid=1\tcupti_api=1\tcuda_driver=2\tstart_ns=100\texe=/bin/x\n"

// Each malformed input below is SYNTHETIC: one bad line after a good header.
func TestMalformedLines(t *testing.T) {
	kernel := func(start, end string) string {
		return "K\t" + start + "\t" + end + "\t0\t1\t7\t3\t1,1,1\t32,1,1\t16\t0\t0\t_Z1kv\tk()"
	}
	tests := []struct{ name, line, want string }{
		{"NaN start", kernel("NaN", "200"), `x.tsv:2: K record: start "NaN": not a decimal integer`},
		{"negative start", kernel("-5", "200"), `x.tsv:2: K record: start "-5": not a decimal integer`},
		{"float", kernel("1.5e9", "2e9"), `x.tsv:2: K record: start "1.5e9": not a decimal integer`},
		{"negative duration", kernel("300", "200"), "x.tsv:2: K record: end 200 is before start 300 (a negative duration)"},
		{"huge timestamp", kernel("100", "99999999999999999999"), `x.tsv:2: K record: end "99999999999999999999": out of range (largest 9223372036854775807)`},
		{"timestamp over int64", kernel("100", "9223372036854775808"), `x.tsv:2: K record: end "9223372036854775808": out of range (largest 9223372036854775807)`},
		{"huge device", "K\t1\t2\t4294967296\t1\t7\t3\t1,1,1\t32,1,1\t16\t0\t0\t_Z1kv\tk()", `x.tsv:2: K record: device "4294967296": out of range (largest 4294967295)`},
		{"empty field", "K\t1\t2\t\t1\t7\t3\t1,1,1\t32,1,1\t16\t0\t0\t_Z1kv\tk()", `x.tsv:2: K record: device "": empty`},
		{"bad grid", "K\t1\t2\t0\t1\t7\t3\t1,1\t32,1,1\t16\t0\t0\t_Z1kv\tk()", `x.tsv:2: K record: grid "1,1": not x,y,z`},
		{"grid with spaces", "K\t1\t2\t0\t1\t7\t3\t1, 1, 1\t32,1,1\t16\t0\t0\t_Z1kv\tk()", `x.tsv:2: K record: grid "1, 1, 1": not x,y,z: not a decimal integer`},
		{"no kernel name", "K\t1\t2\t0\t1\t7\t3\t1,1,1\t32,1,1\t16\t0\t0\t\t", "x.tsv:2: K record: kernel has neither a mangled nor a demangled name"},
		{"too few fields", "K\t1\t2\t0", "x.tsv:2: K (kernel) record has 4 fields, want 14"},
		{"too many fields", kernel("1", "2") + "\textra", "x.tsv:2: K (kernel) record has 15 fields, want 14"},
		{"bad escape", "K\t1\t2\t0\t1\t7\t3\t1,1,1\t32,1,1\t16\t0\t0\t_Z1kv\tk\\x()", `x.tsv:2: K record: demangled_name: bad escape \x in a string field (only \\ \t \n \r are escapes)`},
		{"lone backslash", "X\tkey\tvalue\\", `x.tsv:2: X record: value: string field ends in a lone backslash`},
		{"CRLF", "X\tkey\tvalue\r", `x.tsv:2: X record: value: raw CR in a string field (CR is written \r; CRLF line endings are not the format's)`},
		{"copy kind", "C\t1\t2\t0\t1\t7\t3\tsideways\t8", `x.tsv:2: C record: copy_kind "sideways" is not one of HtoD DtoH DtoD HtoH PtoP other`},
		{"memcpy bytes NaN", "C\t1\t2\t0\t1\t7\t3\tHtoD\tNaN", `x.tsv:2: C record: bytes "NaN": not a decimal integer`},
		{"memset negative", "S\t5\t4\t0\t1\t7\t3\t8", "x.tsv:2: S record: end 4 is before start 5 (a negative duration)"},
		{"api kind", "A\t1\t2\t9\t3\tcuda\t211\tcudaLaunchKernel", `x.tsv:2: A record: api "cuda" is not runtime or driver`},
		{"api negative thread", "A\t1\t2\t-9\t3\truntime\t211\tcudaLaunchKernel", `x.tsv:2: A record: thread_id "-9": not a decimal integer`},
		{"api end before start", "A\t10\t2\t9\t3\truntime\t211\tcudaLaunchKernel", "x.tsv:2: A record: end 2 is before start 10 (a negative duration)"},
		{"nvtx kind", "N\tpush_ex\t1\t9\t0\t\tprefill", `x.tsv:2: N record: NVTX kind "push_ex" is not one of push pop start end mark`},
		{"nvtx NaN ts", "N\tpush\tNaN\t9\t0\t\tprefill", `x.tsv:2: N record: ts "NaN": not a decimal integer`},
		{"nvtx fields", "N\tpush\t1\t9\t0\tprefill", "x.tsv:2: N (NVTX) record has 6 fields, want 7"},
		{"window backwards", "W\t7\t300\t200", "x.tsv:2: W record: end 200 is before start 300 (a negative duration)"},
		{"window fields", "W\t7\t300", "x.tsv:2: W (window) record has 3 fields, want 4"},
		{"metric NaN", "M\t7\tdram__bytes.sum\tnan", `x.tsv:2: M record: value "nan": not a finite number`},
		{"metric Inf", "M\t7\tdram__bytes.sum\t-inf", `x.tsv:2: M record: value "-inf": not a finite number`},
		{"metric text", "M\t7\tdram__bytes.sum\tmany", `x.tsv:2: M record: value "many": strconv.ParseFloat: parsing "many": invalid syntax`},
		{"metric no name", "M\t7\t\t1.5", "x.tsv:2: M record: metric has an empty name"},
		{"metric fields", "M\t7\t1.5", "x.tsv:2: M (metric) record has 3 fields, want 4"},
		{"metric correlation", "M\t-7\tdram__bytes.sum\t1.5", `x.tsv:2: M record: correlation "-7": not a decimal integer`},
		{"note empty key", "X\t\tvalue", "x.tsv:2: X record: note has an empty key"},
		{"end NaN", "E\tNaN\t0", `x.tsv:2: E record: records "NaN": not a decimal integer`},
		{"unknown type", "Q\t1", `x.tsv:2: record type "Q" is not one of K C S A N M W X E`},
		{"long type", "KERNEL\t1", `x.tsv:2: record type "KERNEL" is not one of K C S A N M W X E`},
		{"empty line", "", "x.tsv:2: empty line"},
		{"second header", strings.TrimSuffix(header, "\n"), "x.tsv:2: a second header line"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := read([]byte(header+tt.line+"\nX\tafter\tok\nE\t1\t0\n"), "x.tsv")
			require.NoError(t, res.err, "a bad line is not fatal")
			require.Len(t, res.errs, 1)
			assert.Equal(t, tt.want, res.errs[0].Error())
			assert.Len(t, res.records, 2, "the lines after it are read")
			assert.Empty(t, res.truncation)
		})
	}
}

func TestRecordAfterEnd(t *testing.T) {
	res := read([]byte(header+"E\t0\t0\nX\tlate\t1\n"), "x.tsv")
	require.Len(t, res.errs, 1)
	assert.Equal(t, "x.tsv:3: X record after the E line, which ends the file", res.errs[0].Error())
}

func TestBadHeader(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"not a record file", "ID,Kernel Name\n", "x.tsv:1: first line is not a #deepprof-cupti/1 header: not a deepprof-cupti record file"},
		{"empty first line", "\nE\t0\t0\n", "x.tsv:1: first line is empty: not a deepprof-cupti record file (it starts with a #deepprof-cupti/1 header)"},
		{"other version", "#deepprof-cupti/2\tpid=1\n", `x.tsv:1: format "#deepprof-cupti/2" is not one this reader knows (#deepprof-cupti/1)`},
		{"missing key", "#deepprof-cupti/1\tpid=7\tppid=1\tcupti_api=1\tcuda_driver=2\texe=/bin/x\n", "x.tsv:1: header has no start_ns= field"},
		{"NaN pid", "#deepprof-cupti/1\tpid=NaN\n", `x.tsv:1: header pid="NaN": not a decimal integer`},
		{"not key=value", "#deepprof-cupti/1\tpid\n", `x.tsv:1: header field "pid" is not key=value`},
		{"twice", "#deepprof-cupti/1\tpid=1\tpid=2\n", `x.tsv:1: header key "pid" appears twice`},
		{"bad escape", "#deepprof-cupti/1\texe=a\\qb\n", `x.tsv:1: header: bad escape \q in a string field (only \\ \t \n \r are escapes)`},
		{"record first", "K\t1\t2\n", "x.tsv:1: first line is not a #deepprof-cupti/1 header: not a deepprof-cupti record file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := read([]byte(tt.in), "x.tsv")
			require.Error(t, res.err)
			assert.Equal(t, tt.want, res.err.Error())
			assert.Empty(t, res.records)
		})
	}
}

func TestHeaderExtrasAndEscapes(t *testing.T) {
	in := "#deepprof-cupti/1\tpid=7\tppid=1\tcupti_api=1\tcuda_driver=2\tstart_ns=100\texe=/opt/my\\tapp\\\\bin\tlauncher=torchrun\tnote=a=b\n" +
		"N\tpush\t5\t9\t0\tLLM\ttab\\there\\nline\\rcr\\\\bs\nE\t1\t0\n"
	res := read([]byte(in), "x.tsv")
	require.NoError(t, res.err)
	require.Empty(t, res.errs)
	assert.Equal(t, "/opt/my\tapp\\bin", res.header.Exe)
	assert.Equal(t, []cupti.KeyValue{{Key: "launcher", Value: "torchrun"}, {Key: "note", Value: "a=b"}}, res.header.Extra)
	assert.Equal(t, "tab\there\nline\rcr\\bs", res.records[0].(*cupti.NVTX).Name)
	assert.Equal(t, in, string(write(t, res)), "written back as read")
}

func TestLongLine(t *testing.T) {
	long := "X\tk\t" + strings.Repeat("a", cupti.MaxLine+10)
	ok := "X\tk\t" + strings.Repeat("b", 200_000) // longer than the read buffer, under MaxLine
	res := read([]byte(header+long+"\n"+ok+"\nE\t1\t0\n"), "x.tsv")
	require.NoError(t, res.err)
	require.Len(t, res.errs, 1)
	assert.Equal(t, fmt.Sprintf("x.tsv:2: line longer than %d bytes", cupti.MaxLine), res.errs[0].Error())
	require.Len(t, res.records, 2)
	assert.Len(t, res.records[0].(*cupti.Note).Value, 200_000)
}

func FuzzReader(f *testing.F) {
	for _, rc := range recordings {
		data, err := os.ReadFile(rc.path)
		require.NoError(f, err)
		f.Add(data)
		// Short pieces too, so the fuzzer mutates single records.
		lines := bytes.SplitAfter(data, []byte("\n"))
		for i := 1; i < len(lines) && i < 12; i++ {
			f.Add(append([]byte(header), lines[i]...))
		}
	}
	f.Add([]byte(header + "K\tNaN\t1\n"))
	f.Add([]byte(header + "W\t7\t100\t900\nE\t1\t0\n"))
	f.Add([]byte(header + "M\t7\tsm__throughput.avg.pct_of_peak_sustained_elapsed\t75.000000000000014\nE\t1\t0\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		res := read(data, "fuzz.tsv")
		par := readWith(data, "fuzz.tsv", func(r io.Reader, name string) *cupti.Reader {
			return cupti.NewParallelReaderSized(r, name, 3, 32)
		})
		if d := cmp.Diff(res, par, cmp.AllowUnexported(readResult{}), cmp.Comparer(sameError)); d != "" {
			t.Fatalf("the parallel read differs:\n%s", d)
		}
		if res.err != nil {
			return
		}
		for _, e := range res.errs {
			if e.Line < 1 {
				t.Fatalf("error without a line: %v", e)
			}
		}
		for _, rec := range res.records {
			switch r := rec.(type) {
			case *cupti.KernelRecord:
				if r.End < r.Start {
					t.Fatalf("accepted a negative duration: %+v", r)
				}
			case *cupti.API:
				if r.End < r.Start {
					t.Fatalf("accepted a negative duration: %+v", r)
				}
			}
		}
		if res.header == nil {
			return
		}
		out := write(t, res)
		again := read(out, "rewritten")
		if again.err != nil || len(again.errs) > 0 {
			t.Fatalf("rewritten file does not read: %v %v\n%q", again.err, again.errs, out)
		}
		if d := cmp.Diff(res.records, again.records, noLines); d != "" {
			t.Fatalf("records changed through write-then-read:\n%s", d)
		}
		if d := cmp.Diff(res.header, again.header, noLines); d != "" {
			t.Fatalf("header changed through write-then-read:\n%s", d)
		}
		if (res.end == nil) != (again.end == nil) {
			t.Fatalf("E line lost or gained")
		}
		// A canonical file is its own rewrite.
		if again2 := write(t, again); !bytes.Equal(out, again2) {
			t.Fatalf("writer not canonical:\n%q\n%q", out, again2)
		}
	})
}

// BenchmarkReader reads a SYNTHETIC recording of 200,000 kernels (written by
// package synth in memory, never committed).
func BenchmarkReader(b *testing.B) {
	c := synth.Small(9000)
	c.PrefillKernels, c.DecodeSteps, c.StepKernels = 1000, 19_900, 10
	var buf bytes.Buffer
	require.NoError(b, synth.Write(&buf, c))
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		r := cupti.NewReader(bytes.NewReader(data), "bench.tsv")
		n := 0
		for r.Scan() {
			n++
		}
		if r.Err() != nil || r.End() == nil {
			b.Fatal(r.Err(), r.Truncation())
		}
	}
}

// TestMetricRecord reads an M line as the library writes it (%.17g) and
// writes it back in the canonical form, the same value.
func TestMetricRecord(t *testing.T) {
	res := read([]byte(header+"M\t42\tsm__throughput.avg.pct_of_peak_sustained_elapsed\t75.000000000000014\nE\t1\t0\n"), "m.tsv")
	require.NoError(t, res.err)
	require.Empty(t, res.errs)
	require.Len(t, res.records, 2, "the M line and the E line")
	m, ok := res.records[0].(*cupti.Metric)
	require.True(t, ok, "%T", res.records[0])
	assert.Equal(t, uint32(42), m.Correlation)
	assert.Equal(t, "sm__throughput.avg.pct_of_peak_sustained_elapsed", m.Name)
	assert.Equal(t, 75.000000000000014, m.Value)
	again := read(write(t, res), "again")
	require.Empty(t, again.errs)
	assert.Equal(t, m.Value, again.records[0].(*cupti.Metric).Value)
}

// TestReuseRecords reads SYNTHETIC kernel lines in small batches with
// ReuseRecords: every record is right when Scan returns it, and the
// records are made in the memory of lines returned before: a few hundred
// places hold the 2,000 records (each its own without ReuseRecords).
func TestReuseRecords(t *testing.T) {
	var b strings.Builder
	b.WriteString(header)
	const n = 2000
	for i := range n {
		fmt.Fprintf(&b, "K\t%d\t%d\t0\t1\t7\t%d\t1,1,1\t32,1,1\t16\t0\t0\t_Z1kv\tk()\n", 1000+i, 1001+i, i+1)
	}
	for _, reuse := range []bool{false, true} {
		in, err := timeline.OpenRecords(strings.NewReader(b.String()), "x.tsv")
		require.NoError(t, err)
		r := cupti.NewParallelReaderSized(in, "x.tsv", 2, 256)
		if reuse {
			r.ReuseRecords()
		}
		places := map[*cupti.KernelRecord]bool{}
		i := 0
		for r.Scan() {
			k, ok := r.Record().(*cupti.KernelRecord)
			if !ok {
				continue
			}
			require.Equal(t, int64(1000+i), k.Start, "kernel %d as Scan returns it", i)
			places[k] = true
			i++
		}
		require.NoError(t, r.Err())
		r.Close()
		require.Equal(t, n, i)
		if reuse {
			assert.Less(t, len(places), n/4, "records made in the memory of those returned before")
		} else {
			assert.Len(t, places, n)
		}
	}
}
