// Package regions sums profiled launches by NVTX region.
//
// An Aggregator makes one set of regions per (process, device) scope, and
// optionally one summed across scopes, from launches of any source (an
// ncu export, the CUPTI timeline). It holds typed results only: rendering
// is package render's job, parsing package ncu's (and timeline's), and
// region directory names model.RegionDir's.
//
// # Attribution
//
// ncu gives each launch the push/pop range stack of the thread that launched
// it, bottom first. A region is a stack path as model.Path writes it: its
// levels joined by "/", a named domain written Domain@name
// ("decode_all/decode_step", "LLM@prefill",
// "prefill/CCCL@cub::DeviceScan::InclusiveScan"). A launch counts for every
// prefix of its stack: for the region its whole stack names (exclusive and inclusive) and for each
// enclosing region (inclusive only). So a parent's inclusive total is its
// exclusive total plus its children's inclusive totals. Because the stack is
// per thread and push/pop ranges nest by construction on a thread, ranges
// cannot overlap on one stack; ranges of different threads that overlap in
// time are attributed by each launch's own thread. A range met at two
// different depths (or under two different parents) is two regions. A
// launch with an empty stack is outside every range and belongs to no
// region. Start/end ranges (a separate column, not nested) are not used; a
// note says when an export has them. Region.Levels gives each level's
// domain and name apart (a default-domain range literally named "LLM@x",
// written `LLM\@x`, and range "x" of domain "LLM").
//
// With range or app-range replay each result is a whole range, not a kernel
// launch (Kernel Name "range", no Block Size column): it is attributed by
// its stack like a launch and named by its NVTX path in kernel tables.
//
// # Metrics
//
// The metric groups in Config are summarized per region from each launch's
// values; how depends only on the unit ncu wrote (AggregationOf): counters
// are summed, percentages and rates are duration-weighted means.
//
// Memory grows with the number of regions and distinct kernels per region,
// never with the number of launches.
package regions
