package rundir

import (
	"github.com/llm-perf-opt/deepprof/harness/advice"
	"github.com/llm-perf-opt/deepprof/harness/artifacts"
	"github.com/llm-perf-opt/deepprof/harness/ncu"
)

// readRules reads ncu's rules per kernel from the deep pass's details page;
// an error says why there are none (no page, or the line that is wrong).
func readRules(run *artifacts.Run) (map[string][]advice.Rule, error) {
	if !hasExport(run, artifacts.NcuDetails) {
		return nil, errNoDetails
	}
	a := advice.NewAccumulator()
	errs, err := scanFiles(run, exportFiles(run, artifacts.NcuDetails), ncu.Options{}, a)
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
	return "no deep-pass details page (" + artifacts.NcuDetails + ")"
}

var errNoDetails error = noDetails{}
