package harness_test

import (
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/harness"
	"github.com/llm-perf-opt/deepprof/internal/phases"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
	"github.com/llm-perf-opt/deepprof/internal/synth"
)

// manyRangesRun is a copy of the recorded CUPTI run whose record file is
// a SYNTHETIC one (synth.Write) of a program that opens a range per
// iteration: steps decode steps named "decode_step 0", "decode_step 1",
// ..., four kernels each.
func manyRangesRun(tb testing.TB, steps int) string {
	tb.Helper()
	dir := filepath.Join(tb.TempDir(), "run")
	require.NoError(tb, os.CopyFS(dir, os.DirFS(recordedCupti)))
	f, err := os.Create(filepath.Join(dir, "timeline", "cupti", "cupti-564.tsv.gz"))
	require.NoError(tb, err)
	zw := gzip.NewWriter(f)
	c := synth.Small(564)
	c.DecodeSteps, c.NumberSteps = steps, true
	require.NoError(tb, synth.Write(zw, c))
	require.NoError(tb, zw.Close())
	require.NoError(tb, f.Close())
	return dir
}

// TestRangePerIteration (issue 53): a program that opens a range per
// iteration has its phases' nested ranges listed up to phases.MaxPhases,
// the largest by kernel time, the rest summed in phases.json and said in
// the stakeholder summary; every range stays in the region report. Before,
// each of 20,000 ranges was a row of phases.json, summary.json and the
// summary's table. The summary's Per-Region Breakdown lists the
// render.MaxRegionRows largest regions and says what it leaves out;
// summary.json keeps every region.
func TestRangePerIteration(t *testing.T) {
	t.Parallel()
	dir := manyRangesRun(t, 250)
	_, err := harness.Report(dir, harness.ReportOptions{})
	require.NoError(t, err)
	var rep facts.PhaseReport
	require.NoError(t, json.Unmarshal([]byte(readFile(t, filepath.Join(dir, rundir.TimelinePhases))), &rep))
	require.Len(t, rep.Scopes, 1)
	sc := rep.Scopes[0]
	require.Len(t, sc.Nested, phases.MaxPhases)
	require.NotNil(t, sc.NestedLeftOut)
	assert.Equal(t, 250-phases.MaxPhases, sc.NestedLeftOut.Regions)
	assert.Equal(t, int64(4*(250-phases.MaxPhases)), sc.NestedLeftOut.Kernels, "four kernels a step")
	assert.Nil(t, sc.PhasesLeftOut, "three phases: none left out")
	var kept, least int64 = 0, 1 << 62
	for _, p := range sc.Nested {
		kept += p.KernelNS
		least = min(least, p.KernelNS)
	}
	assert.LessOrEqual(t, sc.NestedLeftOut.KernelNS, int64(250-phases.MaxPhases)*least, "the largest are kept")
	for _, p := range sc.Phases {
		if p.Name == "decode_all" {
			assert.Equal(t, p.KernelNS, kept+sc.NestedLeftOut.KernelNS, "the kept and the left out make the phase's kernel time")
		}
	}
	md := readFile(t, filepath.Join(dir, rundir.StakeholderSummary))
	assert.Contains(t, md, "Left out of the table: the 150 smaller regions inside the phases, ")
	assert.Contains(t, md, "(600 launches) in all; ncu/regions/report.md lists every region.")
	// the Per-Region Breakdown: its MaxRegionRows largest regions
	assert.Contains(t, md, "Left out of the table: the 153 smaller regions, ")
	assert.Contains(t, md, "(612 launches) in all, each counted once where they nest; ncu/regions/report.md and summary.json list every region.")
	assert.Contains(t, readFile(t, filepath.Join(dir, rundir.ReportHTML)), "Left out of the table: the 153 smaller regions, ")
	var sum facts.Summary
	require.NoError(t, json.Unmarshal([]byte(readFile(t, filepath.Join(dir, rundir.SummaryJSON))), &sum))
	assert.Len(t, sum.Regions.Rows, 253, "summary.json lists every region")
	regions := readFile(t, filepath.Join(dir, rundir.RegionsMD))
	assert.Contains(t, regions, "decode\\_step 0 ")
	assert.Contains(t, regions, "decode\\_step 249 ")
}

// BenchmarkRanges20000 rebuilds, as deepprof report does, a run whose
// program opened 20,000 distinct ranges (issue 53's target: within 10 s
// and 200 MB). Besides time and allocation per rebuild it reports
// peak-MB, the most memory the Go runtime held from the OS during a
// rebuild (runtime/metrics, sampled every 5 ms; what it holds less what it
// released, about the resident size of the heap).
func BenchmarkRanges20000(b *testing.B) {
	dir := manyRangesRun(b, 20_000)
	b.ReportAllocs()
	var peak uint64
	for b.Loop() {
		stop := sampleHeld(&peak)
		_, err := harness.Report(dir, harness.ReportOptions{})
		stop()
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(peak)/1e6, "peak-MB")
}

// sampleHeld records in *peak the most memory the Go runtime holds from
// the OS, sampled every 5 ms until stop is called.
func sampleHeld(peak *uint64) (stop func()) {
	samples := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	read := func() {
		metrics.Read(samples)
		*peak = max(*peak, samples[0].Value.Uint64()-samples[1].Value.Uint64())
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				read()
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
		read()
	}
}
