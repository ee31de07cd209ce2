// A machine for tests of a command: what the preflight's probes find,
// whatever machine the test runs on.

package harness

import (
	"context"
	"errors"
	"fmt"

	"github.com/llm-perf-opt/deepprof/internal/machine"
	"github.com/llm-perf-opt/deepprof/internal/session"
)

// TestMachine is what the preflight finds on a machine made up for a test.
type TestMachine struct {
	// GPUErr is NVML's error (nil: one GPU, index 0).
	GPUErr error
	// NcuVersion is what ncu --version prints.
	NcuVersion string
	// PythonOutput and PythonFails are what the workload's interpreter
	// prints for the import check, and whether it exits 1.
	PythonOutput []byte
	PythonFails  bool
}

// UseTestMachine makes the preflight of every session made after it find
// m, with every file present and every program at /usr/bin, until restore
// runs. Not for tests run in parallel.
func UseTestMachine(m TestMachine) (restore func()) {
	old := preflightProbes
	preflightProbes = func(machine.Selection) session.Probes {
		return session.Probes{
			GPU: func() (machine.Provenance, error) { return machine.Provenance{DeviceCount: 1}, m.GPUErr },
			Tool: func(_ context.Context, path string) (machine.Tool, error) {
				v, err := machine.ParseNcuVersion(m.NcuVersion)
				if err != nil {
					return machine.Tool{}, fmt.Errorf("tools: %s --version: %w", path, err)
				}
				return machine.Tool{Name: "ncu", Path: path, Version: v}, nil
			},
			LookPath: func(file string) (string, error) { return "/usr/bin/" + file, nil },
			IsFile:   func(string) error { return nil },
			Run: func(context.Context, []string, []string) ([]byte, error) {
				if m.PythonFails {
					return m.PythonOutput, errExit1
				}
				return m.PythonOutput, nil
			},
		}
	}
	return func() { preflightProbes = old }
}

// errExit1 is how a program that exited 1 reads (exec.ExitError's text).
var errExit1 = errors.New("exit status 1")
