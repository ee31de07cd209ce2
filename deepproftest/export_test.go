package deepproftest

import (
	"context"

	"github.com/llm-perf-opt/deepprof/harness"
)

// FakeMachine is what Preflight's probes find in a test: the errors of
// NVML, of looking for ncu and of running it, and the Python check's exit
// status and output.
type FakeMachine struct {
	GPUErr, FindErr, RunErr error
	PythonExit              int
	PythonOut               string
}

// UseFakeMachine makes Preflight look at m until the returned func runs.
func UseFakeMachine(m FakeMachine) (restore func()) {
	old := probe
	probe = probes{
		gpu: func() (harness.GPU, error) { return harness.GPU{DeviceCount: 1}, m.GPUErr },
		ncu: func() (harness.Tool, error) { return harness.Tool{Path: "/fake/ncu"}, m.FindErr },
		runNcu: func(path string) (harness.Tool, error) {
			return harness.Tool{Path: path}, m.RunErr
		},
		python: func(string) (int, []byte) { return m.PythonExit, []byte(m.PythonOut) },
	}
	return func() { probe = old }
}

// UseSessionResult makes Profile's session end with run (opened from dir)
// and err, with no GPU, until the returned func runs.
func UseSessionResult(dir string, err error) (restore func()) {
	old := runSession
	runSession = func(context.Context, *harness.Session) (*harness.Run, error) {
		if err != nil {
			return nil, err
		}
		return harness.OpenRun(dir)
	}
	return func() { runSession = old }
}
