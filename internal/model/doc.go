// Package model is the shared vocabulary of deepprof: launches, kernels, ranges, units.
//
// The readers (packages ncu, nsys, cupti through timeline) turn a tool's
// bytes into these types, and the analyses, the renderers and the
// comparisons take them, so that a kernel, a range path, a phase or a unit
// means one thing everywhere. It holds:
//
//   - Launch, one profiled result (a kernel launch, or with range replay a
//     whole NVTX range) with its metrics, rules and push/pop Stack; Export,
//     Handler and Launches, what one scan of an export hands to every
//     analysis; SyntaxError, a positioned problem with the input.
//   - Kernel, KernelTable and KernelAggregator: the kernel table, the
//     kernels.json contract, summed per kernel name and device.
//   - Range, Path, ParsePath and the tools' spellings of a range (below).
//   - FunctionName: a demangled kernel name's function name, as ncu prints
//     it with --print-kernel-base function.
//   - Scale, Lookup and Value: the one table of unit spellings (below).
//   - Names: which stages are an inference's prefill and decode (below).
//   - Sample, Summary, Welch, PairedRatio: statistics of repeats; Between:
//     a figure's spread between runs (below).
//   - Tolerances and Thresholds: how far a run may move from its baseline.
//   - RegionDir (a profiled program's range name as a safe folder name),
//     the names nsys gives its files (NsysStatsCSVPath, NsysExtReport...)
//     and the display scales (Decimals, Fixed, FormatPercent, FormatMS).
//
// The types it shares with what deepprof writes (DeviceID, Range, the
// kernel table's rows, Thresholds, Summary, Between) are declared in
// package facts, the public data, and named here; it imports nothing else
// of deepprof. It reads no file, aggregates nothing by
// region and renders nothing: reading exports is packages ncu, nsys and
// cupti's job, regions are package regions', rendering package render's.
//
// # Units
//
// Nsight Compute and Nsight Systems write values in units of their own
// choosing per column; values are converted to base units at parse time.
// Base units are the ones ncu prints with --print-units base: ns for time,
// byte for sizes, hz for frequencies, cycle, %, and plain counts. A Value
// keeps the original text and unit beside the normalized number, so a
// writer can reproduce the input exactly. No other package parses a unit
// string: callers Lookup a spelling once per column and use the Scale it
// returns for every value of that column. It is not a general
// physical-units library: it knows what the profilers write and says
// plainly (Known == false) when it meets anything else.
//
// # Range paths
//
// This is the one place that knows how deepprof names NVTX ranges: the
// Range type (a domain and a range name), and the range path that region
// reports write and configuration reads back (Path, ParsePath,
// Configured). Path is facts.Path: the path is a region's name in what
// deepprof writes. The tools' own spellings are their readers': ncu's stack
// column and --nvtx-include expressions (ncu.ParseStackEntry,
// ncu.IncludeExpr, ncu.Include), nsys's --nvtx-capture value and nvtx_sum
// Range column (nsys.CaptureRange, nsys.ParseRange).
//
// A stack of ranges is written, outermost first, as its levels joined by
// '/'. A level in the default domain is its name; a level in a named domain
// is "Domain@name". Inside a level, '\' escapes the next character: a '/' in
// a name is written `\/`, a '\' is written `\\`, and an '@' in a
// default-domain name (or in a domain name) is written `\@`, so that the
// default-domain range literally named "LLM@decode_all" ("LLM\@decode_all")
// and range "decode_all" of domain "LLM" ("LLM@decode_all") keep distinct
// names. An '@' after the first one of a level is part of the name. So
// ParsePath(Path(levels)) gives levels back for every stack whose names are
// not empty; ParsePath reads a '\' before any other character as itself.
//
// The same path is what nvtx.include takes (Configured): levels written
// without a domain take the configured default domain (nvtx.domain). NVTX keeps one
// push/pop stack per domain, so one ncu expression names ranges of one
// domain: a path that mixes domains (prefill/CCCL@cub::DeviceScan::InclusiveScan)
// is a region deepprof reports but not a filter ncu can take.
//
// # Phases
//
// Names says which stages of a run are an inference's prefill and decode:
// the stage names or patterns configured as phases.prefill and
// phases.decode. It is the one place that rule lives; the summary's tokens,
// MFU, charts and GPU-busy figures ask it.
//
// # Statistics
//
// This is the one place where repeated measurements become figures: the
// warm-up rule, the mean and standard deviation of what is kept, and
// Welch's t-test between two such summaries; and, where several runs of
// one program were kept (a baseline of several processes), a figure's
// spread between them (Between). Every report that shows a
// figure made from repeats (the stakeholder summary's stage rows, tokens/s
// and MFU; deepprof diff; performance baselines) takes it from here, so
// that one run's stage has one mean everywhere. It is in the spirit of
// golang.org/x/perf's benchmath (a Sample, its Summary, one comparison),
// with the test chosen for the few repeats a workload gives (package
// compare's documentation says why Welch's t-test and not a rank test).
// Callers pass a stage's repeats in ms and print what comes back.
//
// # Tolerances
//
// Tolerances are how far a run may move from its performance baseline
// before a check fails: the profile's `baseline` section (package config
// composes and validates it) and what package compare checks a run with.
// What a tolerance means for each part (a stage's Welch's test, a kernel's
// appearance...) is package compare's rule; this package only holds the
// numbers and their defaults, so that config can hold tolerances without
// depending on compare.
package model
