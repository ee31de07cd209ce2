package render_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"

	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/synth"

	"github.com/sebdah/goldie/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/render"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
	"github.com/llm-perf-opt/deepprof/internal/timeline"
)

// Recordings the trace is checked on: synthetic (package synth) and
// real (fixtures/cupti, recorded by the CUPTI library on an H100), a folder
// a row.
var recordings = []struct {
	name  string
	files []string
}{
	{"synthetic-two-processes", []string{"../cupti/testdata/synthetic-4242.tsv", "../cupti/testdata/synthetic-4244-nothreads.tsv"}},
	{"synthetic-truncated", []string{"../cupti/testdata/synthetic-4243-truncated.tsv"}},
	{"h100-nvtx-ranges-domains", realFiles("h100-nvtx-ranges/domains")},
	{"h100-nvtx-ranges-twoproc", realFiles("h100-nvtx-ranges/twoproc")},
	{"h100-nvtx-more-all", realFiles("h100-nvtx-more/all")},
	{"h100-nvtx-more-killed", realFiles("h100-nvtx-more/killed")},
	{"h100-torch-nvtx", realFiles("h100-torch-nvtx")},
}

// realFiles is the record files of one real recording's folder.
func realFiles(dir string) []string {
	files, err := filepath.Glob(filepath.Join("../../fixtures/cupti", dir, "cupti-*.tsv"))
	if err != nil || len(files) == 0 {
		panic(fmt.Sprintf("no record files in %s (%v)", dir, err))
	}
	return files
}

// A trace that cannot be written leaves nothing behind: here the rename
// fails (the target is a directory that is not empty), after the whole
// trace was streamed to the temporary file.
func TestWriteFileFails(t *testing.T) {
	tl, err := timeline.ReadFiles(recordings[0].files...)
	require.NoError(t, err)
	dir := t.TempDir()
	out := filepath.Join(dir, "trace.json.gz")
	require.NoError(t, os.MkdirAll(filepath.Join(out, "x"), 0o755))
	require.Error(t, writeTrace(out, tl))
	es, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, es, 2, "the target, and the staging folder")
	st, err := os.ReadDir(filepath.Join(dir, rundir.StagingDir))
	require.NoError(t, err)
	require.Len(t, st, 1, "no temporary file left beside the staging marker")
	assert.Equal(t, "trace.json.gz", es[1].Name())
	assert.True(t, es[1].IsDir())
}

// doc is the trace as an independent reader sees it: plain JSON, none of the
// writer's types.
type doc struct {
	TraceEvents     []map[string]any `json:"traceEvents"`
	DisplayTimeUnit string           `json:"displayTimeUnit"`
	OtherData       map[string]any   `json:"otherData"`
}

func readTrace(t *testing.T, path string) doc {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	require.NoError(t, err, "trace.json.gz is gzip")
	data, err := io.ReadAll(zr)
	require.NoError(t, err)
	require.True(t, json.Valid(data), "the trace is valid JSON")
	var d doc
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	require.NoError(t, dec.Decode(&d))
	return d
}

func num(t *testing.T, ev map[string]any, k string) float64 {
	t.Helper()
	v, ok := ev[k].(json.Number)
	require.True(t, ok, "event %v: %q is a number", ev, k)
	f, err := v.Float64()
	require.NoError(t, err)
	return f
}

