package session

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llm-perf-opt/deepprof/internal/config"
	"github.com/llm-perf-opt/deepprof/internal/phases"
	"github.com/llm-perf-opt/deepprof/internal/timeline"
	"github.com/llm-perf-opt/deepprof/internal/workload"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/rundir"
)

// fakeCUPTI is a CUDA toolkit folder holding what Build looks for, and
// a C compiler that writes its -o file (or fails), as Options.
func fakeCUPTI(t *testing.T, compiles bool) *Options {
	t.Helper()
	home := t.TempDir()
	for f, text := range map[string]string{"include/cuda.h": "", "include/nvtx3/nvToolsExt.h": "", "include/cupti.h": "",
		"include/generated_nvtx_meta.h": "", "lib64/libcupti.so": "", "include/cupti_version.h": "#define CUPTI_API_VERSION 130001\n"} {
		p := filepath.Join(home, filepath.FromSlash(f))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	}
	script := "#!/bin/sh\nwhile [ $# -gt 0 ]; do if [ \"$1\" = -o ]; then echo so > \"$2\"; exit 0; fi; shift; done; exit 5\n"
	if !compiles {
		script = "#!/bin/sh\necho 'deepprof_cupti.c:1:1: error: a test compiler that fails' >&2\nexit 1\n"
	}
	cc := filepath.Join(t.TempDir(), "cc")
	require.NoError(t, os.WriteFile(cc, []byte(script), 0o755))
	return &Options{CUDAHome: home, Compiler: cc, CacheDir: filepath.Join(t.TempDir(), "cache"), Getenv: func(string) string { return "" }}
}

func cuptiFake() *fakeTools {
	return &fakeTools{
		deep:           pass{Raw: "ncu/h200-llama-decode-roofline/raw.csv", Details: "ncu/h200-llama-decode-roofline/details.csv"},
		workloadReport: stage1Report,
		cuptiRun:       "runs/cupti-tiny-llama", cuptiFile: "cupti-564.tsv.gz",
	}
}

// With no usable nsys and a CUDA toolkit with CUPTI, auto takes the CUPTI
// timeline: the library is built, the workload runs with it and under the
// oracle, and kernels.md, ncu/regions/ and the deep pass's kernels come
// from the records; no ncu timing pass runs.
func TestSessionCUPTITimeline(t *testing.T) {
	t.Parallel() // it waits on processes: beside the others that do
	root := t.TempDir()
	f := cuptiFake()
	s := newSession(t, testConfig(t, root), f)
	s.CUPTI = fakeCUPTI(t, true)
	run, err := s.Run(context.Background())
	require.NoError(t, err)
	m := run.Manifest()
	assert.Equal(t, rundir.StatusComplete, m.Status, m.Reason)
	require.NotNil(t, m.Sources)
	assert.Equal(t, rundir.TimelineCupti, m.Sources.Kernels.Path)
	assert.Equal(t, rundir.TimelineCupti, m.Sources.Regions.Path)

	var steps []string
	for _, st := range m.Steps {
		steps = append(steps, st.Name)
	}
	// The workload's report of the CUPTI run gives no in-process overhead:
	// the plain run comes after it.
	assert.Equal(t, []string{"ncu-sections", "cupti-build", "timeline-cupti", "oracle-torch-profiler", "stage1", "ncu-deep", "export-raw", "export-details"}, steps)
	for _, argv := range f.calls {
		assert.NotContains(t, argv, "gpu__time_duration.sum", "no ncu timing pass")
	}
	// The library is loaded into the timeline's run only, from the cache.
	for i, env := range f.envs {
		inj := slices.ContainsFunc(env, func(e string) bool { return strings.HasPrefix(e, EnvCUDAInjection+"=") })
		if slices.Contains(env, "DEEPPROF_PHASE=cupti") {
			assert.True(t, inj, "the timeline run loads the library")
			assert.Contains(t, env, EnvCUDAInjection+"="+filepath.Join(s.CUPTI.CacheDir, filepath.Base(filepath.Dir(strings.TrimPrefix(env[slices.IndexFunc(env, func(e string) bool { return strings.HasPrefix(e, EnvCUDAInjection+"=") })], EnvCUDAInjection+"="))), LibName))
		} else {
			assert.False(t, inj, "run %d (%v) without the library", i, f.calls[i])
		}
	}
	// The deep pass filters on the CUPTI timeline's top kernels: one
	// launch of each (their 35 launch configurations are over the budget
	// of 24), the 14th (reached soon among those covering the most), with
	// no NVTX filter (ncu counts every launch).
	deep := f.calls[slices.IndexFunc(f.calls, func(a []string) bool { return slices.Contains(a, "--kernel-id") })]
	id := deep[slices.Index(deep, "--kernel-id")+1]
	assert.Contains(t, id, "nvjet", "a top kernel of the recording")
	assert.True(t, strings.HasPrefix(id, "::regex:^(") && strings.HasSuffix(id, ")$:14"), id)
	assert.NotContains(t, deep, "--nvtx-include")
	assert.NotContains(t, deep, "--kernel-name")
	assert.NotContains(t, deep, "--filter-mode")
	assert.Equal(t, []string{"--launch-count", "18", "--kill", "1"}, deep[slices.Index(deep, "--launch-count"):slices.Index(deep, "--launch-count")+4], "ncu ends the program once the 18 are profiled")
	assert.Contains(t, deep, "--nvtx", "the NVTX stack of each profiled launch is still recorded")
	assert.True(t, slices.ContainsFunc(m.Notes, func(n string) bool {
		return strings.HasPrefix(n, "deep pass on the top 18 kernel(s) by exact name (18 mangled name(s)): one launch of each, its invocation 14") &&
			strings.Contains(n, "every configuration would take 35 launches, over ncu.max_launches=24; 18 launch(es)")
	}), "%q", m.Notes)

	for _, rel := range []string{rundir.TimelineTrace, rundir.TimelinePhases, rundir.OracleCheckJSON, rundir.KernelsJSON, rundir.RegionsJSON} {
		assert.FileExists(t, run.Path(rel))
	}
	var c struct {
		Passed bool `json:"passed"`
	}
	b, err := os.ReadFile(run.Path(rundir.OracleCheckJSON))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &c))
	assert.True(t, c.Passed, "the recorded run agrees with its oracle")
	md, err := os.ReadFile(run.Path(rundir.ReportMD))
	require.NoError(t, err)
	assert.Contains(t, string(md), "## The CUPTI timeline")
	assert.Contains(t, string(md), "Independent check: the timeline agrees with torch.profiler")
}

