package harness

import (
	"github.com/llm-perf-opt/deepprof/internal/input"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
	"github.com/llm-perf-opt/deepprof/internal/workload"
)

// readEnv reads the run's env.json, its errors naming it as the run
// does (env.json, not its absolute path: summary.json is the same on
// every machine).
func readEnv(run *rundir.Run) (*workload.EnvInfo, error) {
	return workload.ReadEnvAt(run.Path(rundir.EnvJSON), rundir.EnvJSON)
}

// readRunFile reads a file of MAIN whole, up to input.MaxBytes.
func readRunFile(run *rundir.Run, rel string) ([]byte, error) {
	return input.ReadFile(run.Path(rel))
}
