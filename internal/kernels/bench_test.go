package kernels_test

import (
	"encoding/csv"
	"io"
	"os"
	"testing"

	"github.com/llm-perf-opt/deepprof/internal/ncu"
	"github.com/llm-perf-opt/deepprof/internal/synth"
)

// BenchmarkKernelsRaw parses and aggregates a SYNTHETIC raw page: the real
// h200-llama-decode-basic raw page's 412 launch rows repeated to 256 MiB.
// It reports MB/s over the bytes read; the target is 1 GB/s on 2 cores.
func BenchmarkKernelsRaw(b *testing.B) {
	benchRawPage(b, func(in io.Reader) {
		t, err := ncu.KernelTable(ncu.NewReader(in, "synthetic-raw.csv", ncu.Options{}), "synthetic-raw.csv")
		if err != nil {
			b.Fatal(err)
		}
		if len(t.Kernels) != 27 {
			b.Fatalf("kernels = %d, want the 27 of the real page", len(t.Kernels))
		}
	})
}

// benchRawPage runs read once per iteration over the SYNTHETIC page: the
// real h200-llama-decode-basic raw page's launch rows repeated to 256 MiB,
// made fresh each time and counted in MB/s.
func benchRawPage(b *testing.B, read func(io.Reader)) {
	page, err := os.ReadFile("../../fixtures/ncu/h200-llama-decode-basic/raw.csv")
	if err != nil {
		b.Fatal(err)
	}
	const size = 256 << 20
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		in, err := synth.RepeatRows(page, size)
		if err != nil {
			b.Fatal(err)
		}
		read(in)
	}
}

// BenchmarkEncodingCSVRaw is the reference for BenchmarkKernelsRaw: the same
// SYNTHETIC page read record by record with encoding/csv (ReuseRecord), and
// nothing more done with it. The kernel table is to be at least 3.5x this.
func BenchmarkEncodingCSVRaw(b *testing.B) {
	benchRawPage(b, func(in io.Reader) {
		r := csv.NewReader(in)
		r.ReuseRecord = true
		r.FieldsPerRecord = -1
		r.LazyQuotes = true
		n := 0
		for {
			_, err := r.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n == 0 {
			b.Fatal("no records")
		}
	})
}
