package session

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sebdah/goldie/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/config"
	"github.com/llm-perf-opt/deepprof/internal/machine"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
	"github.com/llm-perf-opt/deepprof/internal/synth"
)

// nsysPath is where the tests say nsys is (nothing is there: the Runner
// answers for it).
const nsysPath = "/opt/nvidia/nsight-systems/2025.3.1/bin/nsys"

// nsysTools is fakeTools with a fake nsys: argv[0] named nsys goes to
// synth.Fake, which replays the recorded RTX 5090 kernel summaries (or
// the recorded log of an nsys that wrote no report).
type nsysTools struct {
	*fakeTools
	nsys synth.Fake
	// brokenVersion makes `nsys --version` fail as an nsys whose libraries
	// are missing would (the words are made up).
	brokenVersion bool
	// interrupt, when set, is called during `nsys profile`, as Ctrl-C would;
	// the fake then waits for the context to end.
	interrupt context.CancelFunc
}

func (f *nsysTools) Run(ctx context.Context, c Command) (Result, error) {
	if filepath.Base(c.Argv[0]) != "nsys" {
		return f.fakeTools.Run(ctx, c)
	}
	f.mu.Lock()
	f.calls = append(f.calls, c.Argv)
	f.envs = append(f.envs, c.Env)
	f.mu.Unlock()
	if f.brokenVersion && slices.Contains(c.Argv, "--version") {
		fmt.Fprintln(c.Stderr, "nsys: error while loading shared libraries: libfake.so: cannot open shared object file")
		return Result{ExitCode: 127}, nil
	}
	if f.interrupt != nil && c.Argv[1] == "profile" {
		f.interrupt()
		<-ctx.Done()
		return Result{ExitCode: -1, Interrupted: true, Duration: 1500 * time.Millisecond}, nil
	}
	return Result{ExitCode: f.nsys.Run(c.Argv[1:], c.Stdout, c.Stderr)}, nil
}

const decodeKernSum = fx + "nsys/rtx5090-dsocr-decode/cuda_gpu_kern_sum.csv"

// newNsysTools replays the basic and roofline ncu pages for the ncu passes
// and the RTX 5090 decode recording for nsys.
func newNsysTools(fake synth.Fake) *nsysTools {
	return &nsysTools{
		fakeTools: &fakeTools{
			timing:         pass{Raw: "ncu/h200-llama-decode-basic/raw.csv"},
			deep:           pass{Raw: "ncu/h200-llama-decode-roofline/raw.csv", Details: "ncu/h200-llama-decode-roofline/details.csv"},
			workloadReport: stage1Report,
		},
		nsys: fake,
	}
}

func newNsysSession(t *testing.T, cfg *config.Config, f *nsysTools) *Session {
	t.Helper()
	s := newSession(t, cfg, f.fakeTools)
	s.Runner = f
	s.Nsys = nsysPath
	return s
}

// callsText is every program the session ran, one "argv:" line each (then
// its environment additions), the temporary root replaced.
func callsText(f *nsysTools, root string) []byte {
	var b strings.Builder
	for _, i := range planOrder(f.calls) {
		b.WriteString("argv:")
		for _, a := range f.calls[i] {
			b.WriteString(" " + quoteArg(a))
		}
		b.WriteString("\n")
		for _, e := range f.envs[i] {
			b.WriteString("  env: " + e + "\n")
		}
	}
	return normalize([]byte(b.String()), root)
}

// planOrder is the indexes of calls in the order the session planned
// them: the exports of one report run at once, so each run of them is put
// in the plan's order (raw, then details) whatever order they began in.
func planOrder(calls [][]string) []int {
	order := make([]int, len(calls))
	for i := range order {
		order[i] = i
	}
	export := func(c []string) (report, page string) {
		if i, j := slices.Index(c, "--import"), slices.Index(c, "--page"); i > 0 && j > 0 {
			return c[i+1], c[j+1]
		}
		return "", ""
	}
	rank := map[string]int{"raw": 0, "details": 1}
	for start := 0; start < len(calls); {
		report, _ := export(calls[start])
		end := start + 1
		for report != "" && end < len(calls) {
			if r, _ := export(calls[end]); r != report {
				break
			}
			end++
		}
		slices.SortStableFunc(order[start:end], func(a, b int) int {
			_, pa := export(calls[a])
			_, pb := export(calls[b])
			return rank[pa] - rank[pb]
		})
		start = end
	}
	return order
}

func goldenCalls(t *testing.T, name string, f *nsysTools, root string) {
	g := goldie.New(t, goldie.WithFixtureDir("../../golden/session/"+name), goldie.WithNameSuffix(""))
	g.Assert(t, "argv.txt", callsText(f, root))
}

