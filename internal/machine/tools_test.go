package machine_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/machine"
)

// ncu2025 is what ncu 2025.3.1 printed on the H200 (fixtures/logs/cuda-nvtx-record.txt).
const ncu2025 = "NVIDIA (R) Nsight Compute Command Line Profiler\n" +
	"Copyright (c) 2018-2025 NVIDIA Corporation\n" +
	"Version 2025.3.1.0 (build 36398880) (public-release)\n"

func TestParseNcuVersion(t *testing.T) {
	tests := []struct {
		name string
		out  string
		want machine.Version
		err  string
	}{
		{"2025.3.1 on the H200", ncu2025,
			machine.Version{2025, 3, 1, 0, "2025.3.1.0 (build 36398880) (public-release)"}, ""},
		{"2023.1.1", "NVIDIA (R) Nsight Compute Command Line Profiler\nCopyright (c) 2018-2023 NVIDIA Corporation\nVersion 2023.1.1.0 (build 32678585) (public-release)\n",
			machine.Version{2023, 1, 1, 0, "2023.1.1.0 (build 32678585) (public-release)"}, ""},
		{"CRLF", strings.ReplaceAll(ncu2025, "\n", "\r\n"),
			machine.Version{2025, 3, 1, 0, "2025.3.1.0 (build 36398880) (public-release)"}, ""},
		{"three numbers", "Version 2019.5.0 (build 27346997)\n",
			machine.Version{2019, 5, 0, 0, "2019.5.0 (build 27346997)"}, ""},
		{"empty", "", machine.Version{}, `ncu --version: no line "Version YYYY.N.N.N" in ""`},
		{"shell error", "sh: 1: ncu: not found\n", machine.Version{}, `in "sh: 1: ncu: not found\n"`},
		{"nsys output", "NVIDIA Nsight Systems version 2024.5.1.113-245134619542v0\n", machine.Version{}, "no line"},
		{"no number", "Version unknown\n", machine.Version{}, `"Version unknown\n"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := machine.ParseNcuVersion(tt.out)
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestParseNsysVersion(t *testing.T) {
	bundled, err := os.ReadFile("../../fixtures/logs/nsys-bundled-no-report.txt")
	require.NoError(t, err)
	tests := []struct {
		name string
		out  string
		want machine.Version
		err  string
	}{
		{"2024.5.1", "NVIDIA Nsight Systems version 2024.5.1.113-245134619542v0\n",
			machine.Version{2024, 5, 1, 113, "2024.5.1.113-245134619542v0"}, ""},
		{"2025.3.2", "NVIDIA Nsight Systems version 2025.3.2.474-253236389321v0\n",
			machine.Version{2025, 3, 2, 474, "2025.3.2.474-253236389321v0"}, ""},
		// the nsys inside Nsight Compute 2025.3.1, on the H200 (in a set -x log)
		{"bundled with ncu", string(bundled), machine.Version{2025, 3, 1, 0, "2025.3.1.0"}, ""},
		{"empty", "", machine.Version{}, `nsys --version: no "NVIDIA Nsight Systems version YYYY.N.N" in ""`},
		{"ncu output", ncu2025, machine.Version{}, "Nsight Compute Command Line Profiler"},
		{"garbage", "nsys: error while loading shared libraries: libQt6Core.so.6\n", machine.Version{}, "libQt6Core"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := machine.ParseNsysVersion(tt.out)
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestVersionOrder(t *testing.T) {
	v := func(a, b, c, d int) machine.Version { return machine.Version{Major: a, Minor: b, Patch: c, Build: d} }
	ordered := []machine.Version{v(2023, 1, 1, 0), v(2024, 5, 1, 113), v(2025, 3, 1, 0), v(2025, 3, 2, 0), v(2025, 3, 2, 474), v(2025, 10, 0, 0)}
	for i := range ordered {
		for j := range ordered {
			assert.Equal(t, i < j, ordered[i].Less(ordered[j]), "%v < %v", ordered[i], ordered[j])
		}
	}
	assert.Equal(t, "2025.3.2.474", v(2025, 3, 2, 474).String())
	assert.True(t, machine.Version{}.IsZero())
	assert.False(t, v(2025, 0, 0, 0).IsZero())
}

// fake writes an executable shell script name into dir and returns its path.
func fake(t *testing.T, dir, name, script string) string {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\n"+script), 0o755))
	return p
}

func TestFind(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("fake tools are shell scripts")
	}
	root := t.TempDir()
	d := func(parts ...string) string { return filepath.Join(append([]string{root}, parts...)...) }
	// PATH: a/ holds a non-executable ncu, b/ the real one.
	require.NoError(t, os.MkdirAll(d("a"), 0o755))
	require.NoError(t, os.WriteFile(d("a", "ncu"), []byte("not executable"), 0o644))
	require.NoError(t, os.MkdirAll(d("a", "nsys"), 0o755)) // a folder, not a tool
	pathNcu := fake(t, d("b"), "ncu", "")
	cudaNcu := fake(t, d("cuda", "bin"), "ncu", "")
	fake(t, d("cuda", "bin"), "nsys", "")
	// Nsight Compute installs, the newest by number (not by text) must win.
	for _, v := range []string{"2024.1.0", "2025.10.0", "2025.9.1"} {
		fake(t, d("opt", "nsight-compute", v), "ncu", "")
	}
	fake(t, d("opt", "nsight-systems", "2024.5.1", "bin"), "nsys", "")
	fake(t, d("opt", "nsight-systems", "2025.3.2", "bin"), "nsys", "")
	fallbacks := []string{d("none", "bin"), d("opt", "nsight-compute", "*"), d("opt", "nsight-systems", "*", "bin")}
	pathList := strings.Join([]string{"", "relative", d("a"), d("b")}, string(filepath.ListSeparator))

	tests := []struct {
		name string
		tool string
		env  machine.Env
		want string
	}{
		{"PATH first, non-executable skipped", "ncu", machine.Env{Path: pathList, CUDAHome: d("cuda"), Fallbacks: fallbacks}, pathNcu},
		{"CUDA_HOME before fallbacks", "ncu", machine.Env{Path: d("a"), CUDAHome: d("cuda"), Fallbacks: fallbacks}, cudaNcu},
		{"newest Nsight Compute", "ncu", machine.Env{Path: d("a"), Fallbacks: fallbacks}, d("opt", "nsight-compute", "2025.10.0", "ncu")},
		{"folder named nsys skipped; newest Nsight Systems", "nsys", machine.Env{Path: d("a"), Fallbacks: fallbacks}, d("opt", "nsight-systems", "2025.3.2", "bin", "nsys")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := machine.Find(tt.tool, tt.env)
			require.NoError(t, err)
			assert.Equal(t, machine.Tool{Name: tt.tool, Path: tt.want}, got)
		})
	}
}

func TestFindMissing(t *testing.T) {
	root := t.TempDir()
	env := machine.Env{Path: root, Fallbacks: []string{filepath.Join(root, "cuda", "bin"), filepath.Join(root, "nsight-compute", "*")}}
	_, err := machine.Find("ncu", env)
	require.Error(t, err)
	var nf *machine.NotFoundError
	require.True(t, errors.As(err, &nf))
	assert.Equal(t, "ncu not found; looked in PATH ("+root+"), $CUDA_HOME/bin (CUDA_HOME unset), "+
		filepath.Join(root, "cuda", "bin")+", "+filepath.Join(root, "nsight-compute", "*")+" (no match). "+
		"Install Nsight Compute (it ships with the CUDA toolkit, or from developer.nvidia.com/nsight-compute), "+
		"set CUDA_HOME to the CUDA toolkit folder, or set ncu.path in the profile", err.Error())

	env = machine.Env{CUDAHome: filepath.Join(root, "cuda"), Fallbacks: []string{}}
	_, err = machine.Find("nsys", env)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "nsys not found; looked in PATH (empty), "+filepath.Join(root, "cuda", "bin")+". Install Nsight Systems")
	assert.Contains(t, err.Error(), "set nsys.path in the profile")

	_, err = machine.Find("bin/ncu", env)
	assert.ErrorContains(t, err, `bad tool name "bin/ncu"`)
}

func TestDefaultFallbacks(t *testing.T) {
	assert.Equal(t, []string{
		"/usr/local/cuda/bin",
		"/opt/nvidia/nsight-compute/*",
		"/opt/nvidia/nsight-systems/*/bin",
		"/usr/local/cuda/nsight-compute-*",
	}, machine.DefaultFallbacks())
	t.Setenv("PATH", "/x/bin")
	t.Setenv("CUDA_HOME", "/opt/cuda")
	assert.Equal(t, machine.Env{Path: "/x/bin", CUDAHome: "/opt/cuda"}, machine.EnvFromOS())
}

func TestProbe(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("fake tools are shell scripts")
	}
	dir := t.TempDir()
	// The fake ncu prints its argv on stderr when it is not --version, so a
	// wrong argv shows in the error.
	ncu := fake(t, dir, "ncu", `if [ "$1" = --version ] && [ $# -eq 1 ]; then
printf 'NVIDIA (R) Nsight Compute Command Line Profiler\nCopyright (c) 2018-2025 NVIDIA Corporation\nVersion 2025.3.1.0 (build 36398880) (public-release)\n'
else echo "unexpected args: $*" >&2; exit 2; fi
`)
	nsys := fake(t, filepath.Join(dir, "sys"), "nsys", `echo "NVIDIA Nsight Systems version 2025.3.2.474-253236389321v0"`)
	other := fake(t, filepath.Join(dir, "other"), "ncu-wrapper", `echo "NVIDIA Nsight Systems version 2024.5.1.113-245134619542v0"`)
	garbage := fake(t, filepath.Join(dir, "g"), "ncu", `echo "Segmentation fault"`)
	ctx := context.Background()

	got, err := machine.Probe(ctx, ncu)
	require.NoError(t, err)
	assert.Equal(t, machine.Tool{Name: "ncu", Path: ncu, Version: machine.Version{2025, 3, 1, 0, "2025.3.1.0 (build 36398880) (public-release)"}}, got)

	got, err = machine.Probe(ctx, nsys, "--version")
	require.NoError(t, err)
	assert.Equal(t, "2025.3.2.474", got.Version.String())

	got, err = machine.Probe(ctx, other)
	require.NoError(t, err)
	assert.Equal(t, "ncu-wrapper", got.Name)
	assert.Equal(t, 113, got.Version.Build)

	// An argument with a space stays one argument (no shell).
	_, err = machine.Probe(ctx, ncu, "--version extra")
	assert.ErrorContains(t, err, `exit status 2; it printed "unexpected args: --version extra\n"`)

	_, err = machine.Probe(ctx, garbage)
	assert.ErrorContains(t, err, `no line "Version YYYY.N.N.N" in "Segmentation fault\n"`)

	_, err = machine.Probe(ctx, filepath.Join(dir, "missing", "ncu"))
	assert.ErrorContains(t, err, "cannot run")

	canceled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = machine.Probe(canceled, ncu)
	assert.Error(t, err)
}
