// Package cupti reads and writes deepprof's CUPTI record files.
//
// The format, deepprof-cupti/1, has one file per CUDA process, written by
// deepprof's CUPTI injection library (built and loaded by package session,
// which documents each record) into $DEEPPROF_CUPTI_DIR/cupti-<pid>.tsv. It
// is the shared contract between that C library and this package: one
// record per '\n'-terminated line, fields separated by one TAB, string
// fields escaped (\\ \t \n \r), integers in decimal, timestamps in
// CUPTI's nanoseconds. The first line is a "#deepprof-cupti/1" header; the
// last, "E", is written only when the process exits normally.
//
// The Reader streams (it holds one record at a time) and is shaped like
// bufio.Scanner: NewReader, Scan, Record, Err; NewParallelReader parses a
// large file's lines on several cores and returns the same records in the
// same order (Close it when the read stops early); with ReuseRecords its
// kernel, API and NVTX records last until the next Scan, made in memory it
// reuses, for a caller that copies what it keeps. Gzip input is recognized by
// its magic bytes. A malformed line is a non-fatal *SyntaxError record that
// prints "file:line: what"; only I/O errors and a file whose first line is
// not a header end the read. A file without the final E line was cut short
// (a crash or a kill): what it holds is returned as usual and Truncation says
// so; an unfinished last line is dropped, since everything before it is
// valid. Records are returned in file order, which is not time order (CUPTI
// delivers its buffers as they complete): putting them in order and
// attributing kernels to NVTX ranges is package timeline's job.
//
// The Writer writes records in the canonical form: a file read and written
// back reads as the same records.
package cupti
