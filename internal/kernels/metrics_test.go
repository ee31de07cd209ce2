package kernels

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sebdah/goldie/v2"

	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/ncu"
)

const goldenDir = "../../golden/classify"

// h200 are NVIDIA's H200 SXM datasheet peaks: 1,979 TFLOP/s BF16 tensor with
// sparsity, so 989 dense, and 4.8 TB/s of HBM3e. The recorded runs are from
// an H200; the deep pass's own peak columns are not used.
var h200 = Peak{FLOPS: 989e12, BytesPerSec: 4.8e12}

// The two recorded deepprof sessions (fixtures/README.md, "Recorded
// sessions").
var recordedRuns = []string{"tiny-llama", "llama3-8b-roofline"}

func runRaw(run string) string { return "runs/" + run + "/ncu/raw.csv.gz" }

func readFixture(t *testing.T, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixturesDir, rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func fromFixture(t *testing.T, rel string) map[string]*Metrics {
	t.Helper()
	ms, err := MetricsFromReader(ncu.NewReader(bytes.NewReader(readFixture(t, rel)), rel, ncu.Options{Metrics: Columns()}), rel)
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

// dump writes the per-kernel metrics table and the classification, one
// block per kernel, longest first.
func dump(source string, ms map[string]*Metrics, peak Peak, peakName string) string {
	var b strings.Builder
	sorted := Sorted(ms)
	launches := 0
	for _, m := range sorted {
		launches += m.Launches
	}
	fmt.Fprintf(&b, "source: %s\nkernels: %d  launches: %d\n", source, len(sorted), launches)
	fmt.Fprintf(&b, "bound: Classify(m, %s, %d)\n", peakName, DefaultThresholdPct)
	roof := peak.FLOPS > 0 && peak.BytesPerSec > 0
	if roof {
		fmt.Fprintf(&b, "roofline bound: the roofline rule alone (HasSOL cleared), same peaks\n")
	}
	cats := Default()
	for i, m := range sorted {
		fmt.Fprintf(&b, "\n%d. %s\n", i+1, m.Kernel)
		fmt.Fprintf(&b, "   category: %s\n", cats.Of(m.Kernel))
		fmt.Fprintf(&b, "   launches: %d  duration_ns: %.6g\n", m.Launches, m.DurationNS)
		if m.HasSOL {
			fmt.Fprintf(&b, "   sol: sm_pct %.6g  mem_pct %.6g\n", m.SMPct, m.MemPct)
		} else {
			fmt.Fprintf(&b, "   sol: none\n")
		}
		if m.HasRoofline {
			fmt.Fprintf(&b, "   roofline: flops %.6g  dram_bytes %.6g", m.FLOPs, m.DRAMBytes)
			if in, ok := m.Intensity(); ok {
				fmt.Fprintf(&b, "  intensity %.6g", in)
			}
			f, _ := m.FLOPS()
			bw, _ := m.BytesPerSec()
			fmt.Fprintf(&b, "  flop_per_s %.6g  byte_per_s %.6g\n", f, bw)
		} else {
			fmt.Fprintf(&b, "   roofline: none\n")
		}
		bd := Classify(*m, peak, DefaultThresholdPct)
		fmt.Fprintf(&b, "   bound: %s [%s] %s\n", bd.Class, bd.Rule, bd.Why)
		if roof {
			noSOL := *m
			noSOL.HasSOL = false
			bd := Classify(noSOL, peak, DefaultThresholdPct)
			fmt.Fprintf(&b, "   roofline bound: %s [%s] %s\n", bd.Class, bd.Rule, bd.Why)
		}
	}
	return b.String()
}

// TestFromReaderRecordedRuns: the per-kernel table of each recorded run's
// deep pass, and its classification.
func TestFromReaderRecordedRuns(t *testing.T) {
	g := goldie.New(t, goldie.WithFixtureDir(goldenDir), goldie.WithNameSuffix(""))
	for _, run := range recordedRuns {
		t.Run(run, func(t *testing.T) {
			src := runRaw(run)
			ms := fromFixture(t, src)
			peak, peakName := Peak{}, "Peak{}"
			if run == "llama3-8b-roofline" {
				peak, peakName = h200, "H200 datasheet peaks (989 TFLOP/s, 4.8 TB/s)"
			}
			g.Assert(t, run+"-raw.metrics.txt", []byte(dump(src, ms, peak, peakName)))
			for i, m := range Sorted(ms) {
				if i < 5 {
					t.Logf("%s: %s: %s", run, Classify(*m, peak, 0).Class, m.Kernel)
				}
			}
		})
	}
}

// TestFromReaderJoinsKernelsJSON: the keys are kernel names as the kernel
// table (model.KernelAggregator) writes them. Every deep-pass kernel is one the run's timing pass
// saw, and kernels.json (the timing pass's top 10) joins on kernel_name for
// those the deep pass sampled (it profiles a sample of launches of the top
// kernels' functions, so not every top kernel has deep-pass metrics).
func TestFromReaderJoinsKernelsJSON(t *testing.T) {
	names := fixtureNames(t)
	for _, run := range recordedRuns {
		ms := fromFixture(t, runRaw(run))
		for k := range ms {
			if !slices.Contains(names[k], "runs/"+run+"/ncu/timing-raw.csv.gz") {
				t.Errorf("%s: deep-pass kernel %q is not in the timing pass", run, k)
			}
		}
		var joined, top int
		for name, srcs := range names {
			if slices.Contains(srcs, "runs/"+run+"/kernels.json") {
				top++
				if ms[name] != nil {
					joined++
				}
			}
		}
		t.Logf("%s: %d of kernels.json's %d kernels have deep-pass metrics", run, joined, top)
		if joined == 0 {
			t.Errorf("%s: no kernels.json kernel_name joins the deep pass", run)
		}
	}
}

// TestPrefillGEMMFLOPs checks the units of the tensor-core counter: the
// 8B run's first prefill launch of nvjet_sm90_tst_128x128_64x6_2x1_v_bz_TNT
// is a 512-token 4096x4096 projection, so it does 2*512*4096*4096 FLOPs.
func TestPrefillGEMMFLOPs(t *testing.T) {
	const src = "runs/llama3-8b-roofline/ncu/raw.csv.gz"
	const kernel = "nvjet_sm90_tst_128x128_64x6_2x1_v_bz_TNT"
	const tokens, hidden = 512, 4096
	want := 2.0 * tokens * hidden * hidden

	r := ncu.NewReader(bytes.NewReader(readFixture(t, src)), src, ncu.Options{Metrics: Columns()})
	var l *model.Launch
	for r.Scan() && l == nil {
		if rec, ok := r.Record().(*model.Launch); ok && rec.Kernel == kernel &&
			rec.NVTX != nil && len(rec.NVTX.Levels) > 0 && rec.NVTX.Levels[0].Name == "prefill" {
			l = rec
		}
	}
	if l == nil {
		t.Fatalf("%s: no prefill launch of %s (err %v)", src, kernel, r.Err())
	}
	var got model.Value
	for _, m := range l.Metrics {
		if m.Name == "sm__ops_path_tensor_src_bf16_dst_fp32.sum" {
			got = m.Value
		}
	}
	if !got.Valid || got.Base != want {
		t.Fatalf("launch %d (line %d): sm__ops_path_tensor_src_bf16_dst_fp32.sum = %q (%v), want 2*%d*%d*%d = %.0f",
			l.ID, l.Line, got.Orig, got.Base, tokens, hidden, hidden, want)
	}
	ms, err := measureLaunch(src, l)
	if err != nil {
		t.Fatal(err)
	}
	// The GEMM executes no non-tensor FP instruction: its FLOPs are the
	// tensor ops alone.
	if ms.flops != want {
		t.Errorf("launch %d: FLOPs %.0f, want %.0f", l.ID, ms.flops, want)
	}
	// DRAM bytes: at least the bf16 weight matrix, its input and its output,
	// read or written once (4096*4096*2 + 2*512*4096*2 = 41.9 MB); a cache
	// hit can save some, a unit error would be off by 1000s.
	least := float64(hidden*hidden*2 + 2*tokens*hidden*2)
	if ms.dram < 0.5*least || ms.dram > 2*least {
		t.Errorf("launch %d: DRAM bytes %.4g, want about %.4g", l.ID, ms.dram, least)
	}
	t.Logf("launch %d: %.0f FLOPs, %.4g DRAM bytes (%.4g minimal), %.4g ns: %.1f TFLOP/s",
		l.ID, ms.flops, ms.dram, least, ms.durNS, ms.flops/ms.durNS/1e3)
}

// TestFromReaderDetails: the tiny-llama details page (same report) gives the
// same launches and, within its 2-digit rounding, the same SOL means.
func TestFromReaderDetails(t *testing.T) {
	raw := fromFixture(t, runRaw("tiny-llama"))
	det := fromFixture(t, "runs/tiny-llama/ncu/details.csv.gz")
	if len(raw) != len(det) {
		t.Fatalf("raw has %d kernels, details %d", len(raw), len(det))
	}
	for k, r := range raw {
		d := det[k]
		if d == nil {
			t.Errorf("details lacks %q", k)
			continue
		}
		if d.Launches != r.Launches || !d.HasSOL || d.HasRoofline {
			t.Errorf("%q: details %+v, raw %+v", k, *d, *r)
		}
		if math.Abs(d.SMPct-r.SMPct) > 0.01 || math.Abs(d.MemPct-r.MemPct) > 0.01 {
			t.Errorf("%q: details SOL %.4f/%.4f, raw %.4f/%.4f", k, d.SMPct, d.MemPct, r.SMPct, r.MemPct)
		}
	}
}

// TestFromReaderNeedsOptions: a raw page read without ncu.Options{Metrics: Columns()} is refused,
// not read as "no SOL".
func TestFromReaderNeedsOptions(t *testing.T) {
	src := runRaw("tiny-llama")
	_, err := MetricsFromReader(ncu.NewReader(bytes.NewReader(readFixture(t, src)), src, ncu.Options{}), src)
	if err == nil || !strings.Contains(err.Error(), "make the reader with ncu.Options{Metrics: kernels.Columns()}") {
		t.Errorf("err = %v, want one that says to use kernels.Columns()", err)
	}
}

// TestFromReaderUnknownTensorColumn: a SYNTHETIC copy of the 8B raw page
// with one tensor column renamed to a type this package does not list is
// refused rather than undercounted.
func TestFromReaderUnknownTensorColumn(t *testing.T) {
	page := gunzip(t, readFixture(t, runRaw("llama3-8b-roofline")))
	header, rest, _ := bytes.Cut(page, []byte("\n"))
	header = bytes.Replace(header, []byte(`"sm__ops_path_tensor_src_fp16.sum"`), []byte(`"sm__ops_path_tensor_src_fp6_dst_fp32.sum"`), 1)
	synthetic := append(append(header, '\n'), rest...)
	const name = "synthetic-unknown-tensor-column.csv"
	_, err := MetricsFromReader(ncu.NewReader(bytes.NewReader(synthetic), name, ncu.Options{Metrics: Columns()}), name)
	if err == nil || !strings.Contains(err.Error(), "sm__ops_path_tensor_src_fp6_dst_fp32.sum") {
		t.Errorf("err = %v, want one naming the unknown column", err)
	}
	// A reader made for several consumers may keep the column for another:
	// it is still refused, not counted.
	opts := ncu.Options{Metrics: Columns()}
	opts.Metrics = append(opts.Metrics, "sm__ops_path_tensor_src_fp6_dst_fp32.sum")
	_, err = MetricsFromReader(ncu.NewReader(bytes.NewReader(synthetic), name, opts), name)
	if err == nil || !strings.Contains(err.Error(), "sm__ops_path_tensor_src_fp6_dst_fp32.sum counts toward FLOPs but package kernels does not know it") {
		t.Errorf("err = %v, want one naming the unknown column, read or not", err)
	}
}

// badDuration is a SYNTHETIC copy of a raw page whose first launch (line 3)
// has "fast" for its gpu__time_duration.sum.
func badDuration(t *testing.T, lines [][]byte) []byte {
	t.Helper()
	col := -1
	for i, h := range bytes.Split(bytes.TrimSpace(lines[0]), []byte(`","`)) {
		if string(bytes.Trim(h, `"`)) == "gpu__time_duration.sum" {
			col = i
		}
	}
	if col < 0 {
		t.Fatal("no gpu__time_duration.sum column")
	}
	row := bytes.Split(bytes.TrimRight(lines[2], "\r\n"), []byte(`","`))
	row[col] = []byte("fast")
	out := append([]byte(nil), bytes.Join(lines[:2], nil)...)
	out = append(out, bytes.Join(row, []byte(`","`))...)
	out = append(out, '\n')
	return append(out, bytes.Join(lines[3:], nil)...)
}

// TestFromReaderMalformed: SYNTHETIC truncated copies of a recorded raw
// page give a positioned *model.SyntaxError, not a panic or a partial table.
func TestFromReaderMalformed(t *testing.T) {
	page := gunzip(t, readFixture(t, runRaw("llama3-8b-roofline")))
	lines := bytes.SplitAfter(page, []byte("\n"))
	// Byte offset of the start of line n (1-based).
	start := func(n int) int {
		off := 0
		for _, l := range lines[:n-1] {
			off += len(l)
		}
		return off
	}
	for _, tc := range []struct {
		name string
		data []byte
		line int
	}{
		// Cut between two fields of the 6th line (the 4th launch): the row
		// is short.
		{"synthetic-cut-mid-row.csv", page[:start(6)+bytes.Index(lines[5], []byte(`","`))+1], 6},
		// Cut inside a quoted field: an unterminated quote.
		{"synthetic-cut-in-quote.csv", page[:start(6)+bytes.Index(lines[5], []byte(`","`))+5], 6},
		// The units row alone is cut.
		{"synthetic-cut-units-row.csv", page[:start(2)+len(lines[1])/2], 2},
		// Gzip cut short.
		{"synthetic-cut-gzip.csv.gz", readFixture(t, runRaw("llama3-8b-roofline"))[:20000], 0},
		// A launch row with a duration that is not a number.
		{"synthetic-bad-duration.csv", badDuration(t, lines), 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ms, err := MetricsFromReader(ncu.NewReader(bytes.NewReader(tc.data), tc.name, ncu.Options{Metrics: Columns()}), tc.name)
			if err == nil {
				t.Fatalf("no error; %d kernels", len(ms))
			}
			if ms != nil {
				t.Errorf("a table came with the error")
			}
			if !strings.HasPrefix(err.Error(), tc.name+":") {
				t.Errorf("error %q does not start with the file name", err)
			}
			if tc.line == 0 {
				return // an I/O error of the gzip stream has no line
			}
			var se *model.SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("error %T %q is not an *model.SyntaxError", err, err)
			}
			if se.File != tc.name || se.Line != tc.line {
				t.Errorf("error at %s:%d, want %s:%d (%s)", se.File, se.Line, tc.name, tc.line, se.Msg)
			}
		})
	}
}

