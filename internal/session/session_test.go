package session

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sebdah/goldie/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/config"
	"github.com/llm-perf-opt/deepprof/internal/machine"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
	"github.com/llm-perf-opt/deepprof/internal/workload"
)

const fx = "../../fixtures/"

// fakeTools is a Runner that behaves like ncu and a workload by replaying
// recorded output: profiling passes print a recorded ncu log and write a
// stand-in report naming the recorded exports; --import prints them.
type fakeTools struct {
	timing, deep   pass       // what each ncu pass replays
	deepRange      pass       // the deep pass with --replay-mode range or app-range
	discovery      pass       // the NVTX discovery pass
	workloadReport string     // what the workload writes to $DEEPPROF_REPORT
	mu             sync.Mutex // calls and envs: the exports run at once
	calls          [][]string // every argv run
	envs           [][]string // the environment additions of every run

	// tick, when set, is called after each line of a replayed ncu log, so
	// that a test clock can advance as ncu prints.
	tick func()
	// interrupt names the pass ("timing", "deep") during which the fake
	// calls cancel, as Ctrl-C would, then blocks until the context ends.
	interrupt string
	cancel    context.CancelFunc
	// hang names the pass during which the fake hangs, as a workload that
	// never ends would, until the context ends (the step's deadline).
	hang string
	// cuptiRun is a recorded CUPTI run under fixtures/ whose record file
	// cuptiFile the workload "writes" under the library; noOracle: it
	// writes no oracle figures.
	cuptiRun, cuptiFile string
	noOracle            bool
	// noReport: the workload writes no report (any program); cuptiSrc, a
	// record file under fixtures/ the workload "writes" under the library
	// (its base name); cuptiText, a synthetic one written as cupti-1.tsv;
	// exit, the workload's exit status, with its output lines.
	noReport  bool
	cuptiSrc  string
	cuptiMore []string // further record files under fixtures/, one per process
	cuptiText string
	exit      int
	output    []string
	// failRun, when set, is the one run of the workload (counted from 1
	// in runs) that exits with status 5.
	failRun, runs int
}

func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o644)
}

type pass struct {
	Raw, Details string // fixture paths under fixtures/
	Functions    string // the raw page with --print-kernel-base function ("": Raw)
	Log          string // a recorded ncu log printed by the profiling run
	Exit         int
	NoReport     bool
}

