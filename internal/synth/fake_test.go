package synth_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/machine"
	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/nsys"
	"github.com/llm-perf-opt/deepprof/internal/synth"
)

const fx = "../../fixtures/"

// The fake answers the argv package nsys builds, and what it writes reads
// back with package nsys's readers.
func TestFakeRoundTrip(t *testing.T) {
	dir := t.TempDir()
	f := synth.Fake{KernSum: fx + "nsys/rtx5090-dsocr-decode/cuda_gpu_kern_sum.csv", NVTXSum: synth.SyntheticNVTXSum}
	var out, errb bytes.Buffer
	require.Equal(t, 0, f.Run([]string{"--version"}, &out, &errb))
	v, err := machine.ParseNsysVersion(out.String())
	require.NoError(t, err)
	assert.Equal(t, "2025.3.1.0", v.String())

	args, err := nsys.Capture{Output: filepath.Join(dir, "run"), Program: []string{"python3", "wl.py"}}.Args()
	require.NoError(t, err)
	require.Equal(t, 0, f.Run(args, &out, &errb), errb.String())
	rep, err := nsys.ResolveReport(dir, "run")
	require.NoError(t, err)

	require.Equal(t, 0, f.Run(nsys.ExportSQLiteArgs(rep, filepath.Join(dir, "run.sqlite")), &out, &errb), errb.String())
	assert.FileExists(t, filepath.Join(dir, "run.sqlite"))

	prefix := filepath.Join(dir, "run")
	require.Equal(t, 0, f.Run(nsys.StatsArgs(rep, nil, prefix), &out, &errb), errb.String())
	kf, err := os.Open(model.NsysStatsCSVPath(prefix, model.NsysReportKernSum))
	require.NoError(t, err)
	defer kf.Close()
	sums, err := nsys.ReadKernelSums(kf, "k.csv")
	require.NoError(t, err)
	nf, err := os.Open(model.NsysStatsCSVPath(prefix, model.NsysReportNVTXSum))
	require.NoError(t, err)
	defer nf.Close()
	ranges, err := nsys.ReadRangeSums(nf, "n.csv")
	require.NoError(t, err)
	assert.Len(t, ranges, 3)

	base := filepath.Join(dir, "base")
	require.Equal(t, 0, f.Run(nsys.StatsArgs(rep, []string{nsys.ReportKernSumBase}, base), &out, &errb), errb.String())
	bf, err := os.Open(base + synth.BaseCSVName)
	require.NoError(t, err)
	defer bf.Close()
	bsums, err := nsys.ReadKernelSums(bf, "b.csv")
	require.NoError(t, err)
	assert.Less(t, len(bsums), len(sums), "instantiations grouped by function")
	a, b := nsys.Table(sums, ""), nsys.Table(bsums, "")
	assert.Equal(t, a.Launches, b.Launches)
	assert.InDelta(t, a.TotalMS, b.TotalMS, 1e-6)
	assert.Equal(t, "kernel", b.Kernels[0].Name, "the gemvx kernels lead the decode recording")

	// A report that is not there: nsys fails.
	assert.Equal(t, 1, f.Run(nsys.StatsArgs(filepath.Join(dir, "none.nsys-rep"), nil, prefix), &out, &errb))
	f.NoBase = true
	assert.Equal(t, 1, f.Run(nsys.StatsArgs(rep, []string{nsys.ReportKernSumBase}, base), &out, &errb))
}

// The bundled nsys of the recorded log: exit 0, its own words, a .qdstrm and
// no report.
func TestFakeNoReport(t *testing.T) {
	dir := t.TempDir()
	f := synth.Fake{NoReportLog: fx + "logs/nsys-bundled-no-report.txt"}
	args, err := nsys.Capture{Output: filepath.Join(dir, "run"), Program: []string{"python3", "wl.py"}}.Args()
	require.NoError(t, err)
	var out, errb bytes.Buffer
	require.Equal(t, 0, f.Run(args, &out, &errb))
	assert.True(t, strings.HasSuffix(out.String(), "Collecting data...\nGenerating '/tmp/nsys-report-5341.qdstrm'\n"), out.String())
	assert.Contains(t, out.String(), "is canceled because the timeout period is expired")
	_, err = nsys.ResolveReport(dir, "run")
	require.ErrorIs(t, err, nsys.ErrNoReport)
	assert.Contains(t, err.Error(), "importer (QdstrmImporter) failed")
}