// TestMeasureLaunch checks the FLOP sum on SYNTHETIC launches: which tensor
// columns count, the instruction weights, and the rate-times-cycles path.
func TestMeasureLaunch(t *testing.T) {
	v := func(name, text, unit string) model.Metric {
		val, err := model.Parse(text, unit)
		if err != nil {
			t.Fatal(err)
		}
		return model.Metric{Name: name, Value: val}
	}
	dur, _ := model.Parse("2", "us")
	for _, tc := range []struct {
		name    string
		metrics []model.Metric
		flops   float64
		hasF    bool
		dram    float64
		hasD    bool
	}{
		{"nothing", nil, 0, false, 0, false},
		{"sparsity breakdown of a present total is not added again", []model.Metric{
			v("sm__ops_path_tensor_src_fp8.sum", "100", ""),
			v("sm__ops_path_tensor_src_fp8_sparsity_off.sum", "60", ""),
			v("sm__ops_path_tensor_src_fp8_sparsity_on.sum", "40", ""),
			v("sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum", "999", ""),
		}, 100, true, 0, false},
		{"sparsity halves count when there is no total (H200 fp8)", []model.Metric{
			v("sm__ops_path_tensor_src_fp8_sparsity_off.sum", "60", ""),
			v("sm__ops_path_tensor_src_fp8_sparsity_on.sum", "40", ""),
			v("sm__ops_path_tensor_src_bf16_dst_fp32.sum", "1,000", ""),
		}, 1100, true, 0, false},
		{"n/a counts as not measured", []model.Metric{
			v("sm__ops_path_tensor_src_bf16_dst_bf16.sum", "n/a", ""),
		}, 0, false, 0, false},
		{"instruction rates times cycles, weighted", []model.Metric{
			v(SMSPCyclesMetric, "1,000", "cycle"),
			v(fpRateName("fadd"), "1", "inst/cycle"),
			v(fpRateName("fmul"), "2", "inst/cycle"),
			v(fpRateName("ffma"), "3", "inst/cycle"),
			v(fpRateName("hadd"), "4", "inst/cycle"),
			v(fpRateName("hmul"), "5", "inst/cycle"),
			v(fpRateName("hfma"), "6", "inst/cycle"),
			v(fpRateName("dadd"), "7", "inst/cycle"),
			v(fpRateName("dmul"), "8", "inst/cycle"),
			v(fpRateName("dfma"), "0.5", "inst/cycle"),
		}, 1000 * (1 + 2 + 2*3 + 2*4 + 2*5 + 4*6 + 7 + 8 + 2*0.5), true, 0, false},
		{"rates without cycles are not counts", []model.Metric{
			v(fpRateName("ffma"), "3", "inst/cycle"),
		}, 0, false, 0, false},
		{"counts win over rates", []model.Metric{
			v(SMSPCyclesMetric, "1,000", "cycle"),
			v(fpRateName("ffma"), "3", "inst/cycle"),
			v("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", "10", "Kinst"),
		}, 2 * 10e3, true, 0, false},
		{"DRAM rate times duration", []model.Metric{
			v(DRAMRateMetric, "1.5", "Tbyte/s"),
		}, 0, false, 1.5e12 * 2e-6, true},
		{"DRAM count wins over rate", []model.Metric{
			v(DRAMRateMetric, "1.5", "Tbyte/s"),
			v(DRAMBytesMetric, "4", "Mbyte"),
		}, 0, false, 4e6, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := &model.Launch{Line: 7, ID: 3, Kernel: "k", Duration: dur, Metrics: tc.metrics}
			m, err := measureLaunch("synthetic", l)
			if err != nil {
				t.Fatal(err)
			}
			if m.flops != tc.flops || m.hasFLOPs != tc.hasF || math.Abs(m.dram-tc.dram) > 1e-6*tc.dram || m.hasDRAM != tc.hasD {
				t.Errorf("got flops %v (%v) dram %v (%v), want %v (%v) %v (%v)", m.flops, m.hasFLOPs, m.dram, m.hasDRAM, tc.flops, tc.hasF, tc.dram, tc.hasD)
			}
		})
	}

	// A unit this package cannot read is a positioned error.
	l := &model.Launch{Line: 7, ID: 3, Kernel: "k", Duration: dur, Metrics: []model.Metric{v(DRAMRateMetric, "1.5", "Tbyte")}}
	_, err := measureLaunch("synthetic", l)
	var se *model.SyntaxError
	if !errors.As(err, &se) || se.Line != 7 || !strings.Contains(se.Msg, "byte/second") {
		t.Errorf("err = %v, want synthetic:7 about the unit", err)
	}
	// No duration.
	_, err = measureLaunch("synthetic", &model.Launch{Line: 9, ID: 4})
	if !errors.As(err, &se) || se.Line != 9 {
		t.Errorf("err = %v, want synthetic:9", err)
	}
}

