package rebuild

import (
	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/kernels"
	"github.com/llm-perf-opt/deepprof/internal/ncu"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
)

// readRules reads ncu's rules per kernel from the deep pass's details page
// (its files as rec lists them);
// an error says why there are none (no page, or the line that is wrong).
func readRules(run *rundir.Run, rec rundir.Recorded) (map[string][]facts.Rule, error) {
	files := rec.Exports[rundir.NcuDetails]
	if len(files) == 0 {
		return nil, errNoDetails
	}
	a := kernels.NewRuleAccumulator()
	errs, err := scanFiles(run, files, ncu.Options{}, a)
	if err == nil {
		err = errs[0]
	}
	if err != nil {
		return nil, err
	}
	return a.Rules(), nil
}

type noDetails struct{}

func (noDetails) Error() string {
	return "no deep-pass details page (" + rundir.NcuDetails + ")"
}

var errNoDetails error = noDetails{}
