package nsys_test

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/nsys"
	"github.com/llm-perf-opt/deepprof/internal/render"
)

// kernSumFixtures are the recorded cuda_gpu_kern_sum exports (RTX 5090,
// DeepSeek-OCR; fixtures/README.md).
func kernSumFixtures(t testing.TB) map[string][]byte {
	t.Helper()
	paths, err := filepath.Glob(fixtures + "nsys/*/cuda_gpu_kern_sum.csv")
	require.NoError(t, err)
	require.Len(t, paths, 4)
	out := map[string][]byte{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		out[filepath.Base(filepath.Dir(p))] = b
	}
	return out
}

func TestKernelSumFixtures(t *testing.T) {
	var cov strings.Builder
	for name, data := range kernSumFixtures(t) {
		t.Run(name, func(t *testing.T) {
			sums, err := nsys.ReadKernelSums(bytes.NewReader(data), name)
			require.NoError(t, err)
			assert.Len(t, sums, bytes.Count(data, []byte("\n"))-1, "one row per line after the header")

			var pct, total float64
			for i, s := range sums {
				assert.Equal(t, i+2, s.Line)
				pct += s.TimePct
				total += s.TotalNS
				// The columns are where the header says: Avg * Instances is
				// Total, to the export's rounding of Avg to 0.1 ns.
				assert.InDelta(t, s.TotalNS, s.AvgNS*float64(s.Instances), 0.05*float64(s.Instances)+1, s.Name)
				assert.True(t, s.MinNS <= s.MedNS && s.MedNS <= s.MaxNS, s.Name)
			}
			assert.InDelta(t, 100, pct, 0.05*float64(len(sums)), "Time (%) sums to 100, each row rounded to 0.1")

			top := nsys.TopN(sums, 10)
			require.Len(t, top, 10)
			var buf bytes.Buffer
			require.NoError(t, render.KernelsJSON(&buf, model.KernelTable{Kernels: top}, nil, nil))
			newGoldie(t).Assert(t, name+".top10.json", buf.Bytes())
			fmt.Fprintf(&cov, "%s: top-10 covers %.4f of %.3f ms in %d kernels\n", name, nsys.Coverage(sums, top), total/1e6, len(sums))
		})
	}
	lines := strings.SplitAfter(cov.String(), "\n")
	slices.Sort(lines)
	newGoldie(t).Assert(t, "coverage.txt", []byte(strings.Join(lines, "")))
}

// A real export, as nsys prints it to stdout (the "Processing" preamble
// before the CSV) and with its times in another unit: both read the same.
// The preamble and the rescaled header are SYNTHETIC, made here from the
// recorded file.
func TestKernelSumPreambleAndUnits(t *testing.T) {
	data := kernSumFixtures(t)["rtx5090-dsocr-sam"]
	want, err := nsys.ReadKernelSums(bytes.NewReader(data), "x.csv")
	require.NoError(t, err)

	stdout := "Generating SQLite file /tmp/run.sqlite from /tmp/run.nsys-rep\n" +
		"Processing [/tmp/run.sqlite] with [/opt/nvidia/nsight-systems/reports/cuda_gpu_kern_sum.py]... \n\n" + string(data)
	got, err := nsys.ReadKernelSums(strings.NewReader(stdout), "x.csv")
	require.NoError(t, err)
	require.Len(t, got, len(want))
	for i := range got {
		assert.Equal(t, want[i].Line+3, got[i].Line)
		got[i].Line = want[i].Line
	}
	assert.Equal(t, want, got)

	// The same rows with every time column written in us (the header says so,
	// the numbers are divided by 1000).
	ls := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	var us strings.Builder
	us.WriteString(strings.ReplaceAll(ls[0], "(ns)", "(us)") + "\n")
	for _, l := range ls[1:] {
		f := strings.SplitN(l, ",", 9)
		for _, i := range []int{1, 3, 4, 5, 6, 7} {
			var v float64
			_, err := fmt.Sscan(f[i], &v)
			require.NoError(t, err)
			f[i] = fmt.Sprint(v / 1000)
		}
		us.WriteString(strings.Join(f, ",") + "\n")
	}
	got, err = nsys.ReadKernelSums(strings.NewReader(us.String()), "x.csv")
	require.NoError(t, err)
	for i := range got {
		assert.InEpsilon(t, want[i].TotalNS, got[i].TotalNS, 1e-12)
		assert.InEpsilon(t, want[i].MaxNS, got[i].MaxNS, 1e-12)
	}
}

