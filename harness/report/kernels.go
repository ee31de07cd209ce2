package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/llm-perf-opt/deepprof/harness/internal/mdtable"
	"github.com/llm-perf-opt/deepprof/harness/kernels"
)

// KernelsMarkdown writes kernels.md: a heading, what the table was made from,
// and one row per kernel with the columns kernel_name, total_ms, calls,
// mean_ms, device.
func KernelsMarkdown(w io.Writer, t kernels.Table) error {
	var b strings.Builder
	b.WriteString("# Kernels\n\n")
	fmt.Fprintf(&b, "%s: %s, %s, %s ms of GPU time.", mdtable.EscapeCell(t.Source),
		plural(t.Launches, "launch", "launches"), plural(int64(t.Count), "kernel", "kernels"), mdtable.Fixed(t.TotalMS, 3))
	if len(t.Kernels) < t.Count {
		fmt.Fprintf(&b, " The top %d by total time are shown.", len(t.Kernels))
	}
	b.WriteString("\n\n")
	totals := make([]float64, len(t.Kernels))
	means := make([]float64, len(t.Kernels))
	for i, k := range t.Kernels {
		totals[i], means[i] = k.TotalMS, k.MeanMS
	}
	dt, dm := mdtable.Decimals(totals, 3), mdtable.Decimals(means, 3)
	tab := mdtable.Table{
		Header: []string{"kernel_name", "total_ms", "calls", "mean_ms", "device"},
		Right:  []bool{false, true, true, true, true},
	}
	for _, k := range t.Kernels {
		tab.Rows = append(tab.Rows, []string{mdtable.EscapeCell(k.Name), mdtable.Fixed(k.TotalMS, dt),
			strconv.FormatInt(k.Calls, 10), mdtable.Fixed(k.MeanMS, dm), strconv.Itoa(k.Device)})
	}
	b.WriteString(tab.String())
	_, err := io.WriteString(w, b.String())
	return err
}

// KernelsJSON writes kernels.json: {"kernels": [...]} in the table's order.
func KernelsJSON(w io.Writer, t kernels.Table) error {
	recs := t.Kernels
	if recs == nil {
		recs = []kernels.Record{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(struct {
		Kernels []kernels.Record `json:"kernels"`
	}{recs})
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.FormatInt(n, 10) + " " + many
}
