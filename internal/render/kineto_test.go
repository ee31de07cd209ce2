package render_test

import (
	"compress/gzip"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/render"
)

// TestTraceReadsAsKineto (issue 38): every recorded run's trace
// (fixtures/runs/*/timeline/trace.json.gz, rendered by this code) has what
// Holistic Trace Analysis's parser (hta/common/trace_parser.py and
// hta/configs/parser_config.py) needs of a PyTorch profiler (Kineto)
// trace: a rank (distributedInfo); on every event with a duration the
// columns it requires (ts, dur, name, cat, pid, tid); Kineto's categories;
// on every GPU event the args it reads (stream, device, correlation); each
// kernel with a flow has its correlation id on a cuda_runtime or
// cuda_driver call of its process (a kernel whose call the recording lost
// has neither); and flows from call to kernel in category ac2g, each
// start with its end.
func TestTraceReadsAsKineto(t *testing.T) {
	traces, err := filepath.Glob("../../fixtures/runs/*/timeline/trace.json.gz")
	require.NoError(t, err)
	require.NotEmpty(t, traces)
	for _, p := range traces {
		t.Run(filepath.Base(filepath.Dir(filepath.Dir(p))), func(t *testing.T) {
			t.Parallel()
			checkKineto(t, p)
		})
	}
}

func checkKineto(t *testing.T, path string) {
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	require.NoError(t, err)
	var doc struct {
		TraceEvents     []map[string]any `json:"traceEvents"`
		DistributedInfo *struct {
			Rank *int `json:"rank"`
		} `json:"distributedInfo"`
	}
	require.NoError(t, json.NewDecoder(zr).Decode(&doc))
	require.NotNil(t, doc.DistributedInfo, "HTA refuses a trace with no distributedInfo")
	require.NotNil(t, doc.DistributedInfo.Rank)

	kineto := map[string]bool{render.CatKernel: true, render.CatMemcpy: true, render.CatMemset: true,
		render.CatRuntime: true, render.CatDriver: true, render.CatNVTX: true, render.CatLaunch: true}
	type call struct {
		pid  float64
		corr float64
	}
	calls := map[call]bool{}
	var kernels []map[string]any
	flows := map[float64]string{}
	counts := map[string]int{}
	for _, ev := range doc.TraceEvents {
		ph, _ := ev["ph"].(string)
		if ph == "M" {
			continue // metadata: process and thread names
		}
		// Plain checks per event, testify's only on failure: a trace holds
		// hundreds of thousands of events.
		cat, _ := ev["cat"].(string)
		counts[cat]++
		if !kineto[cat] {
			t.Fatalf("a category Kineto does not write: %q", cat)
		}
		if _, ok := ev["dur"]; ok {
			for _, col := range []string{"ts", "dur", "name", "cat", "pid", "tid"} {
				if _, ok := ev[col]; !ok {
					t.Fatalf("an event HTA keeps lacks %s: %v", col, ev)
				}
			}
		}
		args, _ := ev["args"].(map[string]any)
		switch cat {
		case render.CatRuntime, render.CatDriver:
			calls[call{ev["pid"].(float64), args["correlation"].(float64)}] = true
		case render.CatKernel, render.CatMemcpy, render.CatMemset:
			for _, a := range []string{"stream", "device", "correlation"} {
				if _, ok := args[a]; !ok {
					t.Fatalf("%s %v has no %s", cat, ev["name"], a)
				}
			}
			if st := args["stream"].(float64); st < 0 {
				t.Fatalf("%s %v: stream %v", cat, ev["name"], st)
			}
			if cat == render.CatKernel {
				kernels = append(kernels, ev)
				if g, _ := args["grid"].([]any); len(g) != 3 {
					t.Fatalf("kernel %v: grid %v, not [x, y, z]", ev["name"], args["grid"])
				}
			}
		case render.CatLaunch:
			id := ev["id"].(float64)
			if ph == "f" && ev["bp"] != "e" {
				t.Fatalf("flow end %v: bp %v, not e", id, ev["bp"])
			}
			flows[id] += ph
		}
	}
	require.NotEmpty(t, kernels)
	for id, phs := range flows {
		if phs != "sf" {
			t.Fatalf("flow %v: %q, not a start then an end", id, phs)
		}
	}
	matched := 0
	for _, k := range kernels {
		args := k["args"].(map[string]any)
		if calls[call{args["pid"].(float64), args["correlation"].(float64)}] {
			matched++
		}
	}
	assert.Equal(t, len(flows), matched, "every kernel drawn from a call has that call's correlation id")
	t.Logf("events by category: %v; %d kernels, %d with their call", counts, len(kernels), matched)
}

// TestHTAReadsTheTrace (issue 38): Holistic Trace Analysis, run on an H200
// machine on two recorded runs' traces (scripts/hta/run_hta.py; its output
// kept in fixtures/logs/hta-temporal-breakdown.txt), found the same
// kernels: its compute time is the traces' kernel time after its own
// rounding of each kernel to whole microseconds (start up, end down),
// exactly. That rounding halves the kernel time of runs of 1 to 2 µs
// kernels (deepprof's exact sum is beside it).
func TestHTAReadsTheTrace(t *testing.T) {
	log, err := os.ReadFile("../../fixtures/logs/hta-temporal-breakdown.txt")
	require.NoError(t, err)
	var run string
	compute := map[string]float64{}
	for _, line := range strings.Split(string(log), "\n") {
		if name, ok := strings.CutPrefix(line, "== traces/"); ok {
			run = name
			continue
		}
		f := strings.Fields(line)
		// the temporal breakdown's row: index, rank, idle, compute, non-compute, kernel time, three shares
		if run != "" && len(f) == 9 && f[0] == "0" && f[1] == "0" && compute[run] == 0 {
			v, err := strconv.ParseFloat(f[3], 64)
			require.NoError(t, err, line)
			compute[run] = v
		}
	}
	require.Len(t, compute, 2, "the log's temporal breakdowns")
	for run, hta := range compute {
		f, err := os.Open(filepath.Join("../../fixtures/runs", run, "timeline/trace.json.gz"))
		require.NoError(t, err)
		zr, err := gzip.NewReader(f)
		require.NoError(t, err)
		var doc struct {
			TraceEvents []struct {
				Cat string  `json:"cat"`
				TS  float64 `json:"ts"`
				Dur float64 `json:"dur"`
			} `json:"traceEvents"`
		}
		require.NoError(t, json.NewDecoder(zr).Decode(&doc))
		f.Close()
		var exact, rounded float64
		for _, e := range doc.TraceEvents {
			if e.Cat != render.CatKernel {
				continue
			}
			exact += e.Dur
			rounded += max(math.Floor(e.TS+e.Dur)-math.Ceil(e.TS), 0)
		}
		assert.Equal(t, hta, rounded, "%s: HTA's compute time is the kernels, rounded its way", run)
		t.Logf("%s: HTA compute %.0f µs; the kernels rounded to whole µs %.0f µs; exact %.1f µs", run, hta, rounded, exact)
	}
}