func (f *fakeTools) Run(ctx context.Context, c Command) (Result, error) {
	f.mu.Lock()
	f.calls = append(f.calls, c.Argv)
	f.envs = append(f.envs, c.Env)
	f.mu.Unlock()
	argv := c.Argv
	switch {
	case filepath.Base(argv[0]) == "ncu" && slices.Contains(argv, "--list-sections"):
		return f.cat(c.Stdout, fx+"logs/ncu-list-sections.txt")
	case filepath.Base(argv[0]) == "ncu" && slices.Contains(argv, "--import"):
		rep := argv[slices.Index(argv, "--import")+1]
		var p pass
		b, err := os.ReadFile(rep)
		if err != nil {
			fmt.Fprintf(c.Stderr, "==ERROR== cannot open %s\n", rep)
			return Result{ExitCode: 1}, nil
		}
		if err := json.Unmarshal(b, &p); err != nil {
			return Result{}, err
		}
		page := argv[slices.Index(argv, "--page")+1]
		if page == "details" {
			return f.cat(c.Stdout, fx+p.Details)
		}
		if slices.Contains(argv, "--print-kernel-base") && p.Functions != "" {
			return f.cat(c.Stdout, fx+p.Functions)
		}
		return f.cat(c.Stdout, fx+p.Raw)
	case filepath.Base(argv[0]) == "ncu":
		p, name := f.deep, "deep"
		if slices.Contains(argv, "gpu__time_duration.sum") {
			p, name = f.timing, "timing"
		} else if i := slices.Index(argv, "--replay-mode"); i >= 0 && (argv[i+1] == "range" || argv[i+1] == "app-range") {
			p = f.deepRange
		}
		out := argv[slices.Index(argv, "-o")+1]
		if strings.Contains(out, "discovery") {
			p, name = f.discovery, "discovery"
		}
		if !p.NoReport {
			b, _ := json.Marshal(p)
			if err := os.WriteFile(strings.TrimSuffix(out, ".ncu-rep")+".ncu-rep", b, 0o644); err != nil {
				return Result{}, err
			}
		}
		if p.Log != "" {
			if _, err := f.replay(c.Stderr, fx+p.Log); err != nil {
				return Result{}, err
			}
		}
		if f.interrupt == name {
			f.cancel()
			<-ctx.Done()
			return Result{ExitCode: -1, Interrupted: true, Duration: 1500 * time.Millisecond}, nil
		}
		if f.hang == name {
			<-ctx.Done()
			return Result{ExitCode: -1, Interrupted: true, Duration: 1500 * time.Millisecond}, nil
		}
		return Result{ExitCode: p.Exit}, nil
	default: // the workload
		for _, e := range c.Env {
			// Under the CUPTI library, the recording of a real run; under
			// the oracle phase, that run's torch.profiler figures.
			if dir, ok := strings.CutPrefix(e, EnvOutDir+"="); ok && f.cuptiSrc != "" {
				for _, src := range append([]string{f.cuptiSrc}, f.cuptiMore...) {
					if err := copyFile(fx+src, filepath.Join(dir, filepath.Base(src))); err != nil {
						return Result{}, err
					}
				}
			}
			if dir, ok := strings.CutPrefix(e, EnvOutDir+"="); ok && f.cuptiText != "" {
				if err := os.WriteFile(filepath.Join(dir, "cupti-1.tsv"), []byte(f.cuptiText), 0o644); err != nil {
					return Result{}, err
				}
			}
			if dir, ok := strings.CutPrefix(e, EnvOutDir+"="); ok && f.cuptiRun != "" {
				if err := copyFile(fx+f.cuptiRun+"/timeline/cupti/"+f.cuptiFile, filepath.Join(dir, f.cuptiFile)); err != nil {
					return Result{}, err
				}
			}
			if path, ok := strings.CutPrefix(e, workload.EnvOracle+"="); ok && f.cuptiRun != "" && !f.noOracle {
				if err := copyFile(fx+f.cuptiRun+"/timeline/oracle-torch-profiler.json", path); err != nil {
					return Result{}, err
				}
			}
			if path, ok := strings.CutPrefix(e, workload.EnvReport+"="); ok && !f.noReport {
				if err := os.WriteFile(path, []byte(f.workloadReport), 0o644); err != nil {
					return Result{}, err
				}
			}
		}
		fmt.Fprintln(c.Stdout, "workload=fake prefill and decode done")
		for _, l := range f.output {
			fmt.Fprintln(c.Stdout, l)
		}
		if f.runs++; f.failRun > 0 && f.runs == f.failRun {
			fmt.Fprintf(c.Stdout, "run %d: RuntimeError\n", f.runs)
			return Result{ExitCode: 5}, nil
		}
		return Result{ExitCode: f.exit}, nil
	}
}

func (f *fakeTools) cat(w io.Writer, path string) (Result, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Result{}, err
	}
	if strings.HasSuffix(path, ".gz") { // a recorded run's export, as ncu printed it
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return Result{}, err
		}
		if b, err = io.ReadAll(zr); err != nil {
			return Result{}, err
		}
	}
	_, err = w.Write(b)
	return Result{}, err
}

// replay prints a recorded ncu log line by line, as ncu would.
func (f *fakeTools) replay(w io.Writer, path string) (Result, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Result{}, err
	}
	for line := range bytes.Lines(b) {
		if _, err := w.Write(line); err != nil {
			return Result{}, err
		}
		if f.tick != nil {
			f.tick()
		}
	}
	return Result{}, nil
}

