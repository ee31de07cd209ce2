// Package ncu reads Nsight Compute's CSV exports: the raw page (one row per
// kernel launch, a units row under the header), the details page (one row per
// metric, plus rule rows) and --log-file captures (==PROF== lines and the
// workload's output before the header), plain or gzip-compressed.
//
// The Reader streams: it holds one record at a time, so memory does not grow
// with the input. It is shaped like bufio.Scanner: NewReader, Scan, Record,
// Err. A malformed row is a non-fatal *SyntaxError record that prints
// "file:line: what"; only I/O errors and a file that cannot be read at all
// (no header, no kernel-name or duration column, no units row) end the read.
//
// Scan reads an export once and hands every launch to several Handlers (the
// kernel table, the region reports, the classification), each with its own
// error, so that each export is read once for all the results made from it.
//
// It parses; it does not aggregate (package kernels and regions do) and does
// not run ncu.
package ncu
