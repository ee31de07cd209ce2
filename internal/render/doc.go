// Package render writes results as Markdown, JSON, HTML, SVG and a trace.
//
// It renders typed results to an io.Writer (or a buffer): the kernel table
// (kernels.md, kernels.json), region reports (ncu/regions/), the
// stakeholder summary (stakeholder_summary.md, summary.json, report.html
// with its SVG charts), a run comparison (deepprof diff's Markdown) and the
// CUPTI timeline as a Perfetto trace (timeline/trace.json.gz). Everything
// it prints comes from the values it is given: it parses no tool output,
// aggregates nothing and decides nothing about a run. It writes no file:
// package rebuild commits what it renders (the trace streamed, through
// rundir.WriteAtomicIn).
//
// Names that come from a profiled program (kernel names, NVTX ranges) are
// data, never markup: EscapeCell escapes them in Markdown, the charts make
// them valid XML text, and hidden runes are shown escaped (see package
// input).
//
// # Markdown
//
// Table writes GitHub-flavoured Markdown tables: cell escaping, the table
// layout and the number formats of its columns; every report of this
// package uses it. Text (Render) shows that Markdown (headings,
// paragraphs, lists, GFM tables) as plain text for a terminal: escapes
// resolved, tables aligned in columns, numbers right-aligned where the
// Markdown says so, long names cut to fit so that names that differ still
// read apart (cutColumn). The Markdown stays the one rendering of a
// report; the text is a view of it.
//
// # Charts
//
// Bars (a horizontal bar chart) and Roofline (a log-log roofline) take
// typed values and return the bytes of a standalone SVG document, drawn
// with gonum.org/v1/plot and its SVG backend (vg/vgsvg). They are layout
// code only: the caller has already chosen what to show, in what order and
// in which unit, and passes labels and numbers. The same input gives
// byte-identical output. charts_doc.go says how every string shown is made
// safe and how Inspect counts what was drawn.
//
// # Trace
//
// Write writes a timeline (package timeline) as Chrome trace event JSON,
// the format Perfetto's UI (ui.perfetto.dev) and chrome://tracing open.
// Each CUDA process's threads carry its NVTX push/pop ranges, its launch
// calls and its marks; each (process, device) is a track group of its own,
// "GPU d (pid p)", with one track per stream holding kernels, memcpys and
// memsets. Start/end ranges, which need not nest, are async events of
// their process. Kernels are "X" events with cat "kernel" and the kernel's
// name as kernels.json writes it; args hold the launch configuration,
// correlation id and NVTX path. Categories and args are those PyTorch's
// profiler (Kineto) writes, with a rank (distributedInfo), so Holistic
// Trace Analysis reads the trace too (docs/run-directory.md). Times are microseconds from the timeline's
// earliest record (otherData.origin_ns), written exactly from integer
// nanoseconds. The writer streams: it holds one event at a time, never the
// document; it reads the timeline and computes nothing.
package render
