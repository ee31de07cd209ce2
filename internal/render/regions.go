package render

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"io"
	"math"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/input"
	"github.com/llm-perf-opt/deepprof/internal/model"

	"github.com/llm-perf-opt/deepprof/internal/rundir"
)

// RegionsMarkdown writes ncu/regions/report.md: what was read, the notes,
// then one section per scope (the aggregate first when enabled), each with a
// summary table of its regions and one subsection per region whose heading
// depth follows the region's nesting. A region subsection holds its totals,
// a table of its top kernels and a table of its metrics.
func RegionsMarkdown(w io.Writer, rep *facts.RegionReport) error {
	return regionsMarkdown(w, rep, true)
}

// RegionsMarkdownAlone is RegionsMarkdown for a report printed by itself
// (deepprof regions without --out): no link to a region's kernel table,
// a file that only --out writes.
func RegionsMarkdownAlone(w io.Writer, rep *facts.RegionReport) error {
	return regionsMarkdown(w, rep, false)
}

// regionsMarkdown writes the report as it is made, a region at a time;
// links says whether each region links to its kernel table's file.
func regionsMarkdown(w io.Writer, rep *facts.RegionReport, links bool) error {
	b := bufio.NewWriterSize(w, 64<<10)
	if rep.Sample != "" {
		// The first line says it: these are not the run's totals.
		b.WriteString("# NVTX regions of a sample of launches, not the run's totals\n\n")
		fmt.Fprintf(b, "**A sample**: %s.\n\n", EscapeCell(rep.Sample))
	} else {
		b.WriteString("# NVTX regions\n\n")
	}
	what := plural(rep.Launches, "kernel launch", "kernel launches")
	if rep.Results == facts.ResultsRanges {
		what = plural(rep.Launches, "range result", "range results")
	} else if rep.Results == facts.ResultsMixed {
		what = plural(rep.Launches, "result", "results") + " (kernel launches and whole ranges)"
	}
	fmt.Fprintf(b, "%s: %s, %s ms of GPU time, in %s (process, device).", EscapeCell(rep.Source), what, model.Fixed(rep.ProfiledMS, 3), plural(int64(len(rep.Scopes)), "scope", "scopes"))
	if rep.RegionProfiling {
		fmt.Fprintf(b, " %s (%s ms) outside every NVTX range belong to no region.",
			plural(rep.OutsideLaunches, "selected launch", "selected launches"), model.Fixed(rep.OutsideMS, 3))
		b.WriteString(" A region is an NVTX push/pop stack path; its total includes its nested regions, and exclusive values count only launches whose stack ends at it.")
		if len(rep.MetricGroups) > 0 {
			fmt.Fprintf(b, " Metric groups: %s.", EscapeCell(strings.Join(rep.MetricGroups, ", ")))
		}
	}
	b.WriteString("\n\n")
	if !rep.RegionProfiling {
		b.WriteString("**No region profiling took place**: no result was inside an NVTX push/pop range.\n\n")
	}
	if rep.Results == facts.ResultsRanges || rep.Results == facts.ResultsMixed {
		b.WriteString("**The results are whole NVTX ranges** (range or app-range replay), not kernel launches.\n\n")
	}
	if len(rep.Notes) > 0 {
		b.WriteString("Notes:\n\n")
		for _, n := range rep.Notes {
			b.WriteString("- " + EscapeCell(n) + "\n")
		}
		b.WriteString("\n")
	}
	switch {
	case !rep.AggregateEnabled || !rep.RegionProfiling:
	case len(rep.Scopes) == 1:
		// The sum over one scope is that scope: say so rather than repeat it.
		b.WriteString("## All scopes\n\nOne scope: its regions below are the aggregate.\n\n")
	default:
		fmt.Fprintf(b, "## All scopes\n\nRegions summed across %d scopes; %s ms profiled in all.\n\n",
			len(rep.Scopes), model.Fixed(rep.ProfiledMS, 3))
		writeScope(b, rep, rep.Aggregate, nil, links)
	}
	for i := range rep.Scopes {
		s := &rep.Scopes[i]
		fmt.Fprintf(b, "## Process %d", s.ProcessID)
		if s.ProcessName != "" {
			fmt.Fprintf(b, " (%s)", EscapeCell(s.ProcessName))
		}
		fmt.Fprintf(b, ", device %d\n\n", s.Device)
		fmt.Fprintf(b, "%s, %s ms profiled; %s (%s ms) outside every NVTX range.\n\n",
			plural(s.Launches, "launch", "launches"), model.Fixed(s.ProfiledMS, 3), plural(s.OutsideLaunches, "selected launch", "selected launches"), model.Fixed(s.OutsideMS, 3))
		writeScope(b, rep, s.Regions, s, links)
	}
	return b.Flush()
}