// A workload that writes no oracle figures gets a note, and the run goes on.
func TestSessionCUPTINoOracle(t *testing.T) {
	t.Parallel() // it waits on processes: beside the others that do
	f := cuptiFake()
	f.noOracle = true
	s := newSession(t, testConfig(t, t.TempDir()), f)
	s.CUPTI = fakeCUPTI(t, true)
	run, err := s.Run(context.Background())
	require.NoError(t, err)
	m := run.Manifest()
	assert.Equal(t, rundir.StatusComplete, m.Status, m.Reason)
	assert.True(t, slices.ContainsFunc(m.Notes, func(n string) bool {
		return strings.Contains(n, "the workload wrote no figures to $DEEPPROF_ORACLE")
	}), "%q", m.Notes)
	assert.NoFileExists(t, run.Path(rundir.OracleCheckJSON))
}

// TestSessionCheckOnRequest (issue 36): by default a session runs no
// torch.profiler check (a run of the program nobody asked for); the
// summary says the check did not run.
func TestSessionCheckOnRequest(t *testing.T) {
	t.Parallel() // it waits on processes: beside the others that do
	f := cuptiFake()
	cfg := testConfig(t, t.TempDir())
	cfg.Timeline.Oracle = config.Default().Timeline.Oracle
	require.False(t, cfg.Timeline.Oracle, "off by default")
	s := newSession(t, cfg, f)
	s.CUPTI = fakeCUPTI(t, true)
	run, err := s.Run(context.Background())
	require.NoError(t, err)
	for _, st := range run.Manifest().Steps {
		assert.NotEqual(t, "oracle-torch-profiler", st.Name)
	}
	assert.NoFileExists(t, run.Path(rundir.OracleJSON))
	b, err := os.ReadFile(run.Path(rundir.ReportMD))
	require.NoError(t, err)
	assert.Contains(t, string(b), "The torch.profiler check did not run in this session")
}

