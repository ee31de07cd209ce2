// Package deepproftest runs deepprof profiling sessions as Go tests in your
// own module, in the spirit of testscript and goldie: a session is a test
// step, what it measured is typed data, and what you expect of it is an
// assertion whose failure names the run directory and the numbers.
//
// Put profiling tests behind a build tag of your own (//go:build gpu), so
// that go test ./... stays fast and GPU-free:
//
//	func TestDecodeStaysMemoryBound(t *testing.T) {
//		m := deepproftest.Preflight(t) // skips without a GPU, ncu or Python
//		run := deepproftest.Profile(t, m, deepproftest.Options{
//			Command: []string{"python3", "generate.py", "--tokens", "32"},
//		})
//		run.RegionShareAtLeast("decode_all", 50)
//		run.BoundIs(1, classify.MemoryBound)
//		run.StageWithin("decode_step", 25) // ms, mean over its instances
//		run.Baseline("generate", tolerance.Default())
//	}
//
// Open reads a run directory that is already there (a recorded run, or one
// of an earlier test), with no GPU.
package deepproftest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llm-perf-opt/deepprof/harness/artifacts"
	"github.com/llm-perf-opt/deepprof/harness/baseline"
	"github.com/llm-perf-opt/deepprof/harness/config"
	"github.com/llm-perf-opt/deepprof/harness/gpu"
	"github.com/llm-perf-opt/deepprof/harness/rundir"
	"github.com/llm-perf-opt/deepprof/harness/session"
	"github.com/llm-perf-opt/deepprof/harness/summary"
	"github.com/llm-perf-opt/deepprof/harness/tolerance"
	"github.com/llm-perf-opt/deepprof/harness/tools"
	"github.com/llm-perf-opt/deepprof/scripts/workloads"
)

// Machine is what Preflight found: the GPU and Nsight Compute.
type Machine struct {
	GPU gpu.Provenance
	Ncu tools.Tool
}

// Preflight checks the machine for a profiling test. It skips the test,
// with the reason, when there is no NVIDIA GPU (NVML), no ncu, or no Python
// with torch (set python to "" to leave the interpreter unchecked, for a
// compiled program); it fails the test when they are there but broken (an
// ncu that does not run).
func Preflight(t testing.TB, python ...string) Machine {
	t.Helper()
	prov, err := gpu.Collect(gpu.Open(), gpu.Selection{})
	if err != nil {
		t.Skipf("deepproftest: no GPU through NVML: %v", err)
	}
	tool, err := tools.Find("ncu", tools.EnvFromOS())
	if err != nil {
		t.Skipf("deepproftest: %v", err)
	}
	if tool, err = tools.Probe(context.Background(), tool.Path); err != nil {
		t.Fatalf("deepproftest: ncu found but not runnable: %v", err)
	}
	py := "python3"
	if len(python) > 0 {
		py = python[0]
	}
	if py != "" {
		if out, err := exec.Command(py, "-c", "import torch; assert torch.cuda.is_available()").CombinedOutput(); err != nil {
			t.Skipf("deepproftest: %s cannot import torch or sees no CUDA device: %v\n%s", py, err, out)
		}
	}
	return Machine{GPU: prov, Ncu: tool}
}

// Options say what a session profiles and where its run directory goes.
type Options struct {
	// Profiles to compose (default stage2), from ProfilesDir ("": the
	// embedded defaults, with ./profiles over them when it exists).
	Profiles    []string
	ProfilesDir string
	// Overrides, as on the command line: key=value, group=name.
	Overrides []string
	// Command, when set, is the program to profile, as
	// `deepprof profile -- CMD ARGS...`.
	Command []string
	// Root is where the run directory is made: "" is t.TempDir(), or
	// $DEEPPROF_GPU_OUT when set (to keep runs after the test).
	Root string
	// ID names the run directory ("": the test's name and the time).
	ID string
}

