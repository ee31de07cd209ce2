#!/bin/bash
# library-cost.sh OUT: what deepprof's CUPTI library costs each corpus
# program, by the program's own clock (scripts/corpus/clock.py), and which
# part of the library costs it on JAX/XLA. On a GPU machine, from the
# repository root. Each variant is the library built from
# internal/session/src/deepprof_cupti.c with one part left out of its
# init() (a copy patched here; the product's source is not changed):
#   full        as deepprof builds it
#   noapi       no launch/copy API callbacks (activity records only)
#   nocopies    no memcpy/memset activity (kernels and callbacks)
#   noactivity  no activity records (callbacks only)
#   empty       an injection library that does nothing
#   nocount     CUPTI's buffers flushed every second only (not also by count)
#   apiactivity no launch callbacks: CUPTI's activity records of every driver
#               and runtime call instead
#   nowrite     as noapi, CUPTI's completed buffers freed unread
# and two settings of the full library: keeptsl (DEEPPROF_CUPTI_SKIP_DOMAINS
# empty: XLA's TSL domain recorded too) and nonvtx (NVTX_INJECTION64_PATH
# unset: no NVTX at all). WHICH (default all) picks the programs: jax,
# torch; VARIANTS (space-separated, "alone" for the program alone) a subset
# of the variants. Prints, per program and variant, the median TPOT and TTFT over the
# generates after the first, and the ratio to the program alone.
set -uo pipefail
out=${1:?usage: library-cost.sh OUT [WHICH]}
which=${2:-all}
mkdir -p "$out"
src=internal/session/src/deepprof_cupti.c
cuda=${CUDA_HOME:-/usr/local/cuda}
inc=(-I"$cuda/include" -I"$cuda/extras/CUPTI/include")
lib=(-L"$cuda/lib64" -L"$cuda/extras/CUPTI/lib64" -Wl,-rpath,"$cuda/extras/CUPTI/lib64" -Wl,-rpath,"$cuda/lib64")
build() { # name, python patch expression over s
	python3 - "$src" "$out/$1.c" "$2" <<'PY'
import sys
s = open(sys.argv[1]).read()
i = s.index("static void init(void) {")
head, body = s[:i], s[i:]
j = body.index("static void finish(void)")
init, rest = body[:j], body[j:]
for cut in filter(None, sys.argv[3].split("|")):
    if "=>" in cut:  # a replacement
        old, new = cut.split("=>")
        assert old in init, old
        init = init.replace(old, new)
    else:  # the lines that hold it, dropped
        init = "\n".join(l for l in init.split("\n") if cut not in l)
open(sys.argv[2], "w").write(head + init + rest)
PY
	gcc -shared -fPIC -O2 -std=gnu11 "${inc[@]}" -o "$out/lib-$1.so" "$out/$1.c" "${lib[@]}" -lcupti -ldl -lpthread || echo "build $1 failed"
}
build full ""
# nocount: CUPTI's buffers flushed every second only, not also by record count
sed 's/^#define FLUSH_RECORDS .*/#define FLUSH_RECORDS 0xffffffffu/' "$src" >"$out/nocount.c"
gcc -shared -fPIC -O2 -std=gnu11 "${inc[@]}" -o "$out/lib-nocount.so" "$out/nocount.c" "${lib[@]}" -lcupti -ldl -lpthread || echo "build nocount failed"
build noapi "n += enable_launch_callbacks|int n = enable_launch_callbacks(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE);=>int n = 0;"
build nocopies "KIND_MEMCPY)|KIND_MEMCPY2)|KIND_MEMSET)"
build noactivity "cuptiActivityEnable("
noapi="n += enable_launch_callbacks|int n = enable_launch_callbacks(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE);=>int n = 0;"
# apiactivity: no launch callbacks; CUPTI's own activity records of every driver and runtime call instead
build apiactivity "$noapi|CUPTI_TRY(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET), \"enable MEMSET\");=>CUPTI_TRY(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET), \"enable MEMSET\"); cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER); cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME);"
# nowrite: as noapi, and CUPTI's completed buffers freed unread (nothing formatted or written)
python3 - "$out/noapi.c" "$out/nowrite.c" <<'PY'
import sys
s = open(sys.argv[1]).read()
old = "size_t valid) {\n  (void)size;\n"
assert old in s, "buffer_completed not found"
open(sys.argv[2], "w").write(s.replace(old, old + "  free(buffer);\n  return;\n", 1))
PY
gcc -shared -fPIC -O2 -std=gnu11 "${inc[@]}" -o "$out/lib-nowrite.so" "$out/nowrite.c" "${lib[@]}" -lcupti -ldl -lpthread || echo "build nowrite failed"
printf 'int InitializeInjection(void) { return 1; }\n' >"$out/empty.c"
gcc -shared -fPIC -O2 -o "$out/lib-empty.so" "$out/empty.c"
cd scripts/corpus
median() { python3 -c '
import json, statistics, sys
rows = [json.loads(l.split(" ", 1)[1]) for l in open(sys.argv[1]) if l.startswith("deepprof-clock ")]
rows = [r for r in rows if r["generate"] > 0] or rows
print("%.4f %.4f" % (statistics.median(r["tpot_ms"] for r in rows), statistics.median(r["ttft_ms"] for r in rows)))' "$1"; }
run() { # label, variant ("" = alone), env..., -- argv
	local label=$1 variant=$2; shift 2
	local env=()
	while [ "$1" != -- ]; do env+=("$1"); shift; done
	shift
	local log="$out/$label-${variant:-alone}.log"
	rm -rf "$out/rec" && mkdir -p "$out/rec"
	case $variant in
	"") ;;
	keeptsl) env+=(CUDA_INJECTION64_PATH="$out/lib-full.so" NVTX_INJECTION64_PATH="$out/lib-full.so" DEEPPROF_CUPTI_DIR="$out/rec" DEEPPROF_CUPTI_SKIP_DOMAINS=) ;;
	nonvtx) env+=(CUDA_INJECTION64_PATH="$out/lib-full.so" DEEPPROF_CUPTI_DIR="$out/rec") ;;
	*) env+=(CUDA_INJECTION64_PATH="$out/lib-$variant.so" NVTX_INJECTION64_PATH="$out/lib-$variant.so" DEEPPROF_CUPTI_DIR="$out/rec") ;;
	esac
	local t0=$(date +%s.%N)
	env "${env[@]}" "$@" >"$log" 2>&1
	echo "$label ${variant:-alone} $(median "$log") wall $(python3 -c "print(round($(date +%s.%N)-$t0,1))")" | tee -a "$out/cost.txt"
}
jax=(python3 jax_decode.py --layers 4 --generates 4)
variants=("" full keeptsl nonvtx noapi nocopies noactivity empty)
if [ -n "${VARIANTS:-}" ]; then # a subset, "alone" for the program alone
	variants=()
	for v in $VARIANTS; do [ "$v" = alone ] && variants+=("") || variants+=("$v"); done
fi
if [ "$which" = all ] || [ "$which" = jax ]; then
	for v in "${variants[@]}"; do run jax "$v" XLA_PYTHON_CLIENT_PREALLOCATE=false -- "${jax[@]}"; done
	[ -z "${VARIANTS:-}" ] && for v in "" full; do run jax-nocmdbuf "$v" XLA_PYTHON_CLIENT_PREALLOCATE=false XLA_FLAGS=--xla_gpu_enable_command_buffer= -- "${jax[@]}"; done
	# the CUPTI record of the full library, for its notes and NVTX counts
	cp "$out/rec"/*.tsv "$out/jax-nocmdbuf-full.tsv" 2>/dev/null
fi
if [ "$which" = all ] || [ "$which" = torch ]; then
	for m in eager graphs compile; do
		for v in "" full; do run torch-$m "$v" A=1 -- python3 torch_decode.py --layers 4 --generates 4 --mode $m; done
	done
fi
