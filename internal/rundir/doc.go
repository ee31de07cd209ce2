// Package rundir is the run directory (MAIN): layout, manifest, writes.
//
// A run directory is what deepprof made: Create marks each one it makes
// (RunMark, WriteMark), and Open, the one detection every command and
// deepproftest ask, refuses a folder without that mark before reading
// anything else in it.
//
// It holds the one registry of a run directory's files with their kinds
// (raw tool output, log, provenance, derived, the index; layout.go), the
// manifest that says what became of each artifact (complete, partial,
// skipped, missing, absent from this copy, and why), which sources the
// derived files were made from and how long each step ran, run ids, and
// the atomic writes every file goes through (AtomicFile, WriteAtomicIn:
// a reader never sees half a file, and a write never follows a link out
// of MAIN). Run opens a file of a run plain or gzipped, as recorded runs
// keep them.
//
// Make plans the merge of the run directories of one multi-node session
// into one, and Plan.Write copies it: past one machine, each node runs
// deepprof profile with the same configuration and launcher (its ranks'
// CUPTI records under timeline/cupti/, each rank's deep pass under
// ncu/ranks/rank<R>/ named by its global rank), and the merged directory
// holds every rank's raw outputs, to be rebuilt by package rebuild as one
// run. A merge copies raw
// files; it parses none and renders nothing. Files are streamed, so its
// memory does not grow with the ranks.
//
// It decides names and writes bytes. It does not parse tool output
// (packages ncu, nsys, cupti, workload do), render (package render) or
// rebuild the derived files (package rebuild does, deepprof report MAIN);
// it runs no program (package session does).
package rundir