// Each malformed input below is SYNTHETIC: made here, by code, from a real
// export, so that the rest of the file is what nsys really writes.
func TestKernelSumMalformed(t *testing.T) {
	data := string(kernSumFixtures(t)["rtx5090-dsocr-decode"])
	ls := strings.SplitAfter(data, "\n")
	header, row2, row3 := ls[0], ls[1], ls[2]
	rest := strings.Join(ls[3:], "")
	sub := func(s, old, new string) string {
		require.Contains(t, s, old)
		return strings.Replace(s, old, new, 1)
	}
	tests := []struct {
		name   string
		input  string
		fatal  string // wanted Err(), "" for none
		rowErr string // wanted first row error, "" for none
		rows   int    // good rows still read
	}{
		{name: "empty", input: "",
			fatal: "x.csv:1: empty input: expected `nsys stats --report cuda_gpu_kern_sum --format csv` output"},
		{name: "only nsys preamble", input: "Generating SQLite file a.sqlite from a.nsys-rep\nProcessing [a.sqlite] with [cuda_gpu_kern_sum.py]... \n",
			fatal: "x.csv:2: no CSV header after 2 line(s) of nsys output"},
		{name: "report skipped by nsys", input: "Processing [a.sqlite] with [cuda_gpu_kern_sum.py]... \nSKIPPED: a.sqlite does not contain CUDA kernel data.\n",
			fatal: `x.csv:2: nsys stats skipped the report: "SKIPPED: a.sqlite does not contain CUDA kernel data." (no cuda_gpu_kern_sum data in the capture: did the capture range open, and was the right API traced?)`},
		{name: "no Name column", input: sub(header, ",Name", ",Kernel") + row2,
			fatal: `x.csv:1: header has no "Name" column: not the CSV of nsys stats --report cuda_gpu_kern_sum`},
		{name: "no Total Time column", input: sub(header, "Total Time (ns)", "Sum (ns)") + row2,
			fatal: `x.csv:1: header has no "Total Time (<unit>)" column: not the CSV of nsys stats --report cuda_gpu_kern_sum`},
		{name: "time column without unit", input: sub(header, "Avg (ns)", "Avg") + row2,
			fatal: `x.csv:1: column "Avg" has no unit in parentheses, e.g. "Avg (ns)": cannot tell what its numbers measure`},
		{name: "unknown unit", input: sub(header, "Total Time (ns)", "Total Time (ticks)") + row2,
			fatal: `x.csv:1: column "Total Time (ticks)": unit "ticks" is not a time unit`},
		{name: "percent column in a time unit", input: sub(header, "Time (%)", "Time (ns)") + row2,
			fatal: `x.csv:1: column "Time (ns)": unit "ns" is not a percent unit`},
		{name: "duplicate column", input: sub(header, "Med (ns)", "Avg (ns)") + row2,
			fatal: `x.csv:1: column "Avg (ns)" appears twice`},
		{name: "header only", input: header,
			fatal: "x.csv:2: no kernel rows after the header: the capture holds no CUDA kernels"},
		{name: "non-numeric total", input: header + row2 + sub(row3, ",26427871,", ",2642787l,") + rest,
			rowErr: `x.csv:3: std::enable_if<!T7, void>::type internal::gemvx::kernel<int, int, __nv_bfloat16, __nv_bfloat16, __nv_bfloat16, float, (bool)0, (bool)1, (bool)1, (bool)0, (int)6, (bool)0, cublasGemvParamsEx<int, cublasGemvTensorStridedBatched<const __nv_bfloat16>, cublasGemvTensorStridedBatched<const __nv_bfloat16>, cublasGemvTensorStridedBatched<__nv_bfloat16>, float>>(T13): column 2: "2642787l" is not a number`,
			rows:   45},
		{name: "negative time", input: header + sub(row2, ",2080,", ",-2080,") + row3,
			rowErr: `column 6: "-2080" is negative`, rows: 1},
		{name: "NaN", input: header + sub(row2, ",417.2,", ",NaN,") + row3,
			rowErr: `column 8: "NaN" is not a number (decimal notation only)`, rows: 1},
		{name: "fractional instances", input: header + sub(row2, ",16448,", ",16448.5,") + row3,
			rowErr: `Instances "16448.5" is not a count`, rows: 1},
		{name: "field missing", input: header + sub(row2, "3744.0,", "") + row3,
			rowErr: "x.csv:2: row has 8 fields, the header has 9 (a cut or edited row, or a name with an unquoted comma)", rows: 1},
		{name: "name with unquoted comma", input: header + row2 + "1.0,10,1,10.0,10.0,10,10,0.0,void f<int, int>(int)\n",
			rowErr: "x.csv:3: row has 10 fields, the header has 9", rows: 1},
		{name: "empty name", input: header + row2 + "1.0,10,1,10.0,10.0,10,10,0.0,\n",
			rowErr: "x.csv:3: empty Name", rows: 1},
		{name: "cut inside a quoted name", input: header + row2 + row3[:len(row3)/2],
			fatal: "x.csv:3: ", rows: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := nsys.NewKernelSumReader(strings.NewReader(tt.input), "x.csv")
			var rowErrs []*nsys.SyntaxError
			for r.Scan() {
				switch rec := r.Record().(type) {
				case *nsys.SyntaxError:
					rowErrs = append(rowErrs, rec)
				case *nsys.KernelSum:
				default:
					t.Fatalf("record %T", rec)
				}
			}
			if tt.fatal == "" || tt.name == "header only" {
				require.NoError(t, r.Err())
			} else {
				require.Error(t, r.Err())
				assert.True(t, strings.HasPrefix(r.Err().Error(), tt.fatal), "got %q", r.Err())
			}
			assert.Equal(t, tt.rows, r.Rows())
			if tt.rowErr != "" {
				require.Len(t, rowErrs, 1)
				assert.Contains(t, rowErrs[0].Error(), tt.rowErr)
				assert.True(t, strings.HasPrefix(rowErrs[0].Error(), "x.csv:"))
			} else {
				assert.Empty(t, rowErrs)
			}
			// ReadKernelSums stops at the first problem, whichever it is.
			_, err := nsys.ReadKernelSums(strings.NewReader(tt.input), "x.csv")
			require.Error(t, err)
			if tt.rowErr != "" {
				assert.Contains(t, err.Error(), tt.rowErr)
			} else {
				assert.True(t, strings.HasPrefix(err.Error(), tt.fatal), "got %q", err)
			}
		})
	}
}

