// Package workload is what a run says of itself: report, oracle, env.
//
// It is the contract between deepprof and any workload: the argv and
// environment a session runs it with (Spec, Phase and the Env* names: which
// step it is in, where to write its report, which GPU it sees) and the JSON
// report it writes (Report: stage times per repeat, operators, the model's
// identity). This is what lets any LLM, in any framework, be profiled with no
// change to deepprof. Beside it are what a run directory records of the
// rest of a run: stage1/runs.json, the wall times of a program that writes
// no report (Runs); env.json, the GPU as NVML reports it, the profilers and
// their versions, and the host (EnvInfo); and the oracle's figures.
//
// It reads and checks; it runs nothing (package session does), renders
// nothing and knows no model.
//
// # The oracle
//
// Figures are an independent source's figures for a run's kernel times,
// and Check is the rule by which a timeline is checked against them. The
// source is torch.profiler (PyTorch's CUPTI client, kineto), run by the
// default workload in a separate plain run with DEEPPROF_PHASE=oracle: its
// prefill and its decode loop each inside a profiler session of their own,
// CUDA activity only (scripts/workloads/hf_causal_lm.py, oracle()). The
// workload writes the figures to timeline/oracle-torch-profiler.json, so the
// check is redone offline, from the run directory alone. A tensor-parallel
// run (one process per GPU under torchrun) writes one file for all its
// ranks: phases and kernels summed over them, as the timeline's regions sum
// over its processes, and each rank's own figures, with its collective
// (NCCL) time, which is checked against the timeline's on the same device.
package workload
