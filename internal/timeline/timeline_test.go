package timeline_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sebdah/goldie/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/cupti"
	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/phases"
	"github.com/llm-perf-opt/deepprof/internal/regions"
	"github.com/llm-perf-opt/deepprof/internal/render"
	"github.com/llm-perf-opt/deepprof/internal/synth"
	"github.com/llm-perf-opt/deepprof/internal/timeline"
)

// The record lines of SYNTHETIC files, by the short names the tests'
// data reads best with.
var (
	build  = synth.Timeline
	header = synth.HeaderLine
	k      = synth.KernelLine
	a      = synth.LaunchLine
	n      = synth.NVTXLine
)

// attributionFile is SYNTHETIC: thread 1 opens outer (100), inner (120,
// closed 140), outer closes at 160; thread 2 opens LLM@side (105-200).
// Kernels come first in the file, NVTX events last and reversed, as CUPTI
// may deliver them.
func attributionFile() string {
	var b strings.Builder
	b.WriteString(header(7))
	b.WriteString(k(300, 310, 0, 7, 1, "k1"))  // call at 110: outer
	b.WriteString(k(320, 330, 0, 7, 2, "k2"))  // call at 130: outer/inner
	b.WriteString(k(340, 350, 0, 7, 3, "k3"))  // call at 150: outer
	b.WriteString(k(360, 370, 0, 7, 4, "k4"))  // call at 170: none
	b.WriteString(k(305, 315, 0, 13, 5, "k5")) // thread 2, call at 125: LLM@side only
	b.WriteString(k(380, 385, 0, 7, 6, "g1"))  // graph: two kernels of call 6 (at 120, inner's push)
	b.WriteString(k(386, 390, 0, 7, 6, "g2"))
	b.WriteString(k(391, 399, 0, 7, 7, "k7")) // call at 140, inner's pop: outer
	b.WriteString(k(400, 401, 0, 7, 99, "orphan"))
	for _, s := range []string{a(110, 1, 1), a(130, 1, 2), a(150, 1, 3), a(170, 1, 4), a(125, 2, 5), a(120, 1, 6), a(140, 1, 7)} {
		b.WriteString(s)
	}
	for _, s := range []string{
		n("pop", 200, 2, "LLM", ""), n("pop", 160, 1, "", ""), n("pop", 140, 1, "", ""),
		n("push", 120, 1, "", "inner"), n("push", 105, 2, "LLM", "side"), n("push", 100, 1, "", "outer"),
	} {
		b.WriteString(s)
	}
	b.WriteString("E\t22\t0\n")
	return b.String()
}

func TestAttribution(t *testing.T) {
	tl := build(t, attributionFile())
	require.Len(t, tl.Processes, 1)
	p := tl.Processes[0]
	assert.Empty(t, p.Truncation)
	got := map[string]string{}
	for l := range tl.Launches() {
		got[l.Kernel] = l.NVTX.Path()
		assert.Equal(t, int64(7), l.ProcessID)
		assert.Equal(t, "prog", l.ProcessName)
		assert.Equal(t, model.DurationMetric, l.DurationMetric)
	}
	assert.Equal(t, map[string]string{
		"k1": "outer", "k2": "outer/inner", "k3": "outer", "k4": "", "k5": "LLM@side",
		"g1": "outer/inner", "g2": "outer/inner", // pushed at the call's nanosecond: open
		"k7":     "outer", // popped at the call's nanosecond: closed
		"orphan": "",
	}, got)
	assert.Equal(t, 1, p.Unattributed)
	require.Len(t, p.Problems, 1)
	assert.Equal(t, "f0.tsv: 1 of 9 kernels have no launch call record (dropped, or the file was cut short): they belong to no range", p.Problems[0])

	// Launches are in start order, with the kernel's own line.
	var order []string
	var lines []int
	for l := range tl.Launches() {
		order = append(order, l.Kernel)
		lines = append(lines, l.Line)
	}
	assert.Equal(t, []string{"k1", "k5", "k2", "k3", "k4", "g1", "g2", "k7", "orphan"}, order)
	assert.Equal(t, 2, lines[0])
	assert.Equal(t, 6, lines[1])

	// The threads of the stacks are the launching threads.
	for l := range tl.Launches() {
		if l.Kernel == "k5" {
			assert.Equal(t, int64(2), l.NVTX.Thread)
			assert.Equal(t, []model.Range{{Domain: "LLM", Name: "side"}}, l.NVTX.Levels)
		}
	}
}

