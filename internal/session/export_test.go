package session

import (
	"github.com/llm-perf-opt/deepprof/internal/config"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
)

// testRebuild is the rebuild the tests' sessions run (harness.RebuildRun,
// set by rebuild_test.go: harness imports this package, so only an
// external test file may import harness).
var testRebuild func(*rundir.Run, *config.Config) error

// SetTestRebuild sets testRebuild.
func SetTestRebuild(f func(*rundir.Run, *config.Config) error) { testRebuild = f }
