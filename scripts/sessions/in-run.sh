#!/bin/bash
# in-run.sh OUT [NAME...]: sessions whose deep metrics are measured in the
# recorded run (ncu.deep_source=library, issue 52), on a GPU machine, from
# the repository root, with the deepprof binary (DEEPPROF, default
# .gpu/deepprof). First compiles the CUPTI library alone with the session's
# flags (a compile error ends the script at once). Then, for each corpus
# program NAME (cpp, eager, hf-auto, jax, compile, graphs, triton, solve:
# scripts/corpus/record.sh's; default: deepprof's own workload, with no
# plain run, and all but solve), times the plain program
# and its session from an empty directory; with BOTH=1, also a session with
# ncu.deep_source=both (the library's metrics beside ncu's, for the check
# that their bounds agree). One line each to OUT/in-run.txt; runs in OUT/runs.
set -uo pipefail
out=$(realpath -m "${1:?usage: in-run.sh OUT [NAME...]}")
shift
names=("$@")
[ ${#names[@]} -eq 0 ] && names=(default cpp eager hf-auto jax compile graphs triton)
dp=$(realpath "${DEEPPROF:-.gpu/deepprof}")
cuda=${CUDA_HOME:-/usr/local/cuda}
mkdir -p "$out/work/cxx-shim" "$out/runs"
: >"$out/work/cxx-shim/string"
libdir=$cuda/lib64
[ -f "$libdir/libcupti.so" ] || libdir=$cuda/extras/CUPTI/lib64
if ! (cd "$out/work" && gcc -shared -fPIC -O2 -std=gnu11 -Wall -Icxx-shim -I"$cuda/include" -I"$cuda/extras/CUPTI/include" \
	-o lib.so "$OLDPWD/internal/session/src/deepprof_cupti.c" -L"$libdir" -lcupti -ldl -lpthread) >"$out/compile.txt" 2>&1; then
	echo "in-run.sh: the library does not compile:"; head -30 "$out/compile.txt"; exit 1
fi
cp scripts/corpus/*.py scripts/corpus/*.cu "$out/work/"
cd "$out/work"
wall() { # label, argv...: runs it, prints its wall seconds
	local label=$1; shift
	local t0=$(date +%s.%N)
	"$@" >"$out/$label.log" 2>&1
	local rc=$?
	echo "$label rc=$rc wall_s=$(python3 -c "print(round($(date +%s.%N)-$t0,2))")" | tee -a "$out/in-run.txt"
}
steps() { # run dir, label: the session's steps and its library notes
	python3 - "$1" "$2" <<'PY' 2>&1 | tee -a "$out/in-run.txt"
import glob, json, sys
run, name = sys.argv[1], sys.argv[2]
m = json.load(open(run + "/manifest.json"))
print(name, "status", m.get("status"), "steps:", ", ".join("%s %.1f" % (s.get("name"), s.get("seconds", 0)) for s in m.get("steps", [])))
for n in m.get("notes", []):
    if "deep pass: made" in n or "measured no launch" in n:
        print(name, "note:", n[:300])
for f in glob.glob(run + "/timeline/cupti/*.tsv*"):
    if f.endswith(".tsv"):
        for line in open(f, errors="replace"):
            if line.startswith("X\tmetric"):
                print(name, f.rsplit("/", 1)[-1], line.strip()[:300])
PY
}
common=(workload.timeout=4m ncu.timeout=3m)
for name in "${names[@]}"; do
	env=() over=()
	case $name in
	jax) env=(XLA_PYTHON_CLIENT_PREALLOCATE=false); over=(+workload.env.XLA_PYTHON_CLIENT_PREALLOCATE=false); argv=(python3 jax_decode.py --layers 4 --generates 3) ;;
	hf-auto) argv=(python3 hf_generate.py --layers 4 --generates 3) ;;
	eager) argv=(python3 torch_decode.py --layers 4 --generates 3 --mode eager) ;;
	compile) argv=(python3 torch_decode.py --layers 4 --generates 3 --mode compile) ;;
	graphs) argv=(python3 torch_decode.py --layers 4 --generates 3 --mode graphs) ;;
	triton) argv=(python3 triton_loop.py) ;;
	cpp) nvcc -O2 -arch=sm_90 -o decode_loop decode_loop.cu || continue; argv=(./decode_loop) ;;
	solve) nvcc -O2 -arch=sm_90 -o solve_loop solve_loop.cu -lcublas || continue; argv=(./solve_loop) ;;
	default) # deepprof's own workload: no plain run to time (its alone repeats are its speed)
		wall "$name-session" "$dp" profile run.root="$out/runs" run.id="$name" "${common[@]}"
		steps "$out/runs/$name" "$name"
		continue ;;
	*) echo "in-run.sh: unknown program $name" >&2; continue ;;
	esac
	wall "$name-plain" env "${env[@]}" "${argv[@]}"
	wall "$name-session" "$dp" profile run.root="$out/runs" run.id="$name" "${common[@]}" "${over[@]}" -- "${argv[@]}"
	steps "$out/runs/$name" "$name"
	if [ "${BOTH:-}" = 1 ]; then
		wall "$name-both" "$dp" profile run.root="$out/runs" run.id="$name-both" "${common[@]}" "${over[@]}" ncu.deep_source=both -- "${argv[@]}"
		steps "$out/runs/$name-both" "$name-both"
	fi
done