// Under auto, a library that does not compile leaves the ncu timing pass,
// and the manifest says why; timeline.tool=cupti stops with the compiler's
// message.
func TestSessionCUPTIBuildFails(t *testing.T) {
	t.Parallel()
	f := &fakeTools{
		timing:         pass{Raw: "ncu/h200-llama-decode-basic/raw.csv"},
		deep:           pass{Raw: "ncu/h200-llama-decode-roofline/raw.csv", Details: "ncu/h200-llama-decode-roofline/details.csv"},
		workloadReport: stage1Report,
	}
	s := newSession(t, testConfig(t, t.TempDir()), f)
	s.CUPTI = fakeCUPTI(t, false)
	run, err := s.Run(context.Background())
	require.NoError(t, err)
	m := run.Manifest()
	assert.Equal(t, rundir.StatusComplete, m.Status, m.Reason)
	assert.Equal(t, rundir.NcuTimingRaw, m.Sources.Kernels.Path)
	assert.True(t, slices.ContainsFunc(m.Notes, func(n string) bool {
		return strings.HasPrefix(n, "timeline: an ncu timing pass") && strings.Contains(n, "the CUPTI library could not be built") &&
			strings.Contains(n, "a test compiler that fails")
	}), "%q", m.Notes)

	cfg := testConfig(t, t.TempDir())
	cfg.Timeline.Tool = "cupti"
	s = newSession(t, cfg, f)
	s.CUPTI = fakeCUPTI(t, false)
	run, err = s.Run(context.Background())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "a test compiler that fails")
	assert.Equal(t, rundir.StatusPartial, run.Manifest().Status)
}

// TestPlanFromRecordedOneEach: the plan made again from the CUPTI records
// of the recorded one-launch-each session (an H100, the default
// workload), with its configuration: the invocation, launches and
// configurations its deep pass used, 17 of the 18 launches outside the
// profiled ranges (the warm-up's), and said so.
func TestPlanFromRecordedOneEach(t *testing.T) {
	t.Parallel()
	f := cuptiFake()
	f.cuptiRun, f.cuptiFile = "runs/h100-tiny-llama-one-each", "cupti-1338.tsv.gz"
	cfg := testConfig(t, t.TempDir())
	cfg.NVTX.Include = []string{"prefill", "decode_all"}
	cfg.NCU.Set, cfg.NCU.MaxLaunches, cfg.Timeline.Coverage = "basic", 24, 0.85
	s := newSession(t, cfg, f)
	s.CUPTI = fakeCUPTI(t, true)
	run, err := s.Run(context.Background())
	require.NoError(t, err)
	notes := strings.Join(run.Manifest().Notes, "\n")
	assert.Contains(t, notes, "deep pass on the top 18 kernel(s) by exact name (18 mangled name(s)): one launch of each, its invocation 8 (ncu --kernel-id takes one invocation number for all), whose launch configurations ran 79.5% of their time; every configuration would take 31 launches, over ncu.max_launches=24; 18 launch(es)")
	assert.Contains(t, notes, "; 1 of the 18 launches are in the profiled NVTX ranges, the others of the same kernel and launch configuration outside them (a warm-up's)")
}

