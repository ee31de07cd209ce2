// Command deepprof profiles LLM inference on NVIDIA GPUs and reports on it.
//
// Usage:
//
//	deepprof profile [--profile NAME]... [--dry-run] [key=value]... [-- CMD ARGS...]
//	deepprof report [--top N] MAIN
//	deepprof merge --out MAIN RUN...
//	deepprof diff [--threshold 5%] [--gate gpu|host] [--format text|md|json|csv] [--allow-mismatch] [--allow-partial] RUN_A RUN_B
//	deepprof baseline [--top N] [--gate gpu|host] [--allow-partial] MAIN [RUN...]
//	deepprof kernels [--top N] [--format md|json] FILE|-
//	deepprof regions [--format md|json] [--out DIR] ... FILE|-
//
// profile runs a Stage 2 session (a preflight, stage 1, the timeline, the
// deep ncu pass) into a new run directory MAIN; report rebuilds a run's
// derived files from its raw outputs, with no GPU; merge gathers the run
// directories of one multi-node session into one; diff compares two runs
// or a run and a baseline, and exits 1 on a regression; baseline prints a
// run's baseline file (of several runs of a program: with the spread
// between them); kernels and regions read one ncu CSV export.
//
// Run "deepprof help" for every command and "deepprof COMMAND --help" for a
// command's flags; docs/cli.md is the reference. Exit status: 0 on
// success, 1 on bad input (with "deepprof: FILE:LINE: what is wrong"), 2 on
// a bad command line; deepprof diff 2 also when a part could not be
// compared.
//
// The command is a thin layer over the library: package harness (report),
// the internal session (profile), and the internal packages of each
// command. It holds flags, exit statuses and what is printed.
package main
