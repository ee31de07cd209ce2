package summary

import (
	"cmp"
	"fmt"
	"iter"
	"path"
	"regexp"
	"strings"

	"github.com/llm-perf-opt/deepprof/facts"
)

var (
	// pythonExe is a Python interpreter's file name: python, python3,
	// python3.12.
	pythonExe = regexp.MustCompile(`^python[0-9.]*$`)
	// inductorKernel is a kernel torch.compile's Inductor generated:
	// pointwise, persistent reduction, reduction and template kernels.
	inductorKernel = regexp.MustCompile(`^triton_(poi|per|red|tem)_`)
	// atenKernel is a kernel of PyTorch's ATen library (at::native::…).
	atenKernel = regexp.MustCompile(`(^|[^A-Za-z0-9_])at::`)
	// xlaKernel is a kernel XLA generated or launched: its fusions
	// (gemm_fusion_dot.12, fusion_167, loop_multiply_fusion) and
	// StreamExecutor's own kernels.
	xlaKernel = regexp.MustCompile(`^gemm_fusion_dot|^fusion(_[0-9]+)?$|_fusion(_[0-9]+)?$|stream_executor::`)
	// libraryKernel is a kernel of NVIDIA's GEMM libraries (cuBLAS's nvjet,
	// CUTLASS), which PyTorch calls from Python.
	libraryKernel = regexp.MustCompile(`nvjet|cutlass`)
)

// graphLaunch reports whether an API function launches a CUDA graph
// (cudaGraphLaunch, cuGraphLaunch and their per-thread-stream forms).
func graphLaunch(function string) bool {
	return strings.HasPrefix(function, "cudaGraphLaunch") || strings.HasPrefix(function, "cuGraphLaunch")
}

// ProgramOf is the rule for the kind of program a run profiled, from what
// its records hold: exes are the executables of the processes that
// launched kernels ("" where a record file names none, and none at all
// for a run with no CUPTI records), kernels the names of the kernels it
// ran (in the order that picks Program.Kernel), apis the API function of
// each call it made (its A records).
//
//   - Native executables alone (any but a Python interpreter; one Python
//     process among them makes it a Python program) are a C/C++ program,
//     whatever libraries they call: libtorch and XLA from C++ have no
//     torch.compile or jax.jit to turn to.
//   - Else (a Python interpreter, or no executable known) the kernels say
//     it, first match wins: Inductor's kernels (triton_poi_, triton_per_,
//     triton_red_, triton_tem_) are torch.compile; ATen's (at::) PyTorch;
//     XLA's (gemm_fusion_dot*, fusion_N, *_fusion, stream_executor::)
//     JAX; and, under a Python interpreter, cuBLAS's nvjet or CUTLASS
//     kernels PyTorch.
//   - Anything else is unknown.
//
// The graph launches (cudaGraphLaunch, cuGraphLaunch) are counted
// whatever the kind: a program that launches graphs already uses them.
func ProgramOf(exes, kernels []string, apis iter.Seq[string]) facts.Program {
	p := facts.Program{Kind: facts.ProgramUnknown}
	for a := range apis {
		if graphLaunch(a) {
			p.GraphLaunches++
		}
	}
	python, native := "", ""
	for _, e := range exes {
		switch {
		case e == "":
		case pythonExe.MatchString(path.Base(e)):
			python = cmp.Or(python, e)
		default:
			native = cmp.Or(native, e)
		}
	}
	p.Exe = cmp.Or(python, native)
	if python == "" && native != "" {
		p.Kind = facts.ProgramNative
		return p
	}
	first := func(re *regexp.Regexp) string {
		for _, k := range kernels {
			if re.MatchString(k) {
				return k
			}
		}
		return ""
	}
	rules := []struct {
		re   *regexp.Regexp
		kind facts.ProgramKind
		ok   bool
	}{
		{inductorKernel, facts.ProgramTorchCompile, true},
		{atenKernel, facts.ProgramPyTorch, true},
		{xlaKernel, facts.ProgramJAX, true},
		{libraryKernel, facts.ProgramPyTorch, python != ""},
	}
	for _, r := range rules {
		if !r.ok {
			continue
		}
		if k := first(r.re); k != "" {
			p.Kind, p.Kernel = r.kind, k
			return p
		}
	}
	return p
}