// A SYNTHETIC workload report: the shape of the contract.
const stage1Report = `{"model": {"name": "tiny-llama", "arch": "LlamaForCausalLM", "params": 25000000, "dtype": "bfloat16"},
 "tokens": {"prompt": 64, "generated": 4},
 "stages": {"prefill": {"ms": [2.1, 2.0, 2.05]}, "decode": {"ms": [8.4, 8.2, 8.3]}}}`

func testConfig(t *testing.T, root string) *config.Config {
	t.Helper()
	cfg := config.Default()
	cfg.Run = config.Run{Root: root, ID: "run-1"}
	cfg.Workload.Argv = []string{"wl.py", "--steps", "4"}
	cfg.NVTX.Include = []string{"decode_all"}
	cfg.NCU.Set = "roofline"
	// The recorded sessions the fakes replay (fixtures/sessions) chose
	// their deep-pass kernels at this coverage.
	cfg.Timeline.Coverage = 0.9
	// They ran the torch.profiler check, which a session runs on request,
	// and predate the automatic ranges.
	cfg.Timeline.Oracle = true
	cfg.Workload.AutoRanges = "off"
	return cfg
}

func newSession(t *testing.T, cfg *config.Config, f *fakeTools) *Session {
	t.Helper()
	y, err := cfg.YAML()
	require.NoError(t, err)
	// ToolEnv with no PATH and no fallbacks: no host's nsys is found; and no
	// CUDA toolkit for the CUPTI library, whatever the host has.
	return &Session{Cfg: cfg, ConfigYAML: y, Runner: f, Ncu: "/usr/local/cuda/bin/ncu", ToolEnv: &machine.Env{Fallbacks: []string{}},
		CUPTI: &Options{Getenv: func(string) string { return "" }, DefaultCUDAHome: "/nonexistent/cuda"},
		Env: func() ([]byte, error) {
			return []byte(`{"gpu_error": "a test: no NVML", "tools": {}, "host": "test", "os": "linux", "arch": "amd64", "go_version": "go"}` + "\n"), nil
		},
		Now: func() time.Time { return time.Date(2026, 11, 21, 23, 0, 0, 0, time.UTC) }}
}

// normalize replaces the temporary root, so goldens do not depend on it.
func normalize(b []byte, root string) []byte {
	return []byte(strings.ReplaceAll(string(b), root, "$ROOT"))
}

func goldenRun(t *testing.T, name string, run *rundir.Run, root string, files ...string) {
	g := goldie.New(t, goldie.WithFixtureDir("../../golden/session/"+name), goldie.WithNameSuffix(""))
	for _, rel := range files {
		b, err := os.ReadFile(run.Path(rel))
		require.NoError(t, err, rel)
		if rel == rundir.ManifestJSON {
			b = sizeless(t, b)
		}
		g.Assert(t, rel, normalize(b, root))
	}
}

// sizeless drops the sizes of files that hold the temporary root's path.
func sizeless(t *testing.T, b []byte) []byte {
	var m rundir.Manifest
	require.NoError(t, json.Unmarshal(b, &m))
	for i, a := range m.Artifacts {
		if a.Path == rundir.ConfigYAML || a.Path == rundir.InputsYAML {
			m.Artifacts[i].Bytes = 0
		}
	}
	out, err := json.MarshalIndent(m, "", "  ")
	require.NoError(t, err)
	return append(out, '\n')
}

