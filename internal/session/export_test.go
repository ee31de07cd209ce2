package session

import (
	"github.com/llm-perf-opt/deepprof/internal/config"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
)

// testRebuild is the rebuild the tests' sessions run: Rebuild, which
// package harness registers (rebuild_test.go imports it: harness imports
// this package, so only an external test file may).
func testRebuild(run *rundir.Run, cfg *config.Config) error { return Rebuild(run, cfg) }