func TestTrace(t *testing.T) {
	g := goldie.New(t, goldie.WithFixtureDir("../../golden/trace"), goldie.WithNameSuffix(".json"))
	for _, rc := range recordings {
		t.Run(rc.name, func(t *testing.T) {
			tl, err := timeline.ReadFiles(rc.files...)
			require.NoError(t, err)
			out := filepath.Join(t.TempDir(), "timeline", "trace.json.gz")
			require.NoError(t, writeTrace(out, tl))
			d := readTrace(t, out)
			assert.Equal(t, "ns", d.DisplayTimeUnit)
			require.NotEmpty(t, d.TraceEvents)

			// Every event has ph, ts, pid and tid; durations are not negative.
			type track struct{ pid, tid float64 }
			named := map[track]string{}
			procNames := map[float64]string{}
			kernelCount := map[string]int{}
			kernelUS := map[string]float64{}
			async := map[string]int{}
			flows := map[float64][]map[string]any{}
			for _, ev := range d.TraceEvents {
				for _, k := range []string{"ph", "ts", "pid", "tid"} {
					require.Contains(t, ev, k, "event %v", ev)
				}
				ts := num(t, ev, "ts")
				assert.GreaterOrEqual(t, ts, 0.0, "times start at the origin")
				pid, tid := num(t, ev, "pid"), num(t, ev, "tid")
				switch ev["ph"] {
				case "M":
					args := ev["args"].(map[string]any)
					switch ev["name"] {
					case "process_name":
						procNames[pid] = args["name"].(string)
					case "thread_name":
						named[track{pid, tid}] = args["name"].(string)
					}
				case "X":
					dur := num(t, ev, "dur")
					assert.GreaterOrEqual(t, dur, 0.0, "event %v", ev)
					cat := ev["cat"].(string)
					if strings.Contains(cat, "kernel") {
						name := ev["name"].(string)
						kernelCount[name]++
						kernelUS[name] += dur
					}
				case "b", "e":
					async[ev["name"].(string)] += map[string]int{"b": 1, "e": -1}[ev["ph"].(string)]
				case "s", "f":
					assert.Equal(t, render.CatLaunch, ev["cat"])
					flows[num(t, ev, "id")] = append(flows[num(t, ev, "id")], ev)
				case "i":
				default:
					t.Fatalf("unexpected phase %v", ev["ph"])
				}
			}
			// Every event's track is named, and so is its process.
			for _, ev := range d.TraceEvents {
				pid, tid := num(t, ev, "pid"), num(t, ev, "tid")
				assert.Contains(t, procNames, pid, "process of %v is named", ev)
				if ev["ph"] != "M" {
					assert.Contains(t, named, track{pid, tid}, "track of %v is named", ev)
				}
			}
			for name, n := range async {
				assert.Zero(t, n, "async range %q begins and ends", name)
			}
			// Every kernel with a launch call has one arrow from the call
			// to the kernel: a flow start at the call's start on its
			// thread, a flow end bound to the kernel's slice at its start.
			attributed := 0
			for _, p := range tl.Processes {
				for i := range p.Kernels {
					k := p.Kernel(i)
					if k.API == nil {
						continue
					}
					attributed++
					f := flows[float64(p.Header.PID<<32|int64(i))]
					require.Len(t, f, 2, "kernel %d of %d", k.Correlation, p.Header.PID)
					assert.Equal(t, "s", f[0]["ph"])
					assert.Equal(t, float64(k.API.Thread), num(t, f[0], "tid"))
					assert.InDelta(t, float64(k.API.Start-tl.OriginNS)/1e3, num(t, f[0], "ts"), 1e-3)
					assert.Equal(t, "f", f[1]["ph"])
					assert.Equal(t, "e", f[1]["bp"])
					assert.Equal(t, float64(k.Stream), num(t, f[1], "tid"))
					assert.InDelta(t, float64(k.Start-tl.OriginNS)/1e3, num(t, f[1], "ts"), 1e-3)
				}
			}
			assert.Len(t, flows, attributed, "one arrow a kernel with a launch call")

			// Kernels match the input: the names and calls of kernels.json,
			// and their time.
			ka := model.NewKernelAggregator()
			for l := range tl.Launches() {
				require.NoError(t, ka.Add(rc.name, l))
			}
			var kj bytes.Buffer
			require.NoError(t, render.KernelsJSON(&kj, ka.Table(rc.name), nil, nil))
			var kjDoc struct {
				Kernels []struct {
					Name    string  `json:"kernel_name"`
					Calls   int     `json:"calls"`
					TotalMS float64 `json:"total_ms"`
				} `json:"kernels"`
			}
			require.NoError(t, json.Unmarshal(kj.Bytes(), &kjDoc))
			wantCount := map[string]int{}
			wantUS := map[string]float64{}
			for _, k := range kjDoc.Kernels {
				wantCount[k.Name] += k.Calls
				wantUS[k.Name] += k.TotalMS * 1000
			}
			assert.Equal(t, wantCount, kernelCount)
			for name, us := range wantUS {
				assert.InDelta(t, us, kernelUS[name], 1e-6*math.Max(1, us), name)
			}

			// The uncompressed trace, for review.
			var raw bytes.Buffer
			require.NoError(t, render.Write(&raw, tl))
			g.Assert(t, rc.name, raw.Bytes())
		})
	}
}

