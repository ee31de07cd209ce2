package regions

import (
	"fmt"
	"strings"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/model"
)

// Group is a named set of metrics summarized per region.
type Group struct {
	Name    string       `json:"name"`  // short name used in configuration: "sol"
	Title   string       `json:"title"` // what the report calls it
	Metrics []MetricSpec `json:"metrics"`
}

// MetricSpec is one metric of a group and where to find it: a raw-page
// column, or a (section, metric) row of the details page. A launch gives
// the first of the two it has. How a metric is summed over launches is not
// part of the spec: it follows from the unit ncu writes (see Aggregation).
type MetricSpec struct {
	Label   string `json:"label"`
	Raw     string `json:"raw,omitempty"`
	Section string `json:"section,omitempty"`
	Details string `json:"details,omitempty"`
}

// Source names where the spec reads from, for notes and the report.
func (m MetricSpec) Source() string {
	var s []string
	if m.Raw != "" {
		s = append(s, m.Raw)
	}
	if m.Details != "" {
		s = append(s, m.Section+": "+m.Details)
	}
	return strings.Join(s, " or ")
}

// sol is the details page's Speed Of Light section.
const sol = model.SOLSection

// DefaultGroups is the built-in metric group table. The raw column names
// were checked against the H200 fixtures' headers (basic, full and roofline
// sets; dram__bytes_*.sum and smsp__inst_executed.sum are only in full), the
// details names against their details pages. It is Go data rather than an
// embedded file because it is small, typed and checked by the compiler; a
// Config may carry any other table (its json tags let a profile hold one).
func DefaultGroups() []Group {
	return []Group{
		{Name: "duration", Title: "Duration", Metrics: []MetricSpec{
			{Label: "Elapsed Cycles", Raw: "gpc__cycles_elapsed.max", Section: sol, Details: "Elapsed Cycles"},
			{Label: "SM Frequency", Raw: "gpc__cycles_elapsed.avg.per_second", Section: sol, Details: "SM Frequency"},
		}},
		{Name: "sol", Title: "Speed Of Light throughput", Metrics: []MetricSpec{
			{Label: "Compute (SM) Throughput", Raw: "sm__throughput.avg.pct_of_peak_sustained_elapsed", Section: sol, Details: "Compute (SM) Throughput"},
			{Label: "Memory Throughput", Raw: "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", Section: sol, Details: "Memory Throughput"},
			{Label: "DRAM Throughput", Raw: "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed", Section: sol, Details: "DRAM Throughput"},
		}},
		{Name: "occupancy", Title: "Occupancy", Metrics: []MetricSpec{
			{Label: "Achieved Occupancy", Raw: "sm__warps_active.avg.pct_of_peak_sustained_active", Section: "Occupancy", Details: "Achieved Occupancy"},
		}},
		{Name: "dram", Title: "DRAM traffic", Metrics: []MetricSpec{
			{Label: "DRAM Bytes Read", Raw: "dram__bytes_read.sum"},
			{Label: "DRAM Bytes Written", Raw: "dram__bytes_write.sum"},
		}},
		{Name: "instructions", Title: "Instructions", Metrics: []MetricSpec{
			{Label: "Executed Instructions", Raw: "smsp__inst_executed.sum", Section: "Instruction Statistics", Details: "Executed Instructions"},
		}},
	}
}

// SelectGroups returns the groups of table named in names, in the order
// named. An unknown name is an error that lists the known ones.
func SelectGroups(table []Group, names []string) ([]Group, error) {
	out := []Group{}
	for _, n := range names {
		found := false
		for _, g := range table {
			if g.Name == n {
				out = append(out, g)
				found = true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("unknown metric group %q (known: %s)", n, GroupNames(table))
		}
	}
	return out, nil
}

// RawMetrics lists the raw-page columns the groups read, for ncu.Options.
func RawMetrics(groups []Group) []string {
	var out []string
	for _, g := range groups {
		for _, m := range g.Metrics {
			if m.Raw != "" {
				out = append(out, m.Raw)
			}
		}
	}
	return out
}

// AggregationOf says how values of a unit dimension are summarized: amounts
// (Bytes, Count, Cycles, Time) are summed; Percent, Rate, Frequency,
// Unitless and Unknown are duration-weighted means, since adding them would
// mean nothing.
func AggregationOf(d model.Dimension) facts.Aggregation {
	switch d {
	case model.Bytes, model.Count, model.Cycles, model.Time:
		return facts.Sum
	}
	return facts.WeightedMean
}