// deepCall is the deep pass's argv.
func deepCall(t *testing.T, calls [][]string) []string {
	t.Helper()
	for _, c := range calls {
		if filepath.Base(c[0]) == "ncu" && slices.Contains(c, "-o") && strings.HasSuffix(c[slices.Index(c, "-o")+1], "deep") {
			return c
		}
	}
	t.Fatal("no deep pass ran")
	return nil
}

// TestSessionNsys: a usable nsys (timeline.tool=auto) makes the timeline.
// The deep pass filters on the function names of nsys's :base summary, cut
// by the coverage rule; kernels.md comes from nsys's kernel summary.
func TestSessionNsys(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	f := newNsysTools(synth.Fake{KernSum: decodeKernSum, NVTXSum: synth.SyntheticNVTXSum})
	run, err := newNsysSession(t, testConfig(t, root), f).Run(context.Background())
	require.NoError(t, err)
	m := run.Manifest()
	assert.Equal(t, rundir.StatusComplete, m.Status, "%+v", m)
	for _, rel := range []string{rundir.NsysReport, rundir.NsysSQLite, rundir.NsysKernSum, rundir.NsysNVTXSum, rundir.NsysKernSumBase, rundir.NsysProfileLog, rundir.NsysStatsLog,
		rundir.KernelsMD, rundir.KernelsJSON, rundir.NcuRaw, rundir.RegionsMD} {
		assert.FileExists(t, run.Path(rel))
		if strings.HasSuffix(rel, ".log") {
			continue
		}
		a, ok := m.Find(rel)
		assert.True(t, ok && a.Status == rundir.StatusComplete, "%s: %+v", rel, a)
	}
	assert.NoFileExists(t, run.Path(rundir.NcuTimingRaw), "no ncu timing pass")
	for i, c := range f.calls {
		if slices.Contains(c, "profile") {
			assert.Contains(t, f.envs[i], "DEEPPROF_PHASE=nsys")
			assert.Contains(t, f.envs[i], "DEEPPROF_REPEATS=1")
			assert.NotContains(t, f.envs[i], "NSYS_NVTX_PROFILER_REGISTER_ONLY=0", "the whole run: no capture range")
		}
	}
	deep := strings.Join(deepCall(t, f.calls), " ")
	assert.Contains(t, deep, "--kernel-name-base mangled --kernel-name regex:^(?:kernel|")
	assert.Contains(t, deep, "|vectorized_elementwise_kernel|")
	assert.Contains(t, deep, "--nvtx-include decode_all/")

	// Each nsys step is timed.
	var steps []string
	for _, st := range m.Steps {
		steps = append(steps, st.Name)
	}
	assert.Equal(t, []string{"ncu-sections", "stage1", "nsys-profile", "nsys-export-sqlite", "nsys-stats", "nsys-stats-base", "ncu-deep", "export-raw", "export-details"}, steps)

	goldenCalls(t, "nsys-auto", f, root)
	goldenRun(t, "nsys-auto", run, root, rundir.ManifestJSON, rundir.ReportMD, rundir.KernelsMD)

	// deepprof report: the same kernels.md, from the same summary.
	want, err := os.ReadFile(run.Path(rundir.KernelsMD))
	require.NoError(t, err)
	require.NoError(t, os.Remove(run.Path(rundir.KernelsMD)))
	again, err := rundir.Open(run.Dir)
	require.NoError(t, err)
	require.NoError(t, testRebuild(again, testConfig(t, root)))
	got, err := os.ReadFile(run.Path(rundir.KernelsMD))
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got))
	assert.Contains(t, string(got), "nsys/run\\_cuda\\_gpu\\_kern\\_sum.csv: 78016 launches, 46 kernels")
}