// TestPlanWithinInferredPhases (issue 54): the plan made again from the
// CUPTI records of a recorded JAX program with no NVTX range (an H200,
// fixtures/runs/corpus-jax), with its configuration. Its phases are
// inferred from its kernel stream; XLA's autotuning before the first of
// them ran DelayKernel for 1.76 s, 96 % of the run's kernel time, and the
// recorded session's deep pass, on it, ran into ncu.timeout. The kernel
// table and the deep pass's targets are the inferred phases' kernels. Its
// steps are XLA command buffers (CUDA graph launches), whose launches the
// records do not count as ncu does: no launch inside the phases can be
// named by invocation, and each target's configurations were first
// launched by the autotuning, where ncu profiles them: the plan says so.
func TestPlanWithinInferredPhases(t *testing.T) {
	t.Parallel()
	f := cuptiFake()
	f.cuptiRun, f.cuptiFile = "runs/corpus-jax", "cupti-558.tsv.gz"
	cfg := testConfig(t, t.TempDir())
	cfg.Workload.AutoRanges, cfg.Timeline.Oracle = "on", false
	cfg.NVTX.Include = []string{"prefill", "decode_all"}
	cfg.NCU.Set, cfg.NCU.MaxLaunches = "basic", 24
	cfg.Timeline.Coverage, cfg.Timeline.TopN, cfg.Timeline.MaxKernels = 0.5, 3, 6
	s := newSession(t, cfg, f)
	s.CUPTI = fakeCUPTI(t, true)
	run, err := s.Run(context.Background())
	require.NoError(t, err)
	notes := strings.Join(run.Manifest().Notes, "\n")
	assert.Contains(t, notes, "nvtx.include: none of the ranges [prefill decode_all] occurred and the program opened no NVTX range: ncu follows the whole program, and the kernel table and the deep pass cover the phases inferred from its kernel stream")
	assert.Contains(t, notes, "kernels: the program opened no NVTX range of nvtx.domain=\"\"; the kernel table and the deep pass's choice of kernels cover the phases inferred from its kernel stream (prefill, decode_all): 5472 of its 8544 launches, 17.096 of 85.362 ms of GPU time")
	assert.Contains(t, notes, "deep pass on the top 5 kernel(s) by exact name (5 mangled name(s)): 8 launch(es)")
	assert.Contains(t, notes, "ncu cannot filter on the phases inferred from the kernel stream (the program pushed no range): 149 launch configuration(s) are first launched outside them, and those launches are the ones it profiles")
	assert.NotContains(t, notes, "DelayKernel")

	deep := f.calls[slices.IndexFunc(f.calls, func(a []string) bool { return slices.Contains(a, "--kernel-name") })]
	assert.NotContains(t, deep, "--nvtx-include", "ncu cannot filter on inferred phases")
	re := deep[slices.Index(deep, "--kernel-name")+1]
	names, ok := strings.CutPrefix(re, "regex:^(?:")
	require.True(t, ok, re)
	targets := strings.Split(strings.TrimSuffix(names, ")$"), "|")
	require.Len(t, targets, 5)

	tl, err := timeline.ReadFiles(filepath.Join("../../fixtures", f.cuptiRun, "timeline/cupti", f.cuptiFile))
	require.NoError(t, err)
	in := phases.FindInferred(tl, "")
	require.NotEmpty(t, in)
	for _, name := range targets {
		assert.NotContains(t, name, "stream_executor", "no autotuning kernel")
		inside := 0
		for k, l := range tl.KernelLaunches() {
			if regexp.QuoteMeta(k.Mangled) == name && in.Has(l) {
				inside++
			}
		}
		assert.Positive(t, inside, "%s: launched inside the inferred phases", name)
	}
}

// TestAutoRangesOnThePythonPath (issue 39): with workload.auto_ranges on
// (the default), every step runs with deepprof's sitecustomize first on
// PYTHONPATH, before the one workload.env gives; the folder is gone when
// the session ends, and the manifest says the program was annotated. The
// CUPTI run, whose ranges the phases are, is told where to write the
// model's facts (timeline/model.json); no other step is.
func TestAutoRangesOnThePythonPath(t *testing.T) {
	t.Parallel() // it waits on processes: beside the others that do
	f := cuptiFake()
	cfg := testConfig(t, t.TempDir())
	cfg.Workload.AutoRanges = config.Default().Workload.AutoRanges
	require.Equal(t, "on", cfg.Workload.AutoRanges, "on by default")
	cfg.Workload.Env = map[string]string{"PYTHONPATH": "/mine"}
	rec := &envRecorder{Runner: newSession(t, cfg, f).Runner}
	s := newSession(t, cfg, f)
	s.Runner = rec
	s.CUPTI = fakeCUPTI(t, true)
	run, err := s.Run(context.Background())
	require.NoError(t, err)
	require.NotEmpty(t, rec.paths)
	dir := strings.SplitN(rec.paths[0], string(os.PathListSeparator), 2)[0]
	for _, p := range rec.paths {
		assert.True(t, strings.HasPrefix(p, dir), "first on PYTHONPATH: %s", p)
	}
	assert.Contains(t, rec.paths, dir+string(os.PathListSeparator)+"/mine", "before the program's own (workload.env)")
	assert.NoDirExists(t, dir, "removed when the session ends")
	assert.Contains(t, run.Manifest().Notes, autoRangesNote)
	assert.Equal(t, []string{run.Path(rundir.TimelineModel)}, rec.facts, "the CUPTI run alone writes the model facts")
}

// envRecorder records each command's last PYTHONPATH, and where it is
// told to write model facts.
type envRecorder struct {
	Runner
	mu           sync.Mutex // the exports run at once
	paths, facts []string
}

