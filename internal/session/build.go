package session

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/llm-perf-opt/deepprof/internal/rundir"
)

//go:embed src/deepprof_cupti.c
var source []byte

// Source is the library's C source, as embedded.
func Source() []byte { return append([]byte(nil), source...) }

// Format is the first field of a record file's header line, without its '#'.
const Format = "deepprof-cupti/1"

// LibName is the file name of the built library inside its cache folder.
const LibName = "libdeepprof_cupti.so"

// ShimDir is a folder of every build's own, relative to the folder it
// compiles in, holding one empty file named "string": the range profiler's
// host API header (cupti_profiler_host.h, CUDA 12.6 to 13.0) includes the
// C++ header <string> outside its C++ guard and uses nothing of it.
const ShimDir = "cxx-shim"

// CFlags and LDLibs are the compiler flags every build uses, around the
// include (-I), output, source and library (-L, -Wl,-rpath) arguments that
// Argv adds. scripts/cupti/build-and-check.sh uses the same (a test checks).
var (
	CFlags = []string{"-shared", "-fPIC", "-O2", "-std=gnu11", "-Wall", "-I" + ShimDir}
	LDLibs = []string{"-lcupti", "-ldl", "-lpthread"}
)

// DefaultCUDAHome is where the toolkit is looked for when neither
// Options.CUDAHome nor $CUDA_HOME says.
const DefaultCUDAHome = "/usr/local/cuda"

// Options configure Build. The zero value reads the process environment.
type Options struct {
	CUDAHome string // the CUDA toolkit folder; "" reads $CUDA_HOME, then DefaultCUDAHome
	Compiler string // a C compiler, a path or a name on PATH; "" reads $CC, then gcc, then cc
	CacheDir string // "" is os.UserCacheDir()/deepprof/cupti

	// For tests: nil means os.Getenv, exec.LookPath and DefaultCUDAHome.
	Getenv          func(string) string
	LookPath        func(string) (string, error)
	DefaultCUDAHome string
}

func (o Options) getenv(k string) string {
	if o.Getenv != nil {
		return o.Getenv(k)
	}
	return os.Getenv(k)
}

func (o Options) lookPath(name string) (string, error) {
	if o.LookPath != nil {
		return o.LookPath(name)
	}
	return exec.LookPath(name)
}

// Toolkit is the part of a CUDA toolkit the library is built against.
type Toolkit struct {
	Home        string
	IncludeDirs []string // cuda.h and nvtx3/, then cupti.h and generated_nvtx_meta.h when elsewhere
	LibDir      string   // libcupti.so
	CUDAVersion string   // version.json's cuda.version, "" when the file is absent
	CUPTIAPI    string   // cupti_version.h's CUPTI_API_VERSION
}

// ToolkitError says that a CUDA toolkit, or a part of it, was not found.
type ToolkitError struct{ Msg string }

func (e *ToolkitError) Error() string { return "cupti library: " + e.Msg }

// ErrNoToolkit matches every *ToolkitError with errors.Is.
var ErrNoToolkit = errors.New("no usable CUDA toolkit")

func (e *ToolkitError) Is(target error) bool { return target == ErrNoToolkit }

