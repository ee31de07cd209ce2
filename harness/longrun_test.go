package harness_test

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/harness"
	"github.com/llm-perf-opt/deepprof/internal/synth"
)

// longRun is a copy of the recorded CUPTI run whose record files are
// SYNTHETIC: one per rank (process 564 on device 0, 565 on device 1, ...),
// each of steps decode steps of 20 kernels: 45 records a step (a push, a
// pop, a mark, 21 launch calls, 20 kernels and a copy).
func longRun(tb testing.TB, steps, ranks int) string {
	tb.Helper()
	dir := filepath.Join(tb.TempDir(), "run")
	require.NoError(tb, os.CopyFS(dir, os.DirFS(recordedCupti)))
	for r := range ranks {
		pid := int64(564 + r)
		f, err := os.Create(filepath.Join(dir, "timeline", "cupti", "cupti-"+strconv.FormatInt(pid, 10)+".tsv.gz"))
		require.NoError(tb, err)
		zw, err := gzip.NewWriterLevel(f, gzip.BestSpeed)
		require.NoError(tb, err)
		c := synth.Small(pid)
		c.Device, c.DecodeSteps, c.StepKernels = uint32(r), steps, 20
		require.NoError(tb, synth.Write(zw, c))
		require.NoError(tb, zw.Close())
		require.NoError(tb, f.Close())
	}
	return dir
}

// BenchmarkLongRun rebuilds runs of 1M and 10M SYNTHETIC records, of 2M
// launches (4.5M records: issue 55's bound of 800 MiB to 2M) and of 5M,
// 10M and 20M launches (issue 55: time linear with the launches), and one
// of 8 ranks of 405,580 kernels each (the launches of a Llama-3-70B decode
// of 256 tokens at TP=8), with the binary's collector target
// (harness.GCPercent). peak-MB is the process's peak resident memory
// during the rebuilds (Linux: VmHWM, reset before them). Run the large
// ones by name: launches=20M holds some 5 GB.
func BenchmarkLongRun(b *testing.B) {
	if os.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(harness.GCPercent))
	}
	for _, tc := range []struct {
		name         string
		steps, ranks int
	}{
		{"records=1M", 22_222, 1},
		{"launches=2M", 100_000, 1},
		{"records=10M", 222_222, 1},
		{"ranks=8", 20_279, 8},
		{"launches=5M", 250_000, 1},
		{"launches=10M", 500_000, 1},
		{"launches=20M", 1_000_000, 1},
	} {
		b.Run(tc.name, func(b *testing.B) {
			dir := longRun(b, tc.steps, tc.ranks)
			runtime.GC()
			debug.FreeOSMemory()
			resetPeak := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
			b.ReportAllocs()
			for b.Loop() {
				if _, err := harness.Report(dir, harness.ReportOptions{}); err != nil {
					b.Fatal(err)
				}
			}
			if kb, ok := peakKB(); ok && resetPeak {
				b.ReportMetric(float64(kb)/1024, "peak-MB")
			}
		})
	}
}

// peakKB is the process's peak resident memory (VmHWM) in KiB.
func peakKB() (int64, bool) {
	st, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	for line := range bytes.Lines(st) {
		if v, ok := bytes.CutPrefix(line, []byte("VmHWM:")); ok {
			n, err := strconv.ParseInt(string(bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(v), []byte("kB")))), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}