// TestSessionOffline runs a whole session against recorded exports: the
// timing pass replays the basic raw page, the deep pass the roofline pages.
func TestSessionOffline(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	f := &fakeTools{
		timing:         pass{Raw: "ncu/h200-llama-decode-basic/raw.csv", Log: "logs/ncu-output-file-plus-log-file.txt"},
		deep:           pass{Raw: "ncu/h200-llama-decode-roofline/raw.csv", Details: "ncu/h200-llama-decode-roofline/details.csv", Log: "logs/ncu-output-file-plus-log-file.txt"},
		workloadReport: stage1Report,
	}
	s := newSession(t, testConfig(t, root), f)
	run, err := s.Run(context.Background())
	require.NoError(t, err)
	m := run.Manifest()
	assert.Equal(t, rundir.StatusComplete, m.Status, "%+v", m)
	for _, rel := range []string{rundir.EnvJSON, rundir.ConfigYAML, rundir.InputsYAML, rundir.KernelsMD, rundir.KernelsJSON,
		rundir.ReportMD, rundir.ManifestJSON, rundir.NcuRaw, rundir.NcuDetails, rundir.RegionsMD, rundir.RegionsJSON,
		rundir.NcuSections, rundir.Stage1Report, rundir.NcuTimingRaw} {
		assert.FileExists(t, run.Path(rel))
	}
	goldenRun(t, "offline", run, root, rundir.ManifestJSON, rundir.ReportMD, rundir.InputsYAML, rundir.KernelsMD)

	// env.json gained the model and versions the workload reported.
	var env workload.EnvInfo
	b, err := os.ReadFile(run.Path(rundir.EnvJSON))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &env))
	require.NotNil(t, env.Workload)
	var rep struct {
		Model struct {
			Name string `json:"name"`
		} `json:"model"`
	}
	b, err = os.ReadFile(run.Path(rundir.Stage1Report))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &rep))
	assert.Equal(t, rep.Model.Name, env.Workload.Model.Name)
	assert.NotEmpty(t, env.Workload.Model.Name)
	assert.Equal(t, "a test: no NVML", env.GPUError, "the rest of env.json is kept")

	// The deep pass is filtered to the timing pass's top kernels.
	var deep []string
	for _, c := range f.calls {
		if slices.Contains(c, "-o") && !slices.Contains(c, "gpu__time_duration.sum") {
			deep = c
		}
	}
	require.NotNil(t, deep)
	joined := strings.Join(deep, " ")
	assert.Contains(t, joined, "--kernel-name regex:")
	assert.Contains(t, joined, "--nvtx-include decode_all/")
	assert.Contains(t, joined, "--set roofline")
}

// TestSessionNVTXMatchedNothing: the real log of an NVTX filter that
// matched nothing; ncu wrote no report. The run is kept, partial, and says
// what happened.
func TestSessionNVTXMatchedNothing(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	f := &fakeTools{
		timing:         pass{Log: "logs/ncu-no-kernels-profiled-domain-syntax.txt", NoReport: true},
		discovery:      pass{Raw: "ncu/cuda-nvtx-domains/raw.csv"},
		workloadReport: stage1Report,
	}
	cfg := testConfig(t, root)
	cfg.NVTX.Include = []string{"LLM@decode_all"}
	run, err := newSession(t, cfg, f).Run(context.Background())
	require.Error(t, err)
	m := run.Manifest()
	assert.Equal(t, rundir.StatusPartial, m.Status)
	goldenRun(t, "nvtx-no-match", run, root, rundir.ManifestJSON, rundir.ReportMD)
}

// TestSessionWorkloadCrash: the workload crashed under the deep pass; ncu
// kept a report of what it profiled (the real partial export).
func TestSessionWorkloadCrash(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	f := &fakeTools{
		timing:         pass{Raw: "ncu/h200-llama-decode-basic/raw.csv"},
		deep:           pass{Raw: "ncu/h200-workload-crash-partial/raw.csv", Details: "ncu/h200-workload-crash-partial/raw.csv", Log: "logs/ncu-workload-crash.txt", Exit: 9},
		workloadReport: stage1Report,
	}
	run, err := newSession(t, testConfig(t, root), f).Run(context.Background())
	require.Error(t, err)
	m := run.Manifest()
	assert.Equal(t, rundir.StatusPartial, m.Status)
	assert.FileExists(t, run.Path(rundir.NcuRaw), "what was profiled is kept")
	goldenRun(t, "workload-crash", run, root, rundir.ManifestJSON)
}

