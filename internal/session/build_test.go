package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The test binary doubles as a fake C compiler: with DEEPPROF_FAKE_CC set it
// appends its argv (one JSON line) to $DEEPPROF_FAKE_CC_LOG and writes the -o
// file ("ok"), or prints a compiler error and exits 1 ("fail"), or exits 0
// writing nothing ("silent").
// runFakeCompiler makes the test binary the fake compiler when
// DEEPPROF_FAKE_CC is set (TestMain calls it first).
func runFakeCompiler() {
	if mode := os.Getenv("DEEPPROF_FAKE_CC"); mode != "" {
		os.Exit(fakeCompiler(mode, os.Args[1:]))
	}
}

func fakeCompiler(mode string, args []string) int {
	if log := os.Getenv("DEEPPROF_FAKE_CC_LOG"); log != "" {
		f, err := os.OpenFile(log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return 3
		}
		line, _ := json.Marshal(args)
		fmt.Fprintf(f, "%s\n", line)
		f.Close()
	}
	switch mode {
	case "fail":
		fmt.Fprintln(os.Stderr, "deepprof_cupti.c:42:1: error: expected ';' before '}' token")
		return 1
	case "silent":
		return 0
	}
	for i, a := range args {
		if a == "-o" && i+1 < len(args) {
			if err := os.WriteFile(args[i+1], []byte("fake shared object\n"), 0o755); err != nil {
				return 4
			}
			return 0
		}
	}
	return 5
}

