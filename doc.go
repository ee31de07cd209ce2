// Package deepprof is the root of deepprof: the default profiles, embedded.
//
// deepprof is a Go test-harness framework for NVIDIA-backed deep profiling of
// LLM inference. The library's public face is package harness, the test API
// package deepproftest, the command cmd/deepprof; everything else is under
// internal/. This package holds the default profiles (the YAML files under
// profiles/, embedded so that the binary works from any directory) and the
// top-level tests: export_test.go, regions_test.go, runs_test.go and
// gpu_test.go (real sessions, behind the gpu build tag).
package deepprof

import (
	"embed"
	"io/fs"
)

//go:embed profiles/*.yaml profiles/ncu/*.yaml profiles/nsys/*.yaml profiles/workloads/*.yaml
var profileFiles embed.FS

// Profiles holds the default profiles at their paths under profiles/
// (stage2.yaml, and the ncu, nsys and workloads groups). A profiles folder
// in the current directory, or one given with --profiles, adds to them and
// overrides them file by file.
var Profiles fs.FS = mustSub(profileFiles, "profiles")

func mustSub(f fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(f, dir)
	if err != nil { // dir is a constant valid path: fs.Sub cannot refuse it
		panic(err)
	}
	return sub
}
