package ncu_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/input"
	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/ncu"
)

const fixtures = "../../fixtures/"

func readFixture(t testing.TB, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(fixtures + rel)
	require.NoError(t, err)
	if strings.HasSuffix(rel, ".gz") {
		zr, err := gzip.NewReader(bytes.NewReader(b))
		require.NoError(t, err)
		var out bytes.Buffer
		_, err = out.ReadFrom(zr)
		require.NoError(t, err)
		return out.Bytes()
	}
	return b
}

// readAll returns every launch and every row error, and the fatal error.
func readAll(data []byte, name string) (launches []*model.Launch, rowErrs []*model.SyntaxError, err error) {
	r := ncu.NewReader(bytes.NewReader(data), name, ncu.Options{})
	for r.Scan() {
		switch rec := r.Record().(type) {
		case *model.Launch:
			launches = append(launches, rec)
		case *model.SyntaxError:
			rowErrs = append(rowErrs, rec)
		}
	}
	return launches, rowErrs, r.Err()
}

// lines splits a real export into lines (its rows hold no line breaks).
func lines(data []byte) []string { return strings.SplitAfter(string(data), "\n") }

const raw = "ncu/h200-llama-decode-basic/raw.csv"

// Each malformed input below is SYNTHETIC: made here, by code, from a real
// export, so the rest of the file is what ncu really writes.
func TestMalformedInput(t *testing.T) {
	real := readFixture(t, raw)
	ls := lines(real)
	header := ls[0]

	tests := []struct {
		name     string
		input    string
		fatal    string // wanted Err(), "" for none
		rowErr   string // wanted first row error, "" for none
		launches int    // launches still read
	}{
		{
			name:  "empty file",
			input: "",
			fatal: "x.csv:1: empty input: expected an ncu --csv export",
		},
		{
			name:  "only ==PROF== lines (real log of -o with --log-file)",
			input: string(readFixture(t, "logs/ncu-output-file-plus-log-file.txt")),
			fatal: "x.csv:3: no CSV data, only 3 ==PROF== line(s): ncu profiled no kernels, or wrote its data to a report file (-o) instead of this log",
		},
		{
			name:  "ncu's no-kernels warning (real log)",
			input: string(readFixture(t, "logs/ncu-no-kernels-profiled-domain-syntax.txt")),
			fatal: `x.csv:11: no CSV data: ncu says "==WARNING== No kernels were profiled." (an NVTX or kernel filter that matched nothing?)`,
		},
		{
			name:  "missing units row",
			input: header + strings.Join(ls[2:6], ""),
			fatal: `x.csv:2: no units row after the header (found a row with ID "0"): the raw page writes units under the header, and without them durations cannot be read`,
		},
		{
			name:  "header only",
			input: header,
			fatal: "x.csv:2: no units row after the header: the raw page writes one (was the file cut?)",
		},
		{
			name:  "header without a kernel-name column",
			input: strings.Replace(header, `"Kernel Name"`, `"Kernel"`, 1) + strings.Join(ls[1:4], ""),
			fatal: `x.csv:1: header has no "Kernel Name" column: not an ncu --csv export of the raw or details page`,
		},
		{
			name:  "header without a duration column",
			input: strings.Replace(header, `"gpu__time_duration.sum"`, `"gpu__time_duration.max2"`, 1) + strings.Join(ls[1:4], ""),
			fatal: "x.csv:1: raw page has no gpu__time_duration.sum column: profile with --metrics gpu__time_duration.sum, or a section set that collects it (basic, full, roofline)",
		},
		{
			name:     "non-numeric duration",
			input:    strings.Join(ls[:4], "") + strings.ReplaceAll(ls[4], `"2.432000"`, `"2.4x32"`) + strings.Join(ls[5:7], ""),
			rowErr:   `x.csv:5: launch 2: gpu__time_duration.sum: "2.4x32" is not a number (decimal notation only)`,
			launches: 4,
		},
		{
			name:     "n/a duration",
			input:    strings.Join(ls[:4], "") + strings.ReplaceAll(ls[4], `"2.432000"`, `"n/a"`),
			rowErr:   `x.csv:5: launch 2: gpu__time_duration.sum is "n/a", not a duration`,
			launches: 2,
		},
		{
			name:     "a device that is not an index",
			input:    strings.Join(ls[:4], "") + strings.Replace(ls[4], `"(1, 1, 1)","0","9.0"`, `"(1, 1, 1)","GPU0","9.0"`, 1) + strings.Join(ls[5:7], ""),
			rowErr:   `x.csv:5: launch 2: Device "GPU0" is not a device number (0, 1, ...)`,
			launches: 4,
		},
		{
			name:     "truncated row (cut between two fields)",
			input:    strings.Join(ls[:4], "") + ls[4][:strings.Index(ls[4], `"(128, 1, 1)"`)-1] + "\n" + ls[5],
			rowErr:   "x.csv:5: row has 9 fields, the header has 568 (a truncated or edited row)",
			launches: 3,
		},
		{
			name:     "file cut inside a field",
			input:    strings.Join(ls[:4], "") + ls[4][:len(ls[4])/2],
			fatal:    "x.csv:5: quoted field not closed at the end of input (a cut file?)",
			launches: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			launches, rowErrs, err := readAll([]byte(tt.input), "x.csv")
			if tt.fatal == "" {
				require.NoError(t, err)
			} else {
				require.EqualError(t, err, tt.fatal)
			}
			if tt.rowErr == "" {
				require.Empty(t, rowErrs)
			} else {
				require.NotEmpty(t, rowErrs)
				require.EqualError(t, rowErrs[0], tt.rowErr)
			}
			require.Len(t, launches, tt.launches)
		})
	}
}

