package session_test

import (
	"github.com/llm-perf-opt/deepprof/harness"
	"github.com/llm-perf-opt/deepprof/internal/session"
)

// The tests' sessions rebuild their runs as deepprof does.
func init() { session.SetTestRebuild(harness.RebuildRun) }