func (r *envRecorder) Run(ctx context.Context, c Command) (Result, error) {
	r.mu.Lock()
	for i := len(c.Env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(c.Env[i], "PYTHONPATH="); ok {
			r.paths = append(r.paths, v)
			break
		}
	}
	for _, e := range c.Env {
		if v, ok := strings.CutPrefix(e, workload.EnvModelFacts+"="); ok {
			r.facts = append(r.facts, v)
		}
	}
	r.mu.Unlock()
	return r.Runner.Run(ctx, c)
}

// TestCuptiRunStandsIn (issue 36): a workload that writes its report in
// the CUPTI run, with the library's cost measured there in one process,
// gets no separate plain run when that cost is at most StandInOverhead:
// stage 1 is recorded as skipped, saying why, and the stages come from the
// CUPTI run's report. Over it, the plain run follows the CUPTI run, and
// the note says what the library cost.
func TestCuptiRunStandsIn(t *testing.T) {
	t.Parallel() // it waits on processes: beside the others that do
	withOverhead := func(on string, alone bool) string {
		extra := ""
		if alone {
			extra = `, "alone": {"method": "repeats after the CUPTI library detached", "stages": {"prefill": {"ms": [1.0, 1.1]}, "decode": {"ms": [2.0, 2.1]}}}`
		}
		return strings.TrimSuffix(stage1Report, "}") + `, "overhead": {"method": "alternating repeats in one process, recording on and paused", "recording_ms": [` + on + `], "paused_ms": [10.0, 10.0, 10.0]}` + extra + `}`
	}
	for _, c := range []struct {
		name, on     string
		alone, plain bool
	}{
		{"cheap", "10.2, 10.3, 10.1", false, false},
		{"costly", "11.0, 11.2, 10.9", false, true},
		// The program-alone repeats after the library detached stand in
		// for the plain run whatever recording cost.
		{"costly-detached", "11.0, 11.2, 10.9", true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			f := cuptiFake()
			f.workloadReport = withOverhead(c.on, c.alone)
			s := newSession(t, testConfig(t, root), f)
			s.CUPTI = fakeCUPTI(t, true)
			run, err := s.Run(context.Background())
			require.NoError(t, err)
			m := run.Manifest()
			assert.Equal(t, rundir.StatusComplete, m.Status, m.Reason)
			ran := slices.ContainsFunc(m.Steps, func(st rundir.StepTime) bool { return st.Name == "stage1" })
			assert.Equal(t, c.plain, ran)
			a, ok := m.Find(rundir.Stage1Report)
			require.True(t, ok)
			if c.plain {
				assert.Equal(t, rundir.StatusComplete, a.Status)
				assert.True(t, slices.ContainsFunc(m.Notes, func(n string) bool {
					return strings.Contains(n, "the CUPTI library cost 1.100x in the CUPTI run's process")
				}), "%q", m.Notes)
				return
			}
			assert.Equal(t, rundir.StatusSkipped, a.Status)
			assert.Contains(t, a.Reason, "the CUPTI run's workload report stands in for it")
			want := "stands in for stage 1's, recording having cost 1.020x against repeats with recording paused in that run's own process"
			if c.alone {
				want = "stands in for stage 1's, with the program's own speed from 2 repeat(s) run in that process after the library detached CUPTI from it"
			}
			assert.True(t, slices.ContainsFunc(m.Notes, func(n string) bool { return strings.Contains(n, want) }), "%q", m.Notes)
			require.NotNil(t, m.Sources)
			assert.Equal(t, rundir.TimelineReport, m.Sources.Stages.Path)
		})
	}
}

// TestSectionsCached (issue 36): ncu's section list is asked of an ncu
// once; the next session with the same binary takes it from the cache
// (ncu-sections is not run) and writes the same file.
func TestSectionsCached(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	bin := filepath.Join(t.TempDir(), "ncu")
	require.NoError(t, os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755))
	var lists [][]byte
	for i := range 2 {
		f := cuptiFake()
		s := newSession(t, testConfig(t, t.TempDir()), f)
		s.CUPTI = fakeCUPTI(t, true)
		s.Ncu = bin
		run, err := s.Run(context.Background())
		require.NoError(t, err)
		ran := slices.ContainsFunc(run.Manifest().Steps, func(st rundir.StepTime) bool { return st.Name == string(StepNcuSections) })
		assert.Equal(t, i == 0, ran, "session %d", i+1)
		b, err := os.ReadFile(run.Path(rundir.NcuSections))
		require.NoError(t, err)
		lists = append(lists, b)
	}
	assert.NotEmpty(t, lists[0])
	assert.Equal(t, lists[0], lists[1])

	// Another binary (here: the same one rewritten) asks its own.
	require.NoError(t, os.WriteFile(bin, []byte("#!/bin/sh\n# another\n"), 0o755))
	f := cuptiFake()
	s := newSession(t, testConfig(t, t.TempDir()), f)
	s.CUPTI = fakeCUPTI(t, true)
	s.Ncu = bin
	run, err := s.Run(context.Background())
	require.NoError(t, err)
	assert.True(t, slices.ContainsFunc(run.Manifest().Steps, func(st rundir.StepTime) bool { return st.Name == string(StepNcuSections) }))
}

