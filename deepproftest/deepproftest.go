package deepproftest

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/harness"
)

// Machine is what Preflight found: the GPU and Nsight Compute.
type Machine struct {
	GPU harness.GPU
	Ncu harness.Tool
}

// probes are how Preflight looks at the machine; tests replace them.
type probes struct {
	gpu    func() (harness.GPU, error)
	ncu    func() (harness.Tool, error) // ErrNotFound-style errors: not installed
	runNcu func(path string) (harness.Tool, error)
	// python runs the interpreter's check (see pythonCheck) and returns
	// its exit status (-1: the interpreter did not start) and output.
	python func(py string) (int, []byte)
}

var probe = probes{
	gpu: harness.FindGPU,
	ncu: harness.FindNcu,
	runNcu: func(path string) (harness.Tool, error) {
		return harness.ProbeTool(context.Background(), path)
	},
	python: func(py string) (int, []byte) {
		out, err := exec.Command(py, "-c", pythonCheck).CombinedOutput()
		var exit *exec.ExitError
		switch {
		case err == nil:
			return 0, out
		case errors.As(err, &exit):
			return exit.ExitCode(), out
		}
		return -1, []byte(err.Error())
	},
}

// pythonCheck exits 3 when torch is not installed (the test is skipped),
// 1 with the traceback when it is and does not import (a missing
// libcudnn: broken, the test fails), and 4 when torch sees no CUDA device
// on a machine whose driver sees GPUs (broken).
const pythonCheck = `import sys
try:
    import torch
except ModuleNotFoundError as e:
    if e.name != "torch":
        raise
    print("cannot import torch:", e)
    sys.exit(3)
if not torch.cuda.is_available():
    print("torch", torch.__version__, "built for CUDA", torch.version.cuda, "sees no CUDA device")
    sys.exit(4)
`

