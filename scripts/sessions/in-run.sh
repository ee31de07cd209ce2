#!/bin/bash
# in-run.sh OUT [NAME...]: sessions whose deep metrics are measured in the
# recorded run (ncu.deep_source=library, issue 52), on a GPU machine, from
# the repository root, with the deepprof binary (DEEPPROF, default
# .gpu/deepprof). First compiles the CUPTI library alone with the session's
# flags (a compile error ends the script at once). Then, for each corpus
# program NAME (cpp, eager, hf-auto, jax, compile, graphs, triton, solve:
# scripts/corpus/record.sh's; child: scripts/corpus/spawn_child.py running
# the eager decoder; moe: scripts/bench/moe_lm.py; tp2:
# scripts/corpus/tp_decode.py on 2 GPUs under torchrun; default, roofline and
# mixtral: deepprof's own workloads, the second with workloads=llama3-8b
# ncu=roofline, the third workloads=tiny-mixtral, their plain run (the run's
# stage-1 command) timed after the session; all but solve, moe, child, tp2,
# roofline and mixtral when none is named), times the plain program
# and its session from an empty directory, the session with
# ncu.deep_source=$SOURCE (default library) and, with CHECK=1, --check
# (torch.profiler's figures beside the session's); with WARM=1, after an untimed
# plain run (the page and compile caches warm for both; for deepprof's own
# workloads, an untimed session, which also builds the library); with BOTH=1, also a
# session with ncu.deep_source=both (the library's metrics beside ncu's, for
# the check that their bounds agree). One line each to OUT/in-run.txt; each
# program's run directories (less their HTML, trace and charts) and logs are
# appended to OUT/runs.tar as it ends, so that a call cut short keeps what
# ended. The programs, the library and the runs are built under $WORK
# (default a temporary directory).
set -uo pipefail
out=$(realpath -m "${1:?usage: in-run.sh OUT [NAME...]}")
shift
names=("$@")
[ ${#names[@]} -eq 0 ] && names=(default cpp eager hf-auto jax compile graphs triton)
dp=$(realpath "${DEEPPROF:-.gpu/deepprof}")
cuda=${CUDA_HOME:-/usr/local/cuda}
work=$(realpath -m "${WORK:-$(mktemp -d)}")
source=${SOURCE:-library}
mkdir -p "$out" "$work/cxx-shim" "$work/runs" "$work/logs"
: >"$work/cxx-shim/string"
libdir=$cuda/lib64
[ -f "$libdir/libcupti.so" ] || libdir=$cuda/extras/CUPTI/lib64
if ! (cd "$work" && gcc -shared -fPIC -O2 -std=gnu11 -Wall -Icxx-shim -I"$cuda/include" -I"$cuda/extras/CUPTI/include" \
	-o lib.so "$OLDPWD/internal/session/src/deepprof_cupti.c" -L"$libdir" -lcupti -ldl -lpthread) >"$out/compile.txt" 2>&1; then
	echo "in-run.sh: the library does not compile:"; head -30 "$out/compile.txt"; exit 1
fi
cp scripts/corpus/*.py scripts/corpus/*.cu scripts/bench/moe_lm.py "$work/"
cd "$work"
wall() { # label, argv...: runs it, prints its wall seconds
	local label=$1; shift
	local t0=$(date +%s.%N)
	"$@" >"$work/logs/$label.log" 2>&1
	local rc=$?
	echo "$label rc=$rc wall_s=$(python3 -c "print(round($(date +%s.%N)-$t0,2))")" | tee -a "$out/in-run.txt"
}
steps() { # run dir, label: the session's steps and its library notes
	python3 - "$1" "$2" <<'PY' 2>&1 | tee -a "$out/in-run.txt"
import glob, json, sys
run, name = sys.argv[1], sys.argv[2]
m = json.load(open(run + "/manifest.json"))
print(name, "status", m.get("status"), "steps:", ", ".join("%s %.1f" % (s.get("name"), s.get("seconds", 0)) for s in m.get("steps", [])))
try:
    s = json.load(open(run + "/summary.json"))
    k, sv = s.get("kernels", {}), s.get("serving", {})
    print(name, "deep_source", k.get("deep_source"), "deep_share", k.get("deep_share"), "serving", json.dumps(sv)[:300])
except (OSError, ValueError) as e:
    print(name, "no summary:", e)
try:
    c = json.load(open(run + "/timeline/oracle-check.json"))
    print(name, "torch.profiler check: passed", c.get("passed"), json.dumps(c.get("rows"))[:1200])
except (OSError, ValueError):
    pass
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
plain_of() { # run dir, label: times the run's stage-1 command (its inputs.yaml), after the session
	python3 - "$1" "$2" <<'PY' 2>&1 | tee -a "$out/in-run.txt"
import os, subprocess, sys, tempfile, time
import yaml
run, label = sys.argv[1], sys.argv[2]
inp = yaml.safe_load(open(os.path.join(run, "inputs.yaml")))
env = dict(os.environ)
for kv in inp["env"]:
    k, v = kv.split("=", 1)
    env[k] = tempfile.mktemp(suffix=".json") if k == "DEEPPROF_REPORT" else v
t0 = time.monotonic()
rc = subprocess.run(inp["argv"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
print("%s rc=%d wall_s=%.2f" % (label, rc, time.monotonic() - t0))
PY
}
keep() { # run ids...: appends them and the logs so far to OUT/runs.tar
	local ids=()
	for id in "$@"; do [ -d "runs/$id" ] && ids+=("runs/$id"); done
	tar -rf "$out/runs.tar" --exclude='*.html' --exclude='trace.json.gz' --exclude='charts' "${ids[@]}" logs
}
common=(workload.timeout=4m ncu.timeout=3m)
flags=()
[ "${CHECK:-}" = 1 ] && flags=(--check)
for name in "${names[@]}"; do
	env=() over=()
	case $name in
	jax) env=(XLA_PYTHON_CLIENT_PREALLOCATE=false); over=(+workload.env.XLA_PYTHON_CLIENT_PREALLOCATE=false); argv=(python3 jax_decode.py --layers 4 --generates 3) ;;
	hf-auto) argv=(python3 hf_generate.py --layers 4 --generates 3) ;;
	eager) argv=(python3 torch_decode.py --layers 4 --generates 3 --mode eager) ;;
	compile) argv=(python3 torch_decode.py --layers 4 --generates 3 --mode compile) ;;
	graphs) argv=(python3 torch_decode.py --layers 4 --generates 3 --mode graphs) ;;
	triton) argv=(python3 triton_loop.py) ;;
	moe) argv=(python3 moe_lm.py) ;;
	child) argv=(python3 spawn_child.py --layers 4 --generates 3 --mode eager) ;;
	cpp) nvcc -O2 -arch=sm_90 -o decode_loop decode_loop.cu || continue; argv=(./decode_loop) ;;
	solve) nvcc -O2 -arch=sm_90 -o solve_loop solve_loop.cu -lcublas || continue; argv=(./solve_loop) ;;
	default|roofline|mixtral) # deepprof's own workloads: no plain run to time (its alone repeats are its speed)
		more=()
		[ "$name" = roofline ] && more=(workloads=llama3-8b ncu=roofline)
		[ "$name" = mixtral ] && more=(workloads=tiny-mixtral)
		[ "${WARM:-}" = 1 ] && wall "$name-warm" "$dp" profile run.root="$work/runs" run.id="$name-warm" "${common[@]}" "${more[@]}" ncu.deep_source="$source"
		wall "$name-session" "$dp" profile "${flags[@]}" run.root="$work/runs" run.id="$name" "${common[@]}" "${more[@]}" ncu.deep_source="$source"
		steps "$work/runs/$name" "$name"
		plain_of "$work/runs/$name" "$name-plain"
		keep "$name"
		continue ;;
	tp2) # tp_decode.py on 2 GPUs: each rank measures in its own process
		env=(torchrun --standalone --nproc-per-node 2)
		over=(workload.launcher.kind=torchrun workload.launcher.nproc_per_node=2)
		argv=(python3 tp_decode.py --generates 3) ;;
	*) echo "in-run.sh: unknown program $name" >&2; continue ;;
	esac
	plain=(env "${env[@]}" "${argv[@]}")
	[ "$name" = tp2 ] && plain=("${env[@]}" tp_decode.py --generates 3)
	[ "${WARM:-}" = 1 ] && wall "$name-warm" "${plain[@]}"
	wall "$name-plain" "${plain[@]}"
	wall "$name-session" "$dp" profile "${flags[@]}" run.root="$work/runs" run.id="$name" "${common[@]}" "${over[@]}" ncu.deep_source="$source" -- "${argv[@]}"
	steps "$work/runs/$name" "$name"
	if [ "${BOTH:-}" = 1 ]; then
		wall "$name-both" "$dp" profile "${flags[@]}" run.root="$work/runs" run.id="$name-both" "${common[@]}" "${over[@]}" ncu.deep_source=both -- "${argv[@]}"
		steps "$work/runs/$name-both" "$name-both"
	fi
	keep "$name" "$name-both"
done
