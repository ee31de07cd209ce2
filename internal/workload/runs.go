package workload

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/llm-perf-opt/deepprof/internal/input"
)

// Runs is stage1/runs.json: each plain run of a program that the session
// ran as a whole process several times (workload.repeat_by=process, the
// form deepprof profile -- CMD), timed from start to exit. It is what a
// program that writes no report says of its repeats: the whole program's
// wall time.
type Runs struct {
	Runs []Run `json:"runs"`
}

// Run is one run of the program that exited with status 0 (the first
// that did not ends stage 1).
type Run struct {
	WallMS float64 `json:"wall_ms"`
}

// WholeProgram is the stage the runs' wall times make.
const WholeProgram = "(whole program)"

// JSON is the file's bytes.
func (r Runs) JSON() ([]byte, error) {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// ReadRuns reads stage1/runs.json; name positions its errors.
func ReadRuns(r io.Reader, name string) (*Runs, error) {
	data, err := input.ReadAll(r, name)
	if err != nil {
		return nil, err
	}
	var runs Runs
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&runs); err != nil {
		return nil, positioned(name, data, err)
	}
	var errs []error
	if len(runs.Runs) == 0 {
		errs = append(errs, fmt.Errorf("%s: runs is empty", name))
	}
	for i, r := range runs.Runs {
		if !(r.WallMS >= 0) || math.IsInf(r.WallMS, 0) {
			errs = append(errs, fmt.Errorf("%s: runs[%d].wall_ms = %v: want a finite duration of at least 0", name, i, r.WallMS))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &runs, nil
}
