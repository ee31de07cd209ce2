package session

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// EnvTestCUPTIInclude names include folders (colon-separated) that stand in
// for a CUDA toolkit's in TestMetricsChoiceInC: headers that declare what
// the library uses, with NVTX's.
const EnvTestCUPTIInclude = "DEEPPROF_TEST_CUPTI_INCLUDE"

// TestMetricsChoiceInC compiles the library with testdata/metrics-choice
// (its CUPTI functions stubbed, SYNTHETIC) and runs its checks of the choice
// of targets and of the cap: the 4 configurations of most time wanted, the
// ranking kept while no records come, a target unlaunched for 20 choices
// released until launched again, one launched once never a target, the cap
// against the program's own time. It needs a C compiler and a CUDA
// toolkit's headers (or EnvTestCUPTIInclude); elsewhere it is skipped.
func TestMetricsChoiceInC(t *testing.T) {
	t.Parallel()
	cc, err := FindCompiler(Options{})
	if err != nil {
		t.Skipf("no C compiler here: %v", err)
	}
	var incs []string
	if v := os.Getenv(EnvTestCUPTIInclude); v != "" {
		incs = strings.Split(v, ":")
	} else if tk, err := FindToolkit(Options{}); err == nil {
		incs = tk.IncludeDirs
	} else {
		t.Skipf("no CUDA toolkit here (%v), and %s is not set", err, EnvTestCUPTIInclude)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "deepprof_cupti.c"), Source(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"choice_test.c", "stubs.c"} {
		b, err := os.ReadFile(filepath.Join("testdata", "metrics-choice", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, ShimDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ShimDir, "string"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	argv := []string{cc, "-std=gnu11", "-Wall", "-I" + ShimDir}
	for _, d := range incs {
		argv = append(argv, "-I"+d)
	}
	argv = append(argv, "-o", "choice", "choice_test.c", "stubs.c", "-ldl", "-lpthread")
	build := exec.Command(argv[0], argv[1:]...)
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
	}
	run := exec.Command(filepath.Join(dir, "choice"))
	out, err := run.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "PASS (0 failures)") {
		t.Fatalf("choice_test.c: %v\n%s", err, out)
	}
}
