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

	"github.com/llm-perf-opt/deepprof/internal/cupti"
	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/regions"
	"github.com/llm-perf-opt/deepprof/internal/render"
	"github.com/llm-perf-opt/deepprof/internal/synth"
	"github.com/llm-perf-opt/deepprof/internal/timeline"
)

// build reads SYNTHETIC record files given as text.
func build(t testing.TB, files ...string) *timeline.Timeline {
	t.Helper()
	b := timeline.NewBuilder()
	for i, f := range files {
		require.NoError(t, b.Read(strings.NewReader(f), fmt.Sprintf("f%d.tsv", i)))
	}
	tl, err := b.Build()
	require.NoError(t, err)
	return tl
}

func header(pid int) string {
	return fmt.Sprintf("#deepprof-cupti/1\tpid=%d\tppid=1\tcupti_api=1\tcuda_driver=2\tstart_ns=1000\texe=/usr/bin/prog\n", pid)
}

// k writes a kernel record: start, end, device, stream, correlation, name.
func k(start, end, dev, stream, corr int, name string) string {
	return fmt.Sprintf("K\t%d\t%d\t%d\t1\t%d\t%d\t1,1,1\t32,1,1\t8\t0\t0\t_Z%s\t%s\n", start, end, dev, stream, corr, name, name)
}

func a(start, tid, corr int) string {
	return fmt.Sprintf("A\t%d\t%d\t%d\t%d\truntime\t211\tcudaLaunchKernel\n", start, start+5, tid, corr)
}

func n(kind string, ts, tid int, domain, name string) string {
	return fmt.Sprintf("N\t%s\t%d\t%d\t0\t%s\t%s\n", kind, ts, tid, domain, name)
}

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
	rep := tl.Phases(timeline.PhaseOptions{Depth: 1})
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
		[]string{p.APIs[0].Function, p.APIs[1].Function, p.APIs[2].Function})
	assert.Equal(t, int64(110), p.Kernels[0].API.Start)
	assert.Equal(t, "r", p.Kernels[0].Range.Path(), "attributed at the runtime call (110), not the driver call (115, after the pop)")
	assert.Equal(t, timeline.Line(7), p.Kernels[1].API.Line, "the tie goes to the first in the file")
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

// phaseFile is SYNTHETIC, made so every figure can be worked out by hand.
// Thread 1: step (1000-1100), step (1200-1300), both in loop (990-1400).
// Step 1 launches k at 1010 (runs 1020-1040) and 1030 (1050-1060, on
// stream 7) and 1035 (1055-1070, stream 9: overlaps); a memcpy (1080-1090).
// Step 2 launches at 1210 (1300-1310), 1220 (1400-1450): its kernels run
// after the range ends. Thread 2, in no range, launches x (1210-1230), which
// makes device 0 busy inside step 2. One kernel outside every range, on
// device 1.
func phaseFile() string {
	return header(3) +
		n("push", 990, 1, "", "loop") + n("push", 1000, 1, "", "step") + n("pop", 1100, 1, "", "") +
		n("push", 1200, 1, "", "step") + n("pop", 1300, 1, "", "") + n("pop", 1400, 1, "", "") +
		a(1010, 1, 1) + k(1020, 1040, 0, 7, 1, "a") +
		a(1030, 1, 2) + k(1050, 1060, 0, 7, 2, "b") +
		a(1035, 1, 3) + k(1055, 1070, 0, 9, 3, "c") +
		"A\t1075\t1092\t1\t4\truntime\t51\tcudaMemcpy\n" + "C\t1080\t1090\t0\t1\t7\t4\tDtoH\t64\n" +
		a(1210, 1, 5) + k(1300, 1310, 0, 7, 5, "a") +
		a(1220, 1, 6) + k(1400, 1450, 0, 7, 6, "b") +
		a(1500, 1, 7) + k(1600, 1601, 1, 7, 7, "z") +
		a(1205, 2, 8) + k(1210, 1230, 0, 11, 8, "x") +
		"E\t0\t0\n"
}