// TestDryRunPlan is the plan `deepprof profile --dry-run` prints.
func TestDryRunPlan(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, "/runs")
	steps, err := newSession(t, cfg, &fakeTools{}).Plan("/runs/run-1", nil)
	require.NoError(t, err)
	var b strings.Builder
	require.NoError(t, FormatPlan(&b, steps))
	g := goldie.New(t, goldie.WithFixtureDir("../../golden/session"), goldie.WithNameSuffix(""))
	g.Assert(t, "dry-run.txt", []byte(b.String()))
}

func TestRunNeverReusesMain(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	f := &fakeTools{timing: pass{Raw: "ncu/h200-llama-decode-basic/raw.csv"}, deep: pass{Raw: "ncu/h200-llama-decode-roofline/raw.csv", Details: "ncu/h200-llama-decode-roofline/details.csv"}, workloadReport: stage1Report}
	_, err := newSession(t, testConfig(t, root), f).Run(context.Background())
	require.NoError(t, err)
	_, err = newSession(t, testConfig(t, root), f).Run(context.Background())
	require.ErrorIs(t, err, rundir.ErrRunExists)
}

// TestSessionRangeReplayFallback: ncu refused range (or app-range) replay
// in the deep pass (the real logs); the session keeps the attempt's log and
// runs the deep pass again with kernel replay.
func TestSessionRangeReplayFallback(t *testing.T) {
	t.Parallel() // it waits on processes: beside the others that do
	tests := []struct {
		mode, log, golden, message string
		exit                       int
	}{
		{"range", "logs/ncu-range-replay-unsupported-api.txt", "range-fallback", "range replay refused: ncu/deep-range.log:5: range replay cannot capture this range", 9},
		{"app-range", "logs/ncu-app-range-replay-mismatch.txt", "", "range replay refused: ncu/deep-range.log:48: application-range replay saw a different set of kernels", 1},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			root := t.TempDir()
			f := &fakeTools{
				timing:         pass{Raw: "ncu/h200-llama-decode-basic/raw.csv", Log: "logs/ncu-escaped-at-sign-match.txt"},
				deepRange:      pass{Log: tt.log, Exit: tt.exit, NoReport: true},
				deep:           pass{Raw: "ncu/h200-llama-decode-roofline/raw.csv", Details: "ncu/h200-llama-decode-roofline/details.csv", Log: "logs/ncu-escaped-at-sign-match.txt"},
				workloadReport: stage1Report,
			}
			cfg := testConfig(t, root)
			cfg.NCU.ReplayMode = tt.mode
			run, err := newSession(t, cfg, f).Run(context.Background())
			require.NoError(t, err)
			m := run.Manifest()
			assert.Equal(t, rundir.StatusComplete, m.Status, "%+v", m)
			assert.Contains(t, strings.Join(m.Notes, "\n"), tt.message)
			assert.Contains(t, strings.Join(m.Notes, "\n"), "; fell back to kernel replay")

			// The attempt's log is kept; ncu/deep.log is the rerun's.
			attempt, err := os.ReadFile(run.Path(deepRangeLog))
			require.NoError(t, err)
			want, err := os.ReadFile(fx + tt.log)
			require.NoError(t, err)
			assert.Equal(t, string(want), string(attempt))
			assert.FileExists(t, run.Path(rundir.NcuRaw))
			a, ok := m.Find(deepRangeLog)
			assert.True(t, ok, "the attempt's log is in the manifest")
			assert.Equal(t, rundir.StatusComplete, a.Status)

			var modes []string
			for _, c := range f.calls {
				if i := slices.Index(c, "--replay-mode"); i >= 0 {
					modes = append(modes, c[i+1])
				}
			}
			assert.Equal(t, []string{"kernel", tt.mode, "kernel"}, modes, "timing pass, refused deep pass, kernel-replay rerun")
			report, err := os.ReadFile(run.Path(rundir.ReportMD))
			require.NoError(t, err)
			assert.Contains(t, string(report), "range replay refused: ")
			if tt.golden != "" {
				goldenRun(t, tt.golden, run, root, rundir.ManifestJSON, rundir.ReportMD)
			}
		})
	}

	t.Run("accepted", func(t *testing.T) {
		root := t.TempDir()
		f := &fakeTools{
			timing:         pass{Raw: "ncu/h200-llama-decode-basic/raw.csv"},
			deepRange:      pass{Raw: "ncu/h200-llama-decode-roofline/raw.csv", Details: "ncu/h200-llama-decode-roofline/details.csv", Log: "logs/ncu-output-file-plus-log-file.txt"},
			workloadReport: stage1Report,
		}
		cfg := testConfig(t, root)
		cfg.NCU.ReplayMode = "range"
		run, err := newSession(t, cfg, f).Run(context.Background())
		require.NoError(t, err)
		assert.Equal(t, rundir.StatusComplete, run.Manifest().Status)
		assert.NoFileExists(t, run.Path(deepRangeLog))
		assert.NotContains(t, strings.Join(run.Manifest().Notes, "\n"), "refused")

		// The dry run says what would happen.
		steps, err := newSession(t, cfg, f).Plan("/runs/run-1", nil)
		require.NoError(t, err)
		var b strings.Builder
		require.NoError(t, FormatPlan(&b, steps))
		assert.Contains(t, b.String(), "note: kernel replay whatever ncu.replay_mode says")
		assert.Contains(t, b.String(), "note: if ncu refuses range replay")
		assert.Contains(t, b.String(), "--replay-mode range --set roofline")
	})
}

