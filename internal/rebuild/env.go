package rebuild

import (
	"github.com/llm-perf-opt/deepprof/internal/rundir"
	"github.com/llm-perf-opt/deepprof/internal/workload"
)

// readEnv reads the run's env.json, its errors naming it as the run
// does (env.json, not its absolute path: summary.json is the same on
// every machine).
func readEnv(run *rundir.Run) (*workload.EnvInfo, error) {
	return rundir.ParsePlain(run, rundir.EnvJSON, workload.ReadEnv)
}