func writeScope(b *bufio.Writer, rep *facts.RegionReport, regs []facts.Region, s *facts.RegionScope, links bool) {
	if len(regs) == 0 {
		b.WriteString("No NVTX regions: no region profiling took place in this scope.\n\n")
		return
	}
	totals := make([]float64, 0, 2*len(regs))
	for _, r := range regs {
		totals = append(totals, r.TotalMS, r.ExclusiveMS)
	}
	d := model.Decimals(totals, 3)
	tab := Table{
		Header: []string{"region", "depth", "total_ms", "share", "launches", "exclusive_ms", "exclusive_launches"},
		Right:  []bool{false, true, true, true, true, true, true},
	}
	tab.writeHeader(b)
	for _, r := range regs {
		writeRow(b, []string{regionName(r.Name), strconv.Itoa(r.Depth), model.Fixed(r.TotalMS, d), model.FormatPercent(r.Share), strconv.FormatInt(r.KernelCount, 10), model.Fixed(r.ExclusiveMS, d), strconv.FormatInt(r.ExclusiveKernelCount, 10)})
	}
	b.WriteString("\n")
	keep := tabled(regs)
	for _, r := range regs {
		writeRegion(b, rep, r, s, d, links, keep[r.Name])
	}
}

func writeRegion(b *bufio.Writer, rep *facts.RegionReport, r facts.Region, s *facts.RegionScope, d int, links, hasTable bool) {
	level := min(2+r.Depth, 6)
	fmt.Fprintf(b, "%s %s\n\n", strings.Repeat("#", level), regionName(r.Name))
	if r.Parent != "" {
		fmt.Fprintf(b, "Inside %s. ", regionName(r.Parent))
	}
	fmt.Fprintf(b, "%s ms in %s (%s of the scope's profiled time); exclusive of nested regions: %s ms in %s.", model.Fixed(r.TotalMS, d), plural(r.KernelCount, "launch", "launches"), model.FormatPercent(r.Share), model.Fixed(r.ExclusiveMS, d), plural(r.ExclusiveKernelCount, "launch", "launches"))
	if ambiguous(r) {
		parts := make([]string, len(r.Levels))
		for i, l := range r.Levels {
			dom := "default domain"
			if l.Domain != "" {
				dom = "domain " + EscapeCell(l.Domain)
			}
			parts[i] = fmt.Sprintf("%s (%s)", regionName(l.Name), dom)
		}
		fmt.Fprintf(b, " Stack: %s.", strings.Join(parts, " / "))
	}
	switch {
	case links && hasTable:
		dir := RegionTableDir(rep, r, s)
		fmt.Fprintf(b, " Kernel table: [%s](%s).", EscapeCell(dir+"/kernels.md"), dir+"/kernels.md")
	case links:
		fmt.Fprintf(b, " No kernel table of its own: only the %d largest regions of a scope get one (its kernels are below and in report.json).", MaxRegionTables)
	}
	b.WriteString("\n\n")
	if len(r.Kernels) > 0 {
		tot := make([]float64, len(r.Kernels))
		for i, k := range r.Kernels {
			tot[i] = k.TotalMS
		}
		dk := model.Decimals(tot, 3)
		tab := Table{Header: []string{"kernel", "total_ms", "calls", "share of region", "device"},
			Right: []bool{false, true, true, true, true}}
		for _, k := range r.Kernels {
			share := 0.0
			if r.TotalMS > 0 {
				share = k.TotalMS / r.TotalMS
			}
			tab.Rows = append(tab.Rows, []string{EscapeCell(k.Name), model.Fixed(k.TotalMS, dk), strconv.FormatInt(k.Calls, 10), model.FormatPercent(share), k.Device.String()})
		}
		if len(r.Kernels) < r.Table.Count {
			fmt.Fprintf(b, "Top %d of %d kernels:\n\n", len(r.Kernels), r.Table.Count)
		} else {
			b.WriteString("Kernels:\n\n")
		}
		tab.write(b)
		b.WriteString("\n")
	}
	if len(r.Metrics) > 0 {
		tab := Table{Header: []string{"group", "metric", "value", "unit", "summary", "launches"},
			Right: []bool{false, false, true, false, false, true}}
		for _, m := range r.Metrics {
			v, u := MetricValue(m.Value, m.Unit)
			how := "sum"
			if m.Aggregation == facts.WeightedMean {
				how = "duration-weighted mean"
			}
			tab.Rows = append(tab.Rows, []string{EscapeCell(m.Group), EscapeCell(m.Name), v, EscapeCell(u), how,
				strconv.FormatInt(m.Launches, 10)})
		}
		b.WriteString("Metrics:\n\n")
		tab.write(b)
		b.WriteString("\n")
	}
}

