// Package summary computes the numbers of a run's stakeholder summary.
//
// Build makes the typed data behind stakeholder_summary.md, summary.json
// and report.html: environment, per-stage times, MFU, top operators, top
// kernels with category and bound, regions, GPU busy and idle per phase
// from a CUPTI timeline, communication against compute per rank in a
// multi-GPU run, and a narrative written from those numbers.
//
// It reads no files and renders nothing: package rebuild reads the run
// directory into Inputs, Build computes, package render writes the
// Markdown, JSON, HTML and charts. A section whose input is missing carries
// the reason instead of numbers; nothing here prints zero for data that
// does not exist.
package summary
