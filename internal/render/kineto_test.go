package render_test

import (
	"bufio"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/klauspost/compress/gzip"
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

// kinetoEvent is what checkKineto reads of a trace event: a field that is
// nil was absent.
type kinetoEvent struct {
	Ph   string         `json:"ph"`
	Cat  string         `json:"cat"`
	Name jsontext.Value `json:"name"`
	TS   jsontext.Value `json:"ts"`
	Dur  jsontext.Value `json:"dur"`
	PID  *float64       `json:"pid"`
	TID  jsontext.Value `json:"tid"`
	ID   *float64       `json:"id"`
	BP   *string        `json:"bp"`
	Args *struct {
		Stream      *float64         `json:"stream"`
		Device      *float64         `json:"device"`
		Correlation *float64         `json:"correlation"`
		PID         *float64         `json:"pid"`
		Grid        []jsontext.Value `json:"grid"`
	} `json:"args"`
}

// eventJSON is the event as JSON again, for a failure's message.
func eventJSON(ev *kinetoEvent) string {
	b, _ := json.Marshal(ev)
	return string(b)
}

func checkKineto(t *testing.T, path string) {
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	br := bufio.NewReader(f) // a flate.Reader: the gzip reader reads no further than its member
	zr, err := gzip.NewReader(br)
	require.NoError(t, err)
	zr.Multistream(false)

	kineto := map[string]bool{render.CatKernel: true, render.CatMemcpy: true, render.CatMemset: true,
		render.CatRuntime: true, render.CatDriver: true, render.CatNVTX: true, render.CatLaunch: true}
	type call struct {
		pid  float64
		corr float64
	}
	calls := map[call]bool{}
	var kernels []call // each kernel's process and correlation id
	flows := map[float64]string{}
	counts := map[string]int{}
	check := func(ev *kinetoEvent) {
		if ev.Ph == "M" {
			return // metadata: process and thread names
		}
		// Plain checks per event, testify's only on failure: a trace holds
		// hundreds of thousands of events.
		counts[ev.Cat]++
		if !kineto[ev.Cat] {
			t.Fatalf("a category Kineto does not write: %q", ev.Cat)
		}
		if ev.Dur != nil && (ev.TS == nil || ev.Name == nil || ev.PID == nil || ev.TID == nil) {
			t.Fatalf("an event HTA keeps lacks one of ts, name, pid, tid: %s", eventJSON(ev))
		}
		switch ev.Cat {
		case render.CatRuntime, render.CatDriver:
			if ev.Args == nil || ev.Args.Correlation == nil || ev.PID == nil {
				t.Fatalf("%s %s has no correlation or pid", ev.Cat, ev.Name)
			}
			calls[call{*ev.PID, *ev.Args.Correlation}] = true
		case render.CatKernel, render.CatMemcpy, render.CatMemset:
			a := ev.Args
			if a == nil || a.Stream == nil || a.Device == nil || a.Correlation == nil {
				t.Fatalf("%s lacks one of args.stream, args.device, args.correlation: %s", ev.Cat, eventJSON(ev))
			}
			if *a.Stream < 0 {
				t.Fatalf("%s %s: stream %v", ev.Cat, ev.Name, *a.Stream)
			}
			if ev.Cat == render.CatKernel {
				if a.PID == nil {
					t.Fatalf("kernel %s has no args.pid", ev.Name)
				}
				kernels = append(kernels, call{*a.PID, *a.Correlation})
				if len(a.Grid) != 3 {
					t.Fatalf("kernel %s: grid of %d, not [x, y, z]", ev.Name, len(a.Grid))
				}
			}
		case render.CatLaunch:
			if ev.ID == nil {
				t.Fatalf("flow %s has no id", ev.Name)
			}
			if ev.Ph == "f" && (ev.BP == nil || *ev.BP != "e") {
				t.Fatalf("flow end %v: bp not e: %s", *ev.ID, eventJSON(ev))
			}
			flows[*ev.ID] += ev.Ph
		}
	}

	// The trace is read an event at a time: a trace holds hundreds of
	// thousands of them.
	var info *struct {
		Rank *int `json:"rank"`
	}
	dec := jsontext.NewDecoder(zr)
	tok, err := dec.ReadToken()
	require.NoError(t, err)
	require.Equal(t, jsontext.Kind('{'), tok.Kind(), "a trace is one JSON object")
	for dec.PeekKind() != jsontext.Kind('}') {
		key, err := dec.ReadToken()
		require.NoError(t, err)
		switch key.String() {
		case "traceEvents":
			tok, err := dec.ReadToken()
			require.NoError(t, err)
			require.Equal(t, jsontext.Kind('['), tok.Kind(), "traceEvents is an array")
			for dec.PeekKind() != jsontext.Kind(']') {
				var ev kinetoEvent
				require.NoError(t, jsonv2.UnmarshalDecode(dec, &ev))
				check(&ev)
			}
			_, err = dec.ReadToken()
			require.NoError(t, err)
		case "distributedInfo":
			require.NoError(t, jsonv2.UnmarshalDecode(dec, &info))
		default:
			require.NoError(t, dec.SkipValue())
		}
	}
	_, err = dec.ReadToken()
	require.NoError(t, err)
	// Read to its end: the gzip reader checks the trailer's CRC-32 and
	// length (TestRecordedRunsRebuild compares a rebuilt trace with them),
	// and nothing follows the one member.
	_, err = dec.ReadToken()
	require.ErrorIs(t, err, io.EOF, "the trace ends after its object")
	rest, err := io.ReadAll(br)
	require.NoError(t, err)
	require.Zero(t, len(rest), "one gzip member: bytes after it")
	require.NotNil(t, info, "HTA refuses a trace with no distributedInfo")
	require.NotNil(t, info.Rank)

	require.NotEmpty(t, kernels)
	for id, phs := range flows {
		if phs != "sf" {
			t.Fatalf("flow %v: %q, not a start then an end", id, phs)
		}
	}
	matched := 0
	for _, k := range kernels {
		if calls[k] {
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