// TestDetailsIDsGoBack: a details page whose launches' rows are not together
// is an error, not a silently split launch. SYNTHETIC, from the real page.
func TestDetailsIDsGoBack(t *testing.T) {
	ls := lines(readFixture(t, "ncu/h200-llama-decode-roofline/details.csv"))
	var first, second []string
	for _, l := range ls[1:] {
		switch {
		case strings.HasPrefix(l, `"0",`):
			first = append(first, l)
		case strings.HasPrefix(l, `"1",`):
			second = append(second, l)
		}
	}
	input := ls[0] + strings.Join(second, "") + strings.Join(first, "")
	launches, rowErrs, err := readAll([]byte(input), "d.csv")
	require.NoError(t, err)
	require.Len(t, launches, 1)
	require.NotEmpty(t, rowErrs)
	assert.Contains(t, rowErrs[0].Error(), "launch ID 0 follows ID 1")
}

// TestEncodingsAgree: the same real page read as written, with CRLF line
// ends and a byte-order mark, and gzip-compressed gives the same launches.
func TestEncodingsAgree(t *testing.T) {
	real := readFixture(t, raw)
	want, rowErrs, err := readAll(real, "x")
	require.NoError(t, err)
	require.Empty(t, rowErrs)
	require.Len(t, want, 412)

	crlf := append([]byte("\xEF\xBB\xBF"), bytes.ReplaceAll(real, []byte("\n"), []byte("\r\n"))...)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write(real)
	require.NoError(t, zw.Close())

	for name, input := range map[string][]byte{"crlf+bom": crlf, "gzip": gz.Bytes()} {
		got, rowErrs, err := readAll(input, "x")
		require.NoError(t, err, name)
		require.Empty(t, rowErrs, name)
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s: launches differ (-plain +%s):\n%s", name, name, d)
		}
	}
}

func TestParseStack(t *testing.T) {
	tests := []struct {
		cell   string
		thread int64
		path   string
		levels []model.Range
		err    string
	}{
		{cell: "", path: ""},
		{cell: "437 ", thread: 437, path: ""},
		{
			cell:   `437  "<default domain>:decode_all:none:none:none:none:none:none"  "<default domain>:decode_step:none:none:none:none:none:none" `,
			thread: 437, path: "decode_all/decode_step",
			levels: []model.Range{{Name: "decode_all"}, {Name: "decode_step"}},
		},
		// Cells copied from fixtures/ncu/cuda-nvtx-domains/raw.csv.
		{
			cell:   `1156  "LLM:decode_all:none:none:none:none:ASCII:decode_all"  "LLM:decode_step:none:none:none:none:ASCII:decode_step" `,
			thread: 1156, path: "LLM@decode_all/LLM@decode_step",
			levels: []model.Range{{Domain: "LLM", Name: "decode_all"}, {Domain: "LLM", Name: "decode_step"}},
		},
		{
			cell:   `1156  "<default domain>:step: 1 "quoted" / a@b:none:none:none:none:none:none" `,
			thread: 1156, path: `step: 1 "quoted" \/ a\@b`,
			levels: []model.Range{{Name: `step: 1 "quoted" / a@b`}},
		},
		{
			cell:   `1156  "<default domain>:LLM@decode_all:none:none:none:none:none:none" `,
			thread: 1156, path: `LLM\@decode_all`,
			levels: []model.Range{{Name: "LLM@decode_all"}},
		},
		// A cell copied from fixtures/ncu/h200-cccl-library-domain/raw.csv:
		// CUB's registered-string range in domain CCCL, inside default-domain
		// ranges whose names hold colons.
		{
			cell:   `6368  "<default domain>:outer:none:none:none:none:none:none"  "<default domain>:inner:with:colons:none:none:none:none:none:none"  "CCCL:cub::DeviceScan::InclusiveScan:none:none:none:none:REGISTERED:cub::DeviceScan::InclusiveScan" `,
			thread: 6368, path: "outer/inner:with:colons/CCCL@cub::DeviceScan::InclusiveScan",
			levels: []model.Range{{Name: "outer"}, {Name: "inner:with:colons"}, {Domain: "CCCL", Name: "cub::DeviceScan::InclusiveScan"}},
		},
		{cell: `abc  "<default domain>:x:none:none:none:none:none:none"`, err: `thread id "abc" is not a number`},
		{cell: `12  <default domain>:x:none:none:none:none:none:none`, err: "ranges are not quoted"},
		{cell: `12  "<default domain>:x:none:none"`, err: "fewer than 6 attributes"},
		{cell: `12  "nodomain"`, err: "no domain:name:attributes form"},
	}
	for _, tt := range tests {
		st, err := ncu.ParseStack(tt.cell)
		if tt.err != "" {
			require.Error(t, err, tt.cell)
			assert.Contains(t, err.Error(), tt.err)
			continue
		}
		require.NoError(t, err, tt.cell)
		assert.Equal(t, tt.thread, st.Thread, tt.cell)
		assert.Equal(t, tt.path, st.Path(), tt.cell)
		assert.Equal(t, tt.levels, st.Levels, tt.cell)
	}
}