// TestMeasureLaunchSOLAndUnits checks, on SYNTHETIC launches, where the SOL
// throughputs come from and the exact positioned error for a value in a unit
// this package does not read, one per metric it reads; when several are
// wrong, the first in reading order (SOL, FLOPs, DRAM) is the one reported.
func TestMeasureLaunchSOLAndUnits(t *testing.T) {
	v := func(section, name, text, unit string) model.Metric {
		val, err := model.Parse(text, unit)
		if err != nil {
			t.Fatal(err)
		}
		return model.Metric{Section: section, Name: name, Value: val}
	}
	raw := func(name, text, unit string) model.Metric { return v("", name, text, unit) }
	sol := func(name, text, unit string) model.Metric { return v(detailsSOLSection, name, text, unit) }
	dur, _ := model.Parse("2", "us")
	for _, tc := range []struct {
		name    string
		metrics []model.Metric
		sm, mem float64
		hasSOL  bool
		err     string
	}{
		{"raw columns", []model.Metric{raw(SMThroughputMetric, "40", "%"), raw(MemThroughputMetric, "70", "%")}, 40, 70, true, ""},
		{"details rows", []model.Metric{sol(detailsSMName, "41", "%"), sol(detailsMemName, "71", "%")}, 41, 71, true, ""},
		{"raw column wins over details row", []model.Metric{
			sol(detailsSMName, "41", "%"), raw(SMThroughputMetric, "40", "%"), sol(detailsMemName, "71", "%"),
		}, 40, 71, true, ""},
		{"a details row of another section is not SOL", []model.Metric{
			v("Memory Workload Analysis", detailsMemName, "71", "%"), raw(SMThroughputMetric, "40", "%"),
		}, 0, 0, false, ""},
		{"one throughput is no SOL", []model.Metric{raw(SMThroughputMetric, "40", "%")}, 0, 0, false, ""},
		{"SM column unit", []model.Metric{raw(SMThroughputMetric, "40", "cycle")}, 0, 0, false,
			`synthetic:7: launch 3: sm__throughput.avg.pct_of_peak_sustained_elapsed has unit "cycle", not "%"`},
		{"SM row unit", []model.Metric{sol(detailsSMName, "40", "cycle")}, 0, 0, false,
			`synthetic:7: launch 3: Compute (SM) Throughput has unit "cycle", not %`},
		{"memory column unit", []model.Metric{raw(MemThroughputMetric, "40", "byte")}, 0, 0, false,
			`synthetic:7: launch 3: gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed has unit "byte", not "%"`},
		{"memory row unit", []model.Metric{sol(detailsMemName, "40", "byte")}, 0, 0, false,
			`synthetic:7: launch 3: Memory Throughput has unit "byte", not %`},
		{"tensor count unit", []model.Metric{raw("sm__ops_path_tensor_src_fp8.sum", "1", "inst")}, 0, 0, false,
			`synthetic:7: launch 3: sm__ops_path_tensor_src_fp8.sum has unit "inst", not a plain count`},
		{"cycles unit", []model.Metric{raw(SMSPCyclesMetric, "1", "inst")}, 0, 0, false,
			`synthetic:7: launch 3: smsp__cycles_elapsed.avg has unit "inst", not "cycle"`},
		{"instruction count unit", []model.Metric{raw("sm__sass_thread_inst_executed_op_hfma_pred_on.sum", "1", "cycle")}, 0, 0, false,
			`synthetic:7: launch 3: sm__sass_thread_inst_executed_op_hfma_pred_on.sum has unit "cycle", not "inst"`},
		{"instruction rate unit", []model.Metric{raw(SMSPCyclesMetric, "1", "cycle"), raw(fpRateName("dmul"), "1", "inst")}, 0, 0, false,
			`synthetic:7: launch 3: smsp__sass_thread_inst_executed_op_dmul_pred_on.sum.per_cycle_elapsed has unit "inst", not "inst/cycle"`},
		{"instruction rate without cycles is not read", []model.Metric{raw(fpRateName("dmul"), "1", "inst")}, 0, 0, false, ""},
		{"DRAM bytes unit", []model.Metric{raw(DRAMBytesMetric, "1", "byte/s")}, 0, 0, false,
			`synthetic:7: launch 3: dram__bytes.sum has unit "byte/s", not "byte"`},
		{"the first wrong unit in reading order", []model.Metric{
			raw(DRAMBytesMetric, "1", "byte/s"), raw("sm__ops_path_tensor_src_fp8.sum", "1", "inst"), sol(detailsMemName, "40", "byte"),
		}, 0, 0, false, `synthetic:7: launch 3: Memory Throughput has unit "byte", not %`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := &model.Launch{Line: 7, ID: 3, Kernel: "k", Duration: dur, Metrics: tc.metrics}
			m, err := measureLaunch("synthetic", l)
			if tc.err != "" {
				var se *model.SyntaxError
				if !errors.As(err, &se) || err.Error() != tc.err {
					t.Fatalf("err = %v, want %s", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m.sm != tc.sm || m.mem != tc.mem || m.hasSOL != tc.hasSOL {
				t.Errorf("SOL %v/%v (%v), want %v/%v (%v)", m.sm, m.mem, m.hasSOL, tc.sm, tc.mem, tc.hasSOL)
			}
		})
	}
}

// FuzzFromReader: no input panics MetricsFromReader, and a table it returns is
// consistent. Seeded with the head of each recorded run's raw page.
func FuzzFromReader(f *testing.F) {
	for _, run := range recordedRuns {
		b, err := os.ReadFile(filepath.Join(fixturesDir, runRaw(run)))
		if err != nil {
			f.Fatal(err)
		}
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			f.Fatal(err)
		}
		page, err := io.ReadAll(zr)
		if err != nil {
			f.Fatal(err)
		}
		lines := bytes.SplitAfter(page, []byte("\n"))
		f.Add(bytes.Join(lines[:4], nil))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ms, err := MetricsFromReader(ncu.NewReader(bytes.NewReader(data), "fuzz", ncu.Options{Metrics: Columns()}), "fuzz")
		if err != nil {
			if ms != nil {
				t.Error("a table came with the error")
			}
			return
		}
		for k, m := range ms {
			if m.Kernel != k || m.Launches < 1 {
				t.Errorf("%q: %+v", k, *m)
			}
			if !m.HasRoofline && (m.FLOPs != 0 || m.DRAMBytes != 0) {
				t.Errorf("%q: FLOPs or DRAM bytes without HasRoofline: %+v", k, *m)
			}
			_ = Classify(*m, h200, DefaultThresholdPct)
		}
	})
}