// Profile runs a session and returns its run. A session that fails, or a
// run that is not complete, fails the test with the run's own reason and
// its directory.
func Profile(t testing.TB, m Machine, opt Options) *Run {
	t.Helper()
	root := opt.Root
	if root == "" {
		root = os.Getenv("DEEPPROF_GPU_OUT")
	}
	if root == "" {
		root = t.TempDir()
	}
	id := opt.ID
	if id == "" {
		id = strings.NewReplacer("/", "-", " ", "_").Replace(t.Name()) + "-" + time.Now().UTC().Format("150405")
	}
	ov := append([]string{"run.root=" + root, "run.id=" + id, "ncu.path=" + m.Ncu.Path}, opt.Overrides...)
	cfg, err := config.Load(config.LoadOptions{Dir: opt.ProfilesDir, Profiles: opt.Profiles, Overrides: ov, Command: opt.Command})
	if err != nil {
		t.Fatalf("deepproftest: %v", err)
		return nil
	}
	if opt.Command == nil && len(cfg.Workload.Argv) > 0 {
		p, _, err := workloads.Resolve(cfg.Workload.Argv[0], "")
		if err != nil {
			t.Fatalf("deepproftest: %v", err)
			return nil
		}
		cfg.Workload.Argv[0] = p
	}
	y, err := cfg.YAML()
	if err != nil {
		t.Fatalf("deepproftest: %v", err)
		return nil
	}
	sel, err := session.Devices(cfg)
	if err != nil {
		t.Fatalf("deepproftest: %v", err)
		return nil
	}
	s := &session.Session{Cfg: cfg, ConfigYAML: y, Runner: session.ExecRunner{}, Ncu: m.Ncu.Path, Now: time.Now,
		Progress: os.Stderr,
		Env: func() ([]byte, error) {
			return rundir.NewEnvInfo(func() (gpu.Provenance, error) { return gpu.Collect(gpu.Open(), sel) },
				map[string]tools.Tool{"ncu": m.Ncu}, nil).JSON()
		}}
	run, err := s.Run(context.Background())
	dir := filepath.Join(root, id)
	if err != nil {
		t.Fatalf("deepproftest: the session failed (%s): %v", dir, err)
		return nil
	}
	if st := run.Manifest(); st.Status != artifacts.StatusComplete {
		t.Fatalf("deepproftest: run %s is %s: %s", dir, st.Status, st.Reason)
		return nil
	}
	return Open(t, dir)
}

// Run is what one run directory measured, read from its files.
type Run struct {
	// Dir is the run directory.
	Dir string
	// Summary is summary.json: stages, MFU, the top kernels with their
	// category and bound, the time by category, the regions.
	Summary summary.Summary
	tb      testing.TB
}

// Open reads the run directory dir for a test's assertions. A directory
// that is not a run fails the test.
func Open(t testing.TB, dir string) *Run {
	t.Helper()
	r, err := Read(dir)
	if err != nil {
		t.Fatalf("deepproftest: %v", err)
		return nil
	}
	r.tb = t
	return r
}

// Read reads the run directory dir, for its typed data only (its
// assertions need Open's test).
func Read(dir string) (*Run, error) {
	b, err := os.ReadFile(filepath.Join(dir, artifacts.SummaryJSON))
	if err != nil {
		return nil, fmt.Errorf("%s: not a run directory with a summary (deepprof report DIR makes one from a run's records): %w", dir, err)
	}
	r := &Run{Dir: dir}
	if err := json.Unmarshal(b, &r.Summary); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, artifacts.SummaryJSON), err)
	}
	return r, nil
}

// Stage is a stage's wall times (a stage of the workload report, or an
// NVTX range of a program that wrote none).
func (r *Run) Stage(name string) (summary.Stage, bool) {
	for _, s := range r.Summary.Stages.Rows {
		if s.Name == name {
			return s, true
		}
	}
	return summary.Stage{}, false
}

// RegionShare is a region's share of the run's GPU time, in percent; false
// when the run has no such region.
func (r *Run) RegionShare(name string) (float64, bool) {
	for _, g := range r.Summary.Regions.Rows {
		if g.Name == name {
			return 100 * g.Share, true
		}
	}
	return 0, false
}

// CategoryShare is a kernel category's share of the kernel table's GPU
// time, in percent (0 when no kernel is of that category).
func (r *Run) CategoryShare(category string) float64 {
	for _, c := range r.Summary.Kernels.ByCategory {
		if c.Category == category {
			return 100 * c.Share
		}
	}
	return 0
}

// Kernel is the top kernel of rank (1 is the one with the most GPU time).
func (r *Run) Kernel(rank int) (summary.Kernel, bool) {
	if rank < 1 || rank > len(r.Summary.Kernels.Rows) {
		return summary.Kernel{}, false
	}
	return r.Summary.Kernels.Rows[rank-1], true
}

