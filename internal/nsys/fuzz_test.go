package nsys_test

import (
	"strings"
	"testing"

	"github.com/llm-perf-opt/deepprof/internal/nsys"
)

// FuzzKernelSumReader is seeded from the recorded exports: the smallest one
// whole, and the header and first rows of each (whole files of 20 to 40 KB
// make the fuzzer spend its time minimizing), plus SYNTHETIC variants. The
// reader must not panic, must stop, and every row it accepts has a name, a
// line, and finite, non-negative numbers.
func FuzzKernelSumReader(f *testing.F) {
	fx := kernSumFixtures(f)
	f.Add(fx["rtx5090-dsocr-sam"])
	for _, data := range fx {
		head := strings.Join(strings.SplitAfter(string(data), "\n")[:4], "")
		f.Add([]byte(head))
		f.Add([]byte(head[:len(head)-len(head)/3]))
		f.Add([]byte("Processing [a.sqlite] with [cuda_gpu_kern_sum.py]... \n" + strings.ReplaceAll(head, "(ns)", "(us)")))
	}
	f.Add([]byte(""))
	f.Add([]byte("SKIPPED: a.sqlite does not contain CUDA kernel data.\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := nsys.NewKernelSumReader(strings.NewReader(string(data)), "fuzz.csv")
		for n := 0; r.Scan(); n++ {
			if n > len(data)+1 {
				t.Fatal("more records than lines")
			}
			switch rec := r.Record().(type) {
			case *nsys.KernelSum:
				if rec.Name == "" {
					t.Fatalf("line %d: accepted an empty name", rec.Line)
				}
				checkNumbers(t, rec.Line, rec.TotalNS, rec.AvgNS, rec.MedNS, rec.MinNS, rec.MaxNS, rec.StdDevNS, rec.TimePct, float64(rec.Instances))
			case *nsys.SyntaxError:
				if rec.Line < 1 || rec.File != "fuzz.csv" {
					t.Fatalf("badly positioned: %v", rec)
				}
			default:
				t.Fatalf("record %T", rec)
			}
		}
		if sums, err := nsys.ReadKernelSums(strings.NewReader(string(data)), "fuzz.csv"); err == nil {
			top := nsys.TopN(sums, 10)
			if c := nsys.Coverage(sums, top); c < 0 || c > 1 {
				t.Fatalf("coverage %v", c)
			}
		}
	})
}

// FuzzRangeSumReader is seeded with SYNTHETIC nvtx_sum inputs (no nvtx_sum
// export was recorded).
func FuzzRangeSumReader(f *testing.F) {
	f.Add([]byte(syntheticNVTXSum()))
	f.Add([]byte(nvtxSumHeader))
	f.Add([]byte(nvtxSumHeader + "1,2,3,4,5,6,7,8,PushPop,\"a,b\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := nsys.NewRangeSumReader(strings.NewReader(string(data)), "fuzz.csv")
		for r.Scan() {
			switch rec := r.Record().(type) {
			case *nsys.RangeSum:
				if rec.Range == "" {
					t.Fatalf("line %d: accepted an empty range", rec.Line)
				}
				checkNumbers(t, rec.Line, rec.TotalNS, rec.AvgNS, rec.MedNS, rec.MinNS, rec.MaxNS, rec.StdDevNS, rec.TimePct, float64(rec.Instances))
			case *nsys.SyntaxError:
				if rec.Line < 1 {
					t.Fatalf("badly positioned: %v", rec)
				}
			default:
				t.Fatalf("record %T", rec)
			}
		}
	})
}