// levers are a program kind's words for what takes the host out of the
// way: one kind's advice never names another's tools (no torch.compile
// to a program that is not PyTorch, no Python to a C/C++ one).
type levers struct {
	graphs string // what puts a step's launches into CUDA graphs
	busy   string // the GPU-busy rung's lever: graphs, batching, fewer kernels
	fuse   string // what fuses small kernels with their neighbours
	host   string // what the host's time goes to
	// tensorCores is what moves an FP32 GEMM onto TF32 or BF16 tensor
	// cores.
	tensorCores string
}

// The kinds' words for moving an FP32 GEMM onto the tensor cores.
const (
	tensorCoresPyTorch = `TF32: torch.backends.cuda.matmul.allow_tf32 = True, or torch.set_float32_matmul_precision("high"); BF16: the model in torch.bfloat16, or torch.autocast`
	tensorCoresNative  = "TF32: cublasSetMathMode(handle, CUBLAS_TF32_TENSOR_OP_MATH); BF16: BF16 inputs to cublasGemmEx or cublasLt; a GEMM of your own moves to cuBLAS or to WMMA/MMA instructions"
	tensorCoresJAX     = `TF32: jax.default_matmul_precision("tensorfloat32"), the default unless precision=HIGHEST asks for FP32; BF16: jnp.bfloat16 arrays`
	tensorCoresAny     = "TF32: the framework's TF32 setting for FP32 matmuls, cublasSetMathMode(handle, CUBLAS_TF32_TENSOR_OP_MATH) in cuBLAS; BF16: BF16 inputs"
)

// leversOf are p's levers.
func leversOf(p facts.Program) levers {
	const batch = ", larger batches or fewer, fused kernels"
	more := ""
	if p.GraphLaunches > 0 {
		more = fmt.Sprintf("more of each step in CUDA graphs (the run launched %d: what runs outside them still launches kernel by kernel", p.GraphLaunches)
	}
	switch p.Kind {
	case facts.ProgramPyTorch:
		l := levers{graphs: `CUDA graphs or torch.compile (mode="reduce-overhead" does both; torch.cuda.graph captures by hand)`,
			fuse: "torch.compile", host: "Python, PyTorch, launches", tensorCores: tensorCoresPyTorch}
		if more != "" {
			l.graphs = more + `; torch.compile mode="reduce-overhead" captures what it compiles)`
		}
		l.busy = l.graphs + batch
		return l
	case facts.ProgramTorchCompile:
		l := levers{graphs: `CUDA graphs, which torch.compile did not capture (no graph launch is recorded: mode="reduce-overhead" captures them, unless dynamic shapes, CPU ops or graph breaks keep them out; TORCH_LOGS="graph_breaks,recompiles" shows why)`,
			fuse: "torch.compile, over more of the step", host: "Python, PyTorch, launches", tensorCores: tensorCoresPyTorch}
		if more != "" {
			l.graphs = more + `; graph breaks and dynamic shapes keep code out of them, and TORCH_LOGS="graph_breaks,recompiles" shows where)`
		}
		l.busy = l.graphs + batch
		return l
	case facts.ProgramNative:
		l := levers{graphs: "CUDA graphs through the CUDA Graphs API (capture a step once with cudaStreamBeginCapture/cudaStreamEndCapture, replay it with cudaGraphLaunch)",
			fuse: "in a kernel of your own", host: "the program's own code and its launches", tensorCores: tensorCoresNative}
		if more != "" {
			l.graphs = more + "; stream capture with cudaStreamBeginCapture takes them in)"
		}
		l.busy = l.graphs + batch
		return l
	case facts.ProgramJAX:
		l := levers{graphs: "XLA's command buffers (CUDA graphs: XLA_FLAGS=--xla_gpu_enable_command_buffer=... names the ops they take)",
			fuse: "jax.jit over more of the step: XLA fuses what one jit holds", host: "Python, JAX's dispatch, launches", tensorCores: tensorCoresJAX}
		if p.GraphLaunches > 0 {
			l.graphs = fmt.Sprintf("more of each step in XLA's command buffers (CUDA graphs: the run launched %d; XLA_FLAGS=--xla_gpu_enable_command_buffer=... names the ops they take)", p.GraphLaunches)
		}
		l.busy = l.graphs + ", fewer, larger jitted steps (one jax.jit over a whole step, lax.scan over the loop), larger batches"
		return l
	}
	host := "the program, its framework, launches"
	if pythonExe.MatchString(path.Base(p.Exe)) {
		host = "Python, the framework, launches"
	}
	l := levers{graphs: "CUDA graphs", fuse: "fused kernels", host: host, tensorCores: tensorCoresAny}
	if more != "" {
		l.graphs = more + ")"
	}
	l.busy = l.graphs + batch
	return l
}
