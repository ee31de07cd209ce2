package compare_test

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/compare"

	"github.com/llm-perf-opt/deepprof/internal/model"

	"github.com/google/go-cmp/cmp"

	"github.com/llm-perf-opt/deepprof/internal/render"
	"github.com/llm-perf-opt/deepprof/internal/workload"
)

// seedRuns adds the files rel of every recorded run that has them.
func seedRuns(f *testing.F, rels ...string) {
	n := 0
	for _, rel := range rels {
		ps, err := filepath.Glob(filepath.Join("../../fixtures/runs/*", filepath.FromSlash(rel)))
		if err != nil {
			f.Fatal(err)
		}
		for _, p := range ps {
			b, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(string(b))
			n++
		}
	}
	if n == 0 {
		f.Fatalf("no recorded %v", rels)
	}
}

func finite(t *testing.T, what string, v float64) {
	t.Helper()
	if math.IsNaN(v) || math.IsInf(v, 0) {
		t.Fatalf("%s read as %v", what, v)
	}
}

// Issue 16, item 7: diff's readers of a run's kernels.json, regions
// report.json and summary.json under arbitrary input: no panic, no number
// read that is not finite, and parse → write → parse is the identity: what
// a reader takes, the writer of that file (render.KernelsJSON,
// render.RegionsJSON, render.SummaryJSON) writes so that it reads back the
// same. Seeds are the recorded runs' files.
func FuzzLoaders(f *testing.F) {
	seedRuns(f, "kernels.json", "ncu/regions/report.json", "summary.json")
	f.Fuzz(func(t *testing.T, s string) {
		data := []byte(s)
		var k compare.Summary
		if compare.ReadKernels(&k, data, "kernels.json") == nil {
			for _, r := range k.Kernels {
				finite(t, "kernel "+r.Name, r.TotalMS)
			}
			finite(t, "kernel total", k.KernelMS)
			var back compare.Summary
			b := writeKernels(t, k.Kernels)
			if err := compare.ReadKernels(&back, b, "kernels.json"); err != nil {
				t.Fatalf("kernels.json as written does not read back: %v\n%s", err, b)
			}
			same(t, "kernels.json", k.Kernels, back.Kernels, b)
			same(t, "kernels.json's total", k.KernelMS, back.KernelMS, b)
		}
		var r compare.Summary
		if compare.ReadRegions(&r, data, "report.json") == nil {
			for _, g := range r.Regions {
				finite(t, "region "+g.Name, g.TotalMS)
			}
			var back compare.Summary
			b := writeRegions(t, r.Regions)
			if err := compare.ReadRegions(&back, b, "report.json"); err != nil {
				t.Fatalf("report.json as written does not read back: %v\n%s", err, b)
			}
			same(t, "report.json", r.Regions, back.Regions, b)
		}
		regs, rerr := compare.ReadSummaryRegions(data, "summary.json")
		for _, g := range regs {
			finite(t, "region "+g.Name, g.TotalMS)
		}
		m, merr := compare.ReadMFU(data, "summary.json")
		if merr == nil && m != nil {
			for _, v := range []*float64{m.Model, m.Prefill, m.Decode} {
				if v != nil {
					finite(t, "MFU", *v)
				}
			}
		}
		st := compare.Summary{Missing: []facts.DiffMissing{{Part: facts.PartStages}}}
		serr := compare.ReadSummaryStages(&st, data, "summary.json")
		if rerr != nil && merr != nil && serr != nil {
			return
		}
		// summary.json: what each reader took, written by the summary's
		// writer, reads back the same.
		b := writeSummary(t, regs, m, &st)
		if rerr == nil {
			back, err := compare.ReadSummaryRegions(b, "summary.json")
			if err != nil {
				t.Fatalf("summary.json's regions as written do not read back: %v\n%s", err, b)
			}
			same(t, "summary.json's regions", regs, back, b)
		}
		if merr == nil {
			back, err := compare.ReadMFU(b, "summary.json")
			if err != nil {
				t.Fatalf("summary.json's mfu as written does not read back: %v\n%s", err, b)
			}
			// The summary always writes its mfu: none read is every
			// figure null.
			same(t, "summary.json's mfu", orNone(m), orNone(back), b)
		}
		if serr == nil {
			stagesRoundTrip(t, &st, b)
		}
	})
}