// TestSessionNsysNoBase: an nsys that does not know cuda_gpu_kern_sum:base.
// The function names are derived from the demangled summary, and the deep
// pass gets the same filter.
func TestSessionNsysNoBase(t *testing.T) {
	t.Parallel()
	deepRegex := func(f *nsysTools) string {
		c := deepCall(t, f.calls)
		return c[slices.Index(c, "--kernel-name")+1]
	}
	root := t.TempDir()
	with := newNsysTools(synth.Fake{KernSum: decodeKernSum, NVTXSum: synth.SyntheticNVTXSum})
	_, err := newNsysSession(t, testConfig(t, root), with).Run(context.Background())
	require.NoError(t, err)

	root = t.TempDir()
	without := newNsysTools(synth.Fake{KernSum: decodeKernSum, NoBase: true})
	run, err := newNsysSession(t, testConfig(t, root), without).Run(context.Background())
	require.NoError(t, err)
	m := run.Manifest()
	assert.Equal(t, rundir.StatusComplete, m.Status)
	assert.Equal(t, deepRegex(with), deepRegex(without))
	a, _ := m.Find(rundir.NsysKernSumBase)
	assert.Equal(t, rundir.StatusMissing, a.Status)
	assert.Contains(t, a.Reason, "nsys exited with status 1")
	a, _ = m.Find(rundir.NsysNVTXSum)
	assert.Equal(t, rundir.StatusMissing, a.Status, "this fake wrote no nvtx_sum")
	assert.Contains(t, strings.Join(m.Notes, "\n"), "the function names were derived from the demangled names of nsys/run_cuda_gpu_kern_sum.csv")
	assert.Contains(t, strings.Join(m.Notes, "\n"), "deep-pass kernels: the top 10 kernel functions (nsys/run_cuda_gpu_kern_sum.csv) by total time cover")
}

// TestSessionNsysNoReport: nsys exits 0 and writes no report, as the nsys
// bundled with Nsight Compute did on the H200 (its recorded output, a
// .qdstrm left behind). With timeline.tool=auto the ncu timing pass makes
// the timeline and the manifest says why; with timeline.tool=nsys the run
// stops with the next step to take.
func TestSessionNsysNoReport(t *testing.T) {
	t.Parallel()
	fake := synth.Fake{NoReportLog: fx + "logs/nsys-bundled-no-report.txt"}
	t.Run("auto falls back", func(t *testing.T) {
		root := t.TempDir()
		f := newNsysTools(fake)
		run, err := newNsysSession(t, testConfig(t, root), f).Run(context.Background())
		require.NoError(t, err)
		m := run.Manifest()
		assert.Equal(t, rundir.StatusComplete, m.Status, "%+v", m)
		require.NotEmpty(t, m.Notes)
		assert.True(t, strings.HasPrefix(m.Notes[0], "timeline: an ncu timing pass (gpu__time_duration.sum, same NVTX gating) found the top kernels; nsys 2025.3.1.0 ("+nsysPath+") made no timeline: nsys profile exited with status 0 and wrote no report (see nsys/profile.log): neither nsys/run.nsys-rep nor nsys/run.qdrep exists, but nsys/run.qdstrm "), m.Notes[0])
		assert.Contains(t, m.Notes[0], "importer (QdstrmImporter) failed")
		a, _ := m.Find(rundir.NsysReport)
		assert.Equal(t, rundir.StatusMissing, a.Status)
		assert.FileExists(t, run.Path(rundir.NcuTimingRaw))
		log, err := os.ReadFile(run.Path(rundir.NsysProfileLog))
		require.NoError(t, err)
		said, err := synth.RecordedProfileOutput(fx + "logs/nsys-bundled-no-report.txt")
		require.NoError(t, err)
		assert.Equal(t, said, string(log), "nsys's own words are kept")
		goldenCalls(t, "nsys-no-report-fallback", f, root)
		goldenRun(t, "nsys-no-report-fallback", run, root, rundir.ManifestJSON)
	})
	t.Run("tool=nsys fails", func(t *testing.T) {
		root := t.TempDir()
		f := newNsysTools(fake)
		cfg := testConfig(t, root)
		cfg.Timeline.Tool = "nsys"
		run, err := newNsysSession(t, cfg, f).Run(context.Background())
		require.Error(t, err)
		assert.Contains(t, err.Error(), "timeline.tool=nsys: nsys profile exited with status 0 and wrote no report")
		assert.Contains(t, err.Error(), "Next: use a standalone Nsight Systems")
		m := run.Manifest()
		assert.Equal(t, rundir.StatusPartial, m.Status)
		for _, c := range f.calls {
			assert.False(t, filepath.Base(c[0]) == "ncu" && slices.Contains(c, "-o"), "no ncu pass runs: %v", c)
		}
		goldenRun(t, "nsys-no-report-tool-nsys", run, root, rundir.ManifestJSON)
	})
}