// Names from the profiled program are data: quotes, backslashes, control
// characters and invalid UTF-8 still make valid JSON, an invalid byte as
// the text \xfe.
func TestHostileNames(t *testing.T) {
	hdr := "#deepprof-cupti/1\tpid=5\tppid=1\tcupti_api=1\tcuda_driver=2\tstart_ns=0\texe=/x/\"q\"\n"
	in := hdr + "N\tpush\t10\t1\t0\t\"dom\"\tna\\\\me\\t\\n\"</script>\xff\x01\n" +
		"A\t20\t25\t1\t1\truntime\t211\tcudaLaunchKernel\n" +
		"K\t30\t40\t0\t1\t7\t1\t1,1,1\t1,1,1\t1\t0\t0\t_Z1kv\tk<\"a\\\\b\">\xfe\n" +
		"N\tpop\t50\t1\t0\t\"dom\"\t\nE\t4\t0\n"
	b := timeline.NewBuilder()
	require.NoError(t, b.Read(strings.NewReader(in), "h.tsv"))
	tl, err := b.Build()
	require.NoError(t, err)
	var out bytes.Buffer
	require.NoError(t, render.Write(&out, tl))
	require.True(t, json.Valid(out.Bytes()), out.String())
	var d doc
	require.NoError(t, json.Unmarshal(out.Bytes(), &d))
	var kernel map[string]any
	for _, ev := range d.TraceEvents {
		if ev["cat"] == "kernel" {
			kernel = ev
		}
	}
	require.NotNil(t, kernel)
	assert.Equal(t, "k<\"a\\b\">\\xfe", kernel["name"], "a byte that is not UTF-8 kept apart as text (input.ValidName)")
	assert.Equal(t, 0.01, kernel["dur"], "10 ns")
	assert.Contains(t, out.String(), `"dur":0.010,`, "written exactly from integer ns")
}

// writeTrace writes the trace to out as a run's committer does: streamed,
// atomically, inside out's folder.
func writeTrace(out string, tl *timeline.Timeline) error {
	return rundir.WriteAtomicIn(filepath.Dir(out), out, func(w io.Writer) error { return render.TraceGzip(w, tl) })
}

// blocksTimeline is a SYNTHETIC timeline of 12,000 launches, whose trace
// is several of TraceGzip's blocks.
func blocksTimeline(t *testing.T) *timeline.Timeline {
	var rec strings.Builder
	rec.WriteString(synth.HeaderLine(7))
	for i := range 12000 {
		start := 1000 + 2000*i
		rec.WriteString(synth.LaunchLine(start, 1, i+1))
		rec.WriteString(synth.KernelLine(start+100, start+900, 0, 7, i+1, fmt.Sprintf("kernel%d", i%50)))
	}
	tl := synth.Timeline(t, rec.String())
	return tl
}