func (r *Run) names(list func(func(string))) string {
	var out []string
	list(func(s string) { out = append(out, s) })
	return strings.Join(out, ", ")
}

// RegionShareAtLeast fails the test unless the region holds at least pct
// percent of the run's GPU time.
func (r *Run) RegionShareAtLeast(name string, pct float64) {
	r.tb.Helper()
	got, ok := r.RegionShare(name)
	if !ok {
		r.tb.Errorf("%s: no region %q (regions: %s)", r.Dir, name, r.names(func(f func(string)) {
			for _, g := range r.Summary.Regions.Rows {
				f(g.Name)
			}
		}))
		return
	}
	if got < pct {
		r.tb.Errorf("%s: region %q holds %.1f%% of the GPU time, want at least %.1f%%", r.Dir, name, got, pct)
	}
}

// CategoryShareAtMost fails the test when a kernel category holds more
// than pct percent of the GPU time.
func (r *Run) CategoryShareAtMost(category string, pct float64) {
	r.tb.Helper()
	if got := r.CategoryShare(category); got > pct {
		r.tb.Errorf("%s: %s kernels hold %.1f%% of the GPU time, want at most %.1f%%", r.Dir, category, got, pct)
	}
}

// BoundIs fails the test unless the top kernel of rank is classified want
// (classify.ComputeBound, MemoryBound or LatencyBound; from the deep
// pass's metrics).
func (r *Run) BoundIs(rank int, want string) {
	r.tb.Helper()
	k, ok := r.Kernel(rank)
	if !ok {
		r.tb.Errorf("%s: no top kernel #%d (the table has %d)", r.Dir, rank, len(r.Summary.Kernels.Rows))
		return
	}
	if k.Bound.Class != want {
		r.tb.Errorf("%s: top kernel #%d %s (%.3f ms, %.1f%%) is %s, want %s", r.Dir, rank, k.Name, k.TotalMS, 100*k.Share, k.Bound.Class, want)
	}
}

// StageWithin fails the test when a stage's mean wall time (warm-up rule
// applied, as diff and baselines do) is over budgetMS.
func (r *Run) StageWithin(name string, budgetMS float64) {
	r.tb.Helper()
	s, ok := r.Stage(name)
	if !ok {
		r.tb.Errorf("%s: no stage %q (stages: %s)", r.Dir, name, r.names(func(f func(string)) {
			for _, s := range r.Summary.Stages.Rows {
				f(s.Name)
			}
		}))
		return
	}
	if s.MeanMS > budgetMS {
		r.tb.Errorf("%s: stage %q took %.3f ms (mean of %d, sd %.3f), over its budget of %.3f ms", r.Dir, name, s.MeanMS, s.N, s.SDMS, budgetMS)
	}
}

// Baseline compares the run with the performance baseline
// golden/perf/<name>.json (relative to the test's package), within tol; the
// -update flag (goldie's) writes it from the run instead.
func (r *Run) Baseline(name string, tol tolerance.Tolerances) {
	r.tb.Helper()
	baseline.Check(r.tb, name, r.Dir, tol)
}

// Structure is what stays the same across runs of one program: the top
// kernels' names and call counts, and the regions' names and launch counts.
// Times are left out: compare them with Baseline, by tolerance.
type Structure struct {
	Kernels []Count `json:"kernels"`
	Regions []Count `json:"regions"`
}

// Count is a name and how many launches it had.
type Count struct {
	Name     string `json:"name"`
	Launches int64  `json:"launches"`
}

// Structure returns the run's Structure.
func (r *Run) Structure() Structure {
	s := Structure{Kernels: []Count{}, Regions: []Count{}}
	for _, k := range r.Summary.Kernels.Rows {
		s.Kernels = append(s.Kernels, Count{k.Name, k.Calls})
	}
	for _, g := range r.Summary.Regions.Rows {
		s.Regions = append(s.Regions, Count{g.Name, g.Launches})
	}
	return s
}

// StructureJSON is Structure as indented JSON, for a golden file
// (goldie's g.Assert(t, name, run.StructureJSON())).
func (r *Run) StructureJSON() []byte {
	b, err := json.MarshalIndent(r.Structure(), "", "  ")
	if err != nil {
		panic(fmt.Sprintf("deepproftest: %v", err)) // plain strings and integers always marshal
	}
	return append(b, '\n')
}