// TestSessionProgress feeds the real log of a 412-launch pass through the
// progress line, with a clock that advances 30ms a line as ncu prints.
func TestSessionProgress(t *testing.T) {
	t.Parallel()
	for _, live := range []bool{false, true} {
		t.Run(fmt.Sprintf("live=%v", live), func(t *testing.T) {
			root := t.TempDir()
			clock := time.Date(2026, 11, 21, 23, 0, 0, 0, time.UTC)
			f := &fakeTools{
				timing:         pass{Raw: "ncu/h200-llama-decode-basic/raw.csv", Log: "logs/ncu-output-file-plus-log-file.txt"},
				deep:           pass{Raw: "ncu/h200-llama-decode-roofline/raw.csv", Details: "ncu/h200-llama-decode-roofline/details.csv", Log: "logs/ncu-escaped-at-sign-match.txt"},
				workloadReport: stage1Report,
				tick:           func() { clock = clock.Add(30 * time.Millisecond) },
			}
			var status bytes.Buffer
			s := newSession(t, testConfig(t, root), f)
			s.Now = func() time.Time { return clock }
			s.Progress, s.ProgressLive = &status, live
			run, err := s.Run(context.Background())
			require.NoError(t, err)

			// The log is kept whole beside the progress line.
			log, err := os.ReadFile(run.Path(rundir.NcuDeepLog))
			require.NoError(t, err)
			want, err := os.ReadFile(fx + "logs/ncu-escaped-at-sign-match.txt")
			require.NoError(t, err)
			assert.Equal(t, string(want), string(log))

			// 416 lines at 30ms: 12.48s.
			if !live {
				assert.Equal(t, "ncu-timing: 0 launches profiled in 0.1s\nncu-deep: 412 launches profiled in 12.5s\n", status.String())
				return
			}
			lines := strings.Split(strings.TrimSuffix(status.String(), "\n"), "\n")
			require.Len(t, lines, 2, "one line per pass, rewritten in place")
			frames := strings.Split(lines[1], "\r")[1:]
			assert.Equal(t, "ncu-deep: 412 launches profiled in 12.5s", strings.TrimRight(frames[len(frames)-1], " "))
			// At most 4 rewrites a second: 12.48s allow 50 after the first.
			assert.LessOrEqual(t, len(frames)-1, 51)
			assert.Greater(t, len(frames)-1, 40)
			assert.Equal(t, "ncu-deep: 0 launches profiled, 1 process(es) attached, 0.0s", frames[0])
			assert.Contains(t, frames[len(frames)/2], " launches profiled, current: ")
			for _, fr := range frames {
				assert.LessOrEqual(t, len([]rune(fr)), liveWidth, fr)
			}
		})
	}
}