func TestUnbalancedRanges(t *testing.T) {
	f := header(7) + n("pop", 50, 1, "", "") + n("push", 100, 1, "", "open") + a(110, 1, 1) + k(200, 210, 0, 7, 1, "k") +
		n("end", 300, 1, "", "") + "N\tstart\t90\t1\t5\t\tgen\n" // start id 5, end id 0: never paired
	tl := build(t, f)
	p := tl.Processes[0]
	assert.Equal(t, []string{
		"f0.tsv:2: a pop on thread 1 with no range open: ignored",
		"f0.tsv:6: end of start/end range id 0, which never started: ignored",
		`f0.tsv:7: start/end range "gen" on thread 1 never closed`,
		`f0.tsv:3: push/pop range "open" on thread 1 never closed`,
	}, p.Problems)
	assert.Contains(t, p.Truncation, "no E line")
	// The open range still attributes; its instance ends with its last kernel.
	rep := phases.Of(tl, phases.Options{Depth: 1})
	ph := rep.Scopes[0].Phases[0]
	assert.Equal(t, "open", ph.Name)
	assert.Equal(t, int64(210-100), ph.SpanNS)
}

func TestInputErrors(t *testing.T) {
	b := timeline.NewBuilder()
	require.NoError(t, b.Read(strings.NewReader(header(7)), "a.tsv"))
	err := b.Read(strings.NewReader(header(7)), "b.tsv")
	require.EqualError(t, err, "b.tsv:1: process 7 has a second record file (the first is a.tsv)")

	b = timeline.NewBuilder()
	err = b.Read(strings.NewReader(header(7)+k(5, 4, 0, 7, 1, "k")), "d.tsv")
	require.EqualError(t, err, "d.tsv:2: K record: end 4 is before start 5 (a negative duration)")

	// An empty file adds nothing and says so.
	b = timeline.NewBuilder()
	require.NoError(t, b.Read(strings.NewReader(""), "e.tsv"))
	tl, err := b.Build()
	require.NoError(t, err)
	assert.Empty(t, tl.Processes)
	assert.Equal(t, []string{"e.tsv: empty: the process wrote no complete line"}, tl.Notes)
}

// A correlation id with several A records (a runtime launch and the
// driver call inside it, as the real recordings have) has one launch call:
// the earliest-starting, whatever the file order; the first in the file at
// a tie. SYNTHETIC.
func TestSharedCorrelation(t *testing.T) {
	drv := func(start, tid, corr int) string {
		return fmt.Sprintf("A\t%d\t%d\t%d\t%d\tdriver\t307\tcuLaunchKernel\n", start, start+2, tid, corr)
	}
	f := header(7) + n("push", 100, 1, "", "r") + n("pop", 112, 1, "", "") +
		drv(115, 1, 1) + a(110, 1, 1) + k(200, 210, 0, 7, 1, "k1") + // driver call first in the file, inside the runtime call
		a(120, 1, 2) + drv(120, 1, 2) + k(220, 230, 0, 7, 2, "k2") + // a tie: the first in the file
		drv(130, 1, 3) + k(240, 250, 0, 7, 3, "k3") + // a driver call alone (cuLaunchKernelEx)
		"E\t10\t0\n"
	tl := build(t, f)
	p := tl.Processes[0]
	assert.Equal(t, 2, p.SharedCorrelation)
	require.Len(t, p.APIs, 3)
	assert.Equal(t, []string{"cudaLaunchKernel", "cudaLaunchKernel", "cuLaunchKernel"},
		[]string{p.CallOf(&p.APIs[0]).Function, p.CallOf(&p.APIs[1]).Function, p.CallOf(&p.APIs[2]).Function})
	assert.Equal(t, int64(110), p.Kernel(0).API.Start)
	assert.Equal(t, "r", p.Kernel(0).Range.Path(), "attributed at the runtime call (110), not the driver call (115, after the pop)")
	assert.Equal(t, timeline.Line(7), p.Kernel(1).API.Line, "the tie goes to the first in the file")
	assert.Empty(t, p.Problems)
}

