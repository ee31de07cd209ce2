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
	f, err := run.Open(rundir.EnvJSON)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return workload.ReadEnv(f, rundir.EnvJSON)
}

// readRunFile reads a file of MAIN whole, up to input.MaxBytes, never
// through a link out of the run (rundir.OpenIn).
func readRunFile(run *rundir.Run, rel string) ([]byte, error) {
	f, err := run.Open(rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return input.ReadAll(f, rel)
}
