package model

// HowToMark says how a program marks its phases with NVTX ranges, in the
// three ways a profiled program most often can: what a run of a program
// with no range says.
const HowToMark = "PyTorch: torch.cuda.nvtx.range_push(\"prefill\") / range_pop(); Python: the nvtx package, `with nvtx.annotate(\"prefill\")`; C/C++: nvtxRangePushA(\"prefill\") / nvtxRangePop() from <nvtx3/nvToolsExt.h>"