// A file with its header only (a forked child that ended with _exit) is a
// process with no records, cut short.
func TestHeaderOnly(t *testing.T) {
	tl := build(t, header(8))
	require.Len(t, tl.Processes, 1)
	p := tl.Processes[0]
	assert.Contains(t, p.Truncation, "no E line")
	assert.Nil(t, p.End)
	assert.Empty(t, p.Kernels)
	assert.Empty(t, tl.Notes)
}

// Recordings the golden tests run on: the synthetic ones (package
// synth), then every real recording in fixtures/cupti, one row per
// folder (one run of a program, a file per process).
var recordings = []struct {
	name  string
	files []string
	real  bool // written by the CUPTI library on a GPU: every kernel's launch call is there
}{
	{"synthetic-two-processes", []string{"../cupti/testdata/synthetic-4242.tsv", "../cupti/testdata/synthetic-4244-nothreads.tsv"}, false},
	{"synthetic-truncated", []string{"../cupti/testdata/synthetic-4243-truncated.tsv"}, false},
	{"h100-nvtx-ranges-ranges", realFiles("h100-nvtx-ranges/ranges"), true},
	{"h100-nvtx-ranges-domains", realFiles("h100-nvtx-ranges/domains"), true},
	{"h100-nvtx-ranges-twoproc", realFiles("h100-nvtx-ranges/twoproc"), true},
	{"h100-nvtx-ranges-twoproc-exec", realFiles("h100-nvtx-ranges/twoproc-exec"), true},
	{"h100-nvtx-more-all", realFiles("h100-nvtx-more/all"), true},
	{"h100-nvtx-more-killed", realFiles("h100-nvtx-more/killed"), true},
	{"h100-torch-nvtx", realFiles("h100-torch-nvtx"), true},
}

// realDir holds the real recordings.
const realDir = "../../fixtures/cupti/"

// realFiles is the record files of one real recording's folder.
func realFiles(dir string) []string {
	files, err := filepath.Glob(filepath.Join(realDir, dir, "cupti-*.tsv"))
	if err != nil || len(files) == 0 {
		panic(fmt.Sprintf("no record files in %s (%v)", dir, err))
	}
	return files
}

// TestRealRecordingsListed keeps the table above in step with the folder:
// every folder of real record files is a row.
func TestRealRecordingsListed(t *testing.T) {
	listed := map[string]bool{}
	for _, rc := range recordings {
		for _, f := range rc.files {
			listed[filepath.Dir(f)] = true
		}
	}
	var dirs []string
	require.NoError(t, filepath.WalkDir(realDir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".tsv") && !slices.Contains(dirs, filepath.Dir(p)) {
			dirs = append(dirs, filepath.Dir(p))
		}
		return err
	}))
	require.NotEmpty(t, dirs)
	for _, d := range dirs {
		assert.True(t, listed[d], "%s is not a row of recordings", d)
	}
}

// countRecords counts each record type of a file with the reader alone, and
// checks the count against the file's E line where it has one.
func countRecords(t *testing.T, path string) map[string]int {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	rd := cupti.NewReader(f, path)
	n := map[string]int{}
	for rd.Scan() {
		rec := rd.Record()
		if se, ok := rec.(*cupti.SyntaxError); ok {
			t.Fatal(se)
		}
		n[fmt.Sprintf("%T", rec)]++
	}
	require.NoError(t, rd.Err())
	if e := rd.End(); e != nil {
		assert.Equal(t, e.Records, uint64(rd.Records()-1), "%s: the E line counts the records before it", path)
		assert.Zero(t, e.Dropped, path)
	}
	return n
}

