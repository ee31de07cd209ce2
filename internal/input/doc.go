// Package input reads untrusted input safely: size caps, gzip, CSV, JSON.
//
// Every file deepprof reads comes from a profiler, a workload or a user, and
// is read as data that may be wrong, huge or hostile. This package holds the
// rules every reader shares, each in one place:
//
//   - ReadAll, ReadFile and Tail read a whole file (a run's manifest, a
//     baseline, a workload report, env.json, summary.json, a profile's YAML)
//     with a cap, MaxBytes, so that a wrong argument (/dev/zero, a disk
//     image) is an error naming it instead of memory that grows until the
//     machine runs out. Streaming readers (the ncu and nsys CSV readers)
//     bound each line and record themselves.
//   - IsGzip, Maybe and Reader open input that may be gzipped (recorded runs
//     keep their large exports and CUPTI records as .gz): how gzip is
//     recognized, and what a stream cut short is called.
//   - Scanner splits CSV into records and fields fast enough to stream
//     multi-gigabyte profiler exports, with the line of every record.
//   - Offset and Line find where in a JSON document encoding/json's error
//     is, so that readers of JSON files write file:line errors; each reader
//     says in its own words what an empty or cut-off file means.
//   - CheckFinite finds a number that is not finite (NaN, ±Inf) in a value
//     about to be written as JSON and names it by its JSON path
//     ("stages.rows[0].mean_ms"), where encoding/json's "json: unsupported
//     value: +Inf" says neither where nor why. It is a last check before a
//     writer: readers refuse non-finite values, and sums that would
//     overflow, where they read them, with the file and line.
//   - IsHidden, EscapedRune and EscapeName are the one rule for the
//     characters of a profiled program's names (kernels, NVTX ranges) that
//     a reader cannot see or that reorder the text around them: every
//     renderer (Markdown tables, SVG charts, the command line's messages)
//     shows them escaped, as \u202e (\U000e0041 past U+FFFF), never raw,
//     and a backslash that could read as part of such an escape doubled
//     (EscapesBackslash), so that no name shows as another. EscapeHidden
//     is the same without the backslashes, for a message that may hold
//     names already shown.
//   - LimitForTest, OverLimit and FIFOForTest make SYNTHETIC oversize
//     inputs for the tests of capped readers, without linking package
//     testing into the binaries.
//
// It imports nothing of deepprof and knows no file format beyond CSV and
// JSON's positions: what a record or a field means is its reader's.
//
// # CSV
//
// Scanner reads quotes the way encoding/csv does with LazyQuotes: a quote
// inside a quoted field that is not doubled and not followed by a comma or a
// line end is taken literally. Nsight Compute needs that: it writes NVTX
// range names holding quotes without doubling them
// (fixtures/ncu/cuda-nvtx-domains). It is stricter than LazyQuotes in one
// place: a quoted field still open at the end of input is an error (a cut
// file), not a field.
//
// A record's end is found by walking its fields (one vectorized search for
// the closing quote per field); Fields then hands out slices of the record
// without copying, except for fields that hold escaped quotes or CRLF.
// Fields alias the scanner's buffer and are valid until the next call to
// Next.
//
// A fuzz test holds it to encoding/csv: input that encoding/csv reads
// without LazyQuotes is read the same here, and what is read here is read
// the same by encoding/csv with LazyQuotes. A byte-order mark at the very
// start is skipped. It is not a general CSV library: no other separators,
// no comments, no writer.
package input
