#!/bin/bash
# second-start.sh OUT NAME...: what a session's second start of the program
# costs (issue 52's design study), on a GPU machine, from the repository
# root, with the deepprof binary (DEEPPROF, default .gpu/deepprof). For each
# corpus program NAME (jax, hf-auto, cpp: scripts/corpus/record.sh's), times
#   plain      the program alone
#   ncu-none   the program under ncu with a kernel filter that matches no
#              kernel: a second start under ncu, nothing profiled (the floor
#              of any deep pass made in a process of its own)
#   session    `deepprof profile` of it, with each step's time from its
#              manifest (stage 1, the CUPTI run, the deep pass, the exports)
# and prints one line each to OUT/second-start.txt.
set -uo pipefail
out=$(realpath -m "${1:?usage: second-start.sh OUT NAME...}")
shift
dp=$(realpath "${DEEPPROF:-.gpu/deepprof}")
ncu=${NCU:-/usr/local/cuda/bin/ncu}
mkdir -p "$out/work" "$out/runs"
cp scripts/corpus/*.py scripts/corpus/*.cu "$out/work/"
cd "$out/work"
wall() { # label, argv...: runs it, prints its wall seconds
	local label=$1; shift
	local t0=$(date +%s.%N)
	"$@" >"$out/$label.log" 2>&1
	local rc=$?
	echo "$label rc=$rc wall_s=$(python3 -c "print(round($(date +%s.%N)-$t0,2))")" | tee -a "$out/second-start.txt"
}
for name in "$@"; do
	env=()
	case $name in
	jax) env=(XLA_PYTHON_CLIENT_PREALLOCATE=false); argv=(python3 jax_decode.py --layers 4 --generates 3) ;;
	hf-auto) argv=(python3 hf_generate.py --layers 4 --generates 3) ;;
	cpp) nvcc -O2 -arch=sm_90 -o decode_loop decode_loop.cu || continue; argv=(./decode_loop) ;;
	*) echo "second-start.sh: unknown program $name" >&2; continue ;;
	esac
	wall "$name-plain" env "${env[@]}" "${argv[@]}"
	wall "$name-ncu-none" env "${env[@]}" "$ncu" --target-processes all -k regex:^deepprof_matches_no_kernel$ "${argv[@]}"
	over=()
	[ "$name" = jax ] && over=(+workload.env.XLA_PYTHON_CLIENT_PREALLOCATE=false)
	wall "$name-session" "$dp" profile run.root="$out/runs" run.id="$name" timeline.top_n=3 timeline.coverage=0.5 timeline.max_kernels=6 \
		workload.timeout=4m ncu.timeout=3m "${over[@]}" -- "${argv[@]}"
	python3 - "$out/runs/$name/manifest.json" "$name" <<'PY' | tee -a "$out/second-start.txt"
import json, sys
m = json.load(open(sys.argv[1]))
print(sys.argv[2], "steps:", ", ".join("%s %.1f s" % (s.get("step"), s.get("duration_s", 0)) for s in m.get("steps", [])))
PY
done