// TestStepsSayProgress (issue 38): each step ends with a line saying how
// long it took, which step it was and how far into the session; the deep
// pass's line gives the plan's estimate beside its time.
func TestStepsSayProgress(t *testing.T) {
	t.Parallel() // it waits on processes: beside the others that do
	var log strings.Builder
	s := newSession(t, testConfig(t, t.TempDir()), cuptiFake())
	s.CUPTI = fakeCUPTI(t, true)
	s.Log = &log
	_, err := s.Run(context.Background())
	require.NoError(t, err)
	assert.Regexp(t, `(?m)^deepprof: timeline-cupti: done in [0-9.]+ s \(step [0-9]+, [0-9.]+ s into the session\)$`, log.String())
	assert.Regexp(t, `(?m)^deepprof: ncu-deep: done in [0-9.]+ s, about [0-9]+ s planned \(step [0-9]+, [0-9.]+ s into the session\)$`, log.String())
}

// TestTimelineOnlyOfTheFilesRead (issue 36): the session hands its read
// timeline to the rebuild only while the run's record files are those it
// read; one more file, or another run, and the rebuild reads them itself.
func TestTimelineOnlyOfTheFilesRead(t *testing.T) {
	t.Parallel()
	run, err := rundir.Create(t.TempDir(), "r", time.Now())
	require.NoError(t, err)
	require.NoError(t, run.Write(rundir.TimelineCupti+"/cupti-1.tsv", []byte("#deepprof-cupti/1\tpid=1\tppid=0\tcupti_api=130001\tcuda_driver=13000\tstart_ns=1\texe=/x\n")))
	s := &Session{}
	assert.Nil(t, s.Timeline(run), "none read")
	tl, err := s.recordsOf(run)
	require.NoError(t, err)
	assert.Same(t, tl, s.Timeline(run))

	other, err := rundir.Create(t.TempDir(), "o", time.Now())
	require.NoError(t, err)
	assert.Nil(t, s.Timeline(other), "another run")
	require.NoError(t, run.Write(rundir.TimelineCupti+"/cupti-2.tsv", []byte("#deepprof-cupti/1\tpid=2\tppid=0\tcupti_api=130001\tcuda_driver=13000\tstart_ns=1\texe=/x\n")))
	assert.Nil(t, s.Timeline(run), "a file the session did not read")
}

// TestTraceBegunAsTheDeepPassStarts: the session begins the trace of its
// CUPTI timeline once, as the deep pass starts (after every run it times),
// and the rebuild takes it.
func TestTraceBegunAsTheDeepPassStarts(t *testing.T) {
	t.Parallel() // it waits on processes: beside the others that do
	s := newSession(t, testConfig(t, t.TempDir()), cuptiFake())
	s.CUPTI = fakeCUPTI(t, true)
	rec := &traceRecorder{Runner: s.Runner, s: s}
	s.Runner = rec
	run, err := s.Run(context.Background())
	require.NoError(t, err)
	require.NotEmpty(t, rec.begun)
	first := slices.Index(rec.begun, true)
	require.GreaterOrEqual(t, first, 0, "begun")
	assert.NotContains(t, rec.begun[first:], false, "kept once begun")
	assert.Contains(t, rec.calls[first], "--kernel-id", "begun as the deep pass starts")
	var steps []string
	for _, st := range run.Manifest().Steps {
		steps = append(steps, st.Name)
	}
	require.Contains(t, steps, "ncu-deep")
	assert.Equal(t, []string{"ncu-sections", "cupti-build", "timeline-cupti", "oracle-torch-profiler", "stage1"}, steps[:slices.Index(steps, "ncu-deep")])
	m := run.Manifest()
	assert.Equal(t, rundir.StatusComplete, m.Status, m.Reason)
	a, ok := m.Find(rundir.TimelineTrace)
	require.True(t, ok)
	assert.Equal(t, rundir.StatusComplete, a.Status)
	assert.FileExists(t, run.Path(rundir.TimelineTrace))
}