// TestSessionInterrupted: Ctrl-C (the context cancelled) during an ncu
// pass. The run directory and its manifest are still written, partial,
// with what was done before.
func TestSessionInterrupted(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, during string
		deep         pass
		reason       string
		kept         []string // complete artifacts
		partial      []string
		missing      []string
	}{
		{name: "deep pass, no report", during: "deep",
			deep:   pass{Log: "logs/ncu-escaped-at-sign-match.txt", NoReport: true},
			reason: "interrupted during ncu-deep (stopped after 1.5s); the steps before it are kept",
			// ncu/regions/ is the run's totals, from the timing pass; the
			// deep pass's sample is what is missing.
			kept:    []string{rundir.Stage1Report, rundir.NcuTimingRaw, rundir.KernelsMD, rundir.NcuDeepLog, rundir.EnvJSON, rundir.RegionsMD},
			missing: []string{rundir.NcuDeepReport, rundir.RegionsSampleMD}},
		{name: "deep pass, report written on SIGINT", during: "deep",
			deep:    pass{Raw: "ncu/h200-workload-crash-partial/raw.csv", Details: "ncu/h200-workload-crash-partial/raw.csv", Log: "logs/ncu-output-file-plus-log-file.txt"},
			reason:  "interrupted during ncu-deep (stopped after 1.5s); the steps before it are kept",
			kept:    []string{rundir.Stage1Report, rundir.NcuTimingRaw, rundir.KernelsMD, rundir.RegionsMD},
			partial: []string{rundir.NcuDeepReport, rundir.NcuRaw, rundir.NcuDetails}},
		{name: "timing pass", during: "timing",
			reason:  "interrupted during ncu-timing (stopped after 1.5s); the steps before it are kept",
			kept:    []string{rundir.Stage1Report, rundir.NcuTimingLog, rundir.ConfigYAML},
			partial: []string{rundir.NcuTimingReport}, // what ncu wrote when stopped
			missing: []string{rundir.KernelsMD}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			f := &fakeTools{
				timing:         pass{Raw: "ncu/h200-llama-decode-basic/raw.csv", Log: "logs/ncu-output-file-plus-log-file.txt"},
				deep:           tt.deep,
				workloadReport: stage1Report,
				interrupt:      tt.during,
				cancel:         cancel,
			}
			run, err := newSession(t, testConfig(t, root), f).Run(ctx)
			require.Error(t, err)

			b, rerr := os.ReadFile(run.Path(rundir.ManifestJSON))
			require.NoError(t, rerr, "manifest.json is written")
			var m rundir.Manifest
			require.NoError(t, json.Unmarshal(b, &m))
			assert.Equal(t, rundir.StatusPartial, m.Status)
			assert.Equal(t, tt.reason, m.Reason)
			assert.True(t, strings.HasPrefix(m.Reason, "interrupted"))
			assert.FileExists(t, run.Path(rundir.ReportMD))
			status := func(rel string) rundir.Status {
				a, ok := m.Find(rel)
				if !ok {
					return "absent"
				}
				return a.Status
			}
			for _, rel := range tt.kept {
				assert.Equal(t, rundir.StatusComplete, status(rel), rel)
			}
			for _, rel := range tt.partial {
				assert.Equal(t, rundir.StatusPartial, status(rel), rel)
			}
			for _, rel := range tt.missing {
				assert.Equal(t, rundir.StatusMissing, status(rel), rel)
			}
			if tt.during == "timing" {
				for _, c := range f.calls {
					assert.NotContains(t, strings.Join(c, " "), "ncu/deep", "nothing runs after the interruption")
				}
			}
		})
	}
}

