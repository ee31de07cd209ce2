// The regions report, as data: what regions.json and the region tables
// hold. Package regions makes it.

package facts

import "strings"

// Aggregation is how a metric's per-launch values become one region value.
type Aggregation string

// The aggregations.
const (
	// Sum adds the values: counters (bytes, instructions, cycles, counts,
	// time).
	Sum Aggregation = "sum"
	// WeightedMean is the mean weighted by each launch's duration:
	// percentages, rates, frequencies and plain numbers.
	WeightedMean Aggregation = "duration_weighted_mean"
)

// Result kinds of a report.
const (
	ResultsKernels = "kernels" // kernel replay: one result per launch
	ResultsRanges  = "ranges"  // range or app-range replay: one per range
	ResultsMixed   = "mixed"
)

// RegionReport is the regions report of one export: the report.json contract.
type RegionReport struct {
	Source string `json:"source"`
	// Sample says why the launches read are a sample of the run's, when
	// they are (a deep pass); "" when the report counts every launch.
	Sample string `json:"sample,omitempty"`
	// Results says what one result is: "kernels", or "ranges" under range
	// and app-range replay.
	Results string `json:"results"`
	// RegionProfiling is false when no launch was inside an NVTX range.
	RegionProfiling bool     `json:"region_profiling"`
	Launches        int64    `json:"launches"`    // results read
	ProfiledMS      float64  `json:"profiled_ms"` // their duration, in or out of ranges
	Selected        int64    `json:"selected_launches"`
	OutsideLaunches int64    `json:"outside_launches"` // selected, outside every range
	OutsideMS       float64  `json:"outside_ms"`
	Include         []string `json:"include"` // kernel-name patterns
	Exclude         []string `json:"exclude"`
	MetricGroups    []string `json:"metric_groups"`
	TopKernels      int      `json:"top_kernels"`
	// AggregateEnabled says whether Aggregate was asked for.
	AggregateEnabled bool     `json:"aggregate_enabled"`
	Notes            []string `json:"notes"`
	// Aggregate is every region summed across scopes (empty when disabled).
	Aggregate []Region      `json:"aggregate"`
	Scopes    []RegionScope `json:"scopes"`

	// RegionInclude and RegionExclude are the region-name patterns that
	// chose which regions are listed.
	RegionInclude []string `json:"region_include,omitempty"`
	RegionExclude []string `json:"region_exclude,omitempty"`
}

// RegionScope is one (process, device) pair and its regions.
type RegionScope struct {
	ProcessID       int64    `json:"process_id"`
	ProcessName     string   `json:"process_name"`
	Device          DeviceID `json:"device"`
	Launches        int64    `json:"launches"`
	ProfiledMS      float64  `json:"profiled_ms"`
	OutsideLaunches int64    `json:"outside_launches"`
	OutsideMS       float64  `json:"outside_ms"`
	Regions         []Region `json:"regions"`
}

// Region is one NVTX region's totals. Regions are listed depth first, each
// parent before its children, siblings in order of first appearance.
type Region struct {
	Name   string  `json:"name"` // the stack path
	Levels []Range `json:"levels"`
	Parent string  `json:"parent"` // the parent's Name; "" at depth 1
	Depth  int     `json:"depth"`  // 1 for a top-level range
	// Dir is the region's directory under ncu/regions/.
	Dir                  string  `json:"dir"`
	TotalMS              float64 `json:"total_ms"`     // inclusive
	KernelCount          int64   `json:"kernel_count"` // inclusive launches
	ExclusiveMS          float64 `json:"exclusive_ms"`
	ExclusiveKernelCount int64   `json:"exclusive_kernel_count"`
	// Share is TotalMS over the scope's profiled time (0..1).
	Share   float64        `json:"share"`
	Kernels []RegionKernel `json:"kernels"` // the top kernels, inclusive
	Metrics []RegionMetric `json:"metrics"`
	// Table is the region's whole kernel table (inclusive), for kernels.md.
	Table KernelTable `json:"-"`
}

// Range is one NVTX push/pop range, a level of a region's stack: its domain
// ("" for the default domain) and its name (the range's message).
type Range struct {
	Domain string `json:"domain"` // "" for the default domain
	Name   string `json:"name"`
}

// String writes the range as one level of a range path (Path).
func (r Range) String() string {
	var b strings.Builder
	b.Grow(len(r.Domain) + 1 + len(r.Name))
	r.write(&b)
	return b.String()
}

func (r Range) write(b *strings.Builder) {
	if r.Domain == "" {
		escape(b, r.Name, `\/@`)
		return
	}
	escape(b, r.Domain, `\/@`)
	b.WriteByte('@')
	escape(b, r.Name, `\/`)
}

// escape writes s with a '\' before each byte of special.
func escape(b *strings.Builder, s, special string) {
	if !strings.ContainsAny(s, special) {
		b.WriteString(s)
		return
	}
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(special, s[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
}

// Path writes a stack of ranges, outermost first, as a region's name (the
// stack path): its levels joined by '/'; a level in the default domain is
// its name, a level in a named domain is "Domain@name". Inside a level,
// '\' escapes the next character: a '/' in a name is written `\/`, a '\'
// is written `\\`, and an '@' in a default-domain name (or in a domain
// name) is written `\@`, so that the default-domain range literally named
// "LLM@decode_all" ("LLM\@decode_all") and range "decode_all" of domain
// "LLM" ("LLM@decode_all") keep distinct names. No levels give "".
func Path(levels []Range) string {
	var b strings.Builder
	n := len(levels)
	for _, l := range levels {
		n += len(l.Domain) + len(l.Name)
	}
	b.Grow(n) // an escaped byte grows it once more
	for i, l := range levels {
		if i > 0 {
			b.WriteByte('/')
		}
		l.write(&b)
	}
	return b.String()
}

// RegionKernel is one of a region's top kernels.
type RegionKernel struct {
	Name    string   `json:"name"`
	Device  DeviceID `json:"device"`
	TotalMS float64  `json:"total_ms"`
	Calls   int64    `json:"calls"`
}

// RegionMetric is one configured metric summarized over a region's launches.
type RegionMetric struct {
	Group       string      `json:"group"`
	Name        string      `json:"name"`
	Source      string      `json:"source"` // the column or details row read
	Unit        string      `json:"unit"`   // base unit
	Aggregation Aggregation `json:"aggregation"`
	Value       float64     `json:"value"`
	Launches    int64       `json:"launches"` // launches that had a value
}
