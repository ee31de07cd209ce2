package ncu

import (
	"encoding/csv"
	"io"
	"strconv"

	"github.com/llm-perf-opt/deepprof/internal/model"
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
func (w *Writer) Write(l *model.Launch) error {
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
	id = append(id, l.StartStop, l.Kernel, l.Context, l.Stream, l.BlockSize, l.GridSize, strconv.Itoa(int(l.Device)), l.CC)
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
