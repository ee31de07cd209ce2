package regions_test

import (
	"os"
	"testing"

	"github.com/llm-perf-opt/deepprof/internal/ncu"
	"github.com/llm-perf-opt/deepprof/internal/regions"
	"github.com/llm-perf-opt/deepprof/internal/synth"
)

// BenchmarkRegionsRaw reads a SYNTHETIC raw page (the real
// h200-llama-decode-basic page's launch rows repeated to 64 MiB) into the
// default region report, metric groups included. It reports MB/s over the
// bytes read.
func BenchmarkRegionsRaw(b *testing.B) {
	page, err := os.ReadFile("../../fixtures/ncu/h200-llama-decode-basic/raw.csv")
	if err != nil {
		b.Fatal(err)
	}
	const size = 64 << 20
	cfg := regions.DefaultConfig()
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		in, err := synth.RepeatRows(page, size)
		if err != nil {
			b.Fatal(err)
		}
		r := ncu.NewReader(in, "synthetic-raw.csv", ncu.Options{Metrics: regions.RawMetrics(cfg.Groups)})
		if _, err := regions.FromReader(r, "synthetic-raw.csv", cfg); err != nil {
			b.Fatal(err)
		}
	}
}