// TestNcuPhasesRunOnce: under ncu the workload does the minimum, one
// repeat; stage 1 keeps workload.repeats.
func TestNcuPhasesRunOnce(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	f := &fakeTools{timing: pass{Raw: "ncu/h200-llama-decode-basic/raw.csv"}, deep: pass{Raw: "ncu/h200-llama-decode-roofline/raw.csv", Details: "ncu/h200-llama-decode-roofline/details.csv"}, workloadReport: stage1Report}
	_, err := newSession(t, testConfig(t, root), f).Run(context.Background())
	require.NoError(t, err)
	n := 0
	for i, c := range f.calls {
		switch {
		case slices.Contains(c, "-o"):
			assert.Contains(t, f.envs[i], "DEEPPROF_REPEATS=1", c)
			n++
		case slices.Contains(f.envs[i], "DEEPPROF_PHASE=stage1"):
			assert.Contains(t, f.envs[i], "DEEPPROF_REPEATS=3")
		}
	}
	assert.Equal(t, 2, n, "the timing and the deep pass")
}

// TestRecordedFailureSessions replays what ncu really printed and exported
// in two sessions run on an H200 (fixtures/sessions): the offline session
// must come to the same verdict and the same notes as the real one did.
func TestRecordedFailureSessions(t *testing.T) {
	t.Parallel()
	const dir = "sessions/"
	tests := []struct {
		name      string
		configure func(*config.Config)
		f         *fakeTools
		status    rundir.Status
	}{
		{"nvtx-no-match", func(c *config.Config) { c.NVTX.Include = []string{"LLM@decode_all"} }, &fakeTools{
			timing:    pass{Log: dir + "nvtx-no-match/ncu/timing.log", NoReport: true},
			discovery: pass{Raw: dir + "nvtx-no-match/ncu/discovery-raw.csv.gz", Log: dir + "nvtx-no-match/ncu/discovery.log"},
		}, rundir.StatusPartial},
		{"range-replay-refused", func(c *config.Config) { c.NCU.ReplayMode = "range" }, &fakeTools{
			timing: pass{Raw: dir + "range-replay-refused/ncu/timing-raw.csv.gz", Functions: dir + "range-replay-refused/ncu/timing-functions.csv.gz",
				Log: dir + "range-replay-refused/ncu/timing.log"},
			deepRange: pass{Log: dir + "range-replay-refused/ncu/deep-range.log", Exit: 9, NoReport: true},
			deep: pass{Raw: dir + "range-replay-refused/ncu/raw.csv.gz", Details: dir + "range-replay-refused/ncu/details.csv.gz",
				Log: dir + "range-replay-refused/ncu/deep.log"},
		}, rundir.StatusComplete},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			tt.f.workloadReport = stage1Report
			cfg := testConfig(t, root)
			cfg.NVTX.Include = []string{"prefill", "decode_all"}
			cfg.NCU.Set = "basic"
			tt.configure(cfg)
			run, _ := newSession(t, cfg, tt.f).Run(context.Background())
			require.NotNil(t, run)
			got := run.Manifest()
			var real rundir.Manifest
			b, err := os.ReadFile(fx + dir + tt.name + "/manifest.json")
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(b, &real))
			assert.Equal(t, tt.status, got.Status)
			assert.Equal(t, real.Status, got.Status, "the verdict of the real session")
			// Notes added since the recording are named here, and only they
			// may differ.
			// The timeline note now ends with why nsys was not used instead
			// of "the session does not drive nsys yet": its start must hold.
			const timeline = "timeline: an ncu timing pass (gpu__time_duration.sum, same NVTX gating) found the top kernels; "
			var notes, realNotes []string
			for _, n := range got.Notes {
				if strings.HasPrefix(n, timeline) {
					n = timeline + "..."
				}
				if !strings.HasPrefix(n, "ncu/regions/ summarizes the deep pass") {
					notes = append(notes, n)
				}
			}
			for _, n := range real.Notes {
				if strings.HasPrefix(n, timeline) {
					n = timeline + "..."
				}
				realNotes = append(realNotes, n)
			}
			assert.Equal(t, realNotes, notes, "the notes of the real session")
			goldenRun(t, "recorded-"+tt.name, run, root, rundir.ReportMD)
		})
	}
}
