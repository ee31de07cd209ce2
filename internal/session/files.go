package session

import "github.com/llm-perf-opt/deepprof/internal/rundir"

// exists reports whether the file p is there, plain or gzipped.
func exists(p string) bool { return rundir.Exists(p) }
