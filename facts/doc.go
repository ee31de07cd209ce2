// Package facts holds what the analysis of a run found, as data: the
// summary (summary.json), the phases, the regions report, ncu's rules and
// bounds, the comparison of two runs.
//
// The analyses (packages phases, regions, kernels, summary, compare) make
// these values; the renderers (package render) write them. Facts computes
// nothing: its exported functions and methods only word or name what a
// value holds (TestFactsComputeNothing), so a renderer that imports it
// can take a number only from a field the analysis set.
//
// The values harness's functions return are of its types; harness names
// each of them (harness.Summary), so that a program of another module can
// name what it is handed.
package facts
