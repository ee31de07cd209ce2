package ncu

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Writer writes launches as a details page (one row per metric or rule) that
// Reader reads back to the same launches, whatever page they were read from:
// the canonical form of the round-trip tests, and a way to keep a filtered
// subset of an export. Values are written as they were read (Value.Orig,
// OrigUnit), so nothing is rounded.
type Writer struct {
	w      *csv.Writer
	nvtx   bool
	header bool
}

// NewWriter returns a Writer; withNVTX writes the NVTX stack column.
func NewWriter(w io.Writer, withNVTX bool) *Writer {
	return &Writer{w: csv.NewWriter(w), nvtx: withNVTX}
}

func (w *Writer) columns() []string {
	cols := []string{colID, colProcessID, colProcessName, colHost}
	if w.nvtx {
		cols = append(cols, NVTXColumn)
	}
	return append(cols, StartStopColumn, colKernel, colContext, colStream, colBlock, colGrid, colDevice, colCC,
		colSection, colMetricName, colMetricUnit, colMetricValue,
		colRuleName, colRuleType, colRuleDesc, colSpeedupType, colSpeedup)
}

// Write writes one launch.
func (w *Writer) Write(l *Launch) error {
	if !w.header {
		w.header = true
		if err := w.w.Write(w.columns()); err != nil {
			return err
		}
	}
	id := []string{strconv.FormatInt(l.ID, 10), strconv.FormatInt(l.ProcessID, 10), l.ProcessName, l.Host}
	if w.nvtx {
		raw := ""
		if l.NVTX != nil {
			raw = l.NVTX.Raw
		}
		id = append(id, raw)
	}
	id = append(id, l.StartStop, l.Kernel, l.Context, l.Stream, l.BlockSize, l.GridSize, l.Device, l.CC)
	row := func(tail ...string) error { return w.w.Write(append(id[:len(id):len(id)], tail...)) }
	for _, m := range l.Metrics {
		if err := row(m.Section, m.Name, m.Value.OrigUnit, m.Value.Orig, "", "", "", "", ""); err != nil {
			return err
		}
	}
	for _, r := range l.Rules {
		if err := row(r.Section, "", "", "", r.Name, r.Type, r.Description, r.SpeedupType, r.Speedup); err != nil {
			return err
		}
	}
	if len(l.Metrics) == 0 && len(l.Rules) == 0 {
		return row("", "", "", "", "", "", "", "", "")
	}
	return nil
}

// Flush writes buffered rows and reports any error.
func (w *Writer) Flush() error {
	w.w.Flush()
	return w.w.Error()
}

// String is the launch's canonical text dump: every parsed field, one fact a
// line, in a fixed order, so that golden files show what the reader made of
// the input before any aggregation.
func (l *Launch) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "launch %d (line %d)\n", l.ID, l.Line)
	fmt.Fprintf(&b, "  process: %d %q on %q\n", l.ProcessID, l.ProcessName, l.Host)
	fmt.Fprintf(&b, "  kernel: %q\n", l.Kernel)
	fmt.Fprintf(&b, "  device: %q cc %q context %q stream %q block %q grid %q\n", l.Device, l.CC, l.Context, l.Stream, l.BlockSize, l.GridSize)
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
