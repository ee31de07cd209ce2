// Finding the profilers (ncu, nsys) and reading their versions.

package machine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// Tool is one profiler executable.
type Tool struct {
	Name    string  // "ncu", "nsys"
	Path    string  // absolute path of the executable
	Version Version // zero until probed
}

// Env is what Find searches: the PATH list, CUDA_HOME, and the folders looked
// in after them.
type Env struct {
	Path     string // a PATH list, as in $PATH
	CUDAHome string // as in $CUDA_HOME; "" when unset
	// Fallbacks are the folders searched after PATH and $CUDA_HOME/bin, in
	// order. A folder may be a filepath.Glob pattern; its matches are tried
	// newest version first. nil means DefaultFallbacks().
	Fallbacks []string
}

// EnvFromOS reads PATH and CUDA_HOME from the process environment.
func EnvFromOS() Env {
	return Env{Path: os.Getenv("PATH"), CUDAHome: os.Getenv("CUDA_HOME")}
}

// DefaultFallbacks are the usual CUDA toolkit and Nsight install folders:
// /usr/local/cuda/bin, then the standalone Nsight Compute and Nsight Systems
// installers' folders, then the Nsight Compute copy inside a CUDA toolkit.
func DefaultFallbacks() []string {
	return []string{
		"/usr/local/cuda/bin",
		"/opt/nvidia/nsight-compute/*",
		"/opt/nvidia/nsight-systems/*/bin",
		"/usr/local/cuda/nsight-compute-*",
	}
}

// NotFoundError is Find's error: the tool is in none of the folders searched.
type NotFoundError struct {
	Name   string
	Looked []string // each place searched, as the message prints it
}

func (e *NotFoundError) Error() string {
	product := "Nsight Compute (it ships with the CUDA toolkit, or from developer.nvidia.com/nsight-compute)"
	if e.Name == "nsys" {
		product = "Nsight Systems (from developer.nvidia.com/nsight-systems)"
	}
	return fmt.Sprintf("%s not found; looked in %s. Install %s, set CUDA_HOME to the CUDA toolkit folder, or set %s.path in the profile",
		e.Name, strings.Join(e.Looked, ", "), product, e.Name)
}

// Find returns the first executable file named name in: each PATH entry, then
// $CUDA_HOME/bin, then env.Fallbacks (glob matches newest version first).
// Empty and relative PATH entries are skipped, as exec.LookPath refuses
// them. The Tool it returns has no Version: Probe reads it.
func Find(name string, env Env) (Tool, error) {
	if name == "" || strings.ContainsRune(name, filepath.Separator) {
		return Tool{}, fmt.Errorf("tools: bad tool name %q", name)
	}
	var looked []string
	try := func(dir string) (string, bool) {
		p := filepath.Join(dir, name)
		return p, isExecutable(p)
	}

	var pathDirs []string
	for _, dir := range filepath.SplitList(env.Path) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		pathDirs = append(pathDirs, dir)
		if p, ok := try(dir); ok {
			return Tool{Name: name, Path: p}, nil
		}
	}
	if len(pathDirs) == 0 {
		looked = append(looked, "PATH (empty)")
	} else {
		looked = append(looked, "PATH ("+strings.Join(pathDirs, string(filepath.ListSeparator))+")")
	}

	if env.CUDAHome == "" {
		looked = append(looked, "$CUDA_HOME/bin (CUDA_HOME unset)")
	} else {
		dir := filepath.Join(env.CUDAHome, "bin")
		if p, ok := try(dir); ok {
			return Tool{Name: name, Path: p}, nil
		}
		looked = append(looked, dir)
	}

	fallbacks := env.Fallbacks
	if fallbacks == nil {
		fallbacks = DefaultFallbacks()
	}
	for _, pattern := range fallbacks {
		dirs := []string{pattern}
		if hasMeta(pattern) {
			dirs = globNewestFirst(pattern)
			if len(dirs) == 0 {
				looked = append(looked, pattern+" (no match)")
				continue
			}
		}
		for _, dir := range dirs {
			if p, ok := try(dir); ok {
				return Tool{Name: name, Path: p}, nil
			}
			looked = append(looked, dir)
		}
	}
	return Tool{}, &NotFoundError{Name: name, Looked: looked}
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

func hasMeta(p string) bool { return strings.ContainsAny(p, `*?[\`) }

// globNewestFirst returns the folders matching pattern, the highest version
// first ("2025.3.1" before "2025.1.0" before "2024.5.1").
func globNewestFirst(pattern string) []string {
	matches, _ := filepath.Glob(pattern) // the only error is a bad pattern
	var dirs []string
	for _, m := range matches {
		if fi, err := os.Stat(m); err == nil && fi.IsDir() {
			dirs = append(dirs, m)
		}
	}
	sort.SliceStable(dirs, func(i, j int) bool { return compareVersionish(dirs[i], dirs[j]) > 0 })
	return dirs
}

// compareVersionish compares two strings with runs of digits compared as
// numbers, so that "2025.10" > "2025.9".
func compareVersionish(a, b string) int {
	for a != "" && b != "" {
		if isDigit(a[0]) && isDigit(b[0]) {
			na, ra := digitRun(a)
			nb, rb := digitRun(b)
			na, nb = strings.TrimLeft(na, "0"), strings.TrimLeft(nb, "0")
			if len(na) != len(nb) {
				return cmpInt(len(na), len(nb))
			}
			if c := strings.Compare(na, nb); c != 0 {
				return c
			}
			a, b = ra, rb
			continue
		}
		if a[0] != b[0] {
			return cmpInt(int(a[0]), int(b[0]))
		}
		a, b = a[1:], b[1:]
	}
	return cmpInt(len(a), len(b))
}

func cmpInt(x, y int) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func digitRun(s string) (run, rest string) {
	i := 0
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return s[:i], s[i:]
}

// Probe runs path with args (["--version"] when none) under ctx, with no
// shell, and parses what it prints (stdout and stderr together) as ncu's or
// nsys's version, chosen by the executable's name; a name that is neither
// is tried as both.
func Probe(ctx context.Context, path string, args ...string) (Tool, error) {
	if len(args) == 0 {
		args = []string{"--version"}
	}
	name := strings.TrimSuffix(filepath.Base(path), ".exe")
	cmd := exec.CommandContext(ctx, path, args...)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
			return Tool{}, fmt.Errorf("tools: cannot run %s: %w", path, err)
		}
		return Tool{}, fmt.Errorf("tools: %s %s: %w; it printed %q", path, strings.Join(args, " "), err, clip(out.String()))
	}
	var v Version
	switch name {
	case "ncu":
		v, err = ParseNcuVersion(out.String())
	case "nsys":
		v, err = ParseNsysVersion(out.String())
	default:
		if v, err = ParseNcuVersion(out.String()); err != nil {
			var err2 error
			if v, err2 = ParseNsysVersion(out.String()); err2 == nil {
				err = nil
			}
		}
	}
	if err != nil {
		return Tool{}, fmt.Errorf("tools: %s %s: %w", path, strings.Join(args, " "), err)
	}
	return Tool{Name: name, Path: path, Version: v}, nil
}
