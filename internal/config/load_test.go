package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llm-perf-opt/deepprof/internal/input"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCommandIsTheWorkload(t *testing.T) {
	c, err := Load(LoadOptions{Dir: "../../profiles", Command: []string{"python3", "-u", "serve.py", "--port", "1"}, Overrides: []string{"model.dtype=bf16"}})
	require.NoError(t, err)
	assert.Equal(t, []string{"python3", "-u", "serve.py", "--port", "1"}, c.Workload.Command())
	assert.Equal(t, "serve", c.Workload.Name)
	assert.Equal(t, "serve", c.Model.Name)
	assert.Empty(t, c.Model.Options, "the default workload's shapes are dropped")
	assert.Equal(t, "bf16", c.Model.Dtype, "overrides apply after the command")

	_, err = Load(LoadOptions{Dir: "../../profiles", Command: []string{"./bench"}, Overrides: []string{"workload.argv=[x.py]"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the command after -- is the workload")

	// The model's facts for MFU come with the command, as overrides.
	c, err = Load(LoadOptions{Dir: "../../profiles", Command: []string{"./bench"}, Overrides: []string{
		"model.matmul_params=6979321856", "model.layers=32", "model.heads=32", "model.head_dim=128",
		"model.prompt_tokens=512", "model.generated_tokens=32", "phases.decode=[generate]"}})
	require.NoError(t, err)
	assert.Equal(t, Model{Name: "bench", MatmulParams: 6979321856, Layers: 32, Heads: 32, HeadDim: 128, PromptTokens: 512, GeneratedTokens: 32}, c.Model)
	assert.Equal(t, []string{"prefill"}, c.Phases.Prefill, "phases.prefill keeps its default")
	assert.Equal(t, []string{"generate"}, c.Phases.Decode)
	for _, bad := range []struct{ override, want string }{
		{"model.layers=-1", "model.layers: must not be negative, got -1"},
		{`phases.decode=["gen["]`, `phases.decode: "gen[": syntax error in pattern`},
		{"phases.decode=[]", "phases.decode: "},
	} {
		_, err = Load(LoadOptions{Dir: "../../profiles", Command: []string{"./bench"}, Overrides: []string{bad.override}})
		if bad.override == "phases.decode=[]" {
			assert.NoError(t, err, "decode may be left out: prefill still names one")
			continue
		}
		require.Error(t, err, bad.override)
		assert.Contains(t, err.Error(), bad.want)
	}
	_, err = Load(LoadOptions{Dir: "../../profiles", Overrides: []string{"phases.decode=[]", "phases.prefill=[]"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "phases: names no stage")

	assert.Equal(t, "bench", ProgramName([]string{"./build/bench", "-n", "3"}))
	assert.Equal(t, "run", ProgramName([]string{"bash", "scripts/run.sh"}))
}

// Issue 16: a group override is a name, not a path; keys the session sets
// cannot come from workload.env; repeats are bounded.
func TestHostileConfiguration(t *testing.T) {
	for _, c := range []struct {
		over []string
		want string
	}{
		{[]string{"ncu=../../../../tmp/x/evil"}, "ncu=../../../../tmp/x/evil: a ncu profile is a name in the profiles folder (default, full, roofline, timing), not a path"},
		{[]string{"+ncu=/etc/passwd"}, "not a path"},
		{[]string{"+workload.env.DEEPPROF_REPEATS=7"}, "workload.env.DEEPPROF_REPEATS: the session sets DEEPPROF_REPEATS itself (from workload.repeats): set that instead"},
		{[]string{"+workload.env.CUDA_VISIBLE_DEVICES=1"}, "the session sets CUDA_VISIBLE_DEVICES itself (from device)"},
		{[]string{"workload.repeats=1000000000"}, "workload.repeats: at most 1000, got 1000000000"},
	} {
		_, err := Load(LoadOptions{Dir: "../../profiles", Overrides: c.over})
		if assert.Error(t, err, "%v", c.over) {
			assert.Contains(t, err.Error(), c.want)
		}
	}
	_, err := Load(LoadOptions{Dir: "../../profiles", Profiles: []string{"../x"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "a profile name stays inside the profiles folder")
}

// TestParseBounded (issue 16): a profile file is read up to a cap; an
// endless one (SYNTHETIC zeros through a named pipe) is an error naming it.
func TestParseBounded(t *testing.T) {
	input.LimitForTest(t, 1<<20)
	p := filepath.Join(t.TempDir(), "config.yaml")
	input.FIFOForTest(t, p)
	_, err := Parse(p)
	require.ErrorContains(t, err, p+": larger than 1 MiB: not a deepprof file?")
}

// TestUpperBounds (issue 16): every count, size and time of the profile has
// a sane upper bound with a message that says why, and a peak or share is
// a finite number; values at the bound are accepted.
func TestUpperBounds(t *testing.T) {
	for _, c := range []struct {
		over []string
		want string
	}{
		{[]string{"ncu.per_kernel_launches=1000001"}, "ncu.per_kernel_launches: at most 1000, got 1000001: ncu replays each profiled launch"},
		{[]string{"ncu.launch_count=100000001"}, "ncu.launch_count: at most 100000, got 100000001"},
		{[]string{"ncu.launch_skip=2000000000"}, "ncu.launch_skip: at most 1000000000, got 2000000000"},
		{[]string{"timeline.max_kernels=1000000"}, "timeline.max_kernels: at most 10000, got 1000000"},
		{[]string{"timeline.top_n=20000", "timeline.max_kernels=20000"}, "timeline.top_n: at most 10000, got 20000"},
		{[]string{"report.top_n=1000000"}, "report.top_n: at most 10000, got 1000000"},
		{[]string{"regions.top_kernels=1000000"}, "regions.top_kernels: at most 10000, got 1000000"},
		{[]string{"workload.timeout=1000h"}, `workload.timeout: at most 168h (7 days), got "1000h"`},
		{[]string{"ncu.timeout=8760h"}, `ncu.timeout: at most 168h (7 days), got "8760h"`},
		{[]string{"nsys.timeout=169h"}, `nsys.timeout: at most 168h (7 days), got "169h"`},
		{[]string{"model.layers=100000"}, "model.layers: at most 10000, got 100000"},
		{[]string{"model.heads=100000"}, "model.heads: at most 10000, got 100000"},
		{[]string{"model.head_dim=1000000"}, "model.head_dim: at most 65536, got 1000000"},
		{[]string{"model.matmul_params=100000000000000"}, "model.matmul_params: at most 10000000000000, got 100000000000000"},
		{[]string{"model.prompt_tokens=1000000000"}, "model.prompt_tokens: at most 100000000, got 1000000000"},
		{[]string{"model.generated_tokens=1000000000"}, "model.generated_tokens: at most 100000000, got 1000000000"},
		{[]string{"report.peak_tflops=1e9"}, "report.peak_tflops: at most 100000, got 1e+09"},
		{[]string{"report.peak_tflops=.inf"}, "report.peak_tflops: at most 100000, got +Inf"},
		{[]string{"report.peak_tflops=.nan"}, "report.peak_tflops: a number, got NaN"},
		{[]string{"report.peak_tflops=989", "report.peak_memory_tbps=1e6"}, "report.peak_memory_tbps: at most 1000, got 1e+06"},
		{[]string{"report.peak_tflops=1e-300"}, "report.peak_tflops: at least 0.001 when set (0: from deepprof's table of GPUs), got 1e-300"},
	} {
		_, err := Load(LoadOptions{Dir: "../../profiles", Overrides: c.over})
		if assert.Error(t, err, "%v", c.over) {
			assert.Contains(t, err.Error(), c.want, "%v", c.over)
		}
	}
	_, err := Load(LoadOptions{Dir: "../../profiles", Overrides: []string{
		"ncu.per_kernel_launches=1000", "ncu.launch_count=100000", "timeline.max_kernels=10000", "timeline.top_n=10000",
		"report.top_n=10000", "regions.top_kernels=10000", "workload.timeout=168h", "ncu.timeout=7d", "nsys.timeout=168h",
		"model.layers=10000", "model.heads=10000", "model.head_dim=65536", "model.matmul_params=10000000000000",
		"model.prompt_tokens=100000000", "model.generated_tokens=100000000", "report.peak_tflops=100000", "report.peak_memory_tbps=1000"}})
	require.Error(t, err, "7d is not a Go duration")
	assert.Contains(t, err.Error(), `ncu.timeout: want a duration such as 10m or 90s, got "7d"`)
	_, err = Load(LoadOptions{Dir: "../../profiles", Overrides: []string{
		"ncu.per_kernel_launches=1000", "ncu.launch_count=100000", "timeline.max_kernels=10000", "timeline.top_n=10000",
		"report.top_n=10000", "regions.top_kernels=10000", "workload.timeout=168h", "ncu.timeout=168h", "nsys.timeout=168h",
		"model.layers=10000", "model.heads=10000", "model.head_dim=65536", "model.matmul_params=10000000000000",
		"model.prompt_tokens=100000000", "model.generated_tokens=100000000", "report.peak_tflops=100000", "report.peak_memory_tbps=1000"}})
	require.NoError(t, err, "every bound itself is accepted")
}

// TestStrictProfile (issue 35): a key given twice is an error naming both
// lines (the last silently won), and nesting past MaxDepth is refused at
// once, whatever key it is under.
func TestStrictProfile(t *testing.T) {
	dir := t.TempDir()
	dup := filepath.Join(dir, "dup.yaml")
	require.NoError(t, os.WriteFile(dup, []byte("report:\n  top_n: 10\n  top_n: 2\n"), 0o644))
	_, err := Parse(dup)
	require.EqualError(t, err, dup+":3: top_n is given twice (first at line 2): give each key once")

	deep := filepath.Join(dir, "deep.yaml")
	require.NoError(t, os.WriteFile(deep, []byte(deepProfile(10000)), 0o644))
	_, err = Parse(deep)
	require.ErrorContains(t, err, "nested deeper than 32 levels")
}

// deepProfile is a SYNTHETIC profile nesting mappings n deep.
func deepProfile(n int) string {
	return "report: " + strings.Repeat("{a: ", n) + "1" + strings.Repeat("}", n) + "\n"
}

// BenchmarkDeepProfile: a 1 MB profile nested as deep as it goes is refused
// in well under a second (issue 35 asks < 1 s, < 100 MB; it took 21.5 s
// and 971 MB at 40 KB).
func BenchmarkDeepProfile(b *testing.B) {
	p := filepath.Join(b.TempDir(), "deep.yaml")
	if err := os.WriteFile(p, []byte(deepProfile(1<<20/4)), 0o644); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Parse(p); err == nil {
			b.Fatal("a profile nested 262,144 deep was read")
		}
	}
}

// TestSetInFile (issue 53): a value a profile file outside the binary set
// is told apart from the binary's own and the command line's, key by key
// and entry by entry of workload.env, so that a dry run can leave the
// programs and environment such a file names unrun. The checkout's own
// profiles (deepprof's, byte for byte the embedded ones) count as the
// binary's.
func TestSetInFile(t *testing.T) {
	c, err := Load(LoadOptions{Dir: "../../profiles"})
	require.NoError(t, err)
	for _, key := range []string{"ncu.path", "nsys.path", "workload.python", "workload.argv", "workload.env"} {
		assert.Empty(t, c.SetInFile(key), "%s: deepprof's own profiles", key)
	}

	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "workloads"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "ncu"), 0o755))
	write := func(rel, body string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, rel), []byte(body), 0o644))
	}
	// The embedded tiny-llama sets PYTHONUNBUFFERED; this stage2 adds an
	// entry of its own and sets the program paths.
	write("stage2.yaml", "defaults: [ncu/default, nsys/default, workloads/tiny-llama]\n"+
		"workload:\n  python: ./tools/python3\n  env:\n    PYTHONPATH: site\n")
	write("ncu/default.yaml", "ncu:\n  path: ./tools/ncu\n")
	c, err = Load(LoadOptions{Dir: dir})
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "ncu/default.yaml")+":2", c.SetInFile("ncu.path"))
	assert.Equal(t, filepath.Join(dir, "stage2.yaml")+":3", c.SetInFile("workload.python"))
	assert.Equal(t, filepath.Join(dir, "stage2.yaml")+":5", c.SetInFile("workload.env"))
	assert.Equal(t, filepath.Join(dir, "stage2.yaml")+":5", c.SetInFile("workload.env.PYTHONPATH"))
	assert.Empty(t, c.SetInFile("workload.env.PYTHONUNBUFFERED"), "the embedded profile's entry of the merged map")
	assert.Empty(t, c.SetInFile("nsys.path"), "the embedded nsys/default")
	assert.Empty(t, c.SetInFile("workload.argv"), "the embedded tiny-llama")

	// The command line wins, and clears what the file set.
	c, err = Load(LoadOptions{Dir: dir, Overrides: []string{"ncu.path=/opt/ncu", "workload.env={}"}})
	require.NoError(t, err)
	assert.Empty(t, c.SetInFile("ncu.path"))
	assert.Empty(t, c.SetInFile("workload.env"))
	c, err = Load(LoadOptions{Dir: dir, Command: []string{"python3", "x.py"}})
	require.NoError(t, err)
	assert.Empty(t, c.SetInFile("workload.python"))
	assert.Empty(t, c.SetInFile("workload.argv"))
	assert.NotEmpty(t, c.SetInFile("workload.env"))

	// A file named with --profile is outside the binary too, whatever its
	// name.
	c, err = Load(LoadOptions{Dir: "../../profiles", Profiles: []string{"stage2", filepath.Join(dir, "ncu/default.yaml")}})
	require.NoError(t, err)
	assert.NotEmpty(t, c.SetInFile("ncu.path"))
	// A folder's copy of an embedded profile, changed, is the folder's.
	write("workloads/tiny-llama.yaml", "workload:\n  python: python3\n  argv: [x.py]\n")
	write("stage2.yaml", "defaults: [workloads/tiny-llama]\n")
	c, err = Load(LoadOptions{Dir: dir})
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "workloads/tiny-llama.yaml")+":2", c.SetInFile("workload.python"))
}