// TestSessionNsysKernSumUnreadable: nsys wrote a report whose kernel summary
// holds no kernel (a SYNTHETIC header-only CSV). auto falls back to the ncu
// timing pass; the summary is kept, set aside, and kernels.md comes from the
// timing pass.
func TestSessionNsysKernSumUnreadable(t *testing.T) {
	t.Parallel()
	empty := filepath.Join(t.TempDir(), "kern.csv")
	b, err := os.ReadFile(decodeKernSum)
	require.NoError(t, err)
	header, _, _ := strings.Cut(string(b), "\n")
	require.NoError(t, os.WriteFile(empty, []byte(header+"\n"), 0o644))

	root := t.TempDir()
	f := newNsysTools(synth.Fake{KernSum: empty})
	run, err := newNsysSession(t, testConfig(t, root), f).Run(context.Background())
	require.NoError(t, err)
	m := run.Manifest()
	assert.Equal(t, rundir.StatusComplete, m.Status)
	a, _ := m.Find(rundir.NsysKernSum)
	assert.Equal(t, rundir.StatusPartial, a.Status)
	assert.Contains(t, a.Reason, "the capture holds no CUDA kernels")
	assert.Contains(t, m.Notes[0], "made no timeline: nsys kernel summary: nsys/run_cuda_gpu_kern_sum.csv:2: no kernel rows")
	md, err := os.ReadFile(run.Path(rundir.KernelsMD))
	require.NoError(t, err)
	assert.Contains(t, string(md), "ncu/timing-raw.csv: 412 launches")
}

// TestSessionNoUsableNsys: no nsys found, or one whose version cannot be
// read. auto says so and runs the ncu timing pass; timeline.tool=nsys stops
// before anything runs and says what to do.
func TestSessionNoUsableNsys(t *testing.T) {
	t.Parallel()
	nowhere := &machine.Env{Fallbacks: []string{}}
	tests := []struct {
		name, tool    string
		path          string // Session.Nsys; "" to look in nowhere
		broken        bool
		note, err     string
		nsysCallsWant int
	}{
		{name: "auto, none found", tool: "auto",
			note: "timeline: an ncu timing pass (gpu__time_duration.sum, same NVTX gating) found the top kernels; no nsys was found (PATH, $CUDA_HOME/bin, the usual Nsight Systems folders): set nsys.path to use one"},
		{name: "auto, version unreadable", tool: "auto", path: nsysPath, broken: true, nsysCallsWant: 1,
			note: "timeline: an ncu timing pass (gpu__time_duration.sum, same NVTX gating) found the top kernels; no usable nsys: " + nsysPath + " --version exited with status 127: nsys: error while loading shared libraries"},
		{name: "ncu", tool: "ncu", path: nsysPath,
			note: "timeline: an ncu timing pass (gpu__time_duration.sum, same NVTX gating) found the top kernels (timeline.tool=ncu)"},
		{name: "nsys, none found", tool: "nsys",
			err: "timeline.tool=nsys: nsys not found; looked in PATH (empty), $CUDA_HOME/bin (CUDA_HOME unset). Install Nsight Systems (from developer.nvidia.com/nsight-systems), set CUDA_HOME to the CUDA toolkit folder, or set nsys.path in the profile. Next: install Nsight Systems and set nsys.path, or run with timeline.tool=auto (an ncu timing pass when nsys is not usable) or timeline.tool=ncu"},
		{name: "nsys, version unreadable", tool: "nsys", path: nsysPath, broken: true, nsysCallsWant: 1,
			err: "timeline.tool=nsys: " + nsysPath + " --version exited with status 127"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			f := newNsysTools(synth.Fake{KernSum: decodeKernSum})
			f.brokenVersion = tt.broken
			cfg := testConfig(t, root)
			cfg.Timeline.Tool = tt.tool
			s := newNsysSession(t, cfg, f)
			s.Nsys, s.ToolEnv = tt.path, nowhere
			run, err := s.Run(context.Background())
			nsysCalls := 0
			for _, c := range f.calls {
				if filepath.Base(c[0]) == "nsys" {
					nsysCalls++
				}
			}
			assert.Equal(t, tt.nsysCallsWant, nsysCalls, "nsys --version at most")
			if tt.err != "" {
				require.Error(t, err)
				assert.True(t, strings.HasPrefix(err.Error(), tt.err), err.Error())
				assert.Equal(t, rundir.StatusPartial, run.Manifest().Status)
				assert.Equal(t, tt.nsysCallsWant, len(f.calls), "nothing ran but the probe")
				return
			}
			require.NoError(t, err)
			notes := run.Manifest().Notes
			require.NotEmpty(t, notes)
			assert.True(t, strings.HasPrefix(notes[0], tt.note), notes[0])
		})
	}
}