func TestRecordings(t *testing.T) {
	g := goldie.New(t, goldie.WithFixtureDir("../../golden/timeline"), goldie.WithNameSuffix(""))
	for _, rc := range recordings {
		t.Run(rc.name, func(t *testing.T) {
			tl, err := timeline.ReadFiles(rc.files...)
			require.NoError(t, err)

			// The kernel table and the region report, through the ncu aggregators.
			ka := model.NewKernelAggregator()
			ka.KeepSpread()
			ra, err := regions.New(regions.Config{Aggregate: true, TopKernels: 3})
			require.NoError(t, err)
			var dump strings.Builder
			var launches int
			var kernelNS float64
			for k, l := range tl.KernelLaunches() {
				require.NoError(t, ka.Add(rc.name, l))
				require.NoError(t, ra.Add(rc.name, l, false))
				fmt.Fprintf(&dump, "%d\t%d\tline %d\tdev %d\tstream %d\t%.0f ns\t%s\t[%s]\n", l.ProcessID, l.ID, l.Line, l.Device, k.Stream,
					l.Duration.Base, l.Kernel, l.NVTX.Path())
				launches++
				kernelNS += l.Duration.Base
			}
			g.Assert(t, rc.name+"-launches.txt", []byte(dump.String()))
			var md, kj, rj bytes.Buffer
			require.NoError(t, render.KernelsMarkdown(&md, ka.Table(rc.name)))
			require.NoError(t, render.KernelsJSON(&kj, ka.Table(rc.name), nil, nil))
			rep := ra.Report(rc.name)
			require.NoError(t, render.RegionsJSON(&rj, rep))
			g.Assert(t, rc.name+"-kernels.md", md.Bytes())
			g.Assert(t, rc.name+"-kernels.json", kj.Bytes())
			g.Assert(t, rc.name+"-regions.json", rj.Bytes())

			reps := map[int]*facts.PhaseReport{}
			for _, d := range []int{1, 2} {
				reps[d] = phases.Of(tl, phases.Options{Depth: d})
				g.Assert(t, fmt.Sprintf("%s-phases-depth%d.json", rc.name, d), indent(t, reps[d]))
			}
			g.Assert(t, rc.name+"-stages.json", indent(t, phases.Stages(tl, nil, nil)))
			var notes strings.Builder
			for _, p := range tl.Processes {
				fmt.Fprintf(&notes, "%s: pid %d, truncation %q, %d kernels, %d unattributed, %d launch calls, %d A records of a shared correlation id left out\n",
					p.File, p.Header.PID, p.Truncation, len(p.Kernels), p.Unattributed, len(p.APIs), p.SharedCorrelation)
				for _, pr := range p.Problems {
					fmt.Fprintf(&notes, "  %s\n", pr)
				}
			}
			g.Assert(t, rc.name+"-problems.txt", []byte(notes.String()))

			// Every record of the files is in the timeline: each file's
			// kernels, copies and launch calls (those left out for a
			// shared correlation id included) and marks, counted by the
			// reader alone; and the reader's count is the E line's.
			require.Len(t, tl.Processes, len(rc.files))
			for _, p := range tl.Processes {
				n := countRecords(t, p.File)
				assert.Equal(t, n["*cupti.KernelRecord"], len(p.Kernels), p.File)
				assert.Equal(t, n["*cupti.Memcpy"]+n["*cupti.Memset"], len(p.Copies), p.File)
				assert.Equal(t, n["*cupti.API"], len(p.APIs)+p.SharedCorrelation, p.File)
				assert.Equal(t, n["*cupti.Note"], len(p.Notes), p.File)
				if rc.real {
					// Each launch attributed: its launch call is there.
					assert.Zero(t, p.Unattributed, p.File)
					for i := range p.Kernels {
						k := p.Kernel(i)
						require.NotNil(t, k.API, "%s:%d", p.File, k.Line)
						assert.LessOrEqual(t, k.API.Start, k.Start, "%s:%d: launched before it ran", p.File, k.Line)
					}
					for _, c := range p.Copies {
						assert.NotNil(t, c.API, "%s:%d", p.File, c.Line)
					}
				}
			}

			// Two computations agree: the whole-run phases hold every
			// launch, and each depth-1 phase's kernel time is its region's
			// total in the regions report.
			var runKernels int64
			var runNS float64
			for _, sc := range reps[1].Scopes {
				runKernels += sc.Run.Kernels
				runNS += float64(sc.Run.KernelNS)
				for _, ph := range sc.Phases {
					r := findRegion(rep, sc.ProcessID, sc.Device, ph.Name)
					if ph.Kernels == 0 {
						// A phase of copies only (early@copies in
						// h100-nvtx-more): regions are made of kernels.
						assert.Nil(t, r, ph.Name)
						assert.NotZero(t, ph.Memcpy.Count+ph.Memset.Count, ph.Name)
						continue
					}
					require.NotNil(t, r, ph.Name)
					assert.InDelta(t, float64(ph.KernelNS)/1e6, r.TotalMS, 1e-9, ph.Name)
					assert.Equal(t, ph.Kernels, r.KernelCount, ph.Name)
				}
			}
			assert.Equal(t, int64(launches), runKernels)
			assert.InDelta(t, kernelNS, runNS, 1e-6)
		})
	}
}

