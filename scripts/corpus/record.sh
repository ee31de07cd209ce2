#!/bin/bash
# record.sh OUT NAME...: profile corpus programs with the deepprof binary
# alone, on a GPU machine, into OUT/runs/NAME (then tar them home and bring
# each in with scripts/fixtures/import-run.sh). NAME is one of:
#   hf-auto        hf_generate.py, no NVTX (deepprof's automatic ranges)
#   hf-hooks       hf_generate.py --hooks (the program's ranges, and the automatic ones on)
#   jax            jax_decode.py (no NVTX: phases inferred)
#   tp2            tp_decode.py under torchrun, 2 ranks (2 GPUs)
#   compile        torch_decode.py --mode compile (one `decode` range a token)
#   graphs         torch_decode.py --mode graphs
#   eager          torch_decode.py --mode eager
#   cpp            decode_loop.cu, built with nvcc (no NVTX, no framework)
#   triton         triton_loop.py (its own NVTX ranges; Triton's JIT in its first step)
#   solve          solve_loop.cu, built with nvcc and cuBLAS (its own NVTX ranges;
#                  a one-time set-up in the first step of its one `solve`)
# DEEPPROF is the binary (default .gpu/deepprof). Each program prints its
# own clock (clock.py): stage1/workload.log holds the program alone's lines,
# timeline/workload.log the CUPTI run's.
set -uo pipefail
out=${1:?usage: record.sh OUT NAME...}
shift
here=$(cd "$(dirname "$0")" && pwd)
dp=$(realpath "${DEEPPROF:-.gpu/deepprof}")
mkdir -p "$out/runs" "$out/work"
cd "$out/work"
cp "$here"/*.py "$here"/*.cu .
# A small deep pass: the corpus is about the timeline's figures.
common=(run.root="$out/runs" timeline.top_n=3 timeline.coverage=0.5 timeline.max_kernels=6 workload.timeout=4m ncu.timeout=3m)
for name in "$@"; do
	t0=$(date +%s)
	case $name in
	hf-auto) argv=(profile "${common[@]}" run.id=$name -- python3 hf_generate.py --layers 4 --generates 3) ;;
	hf-hooks) argv=(profile "${common[@]}" run.id=$name -- python3 hf_generate.py --layers 4 --generates 3 --hooks) ;;
	jax) argv=(profile "${common[@]}" run.id=$name +workload.env.XLA_PYTHON_CLIENT_PREALLOCATE=false -- python3 jax_decode.py --layers 4 --generates 3) ;;
	tp2) argv=(profile "${common[@]}" run.id=$name workload.launcher.kind=torchrun workload.launcher.nproc_per_node=2 -- python3 tp_decode.py --generates 3) ;;
	compile) argv=(profile "${common[@]}" run.id=$name -- python3 torch_decode.py --layers 4 --generates 3 --mode compile) ;;
	graphs) argv=(profile "${common[@]}" run.id=$name -- python3 torch_decode.py --layers 4 --generates 3 --mode graphs) ;;
	triton) argv=(profile "${common[@]}" run.id=$name -- python3 triton_loop.py) ;;
	eager) argv=(profile "${common[@]}" run.id=$name -- python3 torch_decode.py --layers 4 --generates 3 --mode eager) ;;
	cpp)
		nvcc -O2 -arch=sm_90 -o decode_loop decode_loop.cu || continue
		argv=(profile "${common[@]}" run.id=$name -- ./decode_loop) ;;
	solve)
		nvcc -O2 -arch=sm_90 -o solve_loop solve_loop.cu -lcublas || continue
		argv=(profile "${common[@]}" run.id=$name -- ./solve_loop) ;;
	*) echo "record.sh: unknown program $name" >&2; continue ;;
	esac
	timeout -s INT 290 "$dp" "${argv[@]}" >"$out/runs/$name.out" 2>&1
	echo "$name: exit $? in $(($(date +%s) - t0)) s" | tee -a "$out/runs/record.log"
	grep -h "^deepprof-clock\|^solve-clock\|^triton-clock" "$out/runs/$name"/stage1/*.log "$out/runs/$name"/timeline/*.log 2>/dev/null | head -3
	tail -3 "$out/runs/$name.out"
done