// FindToolkit locates the headers and library under the toolkit folder that
// opts name (see Options.CUDAHome).
func FindToolkit(opts Options) (Toolkit, error) {
	home, from := opts.CUDAHome, "Options.CUDAHome"
	if home == "" {
		home, from = opts.getenv("CUDA_HOME"), "$CUDA_HOME"
	}
	if home == "" {
		home = opts.DefaultCUDAHome
		if home == "" {
			home = DefaultCUDAHome
		}
		from = "the default (CUDA_HOME is not set)"
	}
	if st, err := os.Stat(home); err != nil || !st.IsDir() {
		return Toolkit{}, &ToolkitError{fmt.Sprintf("no CUDA toolkit at %s, %s; set CUDA_HOME to the CUDA toolkit folder (the one holding include/cupti.h and lib64/libcupti.so)", home, from)}
	}
	tk := Toolkit{Home: home}
	incCandidates := []string{filepath.Join(home, "include"), filepath.Join(home, "extras", "CUPTI", "include")}
	targets, _ := filepath.Glob(filepath.Join(home, "targets", "*", "include"))
	incCandidates = append(incCandidates, targets...)
	for _, h := range []string{"cuda.h", "nvtx3/nvToolsExt.h", "cupti.h", "generated_nvtx_meta.h"} {
		dir := firstHolding(incCandidates, h)
		if dir == "" {
			return Toolkit{}, &ToolkitError{fmt.Sprintf("%s not found in %s (CUDA toolkit %s, %s); install CUPTI and the NVTX headers (both ship with the CUDA toolkit) or set CUDA_HOME to a toolkit that has them",
				h, strings.Join(incCandidates, ", "), home, from)}
		}
		if !contains(tk.IncludeDirs, dir) {
			tk.IncludeDirs = append(tk.IncludeDirs, dir)
		}
	}
	libCandidates := []string{filepath.Join(home, "lib64"), filepath.Join(home, "extras", "CUPTI", "lib64"), filepath.Join(home, "lib")}
	targetLibs, _ := filepath.Glob(filepath.Join(home, "targets", "*", "lib"))
	libCandidates = append(libCandidates, targetLibs...)
	tk.LibDir = firstHolding(libCandidates, "libcupti.so")
	if tk.LibDir == "" {
		return Toolkit{}, &ToolkitError{fmt.Sprintf("libcupti.so not found in %s (CUDA toolkit %s, %s); install CUPTI (it ships with the CUDA toolkit) or set CUDA_HOME to a toolkit that has it",
			strings.Join(libCandidates, ", "), home, from)}
	}
	if b, err := os.ReadFile(filepath.Join(home, "version.json")); err == nil {
		v, err := parseVersionJSON(b)
		if err != nil {
			return Toolkit{}, fmt.Errorf("cupti library: %s: %w", filepath.Join(home, "version.json"), err)
		}
		tk.CUDAVersion = v
	}
	cuptiDir := firstHolding(tk.IncludeDirs, "cupti_version.h")
	if cuptiDir != "" {
		b, err := os.ReadFile(filepath.Join(cuptiDir, "cupti_version.h"))
		if err != nil {
			return Toolkit{}, fmt.Errorf("cupti library: %w", err)
		}
		tk.CUPTIAPI = parseCUPTIVersion(b)
	}
	if tk.CUDAVersion == "" && tk.CUPTIAPI == "" {
		return Toolkit{}, &ToolkitError{fmt.Sprintf("no version found for CUDA toolkit %s: neither version.json nor cupti_version.h (CUPTI_API_VERSION) is there", home)}
	}
	return tk, nil
}