// fakeToolkit makes a CUDA toolkit folder holding what FindToolkit looks for.
func fakeToolkit(t *testing.T, cuptiVersion string) string {
	t.Helper()
	home := t.TempDir()
	for _, f := range []string{"include/cuda.h", "include/nvtx3/nvToolsExt.h", "include/cupti.h", "include/generated_nvtx_meta.h", "lib64/libcupti.so"} {
		p := filepath.Join(home, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(home, "include", "cupti_version.h"), "#define CUPTI_API_VERSION "+cuptiVersion+"\n")
	return home
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// fakeCC sets the fake compiler's mode and log and returns Options using it.
func fakeCC(t *testing.T, mode, home string) (Options, string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(t.TempDir(), "cc.log")
	t.Setenv("DEEPPROF_FAKE_CC", mode)
	t.Setenv("DEEPPROF_FAKE_CC_LOG", log)
	return Options{
		CUDAHome: home,
		Compiler: exe,
		CacheDir: filepath.Join(t.TempDir(), "cache"),
		Getenv:   func(string) string { return "" },
	}, log
}

func compilerCalls(t *testing.T, log string) [][]string {
	t.Helper()
	b, err := os.ReadFile(log)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var calls [][]string
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var argv []string
		if err := json.Unmarshal(line, &argv); err != nil {
			t.Fatalf("%s: %v", log, err)
		}
		calls = append(calls, argv)
	}
	return calls
}

func TestArgv(t *testing.T) {
	t.Parallel()
	tk := Toolkit{IncludeDirs: []string{"/cuda/include", "/cuda/extras/CUPTI/include"}, LibDir: "/cuda/lib64"}
	got := Argv("/usr/bin/gcc", tk, "/tmp/b/deepprof_cupti.c", "/tmp/b/libdeepprof_cupti.so")
	want := []string{"/usr/bin/gcc", "-shared", "-fPIC", "-O2", "-std=gnu11", "-Wall", "-Icxx-shim",
		"-I/cuda/include", "-I/cuda/extras/CUPTI/include",
		"-o", "/tmp/b/libdeepprof_cupti.so", "/tmp/b/deepprof_cupti.c",
		"-L/cuda/lib64", "-Wl,-rpath,/cuda/lib64", "-lcupti", "-ldl", "-lpthread"}
	if !slices.Equal(got, want) {
		t.Errorf("Argv =\n%q\nwant\n%q", got, want)
	}
}

func TestBuildCompilesOnceThenHitsTheCache(t *testing.T) {
	home := fakeToolkit(t, "130001")
	opts, log := fakeCC(t, "ok", home)
	lib, err := Build(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(lib) != LibName || filepath.Dir(filepath.Dir(lib)) != opts.CacheDir {
		t.Errorf("library at %s, want %s/<key>/%s", lib, opts.CacheDir, LibName)
	}
	if b, err := os.ReadFile(lib); err != nil || string(b) != "fake shared object\n" {
		t.Errorf("library %s: %q, %v", lib, b, err)
	}
	calls := compilerCalls(t, log)
	if len(calls) != 1 {
		t.Fatalf("compiler ran %d times, want 1", len(calls))
	}
	argv := calls[0]
	for _, want := range []string{"-I" + filepath.Join(home, "include"), "-L" + filepath.Join(home, "lib64"), "-Wl,-rpath," + filepath.Join(home, "lib64"), "-lcupti"} {
		if !slices.Contains(argv, want) {
			t.Errorf("compiler argv %q lacks %q", argv, want)
		}
	}
	// The source it compiled is the embedded one, in the (renamed) build folder.
	src := argv[slices.Index(argv, "-o")+2]
	if filepath.Base(src) != "deepprof_cupti.c" {
		t.Errorf("source argument %q", src)
	}
	if b, err := os.ReadFile(filepath.Join(filepath.Dir(lib), "deepprof_cupti.c")); err != nil || !bytes.Equal(b, Source()) {
		t.Errorf("the cached source differs from the embedded one (%v)", err)
	}
	var info BuildInfo
	b, err := os.ReadFile(filepath.Join(filepath.Dir(lib), "build.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &info); err != nil {
		t.Fatal(err)
	}
	if info.CUPTIAPI != "130001" || info.Format != Format || len(info.Argv) == 0 {
		t.Errorf("build.json = %+v", info)
	}

	// Second call: a cache hit, no compile.
	lib2, err := Build(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if lib2 != lib || len(compilerCalls(t, log)) != 1 {
		t.Errorf("second Build: %s (first %s), compiler ran %d times; want a cache hit", lib2, lib, len(compilerCalls(t, log)))
	}
	// No temporary build folder is left behind.
	entries, _ := os.ReadDir(opts.CacheDir)
	if len(entries) != 1 {
		t.Errorf("cache folder holds %d entries, want 1", len(entries))
	}

	// Another CUDA version is another key: it compiles again.
	writeFile(t, filepath.Join(home, "include", "cupti_version.h"), "#define CUPTI_API_VERSION 130100\n")
	lib3, err := Build(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if lib3 == lib || len(compilerCalls(t, log)) != 2 {
		t.Errorf("after a CUPTI version change: %s (before %s), compiler ran %d times; want a new build", lib3, lib, len(compilerCalls(t, log)))
	}
}

func TestCacheKeyCoversSourceFlagsAndVersions(t *testing.T) {
	t.Parallel()
	tk := Toolkit{IncludeDirs: []string{"/c/include"}, LibDir: "/c/lib64", CUDAVersion: "13.0.88", CUPTIAPI: "130001"}
	argv := Argv("gcc", tk, "SRC", "OUT")
	base := CacheKey(source, argv, tk)
	other := tk
	other.CUDAVersion = "13.0.89"
	cuptiOther := tk
	cuptiOther.CUPTIAPI = "130002"
	for name, key := range map[string]string{
		"source":        CacheKey(append(Source(), ' '), argv, tk),
		"flags":         CacheKey(source, append(slices.Clone(argv), "-g"), tk),
		"cuda version":  CacheKey(source, argv, other),
		"cupti version": CacheKey(source, argv, cuptiOther),
	} {
		if key == base {
			t.Errorf("changing the %s keeps the cache key %s", name, key)
		}
	}
	if CacheKey(source, argv, tk) != base {
		t.Error("the cache key is not deterministic")
	}
}

func TestBuildKeepsTheCompilerOutput(t *testing.T) {
	opts, _ := fakeCC(t, "fail", fakeToolkit(t, "130001"))
	_, err := Build(context.Background(), opts)
	var ce *CompileError
	if !errors.As(err, &ce) {
		t.Fatalf("Build error %v (%T), want a *CompileError", err, err)
	}
	for _, want := range []string{"compiling failed", "error: expected ';' before '}' token", "-lcupti"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	entries, _ := os.ReadDir(opts.CacheDir)
	if len(entries) != 0 {
		t.Errorf("a failed build left %d entries in the cache", len(entries))
	}
}

func TestBuildRefusesACompilerThatWroteNothing(t *testing.T) {
	opts, _ := fakeCC(t, "silent", fakeToolkit(t, "130001"))
	_, err := Build(context.Background(), opts)
	if err == nil || !strings.Contains(err.Error(), "wrote no "+LibName) {
		t.Fatalf("Build error %v, want one saying no library was written", err)
	}
}

func TestMissingCUDASaysWhatToSet(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "no-cuda")
	_, err := Build(context.Background(), Options{Getenv: func(string) string { return "" }, DefaultCUDAHome: missing})
	if !errors.Is(err, ErrNoToolkit) {
		t.Fatalf("error %v, want ErrNoToolkit", err)
	}
	for _, want := range []string{missing, "CUDA_HOME is not set", "set CUDA_HOME"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	// $CUDA_HOME pointing nowhere names it.
	_, err = FindToolkit(Options{Getenv: func(k string) string {
		if k == "CUDA_HOME" {
			return missing
		}
		return ""
	}})
	if err == nil || !strings.Contains(err.Error(), "$CUDA_HOME") {
		t.Errorf("error %v, want one naming $CUDA_HOME", err)
	}
}

func TestMissingCUPTIHeaderNamesItAndWhereItLooked(t *testing.T) {
	t.Parallel()
	home := fakeToolkit(t, "130001")
	if err := os.Remove(filepath.Join(home, "include", "cupti.h")); err != nil {
		t.Fatal(err)
	}
	_, err := FindToolkit(Options{CUDAHome: home})
	if !errors.Is(err, ErrNoToolkit) {
		t.Fatalf("error %v, want ErrNoToolkit", err)
	}
	for _, want := range []string{"cupti.h not found", filepath.Join(home, "include"), filepath.Join(home, "extras", "CUPTI", "include"), "CUDA_HOME"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	// Headers under extras/CUPTI/include (older toolkits) are found there.
	extras := filepath.Join(home, "extras", "CUPTI", "include")
	if err := os.MkdirAll(extras, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(extras, "cupti.h"), "")
	tk, err := FindToolkit(Options{CUDAHome: home})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{filepath.Join(home, "include"), extras}; !slices.Equal(tk.IncludeDirs, want) {
		t.Errorf("IncludeDirs = %q, want %q", tk.IncludeDirs, want)
	}
}

func TestMissingLibcupti(t *testing.T) {
	t.Parallel()
	home := fakeToolkit(t, "130001")
	if err := os.Remove(filepath.Join(home, "lib64", "libcupti.so")); err != nil {
		t.Fatal(err)
	}
	_, err := FindToolkit(Options{CUDAHome: home})
	if err == nil || !strings.Contains(err.Error(), "libcupti.so not found in "+filepath.Join(home, "lib64")) {
		t.Errorf("error %v, want one naming libcupti.so and lib64", err)
	}
}

func TestNoCompilerSaysWhatToSet(t *testing.T) {
	t.Parallel()
	notFound := func(string) (string, error) { return "", exec.ErrNotFound }
	_, err := FindCompiler(Options{Getenv: func(k string) string {
		if k == "CC" {
			return "clang-99"
		}
		return ""
	}, LookPath: notFound})
	if !errors.Is(err, ErrNoToolkit) {
		t.Fatalf("error %v, want ErrNoToolkit", err)
	}
	for _, want := range []string{"clang-99 ($CC)", "gcc (PATH)", "cc (PATH)", "set CC"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	// $CC wins over gcc.
	got, err := FindCompiler(Options{Getenv: func(k string) string {
		if k == "CC" {
			return "mycc"
		}
		return ""
	}, LookPath: func(name string) (string, error) { return "/opt/bin/" + name, nil }})
	if err != nil || got != "/opt/bin/mycc" {
		t.Errorf("FindCompiler = %q, %v; want /opt/bin/mycc", got, err)
	}
}

func TestVersionParsing(t *testing.T) {
	t.Parallel()
	v, err := parseVersionJSON([]byte(`{"cuda": {"name": "CUDA SDK", "version": "13.0.88"}, "cuda_cupti": {"version": "13.0.85"}}`))
	if err != nil || v != "13.0.88" {
		t.Errorf("parseVersionJSON = %q, %v", v, err)
	}
	if _, err := parseVersionJSON([]byte(`{"cuda_cupti": {}}`)); err == nil {
		t.Error("parseVersionJSON accepted a file without cuda.version")
	}
	for in, want := range map[string]string{
		"#define CUPTI_API_VERSION 130001\n":              "130001",
		"/* v28 */\n#  define   CUPTI_API_VERSION   28\n": "28",
		"#define CUPTI_API_VERSION_MAJOR 13\n":            "",
	} {
		if got := parseCUPTIVersion([]byte(in)); got != want {
			t.Errorf("parseCUPTIVersion(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestEnv(t *testing.T) {
	t.Parallel()
	got := Env("/cache/k/libdeepprof_cupti.so", "/run/timeline/cupti")
	want := []string{
		"CUDA_INJECTION64_PATH=/cache/k/libdeepprof_cupti.so",
		"NVTX_INJECTION64_PATH=/cache/k/libdeepprof_cupti.so",
		"DEEPPROF_CUPTI_DIR=/run/timeline/cupti",
	}
	if !slices.Equal(got, want) {
		t.Errorf("Env = %q, want %q", got, want)
	}
}

// The GPU check script compiles with the same flags as Argv.
func TestCheckScriptUsesTheSameFlags(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("..", "..", "scripts", "cupti", "build-and-check.sh"))
	if err != nil {
		t.Fatal(err)
	}
	for name, flags := range map[string][]string{"CFLAGS": CFlags, "LDLIBS": LDLibs} {
		line := name + "=(" + strings.Join(flags, " ") + ")"
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(line) + `$`).Match(b) {
			t.Errorf("scripts/cupti/build-and-check.sh has no line %q", line)
		}
	}
}

// The embedded source writes every record type of the format, and exports
// both injection entry points.
func TestSourceWritesTheFormat(t *testing.T) {
	t.Parallel()
	src := string(Source())
	for _, want := range []string{`"deepprof-cupti/1"`, `line_start("K")`, `line_start("C")`, `line_start("S")`,
		`"A\t%"`, `line_start("N")`, `"X"`, `"E\t%"`, "DP_EXPORT int InitializeInjection(void)",
		"DP_EXPORT int InitializeInjectionNvtx2(", "cuptiActivityFlushPeriod", "DEEPPROF_CUPTI_DIR"} {
		if !strings.Contains(src, want) {
			t.Errorf("deepprof_cupti.c lacks %q", want)
		}
	}
	if !strings.Contains(src, `#define DP_FORMAT "`+Format+`"`) {
		t.Errorf("deepprof_cupti.c's DP_FORMAT is not %q", Format)
	}
}

// The library leaves out the NVTX domains of EnvSkipDomains (XLA's TSL when
// it is unset) by wrapping the CORE2 slots CUPTI filled: each slot gets the
// wrapper whose type the source checks against that slot's (nvtxTypes.h's
// nvtx<Slot>_impl_fntype), and the package documentation and
// docs/sessions.md describe it.
func TestSourceLeavesOutDomains(t *testing.T) {
	t.Parallel()
	src := string(Source())
	for _, want := range []string{`getenv("` + EnvSkipDomains + `")`, `if (!p) p = "TSL";`, "NVTX_ETID_CALLBACKS",
		"GetModuleFunctionTable(NVTX_CB_MODULE_CORE2,", `note("nvtx_skip",`, "if (ok && skip) skip_take_over("} {
		if !strings.Contains(src, want) {
			t.Errorf("deepprof_cupti.c lacks %q", want)
		}
	}
	wrapperOf := map[string]string{} // slot -> the wrapper the table installs there
	for _, m := range regexp.MustCompile(`\{NVTX_CBID_CORE2_(\w+), \(NvtxFunctionPointer\)(\w+)\}`).FindAllStringSubmatch(src, -1) {
		wrapperOf[m[1]] = m[2]
	}
	typeOf := map[string]string{} // wrapper -> the slot whose type it has
	for _, m := range regexp.MustCompile(`SKIP_SLOT_TYPE\((\w+), nvtx(\w+)_impl_fntype\);`).FindAllStringSubmatch(src, -1) {
		typeOf[m[1]] = m[2]
	}
	slots := []string{"DomainCreateA", "DomainCreateW", "DomainDestroy", "DomainRangePushEx", "DomainRangePop",
		"DomainRangeStartEx", "DomainRangeEnd", "DomainMarkEx", "DomainRegisterStringA", "DomainRegisterStringW"}
	if len(wrapperOf) != len(slots) {
		t.Errorf("deepprof_cupti.c takes over %d CORE2 slots (%v), want %d", len(wrapperOf), wrapperOf, len(slots))
	}
	for _, slot := range slots {
		w, ok := wrapperOf[slot]
		if !ok {
			t.Errorf("deepprof_cupti.c does not take over NVTX_CBID_CORE2_%s", slot)
			continue
		}
		if got := typeOf[w]; got != slot {
			t.Errorf("NVTX_CBID_CORE2_%s gets %s, whose checked type is that of slot %q", slot, w, got)
		}
	}
	for _, doc := range []string{"doc.go", filepath.Join("..", "..", "docs", "sessions.md")} {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{EnvSkipDomains, "nvtx_skip", "TSL"} {
			if !bytes.Contains(b, []byte(want)) {
				t.Errorf("%s does not mention %s", doc, want)
			}
		}
	}
}

// Where a CUDA toolkit and a compiler exist, the real library compiles with
// the real compiler (into a temporary cache) and exports both entry points.
func TestBuildRealLibrary(t *testing.T) {
	t.Parallel()
	if _, err := FindToolkit(Options{}); err != nil {
		t.Skipf("no CUDA toolkit here: %v", err)
	}
	if _, err := FindCompiler(Options{}); err != nil {
		t.Skipf("no C compiler here: %v", err)
	}
	lib, err := Build(context.Background(), Options{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(lib)
	if err != nil {
		t.Fatal(err)
	}
	for _, sym := range []string{"InitializeInjection", "InitializeInjectionNvtx2"} {
		if !bytes.Contains(b, []byte(sym+"\x00")) {
			t.Errorf("%s does not name %s", lib, sym)
		}
	}
}
