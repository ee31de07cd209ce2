// Package facts is deepprof's public data: summary.json's schema and the other reports' types.
//
// Summary is summary.json, the stakeholder summary as data, and this
// package's documentation is its schema: each key is a field's JSON name,
// present unless the field is marked omitempty, null where the field is a
// pointer and the writer has no value. docs/summary.schema.json is the
// same schema as JSON Schema, made from these types (TestSummarySchema);
// docs/run-directory.md says what each part means. Its sections:
//
//	format          Format ("deepprof-summary/1"): the schema's name and version
//	run_id          the run's id
//	environment     Environment: the GPU, driver and tools, the model (Model), the peaks (Peak), the program's kind (Program)
//	stages          Stages: each stage's wall time over repeats (Stage, StageTimes) and the tokens (Tokens)
//	mfu             MFU: model FLOPs utilization by scope (MFURow)
//	serving         Serving: TTFT, TPOT, tokens/s, the decode's bandwidth floor and MBU
//	operators       Operators: the torch.profiler operator table (Operator)
//	kernels         Kernels: the top kernels (KernelRow), the time by category (CategoryTime), the roofline (RooflinePt)
//	regions         Regions: the NVTX regions' GPU time (RegionRow)
//	phases          Phases: GPU busy and idle per phase (PhaseRow)
//	whatif          WhatIf: each phase's what-if ladder (WhatIfRow, Rung)
//	communication   Communication: collectives against compute, per rank; absent without communication
//	narrative       Narrative: the findings, their typed claims (Claim), what to try (Recommendation)
//	anomalies       what the recording holds that changes these numbers; absent when none
//	trace, partial  the run's trace file; why the session did not finish
//
// A key ending in _ms is in milliseconds, _us in microseconds, _pct in
// percent; a share, a busy or an idle figure, MFU and MBU are fractions of
// 1. A device is a CUDA ordinal as the process that used it numbered it
// (DeviceID). A kernel is named as the timeline wrote it (kernel_name) and
// shown by a short name (display_name: DisplayNames).
//
// The package also holds the data of deepprof's other files: kernels.json's
// rows (KernelTable, KernelStats), the regions report (RegionReport:
// ncu/regions/report.json), phases.json (PhaseReport), the comparison of
// two runs (DiffResult: deepprof diff's JSON), ncu's rules (Rule) and a
// kernel's bound (Bound).
//
// The analyses (deepprof's internal packages) make these values and the
// renderers write them. Facts computes nothing: its exported functions and
// methods only word or name what a value holds, or give a figure it holds
// in base units (Peak.FLOPS), so a renderer that imports it can take a
// number only from a field the analysis set (TestFactsComputeNothing). It
// imports nothing of deepprof.
//
// Packages harness and deepproftest hand out these types (harness.ReadSummary
// gives a Summary); a program of another module imports this package to
// name them.
package facts