// parseVersionJSON returns the toolkit version of a CUDA version.json,
// {"cuda": {"version": "13.0.88", ...}, ...}.
func parseVersionJSON(b []byte) (string, error) {
	var v struct {
		CUDA struct {
			Version string `json:"version"`
		} `json:"cuda"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return "", err
	}
	if v.CUDA.Version == "" {
		return "", errors.New(`no "cuda": {"version": ...}`)
	}
	return v.CUDA.Version, nil
}

var cuptiVersionRE = regexp.MustCompile(`(?m)^\s*#\s*define\s+CUPTI_API_VERSION\s+(\d+)`)

// parseCUPTIVersion returns cupti_version.h's CUPTI_API_VERSION, "" if none.
func parseCUPTIVersion(b []byte) string {
	if m := cuptiVersionRE.FindSubmatch(b); m != nil {
		return string(m[1])
	}
	return ""
}

func firstHolding(dirs []string, name string) string {
	for _, d := range dirs {
		if st, err := os.Stat(filepath.Join(d, filepath.FromSlash(name))); err == nil && !st.IsDir() {
			return d
		}
	}
	return ""
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// FindCompiler returns the C compiler opts name: Options.Compiler, else $CC,
// else gcc, else cc, each resolved on PATH when it is not a path.
func FindCompiler(opts Options) (string, error) {
	var tried []string
	try := func(name, from string) (string, bool) {
		if p, err := opts.lookPath(name); err == nil {
			return p, true
		}
		tried = append(tried, fmt.Sprintf("%s (%s)", name, from))
		return "", false
	}
	if opts.Compiler != "" {
		if p, ok := try(opts.Compiler, "Options.Compiler"); ok {
			return p, nil
		}
		return "", &ToolkitError{fmt.Sprintf("C compiler %q not found", opts.Compiler)}
	}
	if cc := opts.getenv("CC"); cc != "" {
		if p, ok := try(cc, "$CC"); ok {
			return p, nil
		}
	}
	for _, name := range []string{"gcc", "cc"} {
		if p, ok := try(name, "PATH"); ok {
			return p, nil
		}
	}
	return "", &ToolkitError{fmt.Sprintf("no C compiler: looked for %s; install gcc or set CC", strings.Join(tried, ", "))}
}

// Argv is the compiler command that builds the library from src into out.
func Argv(cc string, tk Toolkit, src, out string) []string {
	argv := append([]string{cc}, CFlags...)
	for _, d := range tk.IncludeDirs {
		argv = append(argv, "-I"+d)
	}
	argv = append(argv, "-o", out, src, "-L"+tk.LibDir, "-Wl,-rpath,"+tk.LibDir)
	return append(argv, LDLibs...)
}

// CacheKey names a build: the hash of the source, the compiler's argv (with
// placeholders for the source and output paths) and the toolkit's versions.
func CacheKey(src []byte, argv []string, tk Toolkit) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s build\n", Format)
	h.Write(src)
	fmt.Fprintf(h, "\nargv\x00%s\ncuda\x00%s\ncupti\x00%s\n", strings.Join(argv, "\x00"), tk.CUDAVersion, tk.CUPTIAPI)
	return hex.EncodeToString(h.Sum(nil))[:20]
}

// CompileError is a failed compile; Output is everything the compiler printed.
type CompileError struct {
	Argv   []string
	Output string
	Err    error
}

func (e *CompileError) Error() string {
	return fmt.Sprintf("cupti library: compiling failed (%v): %s\n%s", e.Err, strings.Join(e.Argv, " "), strings.TrimRight(e.Output, "\n"))
}

func (e *CompileError) Unwrap() error { return e.Err }

// BuildInfo is written beside the library as build.json.
type BuildInfo struct {
	Format      string   `json:"format"`
	Argv        []string `json:"argv"`
	CUDAHome    string   `json:"cuda_home"`
	CUDAVersion string   `json:"cuda_version"`
	CUPTIAPI    string   `json:"cupti_api_version"`
	Output      string   `json:"compiler_output"`
}

// Build returns the path of the library built for the toolkit and compiler
// that opts name, compiling it first when the cache has no such build.
func Build(ctx context.Context, opts Options) (libPath string, err error) {
	tk, err := FindToolkit(opts)
	if err != nil {
		return "", err
	}
	cc, err := FindCompiler(opts)
	if err != nil {
		return "", err
	}
	cache := opts.CacheDir
	if cache == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("cupti library: no cache folder (%v); set XDG_CACHE_HOME or HOME", err)
		}
		cache = filepath.Join(base, "deepprof", "cupti")
	}
	key := CacheKey(source, Argv(cc, tk, "SRC", "OUT"), tk)
	final := filepath.Join(cache, key)
	lib := filepath.Join(final, LibName)
	if st, err := os.Stat(lib); err == nil && st.Mode().IsRegular() {
		return lib, nil
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", fmt.Errorf("cupti library: %w", err)
	}
	tmp, err := os.MkdirTemp(cache, ".build-"+key+"-")
	if err != nil {
		return "", fmt.Errorf("cupti library: %w", err)
	}
	defer os.RemoveAll(tmp) // after a successful rename, nothing is left to remove
	src := filepath.Join(tmp, "deepprof_cupti.c")
	if err := rundir.WriteFileAtomic(src, source); err != nil {
		return "", fmt.Errorf("cupti library: %w", err)
	}
	if err := os.Mkdir(filepath.Join(tmp, ShimDir), 0o755); err != nil {
		return "", fmt.Errorf("cupti library: %w", err)
	}
	if err := rundir.WriteFileAtomic(filepath.Join(tmp, ShimDir, "string"), nil); err != nil {
		return "", fmt.Errorf("cupti library: %w", err)
	}
	argv := Argv(cc, tk, src, filepath.Join(tmp, LibName))
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = tmp
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", &CompileError{Argv: argv, Output: string(out), Err: err}
	}
	if st, err := os.Stat(filepath.Join(tmp, LibName)); err != nil || !st.Mode().IsRegular() {
		return "", &CompileError{Argv: argv, Output: string(out), Err: errors.New("the compiler exited 0 but wrote no " + LibName)}
	}
	info, _ := json.MarshalIndent(BuildInfo{Format: Format, Argv: argv, CUDAHome: tk.Home, CUDAVersion: tk.CUDAVersion, CUPTIAPI: tk.CUPTIAPI, Output: string(out)}, "", "  ")
	if err := rundir.WriteFileAtomic(filepath.Join(tmp, "build.json"), append(info, '\n')); err != nil {
		return "", fmt.Errorf("cupti library: %w", err)
	}
	if err := os.Rename(tmp, final); err != nil {
		// Another build of the same key may have won the race: use it.
		if st, serr := os.Stat(lib); serr == nil && st.Mode().IsRegular() {
			return lib, nil
		}
		if errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("cupti library: %s exists without %s; remove it and build again", final, LibName)
		}
		return "", fmt.Errorf("cupti library: %w", err)
	}
	return lib, nil
}