// traceRecorder records each program the session runs, and whether the
// session had begun its trace (Session.traced) when it ran it.
type traceRecorder struct {
	Runner
	s     *Session
	mu    sync.Mutex // the exports run at once
	calls [][]string
	begun []bool
}

func (r *traceRecorder) Run(ctx context.Context, c Command) (Result, error) {
	r.mu.Lock()
	r.calls = append(r.calls, c.Argv)
	r.begun = append(r.begun, r.s.traced != nil)
	r.mu.Unlock()
	return r.Runner.Run(ctx, c)
}

// TestAloneOnlyWithoutPlainRun (issue 36): the CUPTI run is told to time
// no program-alone repeats (and make no operator table) when the session
// makes a plain run anyway (workload.plain_run=always); by default it is
// not told.
func TestAloneOnlyWithoutPlainRun(t *testing.T) {
	t.Parallel()
	for _, always := range []bool{false, true} {
		cfg := testConfig(t, t.TempDir())
		if always {
			cfg.Workload.PlainRun = config.PlainRunAlways
		}
		f := cuptiFake()
		s := newSession(t, cfg, f)
		rec := &cuptiEnvRecorder{Runner: s.Runner}
		s.Runner = rec
		s.CUPTI = fakeCUPTI(t, true)
		_, err := s.Run(context.Background())
		require.NoError(t, err)
		require.Len(t, rec.envs, 1, "one CUPTI run")
		assert.Equal(t, always, slices.Contains(rec.envs[0], workload.EnvAlone+"=0"), "plain_run=always: %v", always)
	}
}

// cuptiEnvRecorder records the environment of each CUPTI run.
type cuptiEnvRecorder struct {
	Runner
	mu   sync.Mutex // the exports run at once
	envs [][]string
}

func (r *cuptiEnvRecorder) Run(ctx context.Context, c Command) (Result, error) {
	if slices.Contains(c.Env, workload.EnvPhase+"="+string(workload.PhaseCupti)) {
		r.mu.Lock()
		r.envs = append(r.envs, slices.Clone(c.Env))
		r.mu.Unlock()
	}
	return r.Runner.Run(ctx, c)
}

// TestExportsAtOnce (issue 36): the deep pass's two exports run at the same
// time (each export here waits until the other has begun), and the manifest
// records their times in the plan's order.
func TestExportsAtOnce(t *testing.T) {
	t.Parallel() // it waits on processes: beside the others that do
	f := cuptiFake()
	s := newSession(t, testConfig(t, t.TempDir()), f)
	s.CUPTI = fakeCUPTI(t, true)
	rec := &meetingRunner{Runner: s.Runner, begun: map[string]chan struct{}{"raw": make(chan struct{}), "details": make(chan struct{})},
		once: map[string]*sync.Once{"raw": {}, "details": {}}}
	s.Runner = rec
	run, err := s.Run(context.Background())
	require.NoError(t, err)
	assert.Equal(t, rundir.StatusComplete, run.Manifest().Status, run.Manifest().Reason)
	assert.False(t, rec.alone.Load(), "an export ran while the other had not begun")
	var steps []string
	for _, st := range run.Manifest().Steps {
		steps = append(steps, st.Name)
	}
	assert.Equal(t, []string{"export-raw", "export-details"}, steps[len(steps)-2:])
}

// meetingRunner makes each ncu export wait until the other page's export
// has begun (at most a few seconds: alone says one never did).
type meetingRunner struct {
	Runner
	begun map[string]chan struct{}
	once  map[string]*sync.Once
	alone atomic.Bool
}

func (r *meetingRunner) Run(ctx context.Context, c Command) (Result, error) {
	other := map[string]string{"raw": "details", "details": "raw"}
	if i := slices.Index(c.Argv, "--page"); i > 0 && slices.Contains(c.Argv, "--import") && other[c.Argv[i+1]] != "" {
		page := c.Argv[i+1]
		r.once[page].Do(func() { close(r.begun[page]) })
		select {
		case <-r.begun[other[page]]:
		case <-time.After(3 * time.Second):
			r.alone.Store(true)
		}
	}
	return r.Runner.Run(ctx, c)
}