// TestTraceGzipBlocks: a trace of several of TraceGzip's blocks (SYNTHETIC
// records) is one gzip member that reads back as the bytes Write writes,
// and its trailer holds their CRC-32 and length: TestRecordedRunsRebuild
// compares a rebuilt trace with the recorded one by them.
func TestTraceGzipBlocks(t *testing.T) {
	t.Parallel()
	tl := blocksTimeline(t)
	var plain, packed bytes.Buffer
	require.NoError(t, render.Write(&plain, tl))
	require.Greater(t, plain.Len(), 4<<20, "several blocks")
	require.NoError(t, render.TraceGzip(&packed, tl))

	br := bytes.NewReader(packed.Bytes())
	zr, err := gzip.NewReader(br)
	require.NoError(t, err)
	zr.Multistream(false)
	got, err := io.ReadAll(zr)
	require.NoError(t, err)
	assert.Zero(t, br.Len(), "one member: bytes after it")
	require.True(t, bytes.Equal(plain.Bytes(), got), "what Write writes")
	trailer := packed.Bytes()[packed.Len()-8:]
	assert.Equal(t, crc32.ChecksumIEEE(plain.Bytes()), binary.LittleEndian.Uint32(trailer), "CRC-32")
	assert.Equal(t, uint32(plain.Len()), binary.LittleEndian.Uint32(trailer[4:]), "length")
}

// failAfter is a writer that takes n bytes, then fails.
type failAfter struct{ n int }

func (f *failAfter) Write(p []byte) (int, error) {
	if f.n < len(p) {
		return 0, errors.New("SYNTHETIC: the disk is full")
	}
	f.n -= len(p)
	return len(p), nil
}

// TestTraceGzipStopsOnError: a trace whose writer fails (a full disk, a
// staged write discarded) ends with that writer's error, and leaves no
// compressing goroutine behind. SYNTHETIC records.
func TestTraceGzipStopsOnError(t *testing.T) {
	tl := blocksTimeline(t)
	before := runtime.NumGoroutine()
	for range 3 {
		require.EqualError(t, render.TraceGzip(&failAfter{n: 100 << 10}, tl), "SYNTHETIC: the disk is full")
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	assert.LessOrEqual(t, runtime.NumGoroutine(), before, "goroutines left behind")
}

// BenchmarkTrace writes the trace of a SYNTHETIC recording of 200,000
// kernels (package synth, in memory) as JSON (Write) and gzipped
// (TraceGzip).
func BenchmarkTrace(b *testing.B) {
	c := synth.Small(9000)
	c.PrefillKernels, c.DecodeSteps, c.StepKernels = 1000, 19_900, 10
	var rec bytes.Buffer
	require.NoError(b, synth.Write(&rec, c))
	tl := synth.Timeline(b, rec.String())
	for _, bc := range []struct {
		name  string
		write func(io.Writer, *timeline.Timeline) error
	}{{"json", render.Write}, {"gzip", render.TraceGzip}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := bc.write(io.Discard, tl); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkTraceGzipLevel writes the traces of a SYNTHETIC recording (as
// BenchmarkTrace's) and of a recorded run (h200-in-run-roofline-both, 53,611
// kernels of a Llama-shaped model on an H200) at each gzip level from 1 to
// 6, the compressed size as MB: what TraceGzipLevel was chosen by
// (docs/measurements.md).
func BenchmarkTraceGzipLevel(b *testing.B) {
	c := synth.Small(9000)
	c.PrefillKernels, c.DecodeSteps, c.StepKernels = 1000, 19_900, 10
	var rec bytes.Buffer
	require.NoError(b, synth.Write(&rec, c))
	files, err := filepath.Glob("../../fixtures/runs/h200-in-run-roofline-both/timeline/cupti/cupti-*.tsv.gz")
	require.NoError(b, err)
	recorded, err := timeline.ReadFiles(files...)
	require.NoError(b, err)
	for _, tc := range []struct {
		name string
		tl   *timeline.Timeline
	}{{"synthetic", synth.Timeline(b, rec.String())}, {"recorded", recorded}} {
		for level := 1; level <= 6; level++ {
			b.Run(fmt.Sprintf("%s/level=%d", tc.name, level), func(b *testing.B) {
				var n countBytes
				for b.Loop() {
					n = 0
					if err := render.TraceGzipAt(&n, tc.tl, level); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(n)/1e6, "MB")
			})
		}
	}
}

// countBytes counts what is written to it.
type countBytes int64

func (c *countBytes) Write(p []byte) (int, error) {
	*c += countBytes(len(p))
	return len(p), nil
}