// ambiguous reports whether a region's name hides its stack: a level in a
// named domain, or a level whose name holds '/' or '@'.
func ambiguous(r facts.Region) bool {
	for _, l := range r.Levels {
		if l.Domain != "" || strings.ContainsAny(l.Name, "/@") {
			return true
		}
	}
	return false
}

// regionName escapes a region name for a table cell or a heading.
func regionName(name string) string {
	if name == "" {
		return "(empty name)"
	}
	// Control characters (NUL above all) are shown escaped, \u0000, by
	// the one rule of every renderer (input.EscapeName).
	return EscapeCell(name)
}

// MetricValue formats a metric in its base unit for a person: amounts with
// an SI prefix (5.632 Kbyte), percentages with 2 decimals, others with 4
// significant digits.
func MetricValue(v float64, unit string) (string, string) {
	switch unit {
	case "%":
		return model.Fixed(v, 2), unit
	case "byte", "cycle", "inst", "hz":
		prefixes := []string{"", "K", "M", "G", "T", "P"}
		i := 0
		for math.Abs(v) >= 1000 && i < len(prefixes)-1 {
			v /= 1000
			i++
		}
		if unit == "hz" {
			return model.Fixed(v, 3), prefixes[i] + "hz"
		}
		return model.Fixed(v, 3), prefixes[i] + unit
	}
	return strconv.FormatFloat(v, 'g', 4, 64), unit
}

// RegionTableDir is the directory, relative to ncu/regions/, of a region's
// kernel table: the region's directory for the aggregate (s == nil), and for
// a scope too when the aggregate is on and there is one scope (the tables
// are the same); otherwise a subdirectory process-PID-device-D of it.
func RegionTableDir(rep *facts.RegionReport, r facts.Region, s *facts.RegionScope) string {
	if s == nil || rep.AggregateEnabled && len(rep.Scopes) == 1 {
		return r.Dir
	}
	return r.Dir + "/" + ScopeDir(s)
}

// ScopeDir names a scope's subdirectory inside a region's directory.
func ScopeDir(s *facts.RegionScope) string {
	return fmt.Sprintf("process-%d-device-%d", s.ProcessID, s.Device)
}

// RegionsJSON writes ncu/regions/report.json (json.Encoder's bytes, with
// a two-space indent and no HTML escaping) as it is made, a region at a
// time. A number that is not finite is refused, naming it, before
// anything is written.
func RegionsJSON(w io.Writer, rep *facts.RegionReport) error {
	if err := input.CheckFinite(rep); err != nil {
		return fmt.Errorf("region report: %w", err)
	}
	return regionsJSON(w, rep)
}

// regionsJSON is RegionsJSON of a report already checked.
func regionsJSON(w io.Writer, rep *facts.RegionReport) error {
	j := newJSONStream(w)
	head := *rep
	head.Aggregate, head.Scopes = nil, nil
	err := j.object(&head, 0,
		field{"aggregate", func() error { return regionsArray(j, rep.Aggregate, 1) }},
		field{"scopes", func() error {
			return j.array(len(rep.Scopes), rep.Scopes == nil, 1, func(i int) error {
				s := rep.Scopes[i]
				s.Regions = nil
				return j.object(&s, 2, field{"regions", func() error { return regionsArray(j, rep.Scopes[i].Regions, 3) }})
			})
		}})
	if err != nil {
		return err
	}
	return j.end()
}

// regionsArray writes regs, an array held at nesting level.
func regionsArray(j *jsonStream, regs []facts.Region, level int) error {
	return j.array(len(regs), regs == nil, level, func(i int) error { return j.value(&regs[i], level+1) })
}