func TestPhases(t *testing.T) {
	tl := build(t, phaseFile())
	rep := tl.Phases(timeline.PhaseOptions{Depth: 2, TopGaps: 2})
	require.Len(t, rep.Scopes, 2)
	d0 := rep.Scopes[0]
	assert.Equal(t, int64(3), d0.ProcessID)
	assert.Equal(t, model.DeviceID(0), d0.Device)

	// The whole run on device 0: 1020..1450; kernels busy 1020-1040,
	// 1050-1070, 1210-1230, 1300-1310, 1400-1450 = 20+20+20+10+50 = 120.
	run := d0.Run
	assert.Equal(t, "", run.Name)
	assert.Equal(t, int64(430), run.SpanNS)
	assert.Equal(t, int64(6), run.Kernels)
	assert.Equal(t, int64(20+10+15+10+50+20), run.KernelNS, "overlapping kernels count twice")
	assert.Equal(t, int64(120), run.BusyNS)
	assert.Equal(t, int64(310), run.IdleNS)
	assert.InDelta(t, 310.0/430, run.IdleShare, 1e-12)
	assert.True(t, run.LaunchBound)
	// Gaps: 1040-1050 (10), 1070-1210 (140), 1230-1300 (70), 1310-1400 (90).
	assert.Equal(t, int64(310), run.Gaps.SumNS)
	assert.Equal(t, int64(4), run.Gaps.Count)
	assert.Equal(t, []timeline.Gap{
		{AtNS: 70, NS: 140, Before: "c", After: "x", Instance: 1},
		{AtNS: 310, NS: 90, Before: "a", After: "b", Instance: 1},
	}, run.Gaps.Largest, "the 2 largest, at ns from start_ns 1000")
	// Latencies 10, 20, 20, 90, 180, 5.
	assert.Equal(t, timeline.Latency{Count: 6, MeanNS: 325.0 / 6, MedianNS: 20, MaxNS: 180}, run.Latency)
	assert.Equal(t, timeline.CopyStats{Count: 1, NS: 10, Bytes: 64}, run.Memcpy)

	require.Len(t, d0.Phases, 1)
	step := d0.Phases[0]
	assert.Equal(t, "loop/step", step.Name)
	assert.Equal(t, 2, step.Instances)
	assert.Equal(t, int64(5), step.Kernels, "x is not the step's kernel")
	// Instance 1: 1000..1100 (range) = 100, busy 40. Instance 2: 1200..1450
	// (its kernels end after the pop) = 250, busy 60: x runs in its window
	// but is not the step's, so it is not the step's busy time.
	assert.Equal(t, int64(350), step.SpanNS)
	assert.Equal(t, int64(100), step.BusyNS)
	assert.LessOrEqual(t, step.BusyNS, step.KernelNS, "busy is never more than the phase's own kernel time")
	assert.Equal(t, int64(250), step.IdleNS)
	assert.True(t, step.LaunchBound)
	// Gaps within instances only, between the step's own kernels: 10
	// (instance 1), 90 (instance 2); not the 1070-1210 between them.
	assert.Equal(t, int64(100), step.Gaps.SumNS)
	assert.Equal(t, []timeline.Gap{
		{AtNS: 310, NS: 90, Before: "a", After: "b", Instance: 2},
		{AtNS: 40, NS: 10, Before: "a", After: "b", Instance: 1},
	}, step.Gaps.Largest)
	assert.Equal(t, timeline.Latency{Count: 5, MeanNS: 64, MedianNS: 20, MaxNS: 180}, step.Latency)
	assert.Equal(t, int64(1), step.Memcpy.Count)

	// Depth 1: one instance of loop, 990..1450.
	rep1 := tl.Phases(timeline.PhaseOptions{Depth: 1})
	loop := rep1.Scopes[0].Phases[0]
	assert.Equal(t, "loop", loop.Name)
	assert.Equal(t, int64(460), loop.SpanNS)
	assert.Equal(t, int64(100), loop.BusyNS, "x, launched by another thread in no range, is not loop's")
	assert.Equal(t, int64(10+230+90), loop.Gaps.SumNS)

	// NestedDepth 2 over depth 1: loop/step reported inside loop, the
	// same numbers as a depth-2 report's phase; loop itself unchanged.
	nested := tl.Phases(timeline.PhaseOptions{Depth: 1, NestedDepth: 2})
	assert.Equal(t, rep1.Scopes[0].Phases, nested.Scopes[0].Phases)
	depth2 := tl.Phases(timeline.PhaseOptions{Depth: 2})
	assert.Equal(t, depth2.Scopes[0].Phases, nested.Scopes[0].Nested)
	assert.Equal(t, "loop/step", nested.Scopes[0].Nested[0].Name)
	assert.Empty(t, nested.Scopes[1].Nested, "device 1 has no range")
	assert.Empty(t, rep1.Scopes[0].Nested, "no NestedDepth: no nested regions")

	// Device 1: one kernel, no phase.
	d1 := rep.Scopes[1]
	assert.Equal(t, model.DeviceID(1), d1.Device)
	assert.Equal(t, int64(1), d1.Run.BusyNS)
	assert.False(t, d1.Run.LaunchBound)
	assert.Empty(t, d1.Phases)
}

