package render

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/model"
)

// KernelsMarkdown writes kernels.md: a heading, what the table was made from,
// and one row per kernel with the columns kernel_name, total_ms, calls,
// mean_ms, device; when the table has per-launch spread (model.Spread),
// a last column "median (min–max)" in ms.
func KernelsMarkdown(w io.Writer, t model.KernelTable) error {
	return KernelsMarkdownIn(w, t, KernelScope{})
}

// KernelScope is what a run's kernel table covers, for kernels.md: Text in
// the words every table uses (facts.Kernels.ScopeText; "" where it is not
// known); OutsideMS, for a table of ranges, the whole run's kernel time
// outside them (nil: not known), which the report named Whole has;
// Warmup, what of the table ran in warm-up instances (nil: none, or not
// known).
type KernelScope struct {
	Text      string
	OutsideMS *float64
	Whole     string
	Warmup    *facts.KernelsWarmup
}

// KernelsMarkdownIn is KernelsMarkdown for a table whose scope is known:
// the sentence that says what it was made from names the scope, and the
// whole run's kernel time outside it where it is of ranges.
func KernelsMarkdownIn(w io.Writer, t model.KernelTable, scope KernelScope) error {
	var b strings.Builder
	b.WriteString("# Kernels\n\n")
	from := EscapeCell(t.Source)
	if scope.Text != "" {
		from += ", " + EscapeCell(scope.Text)
	}
	fmt.Fprintf(&b, "%s: %s, %s, %s ms of GPU time.", from, plural(t.Launches, "launch", "launches"), plural(int64(t.Count), "kernel", "kernels"), model.Fixed(t.TotalMS, 3))
	if w := scope.Warmup; w != nil {
		included := "Warm-up included"
		if w.MeasuredLaunches > 0 {
			included = "Included"
		}
		fmt.Fprintf(&b, " %s: the %s %s, %s ms", included, w.Of(), plural(w.Launches, "launch", "launches"), model.Fixed(w.MS, 3))
		if w.LeftOut {
			b.WriteString(" (the summary's Top Kernels leaves them out)")
		}
		b.WriteString(".")
	}
	if o := scope.OutsideMS; o != nil && t.TotalMS+*o > 0 {
		whole := t.TotalMS + *o
		fmt.Fprintf(&b, " The whole run's kernel time is %s ms: %s ms (%s) lies outside these ranges (%s has the whole run).",
			model.Fixed(whole, 3), model.Fixed(*o, 3), model.FormatPercent(*o/whole), EscapeCell(scope.Whole))
	}
	if len(t.Kernels) < t.Count {
		fmt.Fprintf(&b, " The top %d by total time are shown.", len(t.Kernels))
	}
	spread := hasSpread(t.Kernels)
	if spread {
		b.WriteString(" Per-launch spread: median (min–max), in ms; standard deviations are in kernels.json.")
	}
	b.WriteString("\n\n")
	totals := make([]float64, len(t.Kernels))
	means := make([]float64, len(t.Kernels))
	for i, k := range t.Kernels {
		totals[i], means[i] = k.TotalMS, k.MeanMS
	}
	dt, dm := model.Decimals(totals, 3), model.Decimals(means, 3)
	tab := Table{
		Header: []string{"kernel_name", "total_ms", "calls", "mean_ms", "device"},
		Right:  []bool{false, true, true, true, true},
	}
	var ds int
	if spread {
		tab.Header = append(tab.Header, "median (min–max)")
		tab.Right = append(tab.Right, true)
		var vs []float64
		for _, k := range t.Kernels {
			if k.Spread != nil {
				vs = append(vs, k.MinMS, k.MedianMS, k.MaxMS)
			}
		}
		ds = model.Decimals(vs, 3)
	}
	for _, k := range t.Kernels {
		row := []string{EscapeCell(k.Name), model.Fixed(k.TotalMS, dt), strconv.FormatInt(k.Calls, 10), model.Fixed(k.MeanMS, dm), k.Device.String()}
		if spread {
			cell := ""
			if k.Spread != nil {
				cell = model.Fixed(k.MedianMS, ds) + " (" + model.Fixed(k.MinMS, ds) + "–" + model.Fixed(k.MaxMS, ds) + ")"
			}
			row = append(row, cell)
		}
		tab.Rows = append(tab.Rows, row)
	}
	b.WriteString(tab.String())
	_, err := io.WriteString(w, b.String())
	return err
}

// KernelsJSONRow is how a model.KernelStats (the kernels.json row) is written:
// with the short name the reports show and, when the deep pass gave them,
// ncu's rules on the kernel and what of it the deep pass profiled.
type KernelsJSONRow struct {
	model.KernelStats
	Display string        `json:"display_name"`
	Rules   []facts.Rule  `json:"ncu_rules,omitempty"`
	Sampled *facts.Sample `json:"sampled,omitempty"`
}

// KernelsJSON writes kernels.json: {"kernels": [...]} in the table's order,
// each with its display name (facts.DisplayNames over the table), its
// ncu rules from rules and its deep-pass sample from samples (nil: none).
func KernelsJSON(w io.Writer, t model.KernelTable, rules map[string][]facts.Rule, samples map[string]*facts.Sample) error {
	names := make([]string, len(t.Kernels))
	for i, k := range t.Kernels {
		names[i] = k.Name
	}
	display := facts.DisplayNames(names)
	recs := make([]KernelsJSONRow, len(t.Kernels))
	for i, k := range t.Kernels {
		recs[i] = KernelsJSONRow{KernelStats: k, Display: display[i], Rules: rules[k.Name], Sampled: samples[k.Name]}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(struct {
		Kernels []KernelsJSONRow `json:"kernels"`
	}{recs})
}

func hasSpread(recs []model.KernelStats) bool {
	for _, k := range recs {
		if k.Spread != nil {
			return true
		}
	}
	return false
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.FormatInt(n, 10) + " " + many
}

// Text is Markdown this package wrote, as aligned plain text for a
// terminal (Render): escapes resolved, tables in columns.
func Text(markdown []byte) string { return Render(markdown) }
