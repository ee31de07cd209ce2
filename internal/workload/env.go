package workload

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"

	"github.com/llm-perf-opt/deepprof/internal/input"
	"github.com/llm-perf-opt/deepprof/internal/machine"
)

// EnvInfo is env.json: the GPU as NVML reports it, the profilers found and
// their versions, and the host.
type EnvInfo struct {
	GPU       *machine.Provenance `json:"gpu,omitempty"`
	GPUError  string              `json:"gpu_error,omitempty"`
	Tools     map[string]Probe    `json:"tools"`
	Host      string              `json:"host"`
	OS        string              `json:"os"`
	Arch      string              `json:"arch"`
	GoVersion string              `json:"go_version"`
	// Workload is what the workload reported of itself in stage 1: the
	// model's identity and its framework versions (added once stage 1 ran).
	Workload *WorkloadInfo `json:"workload,omitempty"`
}

// WorkloadInfo is the workload's own provenance, from its stage-1 report.
type WorkloadInfo struct {
	Model    Model             `json:"model"`
	Versions map[string]string `json:"versions,omitempty"`
}

// Probe is one profiler as found.
type Probe struct {
	Path    string `json:"path,omitempty"`
	Version string `json:"version,omitempty"`
	Error   string `json:"error,omitempty"`
}

// NewEnvInfo gathers env.json. A GPU or tool that cannot be read is written
// as an error beside the rest, never as invented values.
func NewEnvInfo(prov func() (machine.Provenance, error), found map[string]machine.Tool, errs map[string]error) EnvInfo {
	host, _ := os.Hostname()
	e := EnvInfo{Tools: map[string]Probe{}, Host: host, OS: runtime.GOOS, Arch: runtime.GOARCH, GoVersion: runtime.Version()}
	if p, err := prov(); err != nil {
		e.GPUError = err.Error()
	} else {
		e.GPU = &p
	}
	for name, t := range found {
		e.Tools[name] = Probe{Path: t.Path, Version: t.Version.String()}
	}
	for name, err := range errs {
		e.Tools[name] = Probe{Error: err.Error()}
	}
	return e
}

// JSON is env.json's bytes.
func (e EnvInfo) JSON() ([]byte, error) {
	b, err := json.MarshalIndent(e, "", "  ")
	return append(b, '\n'), err
}

// ReadEnv reads env.json from r, up to input.MaxBytes; errors name name
// and, for JSON that does not parse or has a wrong type, the line. It is
// the one reader of env.json (the summary's, the session's).
func ReadEnv(r io.Reader, name string) (*EnvInfo, error) {
	data, err := input.ReadAll(r, name)
	if err != nil {
		return nil, err
	}
	var env EnvInfo
	if err := json.Unmarshal(data, &env); err != nil {
		if off, ok := input.Offset(err); ok {
			return nil, fmt.Errorf("%s:%d: %w", name, input.Line(data, off), err)
		}
		if errors.Is(err, io.ErrUnexpectedEOF) || len(bytes.TrimSpace(data)) == 0 {
			return nil, fmt.Errorf("%s:%d: the file ends before its JSON does (cut short?)", name, input.Line(data, int64(len(data))))
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &env, nil
}

// ReadEnvFile is ReadEnv of the file path, its errors naming path.
func ReadEnvFile(path string) (*EnvInfo, error) { return ReadEnvAt(path, path) }

// ReadEnvAt is ReadEnv of the file path, its errors naming name.
func ReadEnvAt(path, name string) (*EnvInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadEnv(f, name)
}
