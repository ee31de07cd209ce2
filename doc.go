// Package deepprof is the root of deepprof: what the binary embeds.
//
// deepprof is a Go test-harness framework for NVIDIA-backed deep profiling of
// LLM inference. The library's public face is package harness, the test API
// is package deepproftest, the command is cmd/deepprof; everything else is
// under internal/. This package holds what the binary embeds so that it
// works from any directory: the default profiles (the YAML files under
// profiles/) and the default workload script
// (scripts/workloads/hf_causal_lm.py, written to the user's cache when a
// session starts in a directory that has no copy; its contract with
// deepprof is package workload's). It also holds the top-level tests: the recorded exports and
// runs through the readers and the rebuild (export_test.go,
// regions_test.go, runs_test.go, summary_test.go, report_html_test.go), the
// docs' commands (docs_test.go), and real sessions behind the gpu build tag
// (gpu_test.go, gpu_*_test.go). docs/layout.md says where each part of the
// library is.
package deepprof

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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

// WorkloadScript is the default workload's path as the profiles name it.
const WorkloadScript = "scripts/workloads/hf_causal_lm.py"

//go:embed scripts/workloads/hf_causal_lm.py
var workloadScript []byte

// WorkloadSource is the embedded default workload workloadScript.
func WorkloadSource() []byte { return workloadScript }

// ResolveWorkload returns the file to run for a workload path, as
// WorkloadPath does, with the embedded copy written there when it is the
// one to run (WriteWorkload).
func ResolveWorkload(path, cacheDir string) (string, bool, error) {
	p, embedded, err := WorkloadPath(path, cacheDir)
	if err != nil || !embedded {
		return p, embedded, err
	}
	if err := WriteWorkload(p); err != nil {
		return "", false, err
	}
	return p, true, nil
}

// WorkloadPath returns the file to run for a workload path, and writes
// nothing: the path itself when it names something other than the default
// workloadScript or when that file exists (a checkout of this repository,
// or the user's own copy), else where the embedded workloadScript is kept,
// cacheDir/deepprof/workloads/<hash>/, with embedded true (WriteWorkload
// puts it there). cacheDir "" is os.UserCacheDir.
func WorkloadPath(path, cacheDir string) (string, bool, error) {
	if filepath.ToSlash(filepath.Clean(path)) != WorkloadScript {
		return path, false, nil
	}
	if _, err := os.Stat(path); err == nil {
		return path, false, nil
	}
	if cacheDir == "" {
		d, err := os.UserCacheDir()
		if err != nil {
			return "", false, fmt.Errorf("the default workload script: %s is not here and there is no cache folder to write the embedded copy to: %w", WorkloadScript, err)
		}
		cacheDir = d
	}
	sum := sha256.Sum256(workloadScript)
	return filepath.Join(cacheDir, "deepprof", "workloads", hex.EncodeToString(sum[:8]), filepath.Base(WorkloadScript)), true, nil
}

// WriteWorkload writes the embedded workloadScript to out (WorkloadPath's),
// atomically, unless out already holds it.
func WriteWorkload(out string) error {
	if b, err := os.ReadFile(out); err == nil && string(b) == string(workloadScript) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(out), ".hf_causal_lm.py.tmp-*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(workloadScript)
	cerr := tmp.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), out)
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return werr
	}
	return nil
}
