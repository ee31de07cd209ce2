package session

import (
	"github.com/llm-perf-opt/deepprof/internal/config"
	"github.com/llm-perf-opt/deepprof/internal/rebuild"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
)

// testRebuild is the rebuild of a run directory as a session's last step
// makes it, reading the records itself (rebuild.Run). The tests' sessions
// leave Report nil, and so rebuild with the timeline they read, as
// deepprof's do.
func testRebuild(run *rundir.Run, cfg *config.Config) error { return rebuild.Run(run, cfg, nil, nil) }
