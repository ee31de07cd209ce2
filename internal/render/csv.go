package render

import (
	"encoding/csv"
	"io"
	"strconv"
	"strings"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/input"
	"github.com/llm-perf-opt/deepprof/internal/model"
)

// The CSV tables (--format csv): RFC 4180 (encoding/csv), a header row,
// names whole, numbers as Go writes them (no rounding, no units in the
// cells: the header names the unit), a missing value empty. For pandas'
// read_csv, as ncu's --csv and nsys stats --format csv are.

// csvText is a name's cell (a kernel's, a range's, a process's: a profiled
// program's data): shown as on a terminal (input.EscapeName: hidden runes,
// bytes that are not UTF-8 and a backslash that could read as an escape,
// escaped), so no control sequence reaches a terminal, and a
// cell that a spreadsheet would read as a formula (one starting with =, +,
// -, @, a tab or a carriage return) made text with a leading quote, as
// OWASP's CSV injection advice says. Numbers are num's, never changed.
func csvText(s string) string {
	s = input.EscapeName(s)
	if s != "" && strings.IndexByte("=+-@\t\r", s[0]) >= 0 {
		return "'" + s
	}
	return s
}

// num is a number's cell: shortest form that reads back the same.
func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// KernelsCSV writes the kernel table, a row a kernel.
func KernelsCSV(w io.Writer, t model.KernelTable) error {
	names := make([]string, len(t.Kernels))
	for i, k := range t.Kernels {
		names[i] = k.Name
	}
	display := facts.DisplayNames(names)
	cw := csv.NewWriter(w)
	cw.Write([]string{"kernel_name", "display_name", "device", "calls", "total_ms", "mean_ms", "min_ms", "median_ms", "max_ms", "stddev_ms"})
	for i, k := range t.Kernels {
		row := []string{csvText(k.Name), csvText(display[i]), k.Device.String(), strconv.FormatInt(k.Calls, 10), num(k.TotalMS), num(k.MeanMS), "", "", "", ""}
		if s := k.Spread; s != nil {
			row[6], row[7], row[8], row[9] = num(s.MinMS), num(s.MedianMS), num(s.MaxMS), num(s.StdDevMS)
		}
		cw.Write(row)
	}
	cw.Flush()
	return cw.Error()
}

// RegionsCSV writes the regions report, a row a region of each scope
// (process and device), then the regions across scopes (process "all").
func RegionsCSV(w io.Writer, r *facts.RegionReport) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"process_id", "process_name", "device", "region", "parent", "depth", "total_ms", "launches", "exclusive_ms", "exclusive_launches", "share"})
	row := func(pid, pname, dev string, g facts.Region) {
		cw.Write([]string{pid, csvText(pname), dev, csvText(g.Name), csvText(g.Parent), strconv.Itoa(g.Depth), num(g.TotalMS), strconv.FormatInt(g.KernelCount, 10),
			num(g.ExclusiveMS), strconv.FormatInt(g.ExclusiveKernelCount, 10), num(g.Share)})
	}
	for _, sc := range r.Scopes {
		for _, g := range sc.Regions {
			row(strconv.FormatInt(sc.ProcessID, 10), sc.ProcessName, sc.Device.String(), g)
		}
	}
	for _, g := range r.Aggregate {
		row("all", "", "", g)
	}
	cw.Flush()
	return cw.Error()
}

// DiffCSV writes a comparison, a row a compared row of each part: stages
// (means, in ms), kernels and regions (totals, in ms), MFU (a fraction of
// the peak, as summary.json holds it); a and b are each side's value,
// empty where a side has none. A stage's row ends with its cause
// (facts.CauseGPU, facts.CauseHost; empty where unknown or nothing
// changed), as the text and JSON say it; other rows leave it empty.
func DiffCSV(w io.Writer, r *facts.DiffResult) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"part", "name", "device", "status", "a", "b", "unit", "delta", "delta_pct", "p_value", "low_power", "verdict", "cause"})
	opt := func(v *float64) string {
		if v == nil {
			return ""
		}
		return num(*v)
	}
	change := func(c facts.DiffChange) []string {
		return []string{opt(c.DeltaMS), opt(c.DeltaPct)}
	}
	for _, s := range r.Stages {
		var a, b *float64
		if s.A != nil {
			a = &s.A.MeanMS
		}
		if s.B != nil {
			b = &s.B.MeanMS
		}
		cw.Write(append(append([]string{facts.PartStages, csvText(s.Name), "", "", opt(a), opt(b), "ms"}, change(s.DiffChange)...),
			opt(s.P), strconv.FormatBool(s.LowPower), string(s.Verdict), csvText(s.Cause)))
	}
	for _, k := range r.Kernels {
		var a, b *float64
		if k.A != nil {
			a = &k.A.TotalMS
		}
		if k.B != nil {
			b = &k.B.TotalMS
		}
		cw.Write(append(append([]string{facts.PartKernels, csvText(k.Name), k.Device.String(), k.Status, opt(a), opt(b), "ms"}, change(k.DiffChange)...),
			"", "", string(k.Verdict), ""))
	}
	for _, g := range r.Regions {
		var a, b *float64
		if g.A != nil {
			a = &g.A.TotalMS
		}
		if g.B != nil {
			b = &g.B.TotalMS
		}
		cw.Write(append(append([]string{facts.PartRegions, csvText(g.Name), "", "", opt(a), opt(b), "ms"}, change(g.DiffChange)...),
			"", "", string(g.Verdict), ""))
	}
	for _, m := range r.MFU {
		cw.Write([]string{facts.PartMFU, csvText(m.Name), "", "", opt(m.A), opt(m.B), "fraction", "", opt(m.DeltaPct), "", "", string(m.Verdict), ""})
	}
	cw.Flush()
	return cw.Error()
}