// Preflight checks the machine for a profiling test. It skips the test,
// with the reason, when something is not there: no NVIDIA GPU or driver
// (NVML), no ncu, no Python or no torch (set python to "" to leave the
// interpreter unchecked, for a compiled program). It fails the test when
// they are there but broken: NVML that errs on a machine with a driver, an
// ncu that does not run, a torch that sees no CUDA device.
func Preflight(t testing.TB, python ...string) Machine {
	t.Helper()
	prov, err := probe.gpu()
	switch {
	case errors.Is(err, harness.ErrNoGPU):
		t.Skipf("deepproftest: no GPU through NVML: %v", err)
		return Machine{}
	case err != nil:
		t.Fatalf("deepproftest: the NVIDIA driver is there but NVML fails: %v (try nvidia-smi)", err)
		return Machine{}
	}
	tool, err := probe.ncu()
	if err != nil {
		t.Skipf("deepproftest: %v", err)
		return Machine{}
	}
	if tool, err = probe.runNcu(tool.Path); err != nil {
		t.Fatalf("deepproftest: ncu found but not runnable: %v", err)
		return Machine{}
	}
	py := "python3"
	if len(python) > 0 {
		py = python[0]
	}
	if py != "" {
		switch code, out := probe.python(py); code {
		case 0:
		case 4:
			t.Fatalf("deepproftest: %s: %s(the GPU is there: a CPU-only torch, or CUDA_VISIBLE_DEVICES hiding it?)", py, out)
			return Machine{}
		case 1:
			t.Fatalf("deepproftest: %s: torch is installed and does not import:\n%s", py, out)
			return Machine{}
		default:
			t.Skipf("deepproftest: %s cannot run the profiled Python (exit %d): %s", py, code, out)
			return Machine{}
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
	// Root is where the run directory is made: "" is $DEEPPROF_GPU_OUT
	// when set, else the test's artifact directory (t.ArtifactDir(): kept
	// under the output directory with go test -artifacts, removed after
	// the test without it).
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
		root = t.ArtifactDir()
	}
	id := opt.ID
	if id == "" {
		id = strings.NewReplacer("/", "-", " ", "_").Replace(t.Name()) + "-" + time.Now().UTC().Format("150405")
	}
	// The torch.profiler check always runs in a test (timeline.oracle):
	// a test's numbers are checked against an independent source.
	sess, err := harness.NewProfile(harness.ProfileOptions{Profiles: opt.Profiles, ProfilesDir: opt.ProfilesDir,
		Overrides: append([]string{"run.root=" + root, "run.id=" + id}, opt.Overrides...), Command: opt.Command,
		Check: true, NoPreflight: true, Ncu: m.Ncu, Progress: os.Stderr})
	if err == nil {
		err = sess.Prepare()
	}
	if err != nil {
		t.Fatalf("deepproftest: %v", err)
		return nil
	}
	run, err := runSession(context.Background(), sess)
	dir := filepath.Join(root, id)
	if err != nil {
		t.Fatalf("deepproftest: the session failed (%s): %v", dir, err)
		return nil
	}
	if st, why := run.Status(); !run.Complete() {
		t.Fatalf("deepproftest: run %s is %s: %s", dir, st, why)
		return nil
	}
	return Open(t, dir)
}

// runSession runs a session; tests replace it.
var runSession = func(ctx context.Context, s *harness.Session) (*harness.Run, error) { return s.Run(ctx) }

// Run is what one run directory measured, read from its files.
type Run struct {
	// Dir is the run directory.
	Dir string
	// Summary is summary.json: stages, MFU, the top kernels with their
	// category and bound, the time by category, the regions.
	Summary facts.Summary
	// Status is how the run ended, as its manifest says ("complete",
	// "partial", "failed"); Reason why, when it is not complete. A partial
	// run's figures are made of what it holds, which is not all of it.
	Status, Reason string
	// Launches is each kernel's launches in kernels.json, every launch of
	// the run's scope, the warm-up's too (Summary's rows are the steady
	// state's): what Structure counts, so that a structure does not move
	// with the warm-up decision. Nil for a run with no kernels.json.
	Launches map[string]int64
	tb       testing.TB
}

// Complete reports whether the run is complete.
func (r *Run) Complete() bool { return r.Status == "complete" }

// Open reads the run directory dir for a test's assertions. A directory
// that is not a run fails the test, and so does a run that is not
// complete (a killed program, a profiler that failed): its figures would
// pass or fail on part of the run. OpenPartial allows one.
func Open(t testing.TB, dir string) *Run {
	t.Helper()
	r := OpenPartial(t, dir)
	if r != nil && !r.Complete() {
		t.Fatalf("deepproftest: run %s is %s: %s (deepproftest.OpenPartial reads a run that is not complete)", dir, r.Status, r.Reason)
		return nil
	}
	return r
}

// OpenPartial is Open for a run that may not be complete: a test of what
// a failed session keeps. Its status is logged.
func OpenPartial(t testing.TB, dir string) *Run {
	t.Helper()
	r, err := Read(dir)
	if err != nil {
		t.Fatalf("deepproftest: %v", err)
		return nil
	}
	if !r.Complete() {
		t.Logf("deepproftest: run %s is %s: %s", dir, r.Status, r.Reason)
	}
	r.tb = t
	return r
}

// Read reads the run directory dir, for its typed data only (its
// assertions need Open's test); Status says whether it is complete.
func Read(dir string) (*Run, error) {
	run, err := harness.OpenRun(dir)
	if err != nil {
		return nil, err
	}
	s, err := harness.ReadSummary(dir)
	if err != nil {
		return nil, err
	}
	launches, err := harness.KernelLaunches(dir)
	if err != nil {
		return nil, err
	}
	st, why := run.Status()
	return &Run{Dir: dir, Summary: s, Status: st, Reason: why, Launches: launches}, nil
}

// Stage is a stage's wall times (a stage of the workload report, or an
// NVTX range of a program that wrote none).
func (r *Run) Stage(name string) (facts.Stage, bool) {
	for _, s := range r.Summary.Stages.Rows {
		if s.Name == name {
			return s, true
		}
	}
	return facts.Stage{}, false
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
func (r *Run) Kernel(rank int) (facts.KernelRow, bool) {
	if rank < 1 || rank > len(r.Summary.Kernels.Rows) {
		return facts.KernelRow{}, false
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
// ("compute-bound", "memory-bound" or "latency-bound"; from the deep
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
// golden/perf/<name>.json (relative to the test's package), within tol;
// -update (see the package doc) or GOLDIE_UPDATE=1 writes it from the run
// instead.
func (r *Run) Baseline(name string, tol harness.Tolerances) {
	r.tb.Helper()
	CheckBaseline(r.tb, name, r.Dir, tol)
}

// MFU is the run's model FLOPs utilization in percent for scope "model",
// "prefill" or "decode". Without it, ok is false and why says what would
// give it (the model.* facts that are missing, or the GPU's unknown peak).
func (r *Run) MFU(scope string) (pct float64, why string, ok bool) {
	m := r.Summary.MFU
	var v *float64
	switch scope {
	case "model":
		v = m.Model
	case "prefill":
		v = m.Prefill
	case "decode":
		v = m.Decode
	default:
		return 0, fmt.Sprintf("no MFU scope %q (model, prefill, decode)", scope), false
	}
	if v == nil {
		why = m.Missing
		if why == "" {
			why = "the run has no " + scope + " stage to divide its FLOPs by"
		}
		return 0, why, false
	}
	return 100 * *v, "", true
}

// MFUAtLeast fails the test unless the scope's MFU (see MFU) is at least
// pct percent, or when the run could not compute it.
func (r *Run) MFUAtLeast(scope string, pct float64) {
	r.tb.Helper()
	got, why, ok := r.MFU(scope)
	switch {
	case !ok:
		r.tb.Errorf("%s: no %s MFU: %s", r.Dir, scope, why)
	case got < pct:
		r.tb.Errorf("%s: %s MFU is %.3g%%, want at least %.3g%%", r.Dir, scope, got, pct)
	}
}

// Structure is what stays the same across runs of one program: the
// regions' names and launch counts, how many distinct kernels each
// category has, and the names and call counts of the kernels that hold at
// least StructureMinShare of the GPU time. Times are left out: compare
// them with Baseline, by tolerance.
type Structure struct {
	Kernels    []Count         `json:"kernels"`
	Regions    []Count         `json:"regions"`
	Categories []CategoryCount `json:"categories"`
}

// StructureMinShare is the share of the GPU time a kernel holds to be in a
// run's Structure: the kernels near the top-N cut swap places from run to
// run, which a golden file of names must not see.
const StructureMinShare = 0.05

// Count is a name and how many launches it had.
type Count struct {
	Name     string `json:"name"`
	Launches int64  `json:"launches"`
}

// CategoryCount is a kernel category and how many distinct kernels of it
// the run launched.
type CategoryCount struct {
	Category string `json:"category"`
	Kernels  int    `json:"kernels"`
}

// Structure returns the run's Structure, each list by name (the order by
// time is a time, and may change between runs).
func (r *Run) Structure() Structure {
	s := Structure{Kernels: []Count{}, Regions: []Count{}, Categories: []CategoryCount{}}
	for _, k := range r.Summary.Kernels.Rows {
		if k.Share >= StructureMinShare {
			n, ok := r.Launches[k.Name]
			if !ok {
				n = k.Calls
			}
			s.Kernels = append(s.Kernels, Count{k.Name, n})
		}
	}
	for _, g := range r.Summary.Regions.Rows {
		s.Regions = append(s.Regions, Count{g.Name, g.Launches})
	}
	for _, c := range r.Summary.Kernels.ByCategory {
		s.Categories = append(s.Categories, CategoryCount{c.Category, c.Kernels})
	}
	byName := func(a, b Count) int { return cmp.Compare(a.Name, b.Name) }
	slices.SortStableFunc(s.Kernels, byName)
	slices.SortStableFunc(s.Regions, byName)
	slices.SortStableFunc(s.Categories, func(a, b CategoryCount) int { return cmp.Compare(a.Category, b.Category) })
	return s
}

// StructureDir is where StructureMatches keeps its golden files, relative
// to the test's package.
const StructureDir = "golden/structure"

// StructureMatches compares the run's Structure with the golden file
// golden/structure/<name>.json and fails the test with the difference
// (kernels and regions that appeared, went or changed their launch count).
// Under -update (a flag the test package registers: see the package doc)
// or GOLDIE_UPDATE=1 it writes the file from the run instead. Times are not in it: Baseline compares them, by
// tolerance.
func (r *Run) StructureMatches(name string) {
	r.tb.Helper()
	if !filepath.IsLocal(name) || name == "" {
		r.tb.Errorf("structure %q: want a plain name (the file is %s/NAME.json)", name, StructureDir)
		return
	}
	path := filepath.Join(StructureDir, name+".json")
	got := r.StructureJSON()
	if updating() {
		err := os.MkdirAll(StructureDir, 0o755)
		if err == nil {
			err = harness.WriteFileAtomic(path, func(w io.Writer) error { _, err := w.Write(got); return err })
		}
		if err != nil {
			r.tb.Errorf("structure %s: %v", path, err)
			return
		}
		r.tb.Logf("structure %s: written from %s", path, r.Dir)
		return
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		r.tb.Errorf("structure %s: not found: run the test with -update to write it from this run (%s)", path, r.Dir)
		return
	}
	if err != nil {
		r.tb.Errorf("structure %s: %v", path, err)
		return
	}
	var want Structure
	if err := json.Unmarshal(b, &want); err != nil {
		r.tb.Errorf("structure %s: %v", path, err)
		return
	}
	if d := gocmp.Diff(want, r.Structure()); d != "" {
		r.tb.Errorf("%s: its structure differs from %s (-golden +run); if this is expected, rewrite it with -update\n%s", r.Dir, path, d)
	}
}

// StructureJSON is Structure as indented JSON, for a golden file
// (goldie's g.Assert(t, name, run.StructureJSON())).
// Kernel names keep their <, > and & as they are (no \u003c), for a
// golden file a person reads.
func (r *Run) StructureJSON() []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r.Structure()); err != nil {
		panic(fmt.Sprintf("deepproftest: %v", err)) // plain strings and integers always marshal
	}
	return b.Bytes()
}
