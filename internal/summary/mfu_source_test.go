package summary

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/workload"
)

// TestMFUSaysWhoseTimes (issue 53): where stage 1's report could not be
// read and the stages are the CUPTI run's report's, MFU's assumptions say
// so, with why; before, they said the times were stage 1's. SYNTHETIC
// inputs.
func TestMFUSaysWhoseTimes(t *testing.T) {
	in := Inputs{Workload: &workload.Report{}, WorkloadSource: "timeline/report.json (the CUPTI run's workload report)"}
	m := mfu(in, nil, "", facts.Stages{AloneMissing: "stage1/report.json:3: invalid character ','"})
	last := m.Assumptions[len(m.Assumptions)-1]
	assert.False(t, strings.Contains(last, "stage 1's (the program alone)"), last)
	assert.Equal(t, "time is the mean wall time per stage of timeline/report.json (the CUPTI run's workload report) (the profiler running; stage 1's could not be read: stage1/report.json:3: invalid character ','), host overhead included; the peak is the GPU's dense peak for the model's dtype", last)

	in.WorkloadSource = "" // stage 1's own report
	m = mfu(in, nil, "", facts.Stages{})
	assert.Contains(t, m.Assumptions[len(m.Assumptions)-1], "stage 1's (the program alone)")
}
