// Package ncu is Nsight Compute: its exports read, its argv, its logs read.
//
// Reader reads ncu's CSV exports into model.Launch values: the raw page
// (one row per kernel launch, a units row under the header), the details
// page (one row per metric, plus rule rows) and --log-file captures
// (==PROF== lines and the workload's output before the header), plain or
// gzip-compressed. Beside the reader: Pass builds the argv of an ncu pass
// and ExportArgs of its exports (slices for exec.Command, no shell);
// KernelRegex and MangledFunctionRegex the deep pass's kernel filters;
// SpellingKey matches a kernel's name as CUPTI and ncu spell it; Diagnose
// says what went wrong in an ncu log, and Progress follows a pass from
// ncu's own lines.
//
// The Reader streams: it holds one record at a time, so memory does not grow
// with the input. It is shaped like bufio.Scanner: NewReader, Scan, Record,
// Err. A malformed row is a non-fatal *model.SyntaxError record that prints
// "file:line: what"; only I/O errors and a file that cannot be read at all
// (no header, no kernel-name or duration column, no units row) end the read.
//
// Scan reads an export once and hands every launch to several Handlers (the
// kernel table, the region reports, the classification), each with its own
// error, so that each export is read once for all the results made from it.
//
// It parses and builds argv; it does not aggregate (model.KernelAggregator,
// packages kernels and regions do) and does not run ncu (package session
// does).
package ncu
