// Package kernels says what a kernel is: its category, bound, ncu's rules.
//
// It holds what the stakeholder report says about each kernel beyond its
// time: its category (GEMM, attention, normalization, ...), from its name;
// what bounds it (memory, compute or latency), from the deep ncu pass's
// metrics; and ncu's guided analysis, the rule rows of a deep pass's
// details page, aggregated over each kernel's profiled launches.
//
// It holds typed data and pure functions. It does not parse CSV (package
// ncu does), does not make the kernel table (model.KernelAggregator does)
// nor aggregate by region (package regions does), does not order the
// advice into recommendations (package summary does) and does not render
// (package render does).
//
// # Categories
//
// A Categories table is an ordered list of name=regex entries; the first
// pattern that matches a kernel name gives the category, and a name no
// pattern matches is "other". DefaultSpecs is the built-in table, which the
// profile's report.categories may replace. It classifies by what a name
// says and nothing more: an RMSNorm written as PyTorch pow, mean, rsqrt and
// mul kernels is elementwise, reduction, elementwise and elementwise. Split-K
// reduction kernels of cuBLASLt belong to gemm, and so do convolutions run as
// implicit GEMM; a standalone softmax, top-k, sort or scan to reduction
// (softmax inside an attention kernel is attention); a copy, dtype cast,
// fill or gather that PyTorch runs through its elementwise machinery
// (unrolled_elementwise_kernel<direct_copy_kernel_cuda...>,
// vectorized_elementwise_kernel<FillFunctor...>) to copy.
//
// # Metrics
//
// MetricsFromReader sums a deep-pass export per kernel name: launches,
// duration, the two SOL throughputs (duration-weighted means), FLOPs and
// DRAM bytes.
// FLOPs are the tensor-core ops (sm__ops_path_tensor_src_<type>.sum, which
// count one multiply-add as two ops: a 512-token 4096x4096 BF16 projection
// counts 2*512*4096*4096; not the sm__ops_path_tensor_op_* breakdown, which
// counts the same work again) plus the non-tensor floating-point
// instructions, weighted as ncu's roofline weighs them: 1 for add and mul, 2
// for fma, and twice that for the packed half-precision instructions. The
// roofline set exports those as per-cycle rates
// (smsp__sass_thread_inst_executed_op_<op>_pred_on.sum.per_cycle_elapsed),
// turned back into counts with smsp__cycles_elapsed.avg. Kernels that do no
// arithmetic can show a few FLOPs: the recorded copy kernels execute HFMA2
// instructions, which compilers also use to move values. DRAM bytes are
// dram__bytes.sum.per_second times the duration.
//
// # Bounds
//
// Classify applies one of two rules, with a threshold that defaults to 60%
// of peak:
//
//   - sol, preferred, when the pass measured ncu's Speed Of Light
//     throughputs (ncu's default and roofline sets do): a kernel whose SM
//     and memory throughput are both below the threshold is latency-bound;
//     otherwise compute-bound when SM throughput >= memory throughput, else
//     memory-bound.
//   - roofline, when there are no SOL throughputs but FLOPs, DRAM bytes and
//     the GPU's peaks are: intensity (FLOP per DRAM byte) below the ridge
//     point (peak FLOP/s / peak byte/s) is memory-bound, otherwise
//     compute-bound; and a kernel achieving less than the threshold of the
//     roof that bounds it (bandwidth, or peak FLOP/s) is latency-bound.
//
// With neither the class is "unknown" and Why says what is missing.
// RuleText says the same in sentences for the report.
//
// # Rules
//
// RulesFromReader (or a RuleAccumulator beside other handlers of one scan)
// gathers each kernel's rule rows: rule name, section, severity, ncu's
// estimated speedup (the duration-weighted mean over the kernel's profiled
// launches) and ncu's own text, cut to one line by OneLine.
package kernels
