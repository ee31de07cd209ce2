package session

import "github.com/llm-perf-opt/deepprof/harness/artifacts"

// exists reports whether the file p is there, plain or gzipped.
func exists(p string) bool { return artifacts.Exists(p) }