// ncuExports lists every recorded export.
func ncuExports(t testing.TB) []string {
	var out []string
	for _, pat := range []string{"ncu/*/*.csv", "ncu/*/*.csv.gz"} {
		m, err := filepath.Glob(fixtures + pat)
		require.NoError(t, err)
		for _, p := range m {
			out = append(out, strings.TrimPrefix(p, fixtures))
		}
	}
	require.NotEmpty(t, out)
	return out
}

// TestRoundTripFixtures: every launch of every recorded export, written by
// Writer and read back, is the same launch.
func TestRoundTripFixtures(t *testing.T) {
	for _, rel := range ncuExports(t) {
		launches, rowErrs, err := readAll(readFixture(t, rel), rel)
		require.NoError(t, err, rel)
		require.Empty(t, rowErrs, rel)
		require.NotEmpty(t, launches, rel)
		roundTrip(t, launches)
	}
}

var ignoreLine = cmpopts.IgnoreFields(model.Launch{}, "Line")

func roundTrip(t *testing.T, launches []*model.Launch) {
	t.Helper()
	var buf bytes.Buffer
	w := ncu.NewWriter(&buf, launches[0].NVTX != nil)
	for _, l := range launches {
		require.NoError(t, w.Write(l))
	}
	require.NoError(t, w.Flush())
	again, rowErrs, err := readAll(buf.Bytes(), "written")
	require.NoError(t, err)
	require.Empty(t, rowErrs, "written:\n%s", buf.String())
	for i := range again {
		if i < len(launches) {
			again[i].Line = launches[i].Line
		}
	}
	if reflect.DeepEqual(launches, again) {
		return
	}
	if d := cmp.Diff(launches, again, ignoreLine); d != "" {
		t.Fatalf("write then read changed the launches (-read +reread):\n%s\nwritten:\n%s", d, buf.String())
	}
}

// fuzzSeeds adds the first n lines of each real export, and a SYNTHETIC
// narrow copy of them: only the columns the reader uses (wide rows of 568
// columns make each fuzz execution slow), fields kept byte for byte.
func fuzzSeeds(f *testing.F, rels []string, n int) {
	for _, rel := range rels {
		ls := lines(readFixture(f, rel))
		head := []byte(strings.Join(ls[:min(n, len(ls))], ""))
		if narrow := narrowColumns(head); narrow != nil {
			f.Add(narrow)
		} else {
			f.Add(head)
		}
	}
}

// narrowColumns keeps the columns a Reader reads; nil when the input has no
// CSV header on its first line.
func narrowColumns(data []byte) []byte {
	keep := map[string]bool{"ID": true, "Process ID": true, "Kernel Name": true, "Device": true,
		ncu.NVTXColumn: true, model.DurationMetric: true, "Section Name": true, "Metric Name": true,
		"Metric Unit": true, "Metric Value": true, "Rule Name": true}
	sc := input.New(bytes.NewReader(data))
	if !sc.Next() || !bytes.HasPrefix(sc.Raw(), []byte(`"ID"`)) {
		return nil
	}
	var cols []int
	for i, h := range sc.Fields(nil, -1) {
		if keep[string(h)] {
			cols = append(cols, i)
		}
	}
	var out bytes.Buffer
	for first := true; first || sc.Next(); first = false {
		for j, c := range cols {
			if j > 0 {
				out.WriteByte(',')
			}
			raw, _ := sc.RawField(c)
			out.WriteString(`"` + string(raw) + `"`)
		}
		out.WriteByte('\n')
	}
	return out.Bytes()
}

