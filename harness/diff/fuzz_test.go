package diff

import (
	"math"
	"os"
	"testing"
)

// Issue 16, item 7: diff's readers of a run's kernels.json, regions
// report.json and summary.json under arbitrary input: no panic, and no
// number read that is not finite. Seeds are a recorded run's files.
func FuzzLoaders(f *testing.F) {
	const run = "../../fixtures/runs/any-python-script/"
	for _, p := range []string{"kernels.json", "ncu/regions/report.json", "summary.json"} {
		b, err := os.ReadFile(run + p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	finite := func(t *testing.T, what string, v float64) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("%s read as %v", what, v)
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		data := []byte(s)
		var k Summary
		if k.readKernels(data, "kernels.json") == nil {
			for _, r := range k.Kernels {
				finite(t, "kernel "+r.Name, r.TotalMS)
			}
			finite(t, "kernel total", k.KernelMS)
		}
		var r Summary
		if r.readRegions(data, "report.json") == nil {
			for _, g := range r.Regions {
				finite(t, "region "+g.Name, g.TotalMS)
			}
		}
		if regs, err := readSummaryRegions(data, "summary.json"); err == nil {
			for _, g := range regs {
				finite(t, "region "+g.Name, g.TotalMS)
			}
		}
		if m, err := readMFU(data, "summary.json"); err == nil && m != nil {
			for _, v := range []*float64{m.Model, m.Prefill, m.Decode} {
				if v != nil {
					finite(t, "MFU", *v)
				}
			}
		}
	})
}