// nvtxSumHeader is the nvtx_sum header as a real `nsys stats --report
// nvtx_sum --format csv` printed it (Nsight Systems bundled with Nsight
// Compute 2024.1.1, quoted in a public repository found with the code
// search): Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),
// Max (ns),StdDev (ns),Style,Range, Style "PushPop". No nvtx_sum export was
// recorded for this project.
const nvtxSumHeader = "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Style,Range\n"

// syntheticNVTXSum is SYNTHETIC: made here in the recorded header's shape,
// with the stage ranges of the fixture workloads, a range name that needs
// CSV quoting and holds ':' '@', and CUB's range in domain CCCL. The Range
// column is "Domain:name", nothing before the ':' for the default domain,
// as published nvtx_sum outputs print it ("PushPop  :step").
func syntheticNVTXSum() string {
	return "Processing [/tmp/run.sqlite] with [/opt/nvidia/nsight-systems/reports/nvtx_sum.py]... \n" +
		nvtxSumHeader +
		"50.0,8000000,1,8000000.0,8000000.0,8000000,8000000,0.0,PushPop,:decode_all\n" +
		"45.0,7200000,4,1800000.0,1790000.5,1700000,1920000,90000.1,PushPop,:decode_step\n" +
		"5.0,800000,2,400000.0,400000.0,300000,500000,141421.4,StartEnd,\":step: 1 \"\"quoted\"\", a@b\"\n" +
		"0.1,16000,4,4000.0,4000.0,3000,5000,816.5,PushPop,CCCL:cub::DeviceScan::InclusiveScan\n"
}