// fuzzRead checks a reader on any input: no panic, and every launch it
// accepts survives a write and a re-read unchanged.
func fuzzRead(t *testing.T, data []byte) {
	launches, _, _ := readAll(data, "fuzz")
	var ok []*model.Launch
	for _, l := range launches {
		if l.NVTX != nil == (launches[0].NVTX != nil) {
			ok = append(ok, l)
		}
	}
	if len(ok) > 0 {
		roundTrip(t, ok)
	}
}

func FuzzRawReader(f *testing.F) {
	fuzzSeeds(f, []string{raw, "ncu/h200-llama-decode-basic/raw-units-base.csv", "ncu/h200-workload-crash-partial/raw.csv",
		"ncu/cuda-nvtx-domains/raw.csv", "ncu/cuda-range-replay/raw.csv"}, 6)
	f.Fuzz(fuzzRead)
}

func FuzzDetailsReader(f *testing.F) {
	fuzzSeeds(f, []string{"ncu/h200-llama-decode-roofline/details.csv", "ncu/cuda-range-replay/details.csv",
		"ncu/rtx5090-dsocr-kernel_0001_67bdb7e29d1bb4e0ca0aec954ef18af3/ncu.details.csv"}, 40)
	f.Fuzz(fuzzRead)
}

func FuzzLogFileReader(f *testing.F) {
	fuzzSeeds(f, []string{"ncu/h200-llama-decode-basic/log-file.csv"}, 6)
	fuzzSeeds(f, []string{"logs/ncu-output-file-plus-log-file.txt", "logs/ncu-no-kernels-profiled-domain-syntax.txt"}, 20)
	f.Fuzz(fuzzRead)
}

// zeros is an endless input of NUL bytes, as /dev/zero (SYNTHETIC).
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// TestPreHeaderIsBounded: what precedes the header is read with bounded
// memory, and an input that is not an export ends in a positioned error
// (deepprof kernels /dev/zero, unbounded, grew and never ended).
func TestPreHeaderIsBounded(t *testing.T) {
	_, err := ncu.KernelTable(ncu.NewReader(zeros{}, "/dev/zero", ncu.Options{}), "/dev/zero")
	require.Error(t, err)
	assert.Equal(t, "/dev/zero:1: a line of more than 1024 KiB before the CSV header: not an ncu --csv export or log", err.Error())

	in := "==PROF== a tool line\nbinary\x00data\n"
	_, err = ncu.KernelTable(ncu.NewReader(strings.NewReader(in), "x.csv", ncu.Options{}), "x.csv")
	require.Error(t, err)
	assert.Equal(t, "x.csv:2: binary data (a NUL byte) before the CSV header: not an ncu --csv export or log", err.Error())
}

// BenchmarkLongRecordPipe reads one SYNTHETIC record of 12, 25 and 50 MB
// (a kernel name) through a pipe-like reader that returns 64 KiB at a
// time: the time per MB stays flat (linear), as from a file.
func BenchmarkLongRecordPipe(b *testing.B) {
	src, err := os.ReadFile("../../fixtures/ncu/h200-llama-decode-basic/raw.csv")
	require.NoError(b, err)
	lines := strings.SplitAfter(string(src), "\n")
	hi := 0
	for !strings.HasPrefix(lines[hi], `"ID"`) {
		hi++
	}
	for _, mb := range []int{12, 25, 50} {
		row := strings.Replace(lines[hi+2], `"void at::`, `"void at::`+strings.Repeat("a", mb<<20), 1)
		in := lines[hi] + lines[hi+1] + row
		b.Run(fmt.Sprintf("%dMB", mb), func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				r := ncu.NewReader(iotest.HalfReader(&chunked{strings.NewReader(in)}), "pipe", ncu.Options{})
				for r.Scan() {
				}
				if r.Err() != nil {
					b.Fatal(r.Err())
				}
			}
		})
	}
}

// chunked returns at most 64 KiB a read, as a pipe does.
type chunked struct{ r io.Reader }

func (c *chunked) Read(p []byte) (int, error) { return c.r.Read(p[:min(len(p), 64<<10)]) }