// RegionsDirFiles are the files of a region report directory, relative to
// it: report.md, report.json and each region's kernel table (kernels.md,
// kernels.json, under RegionTableDir). Region directories come from
// model.RegionDir; each is checked again to be one local path element.
// report.md and report.json, which grow with the regions (a range per
// iteration makes thousands), are written as they are made, a region at a
// time (rundir.File.Write). What would fail their rendering (a number
// that is not finite) is refused here, before any file is written.
func RegionsDirFiles(rep *facts.RegionReport) ([]rundir.File, error) {
	if err := input.CheckFinite(rep); err != nil {
		return nil, fmt.Errorf("region report: %w", err)
	}
	files := []rundir.File{
		{Rel: "report.md", Write: func(w io.Writer) error { return RegionsMarkdown(w, rep) }},
		{Rel: "report.json", Write: func(w io.Writer) error { return regionsJSON(w, rep) }},
	}
	err := regionTables(rep, func(sub string, r facts.Region, s *facts.RegionScope) error {
		t := model.KernelTable(r.Table)
		t.Source = rep.Source + ", region " + r.Name
		if s != nil && sub != r.Dir {
			t.Source += fmt.Sprintf(", process %d, device %d", s.ProcessID, s.Device)
		}
		var km, kj bytes.Buffer
		if err := KernelsMarkdown(&km, t); err != nil {
			return err
		}
		if err := KernelsJSON(&kj, t, nil, nil); err != nil {
			return err
		}
		files = append(files, rundir.File{Rel: path.Join(sub, "kernels.md"), Data: km.Bytes()}, rundir.File{Rel: path.Join(sub, "kernels.json"), Data: kj.Bytes()})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return files, nil
}

// RegionsDirPaths are the paths of RegionsDirFiles(rep), in its order,
// without rendering them: what a rebuild checks before it writes anything.
func RegionsDirPaths(rep *facts.RegionReport) ([]string, error) {
	paths := []string{"report.md", "report.json"}
	err := regionTables(rep, func(sub string, _ facts.Region, _ *facts.RegionScope) error {
		paths = append(paths, path.Join(sub, "kernels.md"), path.Join(sub, "kernels.json"))
		return nil
	})
	if err != nil {
		return nil, err
	}
	return paths, nil
}

// MaxRegionTables is how many regions of a scope (and of the aggregate)
// get a folder with a kernel table of their own: the largest by time,
// ties by name. A program that opens a range per iteration (decode_step 0,
// decode_step 1, ...) has thousands of regions; the rest are in
// report.md and report.json, never in 20,000 folders.
const MaxRegionTables = 100

// tabled is the names of the regions of regs that get a table of their
// own (MaxRegionTables): the largest by time, ties by name.
func tabled(regs []facts.Region) map[string]bool {
	out := make(map[string]bool, min(len(regs), MaxRegionTables))
	idx := make([]int, len(regs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		ra, rb := regs[a], regs[b]
		if ra.TotalMS != rb.TotalMS {
			return cmp.Compare(rb.TotalMS, ra.TotalMS)
		}
		return strings.Compare(ra.Name, rb.Name)
	})
	for _, i := range idx[:min(len(idx), MaxRegionTables)] {
		out[regs[i].Name] = true
	}
	return out
}

// regionTables calls table for each kernel table a region report's
// directory holds, with its folder (RegionTableDir): the aggregate's
// regions, then each scope's where it has a table of its own; of each,
// the MaxRegionTables largest.
func regionTables(rep *facts.RegionReport, table func(sub string, r facts.Region, s *facts.RegionScope) error) error {
	add := func(r facts.Region, s *facts.RegionScope) error {
		if !filepath.IsLocal(r.Dir) || strings.ContainsAny(r.Dir, `/\`) || r.Dir == "." {
			return fmt.Errorf("region %q: directory %q is not one local name", r.Name, r.Dir)
		}
		return table(RegionTableDir(rep, r, s), r, s)
	}
	if rep.AggregateEnabled {
		keep := tabled(rep.Aggregate)
		for _, r := range rep.Aggregate {
			if !keep[r.Name] {
				continue
			}
			if err := add(r, nil); err != nil {
				return err
			}
		}
	}
	for i := range rep.Scopes {
		s := &rep.Scopes[i]
		keep := tabled(s.Regions)
		for _, r := range s.Regions {
			if !keep[r.Name] || rep.AggregateEnabled && RegionTableDir(rep, r, s) == r.Dir {
				continue // no table of its own, or the aggregate's, already listed
			}
			if err := add(r, s); err != nil {
				return err
			}
		}
	}
	return nil
}
