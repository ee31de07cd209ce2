// Package session runs a Stage 2 deep-profiling session (DESIGN.md's data
// flow) and rebuilds a run directory's derived files from its raw exports.
//
// Every external program is run through a Runner, so the whole flow runs in
// tests against fakes that replay recorded tool output; the argv of each step
// comes from packages ncu and nsys, parsing from ncu, kernels and regions,
// rendering from report. This package decides the order of steps, what
// each failure means for the run, and what lands where in MAIN.
package session
