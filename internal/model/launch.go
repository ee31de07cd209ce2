package model

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/llm-perf-opt/deepprof/facts"
)

// ncu's duration metrics, in order of preference.
const (
	DurationMetric    = "gpu__time_duration.sum"
	SOLDurationMetric = "Duration" // in section SOLSection, rounded to 2 digits
	SOLSection        = "GPU Speed Of Light Throughput"
)

// DeviceID is a CUDA device as the process that used it numbers it
// (facts.DeviceID).
type DeviceID = facts.DeviceID

// Launch is one profiled result: a kernel launch, or with range replay a whole
// NVTX range (then Kernel holds the range's name as ncu writes it).
type Launch struct {
	Line        int // line of the launch's first row in the input
	ID          int64
	ProcessID   int64
	ProcessName string
	Host        string
	Kernel      string
	// Context and Stream are as ncu writes them (a number, or "n/a" for a
	// range of range replay); a CUPTI timeline's launches leave them empty.
	Context, Stream string
	BlockSize       string
	GridSize        string
	// Device is the CUDA device's index (0 when the input names none).
	Device DeviceID
	CC     string
	// NVTX is the push/pop range stack of the launching thread, bottom first;
	// nil when the export has no NVTX column.
	NVTX *Stack
	// StartStop is the start/end range column as written (empty when none).
	StartStop string
	// Duration is gpu__time_duration.sum (or, on a details page without it,
	// the Duration metric of GPU Speed Of Light Throughput), in ns.
	Duration Value
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
	Value   Value
}

// Rule is one rule row of a details page.
type Rule struct {
	Section, Name, Type, Description, SpeedupType, Speedup string
}

// Stack is the NVTX push/pop stack of one launch.
type Stack struct {
	Thread int64
	Levels []Range
	Raw    string // the cell as written
}

// SyntaxError is a positioned problem with the input. It prints as
// "file:line: msg".
type SyntaxError struct {
	File string
	Line int
	Msg  string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// Is reports whether target is the same problem at the same place: two
// readers of one file (the kernel table and the regions, of one export)
// that refuse one line give one error, said once.
func (e *SyntaxError) Is(target error) bool {
	t, ok := target.(*SyntaxError)
	return ok && t != nil && *t == *e
}

// AddFinite adds v to the sum *sum of the launches before l, or returns
// the positioned error that the sum would pass the largest float64: no
// real export holds such values, and a total of +Inf would be silently
// wrong. describe says what v is, as the launch wrote it (Quote), and what
// names the sum ("the total GPU time"); it is called only for the error,
// so that a sum that stays finite costs no text. It sums absolute values,
// so that a sum of values of either sign bounds every partial sum of them.
func AddFinite(sum *float64, v float64, source string, l *Launch, describe func() (value, what string)) error {
	next := *sum + math.Abs(v)
	if math.IsInf(next, 0) || math.IsNaN(next) {
		value, what := describe()
		return &SyntaxError{File: source, Line: l.Line, Msg: fmt.Sprintf(
			"launch %d: %s brings %s past the largest number a float64 holds (%.3g): not a real value",
			l.ID, value, what, math.MaxFloat64)}
	}
	*sum = next
	return nil
}

// DurationTotal describes the sum of the launches' durations, for AddFinite.
func (l *Launch) DurationTotal() (value, what string) {
	return Quote(l.DurationMetric, l.Duration), "the total GPU time of the launches"
}

// Quote is a launch's value of metric as written: `metric: "1e308" ns`.
func Quote(metric string, v Value) string {
	return fmt.Sprintf("%s: %q %s", metric, v.Orig, v.OrigUnit)
}

// Path is the stack's range path (Path).
func (s *Stack) Path() string {
	if s == nil {
		return ""
	}
	return Path(s.Levels)
}

// String is the launch's canonical text dump: every parsed field, one fact a
// line, in a fixed order, so that golden files show what the reader made of
// the input before any aggregation.
func (l *Launch) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "launch %d (line %d)\n", l.ID, l.Line)
	fmt.Fprintf(&b, "  process: %d %q on %q\n", l.ProcessID, l.ProcessName, l.Host)
	fmt.Fprintf(&b, "  kernel: %q\n", l.Kernel)
	fmt.Fprintf(&b, "  device: %q cc %q context %q stream %q block %q grid %q\n", strconv.Itoa(int(l.Device)), l.CC, l.Context, l.Stream, l.BlockSize, l.GridSize)
	switch {
	case l.NVTX == nil:
		b.WriteString("  nvtx: (no column)\n")
	case strings.TrimSpace(l.NVTX.Raw) == "":
		b.WriteString("  nvtx: no range\n")
	case len(l.NVTX.Levels) == 0:
		fmt.Fprintf(&b, "  nvtx: thread %d, no range\n", l.NVTX.Thread)
	default:
		fmt.Fprintf(&b, "  nvtx: thread %d, path %q\n", l.NVTX.Thread, l.NVTX.Path())
		for i, r := range l.NVTX.Levels {
			fmt.Fprintf(&b, "    level %d: domain %q name %q\n", i, r.Domain, r.Name)
		}
	}
	if l.StartStop != "" {
		fmt.Fprintf(&b, "  start/stop: %q\n", l.StartStop)
	}
	if l.Duration.Valid {
		fmt.Fprintf(&b, "  duration: %s ns from %s (%s %s)\n", formatFloat(l.Duration.Base), l.DurationMetric, l.Duration.Orig, l.Duration.OrigUnit)
	} else {
		b.WriteString("  duration: none\n")
	}
	for _, m := range l.Metrics {
		sec := ""
		if m.Section != "" {
			sec = m.Section + " / "
		}
		if m.Value.Valid {
			fmt.Fprintf(&b, "  metric %s%s = %s %s (%s %s)\n", sec, m.Name, formatFloat(m.Value.Base), m.Value.Unit, m.Value.Orig, m.Value.OrigUnit)
		} else {
			fmt.Fprintf(&b, "  metric %s%s = %q (not a number)\n", sec, m.Name, m.Value.Orig)
		}
	}
	for _, r := range l.Rules {
		fmt.Fprintf(&b, "  rule %s / %s [%s] speedup %s %s: %q\n", r.Section, r.Name, r.Type, r.SpeedupType, r.Speedup, r.Description)
	}
	return b.String()
}

func formatFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
