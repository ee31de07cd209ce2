//go:build gpu

package deepprof_test

// The CUPTI timeline on a GPU (issue 13): go test -tags gpu -run Stage2CUPTI.
// Each session times its kernels with deepprof's CUPTI library in a plain
// run, checks them against torch.profiler in another (timeline.oracle), and
// reports the library's overhead; DEEPPROF_GPU_OUT keeps the run directories.

import (
	"compress/gzip"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/render"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
)

func TestStage2CUPTI(t *testing.T) {
	tool, prov := preflight(t)
	root := outDir(t)
	for _, w := range []struct {
		name      string
		domain    string
		overrides []string
	}{
		// The launch-bound anchor: tiny-llama shapes, 64-token
		// prompt, 32 new tokens.
		// 11 repeats: the overhead is the median of 11 pairs of
		// generates, recording on and paused (the machine's spread within
		// a process: docs/measurements.md, "CUPTI library overhead").
		{name: "tiny-llama", overrides: []string{"workloads=tiny-llama", "workload.repeats=11",
			"workload.argv=[scripts/workloads/hf_causal_lm.py, --prompt-tokens=64, --new-tokens=32, --warmup=1, --operators]"}},
		{name: "gpt2", domain: "LLM", overrides: []string{"workloads=gpt2", "nvtx.domain=LLM"}},
		// Llama-3-8B shapes cut to 4 layers (the timing-fidelity recording's
		// model), 512-token prompt, 8 new tokens.
		{name: "llama3-8b-4l", overrides: []string{"workloads=llama3-8b", "model.options.num_hidden_layers=4"}},
		// The overhead anchor's 8B shapes, all 32 layers: 512-token
		// prompt, 32 new tokens, 9 pairs (more would pass the device's
		// 10 minutes a command).
		{name: "llama3-8b-32l", overrides: []string{"workloads=llama3-8b", "workload.repeats=9",
			"workload.argv=[scripts/workloads/hf_causal_lm.py, --prompt-tokens=512, --new-tokens=32, --warmup=1, --operators]"}},
	} {
		t.Run(w.name, func(t *testing.T) {
			id := "cupti-" + w.name + "-" + time.Now().UTC().Format("150405")
			run := runSession(t, tool, root, id, append([]string{"timeline.tool=cupti", "timeline.oracle=true"}, w.overrides...)...)
			checkRun(t, run, prov, w.domain)
			checkCUPTI(t, run)
		})
	}
}

func checkCUPTI(t *testing.T, run *rundir.Run) {
	t.Helper()
	var m rundir.Manifest
	readJSON(t, run.Path(rundir.ManifestJSON), &m)
	require.NotNil(t, m.Sources)
	assert.Equal(t, rundir.TimelineCupti, m.Sources.Kernels.Path, "kernels.md comes from the CUPTI timeline")
	assert.Equal(t, rundir.TimelineCupti, m.Sources.Regions.Path, "ncu/regions/ comes from the CUPTI timeline")
	assert.NotEmpty(t, rundir.CuptiFiles(run))
	assert.NoFileExists(t, run.Path(rundir.NcuTimingRaw), "no ncu timing pass")

	// The trace opens: gzip, JSON, kernel events with durations.
	f, err := os.Open(run.Path(rundir.TimelineTrace))
	require.NoError(t, err)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	require.NoError(t, err)
	var tr struct {
		TraceEvents []map[string]any `json:"traceEvents"`
	}
	require.NoError(t, json.NewDecoder(zr).Decode(&tr))
	kernelsSeen := 0
	for _, e := range tr.TraceEvents {
		if c, _ := e["cat"].(string); strings.Contains(c, "kernel") && e["ph"] == "X" {
			kernelsSeen++
		}
	}
	assert.Greater(t, kernelsSeen, 0, "kernel events in the trace")

	// torch.profiler agrees: phases within 3 %, top 5 kernels within 5 %,
	// launch counts equal.
	var c render.OracleCheck
	readJSON(t, run.Path(rundir.OracleCheckJSON), &c)
	for _, r := range c.Rows {
		t.Logf("oracle: %-60.60s oracle %9.3f ms (%5d)  timeline %9.3f ms (%5d)  %+.2f%%  %v %s", r.What, r.OracleMS, r.OracleLaunches, r.TimedMS, r.TimedLaunches, 100*r.Diff, r.OK, r.Why)
	}
	assert.True(t, c.Passed, "the CUPTI timeline agrees with torch.profiler (see %s)", run.Path(rundir.OracleCheckJSON))

	md, err := os.ReadFile(run.Path(rundir.ReportMD))
	require.NoError(t, err)
	overhead := ""
	for _, line := range strings.Split(string(md), "\n") {
		if strings.HasPrefix(line, "Overhead:") {
			overhead = line
			t.Log(line)
		}
	}
	// The default workload measures the overhead in the recorded process,
	// pausing the library between repeats (a figure, not a pass/fail: speed
	// is shown in measured runs, not in timed tests).
	assert.Contains(t, overhead, "in the recorded process", "report.md states the in-process overhead")
}
