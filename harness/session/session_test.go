package session

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sebdah/goldie/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/harness/artifacts"
	"github.com/llm-perf-opt/deepprof/harness/config"
	"github.com/llm-perf-opt/deepprof/harness/workload"
)

const fx = "../../fixtures/"

// fakeTools is a Runner that behaves like ncu and a workload by replaying
// recorded output: profiling passes print a recorded ncu log and write a
// stand-in report naming the recorded exports; --import prints them.
type fakeTools struct {
	timing, deep   pass       // what each ncu pass replays
	workloadReport string     // what the workload writes to $DEEPPROF_REPORT
	calls          [][]string // every argv run
}

type pass struct {
	Raw, Details string // fixture paths under fixtures/
	Log          string // a recorded ncu log printed by the profiling run
	Exit         int
	NoReport     bool
}

func (f *fakeTools) Run(_ context.Context, c Command) (Result, error) {
	f.calls = append(f.calls, c.Argv)
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
		return f.cat(c.Stdout, fx+p.Raw)
	case filepath.Base(argv[0]) == "ncu":
		p := f.deep
		if slices.Contains(argv, "gpu__time_duration.sum") {
			p = f.timing
		}
		out := argv[slices.Index(argv, "-o")+1]
		if !p.NoReport {
			b, _ := json.Marshal(p)
			if err := os.WriteFile(strings.TrimSuffix(out, ".ncu-rep")+".ncu-rep", b, 0o644); err != nil {
				return Result{}, err
			}
		}
		if p.Log != "" {
			if _, err := f.cat(c.Stderr, fx+p.Log); err != nil {
				return Result{}, err
			}
		}
		return Result{ExitCode: p.Exit}, nil
	default: // the workload
		for _, e := range c.Env {
			if path, ok := strings.CutPrefix(e, workload.EnvReport+"="); ok {
				if err := os.WriteFile(path, []byte(f.workloadReport), 0o644); err != nil {
					return Result{}, err
				}
			}
		}
		fmt.Fprintln(c.Stdout, "workload=fake prefill and decode done")
		return Result{}, nil
	}
}

func (f *fakeTools) cat(w io.Writer, path string) (Result, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Result{}, err
	}
	_, err = w.Write(b)
	return Result{}, err
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
	return cfg
}

func newSession(t *testing.T, cfg *config.Config, f *fakeTools) *Session {
	t.Helper()
	y, err := cfg.YAML()
	require.NoError(t, err)
	return &Session{Cfg: cfg, ConfigYAML: y, Runner: f, Ncu: "/usr/local/cuda/bin/ncu",
		Env: func() ([]byte, error) { return []byte(`{"gpu": "fake"}` + "\n"), nil },
		Now: func() time.Time { return time.Date(2026, 11, 21, 23, 0, 0, 0, time.UTC) }}
}

// normalize replaces the temporary root, so goldens do not depend on it.
func normalize(b []byte, root string) []byte {
	return []byte(strings.ReplaceAll(string(b), root, "$ROOT"))
}

func goldenRun(t *testing.T, name string, run *artifacts.Run, root string, files ...string) {
	g := goldie.New(t, goldie.WithFixtureDir("../../golden/session/"+name), goldie.WithNameSuffix(""))
	for _, rel := range files {
		b, err := os.ReadFile(run.Path(rel))
		require.NoError(t, err, rel)
		if rel == artifacts.ManifestJSON {
			b = sizeless(t, b)
		}
		g.Assert(t, rel, normalize(b, root))
	}
}

// sizeless drops the sizes of files that hold the temporary root's path.
func sizeless(t *testing.T, b []byte) []byte {
	var m artifacts.Manifest
	require.NoError(t, json.Unmarshal(b, &m))
	for i, a := range m.Artifacts {
		if a.Path == artifacts.ConfigYAML || a.Path == artifacts.InputsYAML {
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
	assert.Equal(t, artifacts.StatusComplete, m.Status, "%+v", m)
	for _, rel := range []string{artifacts.EnvJSON, artifacts.ConfigYAML, artifacts.InputsYAML, artifacts.KernelsMD, artifacts.KernelsJSON,
		artifacts.ReportMD, artifacts.ManifestJSON, artifacts.NcuRaw, artifacts.NcuDetails, artifacts.RegionsMD, artifacts.RegionsJSON,
		artifacts.NcuSections, artifacts.Stage1Report, artifacts.NcuTimingRaw} {
		assert.FileExists(t, run.Path(rel))
	}
	goldenRun(t, "offline", run, root, artifacts.ManifestJSON, artifacts.ReportMD, artifacts.InputsYAML, artifacts.KernelsMD)

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
	root := t.TempDir()
	f := &fakeTools{
		timing:         pass{Log: "logs/ncu-no-kernels-profiled-domain-syntax.txt", NoReport: true},
		workloadReport: stage1Report,
	}
	cfg := testConfig(t, root)
	cfg.NVTX.Include = []string{"LLM@decode_all"}
	run, err := newSession(t, cfg, f).Run(context.Background())
	require.Error(t, err)
	m := run.Manifest()
	assert.Equal(t, artifacts.StatusPartial, m.Status)
	goldenRun(t, "nvtx-no-match", run, root, artifacts.ManifestJSON, artifacts.ReportMD)
}

// TestSessionWorkloadCrash: the workload crashed under the deep pass; ncu
// kept a report of what it profiled (the real partial export).
func TestSessionWorkloadCrash(t *testing.T) {
	root := t.TempDir()
	f := &fakeTools{
		timing:         pass{Raw: "ncu/h200-llama-decode-basic/raw.csv"},
		deep:           pass{Raw: "ncu/h200-workload-crash-partial/raw.csv", Details: "ncu/h200-workload-crash-partial/raw.csv", Log: "logs/ncu-workload-crash.txt", Exit: 9},
		workloadReport: stage1Report,
	}
	run, err := newSession(t, testConfig(t, root), f).Run(context.Background())
	require.Error(t, err)
	m := run.Manifest()
	assert.Equal(t, artifacts.StatusPartial, m.Status)
	assert.FileExists(t, run.Path(artifacts.NcuRaw), "what was profiled is kept")
	goldenRun(t, "workload-crash", run, root, artifacts.ManifestJSON)
}

// TestDryRunPlan is the plan `deepprof profile --dry-run` prints.
func TestDryRunPlan(t *testing.T) {
	cfg := testConfig(t, "/runs")
	steps, err := newSession(t, cfg, &fakeTools{}).Plan("/runs/run-1", nil)
	require.NoError(t, err)
	var b strings.Builder
	require.NoError(t, FormatPlan(&b, steps))
	g := goldie.New(t, goldie.WithFixtureDir("../../golden/session"), goldie.WithNameSuffix(""))
	g.Assert(t, "dry-run.txt", []byte(b.String()))
}

func TestRunNeverReusesMain(t *testing.T) {
	root := t.TempDir()
	f := &fakeTools{timing: pass{Raw: "ncu/h200-llama-decode-basic/raw.csv"}, deep: pass{Raw: "ncu/h200-llama-decode-roofline/raw.csv", Details: "ncu/h200-llama-decode-roofline/details.csv"}, workloadReport: stage1Report}
	_, err := newSession(t, testConfig(t, root), f).Run(context.Background())
	require.NoError(t, err)
	_, err = newSession(t, testConfig(t, root), f).Run(context.Background())
	require.ErrorIs(t, err, artifacts.ErrRunExists)
}