func TestRangeSumSynthetic(t *testing.T) {
	got, err := nsys.ReadRangeSums(strings.NewReader(syntheticNVTXSum()), "nvtx.csv")
	require.NoError(t, err)
	want := []nsys.RangeSum{
		{Range: ":decode_all", NVTX: model.Range{Name: "decode_all"}, Style: "PushPop", TotalNS: 8e6, AvgNS: 8e6, MedNS: 8e6, MinNS: 8e6, MaxNS: 8e6, Instances: 1, TimePct: 50, Line: 3},
		{Range: ":decode_step", NVTX: model.Range{Name: "decode_step"}, Style: "PushPop", TotalNS: 7.2e6, AvgNS: 1.8e6, MedNS: 1790000.5, MinNS: 1.7e6, MaxNS: 1.92e6, StdDevNS: 90000.1, Instances: 4, TimePct: 45, Line: 4},
		{Range: `:step: 1 "quoted", a@b`, NVTX: model.Range{Name: `step: 1 "quoted", a@b`}, Style: "StartEnd", TotalNS: 8e5, AvgNS: 4e5, MedNS: 4e5, MinNS: 3e5, MaxNS: 5e5, StdDevNS: 141421.4, Instances: 2, TimePct: 5, Line: 5},
		{Range: "CCCL:cub::DeviceScan::InclusiveScan", NVTX: model.Range{Domain: "CCCL", Name: "cub::DeviceScan::InclusiveScan"}, Style: "PushPop",
			TotalNS: 16000, AvgNS: 4000, MedNS: 4000, MinNS: 3000, MaxNS: 5000, StdDevNS: 816.5, Instances: 4, TimePct: 0.1, Line: 6},
	}
	assert.Equal(t, want, got)

	// Without Style, and with times in ms (SYNTHETIC).
	noStyle := "Time (%),Total Time (ms),Instances,Avg (ms),Med (ms),Min (ms),Max (ms),StdDev (ms),Range\n" +
		"100.0,8.5,2,4.25,4.25,4,4.5,0.35,prefill\n"
	got, err = nsys.ReadRangeSums(strings.NewReader(noStyle), "nvtx.csv")
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, "", got[0].Style)
	assert.Equal(t, 8.5e6, got[0].TotalNS)
	assert.Equal(t, 4.5e6, got[0].MaxNS)

	// A header only: no ranges, no error.
	got, err = nsys.ReadRangeSums(strings.NewReader(nvtxSumHeader), "nvtx.csv")
	require.NoError(t, err)
	assert.Empty(t, got)

	// The kernel summary read as nvtx_sum: positioned, and says why.
	_, err = nsys.ReadRangeSums(bytes.NewReader(kernSumFixtures(t)["rtx5090-dsocr-sam"]), "k.csv")
	require.EqualError(t, err, `k.csv:1: header has no "Range" column: not the CSV of nsys stats --report nvtx_sum`)

	// A range with no name (SYNTHETIC).
	_, err = nsys.ReadRangeSums(strings.NewReader(nvtxSumHeader+"50.0,1,1,1,1,1,1,0,PushPop,LLM:\n"), "nvtx.csv")
	require.EqualError(t, err, `nvtx.csv:2: NVTX range "LLM:" has no name`)

	// A malformed row (SYNTHETIC).
	_, err = nsys.ReadRangeSums(strings.NewReader(nvtxSumHeader+"50.0,abc,1,1,1,1,1,0,PushPop,x\n"), "nvtx.csv")
	require.EqualError(t, err, `nvtx.csv:2: x: column 2: "abc" is not a number (decimal notation only)`)
}

// checkNumbers holds an accepted row's numbers to what the readers promise.
func checkNumbers(t *testing.T, line int, vals ...float64) {
	t.Helper()
	if line < 1 {
		t.Fatalf("line %d", line)
	}
	for _, v := range vals {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			t.Fatalf("line %d: accepted %v", line, v)
		}
	}
}