// FuzzSummaryStages: diff's reader of summary.json's stages (a program's
// NVTX ranges, read in place of a missing workload report) under arbitrary
// input: no panic, each stage once, every statistic finite, and the stages
// written by the summary's writer read back the same. Seeds are the
// recorded runs' summary.json.
func FuzzSummaryStages(f *testing.F) {
	seedRuns(f, "summary.json")
	f.Add(`{"stages": {"rows": [{"name": "decode", "ms": [1e308, 1e308]}]}}`)
	f.Add(`{"stages": {"rows": [{"name": "decode", "ms": [1e200, 3e200, 2e200]}, {"name": "decode", "ms": [1]}]}}`)
	f.Fuzz(func(t *testing.T, s string) {
		st := compare.Summary{Missing: []facts.DiffMissing{{Part: facts.PartStages}}}
		if compare.ReadSummaryStages(&st, []byte(s), "summary.json") != nil {
			return
		}
		seen := map[string]bool{}
		for _, g := range st.Stages {
			if seen[g.Name] {
				t.Fatalf("stage %q read twice", g.Name)
			}
			seen[g.Name] = true
			finite(t, "stage "+g.Name+" mean", g.MeanMS)
			finite(t, "stage "+g.Name+" sd", g.SDMS)
		}
		stagesRoundTrip(t, &st, writeSummary(t, nil, nil, &st))
	})
}

// stagesRoundTrip: the stages of st, as written in b, read back the same.
func stagesRoundTrip(t *testing.T, st *compare.Summary, b []byte) {
	t.Helper()
	back := compare.Summary{Missing: []facts.DiffMissing{{Part: facts.PartStages}}}
	if err := compare.ReadSummaryStages(&back, b, "summary.json"); err != nil {
		t.Fatalf("summary.json's stages as written do not read back: %v\n%s", err, b)
	}
	same(t, "summary.json's stages", st.Stages, back.Stages, b)
	same(t, "summary.json's model", st.Model, back.Model, b)
	same(t, "summary.json's GPU", st.Device, back.Device, b)
}

func orNone(m *compare.MFU) compare.MFU {
	if m == nil {
		return compare.MFU{}
	}
	return *m
}

func same(t *testing.T, what string, want, got any, written []byte) {
	t.Helper()
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("%s changed on the round trip (-read +read back):\n%s\nwritten:\n%s", what, d, written)
	}
}

// writeKernels is kernels.json of ks, as the rebuild writes it.
func writeKernels(t *testing.T, ks []model.KernelTotals) []byte {
	recs := make([]model.KernelStats, len(ks))
	for i, k := range ks {
		recs[i] = model.KernelStats{KernelTotals: model.KernelTotals{Name: k.Name, Device: k.Device, TotalMS: k.TotalMS, Calls: k.Calls}, MeanMS: k.TotalMS / float64(max(k.Calls, 1))}
	}
	var b bytes.Buffer
	if err := render.KernelsJSON(&b, model.KernelTable{Kernels: recs, Count: len(recs)}, nil, nil); err != nil {
		t.Fatalf("kernels.json does not write: %v", err)
	}
	return b.Bytes()
}

// writeRegions is a regions report.json whose aggregate is regs.
func writeRegions(t *testing.T, regs []compare.RegionTotals) []byte {
	rep := &facts.RegionReport{Results: facts.ResultsKernels, AggregateEnabled: true, Aggregate: []facts.Region{}, Scopes: []facts.RegionScope{}}
	for _, r := range regs {
		rep.Aggregate = append(rep.Aggregate, facts.Region{Name: r.Name, TotalMS: r.TotalMS, KernelCount: r.KernelCount})
	}
	var b bytes.Buffer
	if err := render.RegionsJSON(&b, rep); err != nil {
		t.Fatalf("report.json does not write: %v", err)
	}
	return b.Bytes()
}

// writeSummary is summary.json holding regs, m and st's stages, model and
// GPU, as the rebuild writes it.
func writeSummary(t *testing.T, regs []compare.RegionTotals, m *compare.MFU, st *compare.Summary) []byte {
	var s facts.Summary
	for _, r := range regs {
		s.Regions.Rows = append(s.Regions.Rows, facts.RegionRow{Name: r.Name, TotalMS: r.TotalMS, Launches: r.KernelCount})
	}
	if m != nil {
		s.MFU.Model, s.MFU.Prefill, s.MFU.Decode = m.Model, m.Prefill, m.Decode
	}
	for _, g := range st.Stages {
		s.Stages.Rows = append(s.Stages.Rows, facts.Stage{Name: g.Name, StageTimes: facts.StageTimes{MS: g.Repeats, MeanMS: g.MeanMS, SDMS: g.SDMS, N: g.N}})
	}
	s.Environment.GPU = st.Device
	if st.Model != "" {
		s.Environment.Model = &workload.Model{Name: st.Model}
	}
	var b bytes.Buffer
	if err := render.SummaryJSON(&b, &s); err != nil {
		t.Fatalf("summary.json does not write: %v", err)
	}
	return b.Bytes()
}
