// Package profiles holds deepprof's default profiles, embedded in the
// binary so that deepprof works from any directory: the YAML files beside
// this one (stage2.yaml, and the ncu, nsys and workloads groups). A
// profiles folder in the current directory, or one given with --profiles,
// adds to them and overrides them file by file (harness/config).
package profiles

import "embed"

// FS holds the default profiles, at their paths in this folder.
//
//go:embed *.yaml ncu/*.yaml nsys/*.yaml workloads/*.yaml
var FS embed.FS