func TestStages(t *testing.T) {
	tl := build(t, phaseFile()+"")
	st := tl.Stages(nil)
	assert.Equal(t, []timeline.Stage{
		{ProcessID: 3, Name: "loop", Kind: timeline.PushPop, DurationsNS: []int64{410}, Depth: 1},
		{ProcessID: 3, Name: "step", Kind: timeline.PushPop, DurationsNS: []int64{100, 100}, Depth: 2, Parent: "loop"},
	}, st)
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
			for l := range tl.Launches() {
				require.NoError(t, ka.Add(rc.name, l))
				require.NoError(t, ra.Add(rc.name, l, false))
				fmt.Fprintf(&dump, "%d\t%d\tline %d\tdev %s\tstream %s\t%.0f ns\t%s\t[%s]\n", l.ProcessID, l.ID, l.Line, l.Device, l.Stream,
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

			phases := map[int]*timeline.PhaseReport{}
			for _, d := range []int{1, 2} {
				phases[d] = tl.Phases(timeline.PhaseOptions{Depth: d})
				g.Assert(t, fmt.Sprintf("%s-phases-depth%d.json", rc.name, d), indent(t, phases[d]))
			}
			g.Assert(t, rc.name+"-stages.json", indent(t, tl.Stages(nil)))
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
				assert.Equal(t, n["*cupti.Kernel"], len(p.Kernels), p.File)
				assert.Equal(t, n["*cupti.Memcpy"]+n["*cupti.Memset"], len(p.Copies), p.File)
				assert.Equal(t, n["*cupti.API"], len(p.APIs)+p.SharedCorrelation, p.File)
				assert.Equal(t, n["*cupti.Note"], len(p.Notes), p.File)
				if rc.real {
					// Each launch attributed: its launch call is there.
					assert.Zero(t, p.Unattributed, p.File)
					for _, k := range p.Kernels {
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
			for _, sc := range phases[1].Scopes {
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

func findRegion(rep *regions.Report, pid int64, dev model.DeviceID, name string) *regions.Region {
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
	for _, s := range tl.Stages(nil) {
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

// TestUnclosedRangeOfACompleteProcess: in a process that ended normally,
// a push/pop range never popped (as NCCL's ncclCommInitRankConfig in the
// 2-GPU recording) is left out: the program's ranges under it are the
// outermost, and hold their launches.
func TestUnclosedRangeOfACompleteProcess(t *testing.T) {
	f := header(7) + n("push", 10, 1, "NCCL", "ncclCommInitRankConfig") +
		n("push", 100, 1, "", "prefill") + a(110, 1, 1) + k(200, 210, 0, 7, 1, "gemm") + n("pop", 300, 1, "", "") +
		a(310, 1, 2) + k(320, 330, 0, 7, 2, "after") + "E\t2\t0\n"
	tl := build(t, f)
	p := tl.Processes[0]
	require.Len(t, p.Ranges, 1)
	assert.Equal(t, "prefill", p.Ranges[0].Name)
	assert.Equal(t, 1, p.Ranges[0].Depth)
	assert.Nil(t, p.Ranges[0].Parent)
	assert.Contains(t, p.Problems, `f0.tsv:2: push/pop range "ncclCommInitRankConfig" on thread 1 never closed`)
	rep := tl.Phases(timeline.PhaseOptions{Depth: 1})
	require.Len(t, rep.Scopes[0].Phases, 1)
	assert.Equal(t, "prefill", rep.Scopes[0].Phases[0].Name)
	for l := range tl.Launches() {
		if l.Kernel == "gemm" {
			assert.Equal(t, []model.Range{{Name: "prefill"}}, l.NVTX.Levels)
		} else {
			require.NotNil(t, l.NVTX)
			assert.Empty(t, l.NVTX.Levels, "outside every range once the unclosed one is left out")
		}
	}
}

// TestTargets: the kernels asked for, by their mangled names, each with its
// launch configurations among the launches kept, in the order asked.
func TestTargets(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, synth.Write(&buf, synth.Small(7)))
	b := timeline.NewBuilder()
	require.NoError(t, b.Read(&buf, "gen.tsv"))
	tl, err := b.Build()
	require.NoError(t, err)
	all := func(*model.Launch) bool { return true }
	ts := tl.Targets([]string{"flash_fwd_kernel(Params)", "rmsnorm_kernel(float*, float const*, int)", "absent"}, all)
	require.Len(t, ts, 2)
	assert.Equal(t, "flash_fwd_kernel(Params)", ts[0].Name)
	assert.Equal(t, "_Z16flash_fwd_kernel6Params", ts[0].Mangled)
	assert.Equal(t, 1, ts[0].Configs, "one grid, block and shared memory")
	assert.Positive(t, ts[0].NS)
	assert.Equal(t, "_Z14rmsnorm_kernelPfPKfi", ts[1].Mangled)
	none := tl.Targets([]string{"flash_fwd_kernel(Params)"}, func(*model.Launch) bool { return false })
	assert.Empty(t, none, "no launch kept")
}

// records writes a record file of one process (pid) with the given kernels,
// as the CUPTI library would, and builds the timeline of it and more.
func records(t *testing.T, files map[int64][]cupti.Record) *timeline.Timeline {
	t.Helper()
	b := timeline.NewBuilder()
	for pid, ks := range files {
		var buf bytes.Buffer
		w := cupti.NewWriter(&buf)
		require.NoError(t, w.Write(&cupti.Header{PID: pid, PPID: 1, CUPTIAPI: 130001, CUDADriver: 13000, StartNS: 1, Exe: "/usr/bin/python3"}))
		for _, r := range ks {
			require.NoError(t, w.Write(r))
		}
		require.NoError(t, w.Flush())
		require.NoError(t, b.Read(&buf, fmt.Sprintf("cupti-%d.tsv", pid)))
	}
	tl, err := b.Build()
	require.NoError(t, err)
	return tl
}

// TestTargetsOrder: a target's launches in the order the program made them
// (correlation ids, not start times: two streams), each by its
// configuration numbered by first launch; a launch keep does not admit
// has its configuration's number when an admitted launch has that
// configuration, else -1; a kernel two processes launched has no order.
func TestTargetsOrder(t *testing.T) {
	k := func(start int64, corr uint32, stream uint32, grid uint32, mangled string) *cupti.Kernel {
		return &cupti.Kernel{Start: start, End: start + int64(grid)*10, Device: 0, Context: 1, Stream: stream, Correlation: corr,
			Grid: cupti.Dim3{X: grid, Y: 1, Z: 1}, Block: cupti.Dim3{X: 128, Y: 1, Z: 1}, Mangled: mangled, Demangled: mangled}
	}
	tl := records(t, map[int64][]cupti.Record{
		100: {
			k(1000, 1, 7, 9, "gemm"), // outside: a configuration never admitted
			k(2000, 3, 7, 4, "gemm"), // outside, but admitted later
			k(2500, 2, 8, 2, "gemm"), // launched before the one above, ran after it
			k(3000, 4, 7, 4, "gemm"),
			k(4000, 5, 7, 2, "gemm"),
			k(5000, 6, 7, 1, "shared"),
		},
		200: {k(1000, 1, 7, 1, "shared")},
	})
	keep := func(l *model.Launch) bool {
		return l.GridSize != "(9, 1, 1)" && !(l.GridSize == "(4, 1, 1)" && l.ID == 1)
	}
	ts := tl.Targets([]string{"gemm", "shared"}, keep)
	require.Len(t, ts, 2)
	g := ts[0]
	assert.Equal(t, "gemm", g.Mangled)
	assert.Equal(t, 2, g.Configs)
	assert.Equal(t, []int32{-1, 0, 1, 1, 0}, g.Order, "correlation order: grid 9 (never admitted), 2, 4, 4, 2")
	assert.Equal(t, []bool{false, true, false, true, true}, g.Admitted)
	assert.Equal(t, []int64{40, 40}, g.ConfigNS, "grid 2: two launches of 20 ns; grid 4: the admitted one of 40 ns")
	assert.Equal(t, int64(80), g.NS)
	assert.Nil(t, ts[1].Order, "two processes launched it")
	assert.Equal(t, int64(20), ts[1].NS)

	// The workload paused the recording at 3500 ns: what it launched
	// while paused is not known, so the order stops there; the time
	// recorded after it still counts.
	tl = records(t, map[int64][]cupti.Record{
		100: {
			k(1000, 1, 7, 2, "gemm"),
			k(2000, 2, 7, 4, "gemm"),
			&cupti.Note{Key: "recording", Value: "paused 3500"},
			&cupti.Note{Key: "recording", Value: "resumed 3600"},
			k(4000, 3, 7, 4, "gemm"),
		},
	})
	ts = tl.Targets([]string{"gemm"}, func(*model.Launch) bool { return true })
	require.Len(t, ts, 1)
	assert.Equal(t, []int32{0, 1}, ts[0].Order)
	assert.Equal(t, []int64{20, 80}, ts[0].ConfigNS)
	at, ok := timeline.FirstPause(tl.Processes[0])
	assert.True(t, ok)
	assert.Equal(t, int64(3500), at)

	// No order where the records do not number the launches as ncu
	// would: every launch after the pause, a CUDA graph launch (two
	// kernels of one correlation id) before it, records dropped.
	for name, recs := range map[string][]cupti.Record{
		"all after the pause": {&cupti.Note{Key: "recording", Value: "paused 500"}, k(1000, 1, 7, 2, "gemm")},
		"a graph launch":      {k(1000, 1, 7, 2, "gemm"), k(1100, 1, 7, 4, "other")},
		"records dropped":     {k(1000, 1, 7, 2, "gemm"), &cupti.Note{Key: "dropped_records", Value: "12"}},
	} {
		tl = records(t, map[int64][]cupti.Record{100: recs})
		ts = tl.Targets([]string{"gemm"}, func(*model.Launch) bool { return true })
		require.Len(t, ts, 1, name)
		assert.Nil(t, ts[0].Order, name)
		assert.Positive(t, ts[0].NS, name)
	}
}

// warmupFile is SYNTHETIC: three instances of gen (each with two steps
// launching one kernel each), the first 10x as long: the warm-up.
func warmupFile() string {
	var b strings.Builder
	b.WriteString(header(4))
	t, corr := 1000, 1
	for g, steps := range []int{2000, 200, 200} {
		b.WriteString(n("push", t, 1, "", "gen"))
		for range 2 {
			b.WriteString(n("push", t+1, 1, "", "step"))
			b.WriteString(a(t+2, 1, corr) + k(t+5, t+5+steps/4, 0, 7, corr, fmt.Sprintf("k%d", g)))
			corr++
			t += steps / 2
			b.WriteString(n("pop", t, 1, "", ""))
		}
		t += 10
		b.WriteString(n("pop", t, 1, "", ""))
		t += 100
	}
	return b.String() + "E\t0\t0\n"
}

// TestSteadyState (issue 34): one warm-up decision for every figure: the
// first gen is dropped, and its steps with it, from the stages and the
// phases alike; its figures are kept apart.
func TestSteadyState(t *testing.T) {
	tl := build(t, warmupFile())
	st := tl.SteadyState(nil)
	byName := map[string]timeline.Stage{}
	for _, s := range tl.Stages(st) {
		byName[s.Name] = s
	}
	assert.Len(t, byName["gen"].DurationsNS, 3, "the stage keeps its warm-up first, for its own rule to drop")
	assert.Len(t, byName["step"].DurationsNS, 4, "the 2 steps inside the dropped gen are not the step's instances")
	assert.Len(t, byName["step"].InWarmupNS, 2)
	assert.Nil(t, model.Summarize(msOf(byName["step"].DurationsNS)).WarmupMS, "no second warm-up among the steady steps")

	rep := tl.Phases(timeline.PhaseOptions{Depth: 1, NestedDepth: 2, Steady: st})
	gen := rep.Scopes[0].Phases[0]
	assert.Equal(t, 2, gen.Instances)
	assert.Equal(t, int64(4), gen.Kernels)
	require.NotNil(t, gen.Warmup)
	assert.Equal(t, 1, gen.Warmup.Instances)
	assert.Equal(t, int64(2), gen.Warmup.Kernels)
	step := rep.Scopes[0].Nested[0]
	assert.Equal(t, "gen/step", step.Name)
	assert.Equal(t, 4, step.Instances, "a step inside the warm-up gen is warm-up with it")
	require.NotNil(t, step.Warmup)
	assert.Equal(t, 2, step.Warmup.Instances)
	assert.Equal(t, rep.Scopes[0].Run.Kernels, gen.Kernels+gen.Warmup.Kernels, "the whole run keeps every kernel")

	none := tl.Phases(timeline.PhaseOptions{Depth: 1})
	assert.Equal(t, 3, none.Scopes[0].Phases[0].Instances, "no decision: every instance")
}

func msOf(ns []int64) []float64 {
	out := make([]float64, len(ns))
	for i, v := range ns {
		out[i] = float64(v) / 1e6
	}
	return out
}
