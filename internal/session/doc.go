// Package session runs a Stage 2 deep-profiling session (DESIGN.md's data
// flow); at its end, package rundir makes the derived files from what the
// steps wrote.
//
// Every external program is run through a Runner, so the whole flow runs in
// tests against fakes that replay recorded tool output; the argv of each step
// comes from packages ncu and nsys, parsing from ncu, kernels and regions,
// rendering from report, the run directory's layout and manifest from
// artifacts. This package decides the order of steps, what
// each failure means for the run, and what lands where in MAIN.
//
// Decisions it makes on its own, each said in the plan or the manifest's
// notes: the timeline comes from nsys when a usable one is found (its
// version read; timeline.tool=auto), else from an ncu timing pass, and an
// nsys that writes no report gives way to the ncu timing pass; the deep
// pass filters on the function names of the timeline's top kernels (derived
// from their demangled names); under ncu the workload runs once
// (DEEPPROF_REPEATS=1); the timing
// pass always uses kernel replay; a deep pass whose range or app-range
// replay ncu refuses runs again with kernel replay, keeping the refused
// attempt's log as ncu/deep-range.log; an interrupted session keeps what it
// did and says "interrupted during STEP". Each step (a StepID) has a
// deadline from workload.timeout, ncu.timeout or nsys.timeout, by what runs
// it (Session.deadline; the dry run prints it); a step that reaches it is
// stopped like an interrupted one, recorded as timed out, and the run ends
// partial with the deadline to raise. The log of a stopped step is kept and
// not diagnosed. A multi-GPU workload (workload.launcher) runs every step
// under its launcher, needs the CUPTI timeline, and its deep pass is one
// ncu per rank started by the wrapper of package ranks (ranks.go), the
// collectives left out (withoutCollectives).
package session
