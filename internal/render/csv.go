package render

import (
	"encoding/csv"
	"io"
	"strconv"

	"github.com/llm-perf-opt/deepprof/internal/facts"
	"github.com/llm-perf-opt/deepprof/internal/model"
)

// The CSV tables (--format csv): RFC 4180 (encoding/csv), a header row,
// names whole, numbers as Go writes them (no rounding, no units in the
// cells: the header names the unit), a missing value empty. For pandas'
// read_csv, as ncu's --csv and nsys stats --format csv are.

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
		row := []string{k.Name, display[i], k.Device.String(), strconv.FormatInt(k.Calls, 10), num(k.TotalMS), num(k.MeanMS), "", "", "", ""}
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
		cw.Write([]string{pid, pname, dev, g.Name, g.Parent, strconv.Itoa(g.Depth), num(g.TotalMS), strconv.FormatInt(g.KernelCount, 10),
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