func findRegion(rep *facts.RegionReport, pid int64, dev model.DeviceID, name string) *facts.Region {
	for _, sc := range rep.Scopes {
		if sc.ProcessID != pid || sc.Device != dev {
			continue
		}
		for i := range sc.Regions {
			if sc.Regions[i].Name == name {
				return &sc.Regions[i]
			}
		}
	}
	return nil
}

func indent(t testing.TB, v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(v))
	return b.Bytes()
}

// The generator's structure, checked from the timeline side: every kernel of
// a complete synthetic recording is attributed, prefill's launches to
// "prefill", decode's to "decode_all/decode_step".
func TestSyntheticAttribution(t *testing.T) {
	c := synth.Small(77)
	c.PrefillKernels, c.DecodeSteps, c.StepKernels = 5, 7, 3
	var buf bytes.Buffer
	require.NoError(t, synth.Write(&buf, c))
	b := timeline.NewBuilder()
	require.NoError(t, b.Read(&buf, "gen.tsv"))
	tl, err := b.Build()
	require.NoError(t, err)
	count := map[string]int{}
	for l := range tl.Launches() {
		count[l.NVTX.Path()]++
	}
	assert.Equal(t, map[string]int{"prefill": 5, "decode_all/decode_step": 21, `LLM@load:weights\\shard` + "\t0": 1}, count)
	assert.Equal(t, c.Kernels(), 27)
	var names []string
	for _, s := range phases.Stages(tl, nil, nil) {
		names = append(names, s.Name)
		if s.Name == "decode_step" {
			assert.Len(t, s.DurationsNS, 7, "decode_step: one wall time per step")
		}
	}
	assert.Equal(t, []string{"generate", "prefill", `LLM@load:weights\\shard` + "\t0", "decode_all", "decode_step"}, names)
}

// BenchmarkAttribution reads and attributes a SYNTHETIC recording of about
// 1M kernels, written in memory by package synth (never committed).
func BenchmarkAttribution(b *testing.B) {
	c := synth.Small(9001)
	c.PrefillKernels, c.DecodeSteps, c.StepKernels = 1000, benchSteps, 10
	var buf bytes.Buffer
	require.NoError(b, synth.Write(&buf, c))
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		bl := timeline.NewBuilder()
		require.NoError(b, bl.Read(bytes.NewReader(data), "bench.tsv"))
		tl, err := bl.Build()
		require.NoError(b, err)
		if len(tl.Processes[0].Kernels) != c.Kernels() {
			b.Fatal("kernels lost")
		}
	}
	b.ReportMetric(float64(c.Kernels()), "kernels")
}

// benchSteps makes BenchmarkAttribution's recording 1,000,501 kernels.
var benchSteps = 99_950
