package ncu

import (
	"fmt"
	"math"

	"github.com/llm-perf-opt/deepprof/harness/nvtx"
	"github.com/llm-perf-opt/deepprof/harness/units"
)

// Format names the shape of an export.
type Format string

// The export shapes the Reader knows.
const (
	FormatRaw     Format = "raw"     // --page raw: one row per launch
	FormatDetails Format = "details" // --page details: one row per metric or rule
)

// Launch is one profiled result: a kernel launch, or with range replay a whole
// NVTX range (then Kernel holds the range's name as ncu writes it).
type Launch struct {
	Line        int // line of the launch's first row in the input
	ID          int64
	ProcessID   int64
	ProcessName string
	Host        string
	Kernel      string
	Context     string
	Stream      string
	BlockSize   string
	GridSize    string
	Device      string // the device index as ncu writes it ("0")
	CC          string
	// NVTX is the push/pop range stack of the launching thread, bottom first;
	// nil when the export has no NVTX column.
	NVTX *Stack
	// StartStop is the start/end range column as written (empty when none).
	StartStop string
	// Duration is gpu__time_duration.sum (or, on a details page without it,
	// the Duration metric of GPU Speed Of Light Throughput), in ns.
	Duration units.Value
	// DurationMetric names where Duration came from.
	DurationMetric string
	// Metrics holds the other metrics read for this launch, in input order.
	Metrics []Metric
	// Rules holds the details page's rule rows.
	Rules []Rule
}

// Metric is one metric of one launch.
type Metric struct {
	Section string // details page section; "" on the raw page
	Name    string
	Value   units.Value
}

// Rule is one rule row of a details page.
type Rule struct {
	Section, Name, Type, Description, SpeedupType, Speedup string
}

// Stack is the NVTX push/pop stack of one launch.
type Stack struct {
	Thread int64
	Levels []nvtx.Range
	Raw    string // the cell as written
}

// Record is what Reader.Record returns: a *Launch or a *SyntaxError.
type Record interface{ isRecord() }

func (*Launch) isRecord()      {}
func (*SyntaxError) isRecord() {}

// SyntaxError is a positioned problem with the input. It prints as
// "file:line: msg".
type SyntaxError struct {
	File string
	Line int
	Msg  string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// AddFinite adds v to the sum *sum of the launches before l, or returns
// the positioned error that the sum would pass the largest float64: no
// real export holds such values, and a total of +Inf would be silently
// wrong (issue 16). value says what v is, as the launch wrote it
// (Quote), and what names the sum ("the total GPU time"). It sums
// absolute values, so that a sum of values of either sign bounds every
// partial sum of them.
func AddFinite(sum *float64, v float64, source string, l *Launch, value, what string) error {
	next := *sum + math.Abs(v)
	if math.IsInf(next, 0) || math.IsNaN(next) {
		return &SyntaxError{File: source, Line: l.Line, Msg: fmt.Sprintf(
			"launch %d: %s brings %s past the largest number a float64 holds (%.3g): not a real value",
			l.ID, value, what, math.MaxFloat64)}
	}
	*sum = next
	return nil
}

// Quote is a launch's value of metric as written: `metric: "1e308" ns`.
func Quote(metric string, v units.Value) string {
	return fmt.Sprintf("%s: %q %s", metric, v.Orig, v.OrigUnit)
}
