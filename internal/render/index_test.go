package render

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/llm-perf-opt/deepprof/internal/rundir"
)

func TestTimeSection(t *testing.T) {
	// SYNTHETIC step times: the shape of a real tiny-llama session.
	got := timeSection([]rundir.StepTime{
		{Name: "ncu-sections", Seconds: 1.2}, {Name: "stage1", Seconds: 12.5},
		{Name: "ncu-timing", Seconds: 24.4}, {Name: "export-timing-raw", Seconds: 2.1},
		{Name: "ncu-deep", Seconds: 41.0, ExitCode: 0}, {Name: "export-raw", Seconds: 1.0},
	})
	assert.Contains(t, got, "| ncu-deep | 41.0 | 0 |")
	assert.Contains(t, got, "the profiler passes and exports took 68.5 s; stage 1 (the program alone) took 12.5 s, so profiling cost 5.5 times stage 1.")
	assert.NotContains(t, timeSection([]rundir.StepTime{{Name: "ncu-timing", Seconds: 3}}), "Overhead", "no stage 1, no ratio")
}
