// Package deepprof is the root of deepprof: the default profiles, embedded.
//
// deepprof is a Go test-harness framework for NVIDIA-backed deep profiling of
// LLM inference. The library's public face is package harness, the test API
// package deepproftest, the command cmd/deepprof; everything else is under
// internal/. This package holds the default profiles (the YAML files under
// profiles/, embedded so that the binary works from any directory) and the
// top-level tests: the recorded exports and runs through the readers and
// the rebuild (export_test.go, regions_test.go, runs_test.go,
// summary_test.go, report_html_test.go), the docs' commands
// (docs_test.go), and real sessions behind the gpu build tag (gpu_test.go,
// gpu_*_test.go). It holds no library code: docs/layout.md says where each
// part is.
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