// TestSessionNsysCaptureRange: nsys.capture_range=nvtx opens the capture on
// the one NVTX range of nvtx.include, in nsys's own syntax (range@domain),
// with NSYS_NVTX_PROFILER_REGISTER_ONLY=0.
func TestSessionNsysCaptureRange(t *testing.T) {
	t.Parallel()
	plan := func(t *testing.T, edit func(*config.Config)) ([]Step, error) {
		cfg := testConfig(t, "/runs")
		cfg.Nsys.CaptureRange = "nvtx"
		edit(cfg)
		return newNsysSession(t, cfg, newNsysTools(synth.Fake{})).Plan("/runs/run-1", nil)
	}
	steps, err := plan(t, func(c *config.Config) { c.NVTX.Domain, c.NVTX.Include = "LLM", []string{"decode_all/decode_step"} })
	require.NoError(t, err)
	p := steps[2]
	require.Equal(t, StepNsysProfile, p.ID)
	assert.Contains(t, strings.Join(p.Argv, " "), "--capture-range=nvtx --capture-range-end=stop --nvtx-capture=decode_all@LLM --force-overwrite=true -o /runs/run-1/nsys/run python3 wl.py")
	assert.Equal(t, "NSYS_NVTX_PROFILER_REGISTER_ONLY=0", p.Env[len(p.Env)-1])
	assert.Contains(t, strings.Join(p.Details, "\n"), "it records all of LLM@decode_all, not only decode_all/decode_step")

	// The same ranges written as a region path: the same capture.
	steps, err = plan(t, func(c *config.Config) { c.NVTX.Include = []string{"LLM@decode_all/LLM@decode_step"} })
	require.NoError(t, err)
	assert.Contains(t, strings.Join(steps[2].Argv, " "), "--nvtx-capture=decode_all@LLM ")

	// Levels of two domains: NVTX keeps one push/pop stack per domain, so no
	// ncu filter (and no session) can take them.
	_, err = plan(t, func(c *config.Config) { c.NVTX.Include = []string{"LLM@decode_all/decode_step"} })
	require.ErrorContains(t, err, `nvtx.include: NVTX filter LLM@decode_all/decode_step: its levels are in domain "LLM" and the default domain`)

	// A default-domain range whose name holds '@': nsys's syntax cannot say it.
	_, err = plan(t, func(c *config.Config) { c.NVTX.Include = []string{`LLM\@decode_all`} })
	require.ErrorContains(t, err, "nsys.capture_range=nvtx opens the capture on nvtx.include's first range: nsys capture range LLM\\@decode_all: ")

	_, err = plan(t, func(c *config.Config) { c.NVTX.Include = []string{"prefill", "decode_all"} })
	require.EqualError(t, err, `nsys.capture_range=nvtx opens the capture on one NVTX range, and nvtx.include has 2 (prefill, decode_all): keep one range in nvtx.include, or set nsys.capture_range="" to record the whole run`)
	_, err = plan(t, func(c *config.Config) { c.Nsys.CaptureRange = "cudaProfilerApi" })
	require.ErrorContains(t, err, `nsys.capture_range="cudaProfilerApi": the session records the whole run ("") or one NVTX range (nvtx)`)
}

// TestNsysDryRunPlan is what `deepprof profile --dry-run` prints when nsys
// is chosen.
func TestNsysDryRunPlan(t *testing.T) {
	t.Parallel()
	f := newNsysTools(synth.Fake{KernSum: decodeKernSum})
	steps, err := newNsysSession(t, testConfig(t, "/runs"), f).Plan("/runs/run-1", nil)
	require.NoError(t, err)
	var b strings.Builder
	require.NoError(t, FormatPlan(&b, steps))
	g := goldie.New(t, goldie.WithFixtureDir("../../golden/session/nsys-dry-run"), goldie.WithNameSuffix(""))
	g.Assert(t, "plan.txt", []byte(b.String()))
	assert.Equal(t, [][]string{{nsysPath, "--version"}}, f.calls, "the plan runs nothing but nsys --version")
}

// TestSessionNsysInterrupted: Ctrl-C while nsys profiles. Nothing runs
// after it, and no ncu timing pass stands in for it.
func TestSessionNsysInterrupted(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := newNsysTools(synth.Fake{KernSum: decodeKernSum})
	f.interrupt = cancel
	run, err := newNsysSession(t, testConfig(t, root), f).Run(ctx)
	require.Error(t, err)
	m := run.Manifest()
	assert.Equal(t, rundir.StatusPartial, m.Status)
	assert.Equal(t, "interrupted during nsys-profile (stopped after 1.5s); the steps before it are kept", m.Reason)
	a, _ := m.Find(rundir.NsysReport)
	assert.Equal(t, rundir.StatusMissing, a.Status)
	assert.Equal(t, "nsys was stopped before it wrote its report", a.Reason)
	last := f.calls[len(f.calls)-1]
	assert.Equal(t, "profile", last[1], "nothing runs after nsys profile")
}
