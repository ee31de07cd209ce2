#!/usr/bin/env bash
# overhead.sh: the CUPTI library's cost to a workload, against the plain run
# and against another build of the library, on one machine in one go.
# Builds internal/session/src/deepprof_cupti.c ("new") and OLD.c ("old")
# with build-and-check.sh --build-only, checks the new library's records
# (check.py: every kernel has its A record, NVTX ranges present), then runs
# each workload plain, under old and under new, alternated ROUNDS times
# (default 3), each process timing its part (median of --repeats after a
# warm-up; the scripts' last JSON line). Workloads: torch_nvtx.py (launch-bound
# decode loop) and, when transformers imports, gpt2_generate.py (GPT-2 shapes,
# random weights, 32 new tokens). Results go to $OUT:
#   $OUT/overhead.log  everything printed, with a summary at the end
#   $OUT/runs.txt      workload, variant, round, process wall ms, timed JSON
# Usage: OUT=/some/dir bash scripts/cupti/overhead.sh OLD.c [ROUNDS]
set -u
set -o pipefail
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
exec > >(tee "$OUT/overhead.log") 2>&1
REPO=$(cd "$(dirname "$0")/../.." && pwd)
OLD_SRC=$1
ROUNDS=${2:-3}
W=/tmp/deepprof-cupti-overhead
rm -rf "$W"
mkdir -p "$W/rec"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
bash "$REPO/scripts/cupti/build-and-check.sh" --build-only "$REPO/internal/session/src/deepprof_cupti.c" "$W/new.so" || { echo NEW BUILD FAILED; exit 1; }
bash "$REPO/scripts/cupti/build-and-check.sh" --build-only "$OLD_SRC" "$W/old.so" || { echo OLD BUILD FAILED; exit 1; }

WORKLOADS=("torch_nvtx $REPO/scripts/cupti/torch_nvtx.py --repeats 7")
if python3 -c 'import transformers' 2>/dev/null; then
  WORKLOADS+=("gpt2 $REPO/scripts/cupti/gpt2_generate.py --repeats 7 --new-tokens 32")
else
  echo "transformers does not import: gpt2 skipped"
fi

# run WORKLOAD VARIANT ROUND SCRIPT ARGS...: one process, a line in runs.txt.
run() {
  local w=$1 v=$2 r=$3
  shift 3
  local d="$W/rec/$w-$v-$r" env=()
  mkdir -p "$d"
  if [ "$v" != plain ]; then
    env=(CUDA_INJECTION64_PATH="$W/$v.so" NVTX_INJECTION64_PATH="$W/$v.so" DEEPPROF_CUPTI_DIR="$d")
  fi
  local t0 t1 js
  t0=$(date +%s%N)
  js=$(env "${env[@]}" timeout 120 python3 "$@" | tail -1)
  t1=$(date +%s%N)
  printf '%s\t%s\t%s\t%s\t%s\n' "$w" "$v" "$r" "$(( (t1 - t0) / 1000000 ))" "$js" | tee -a "$OUT/runs.txt"
}

for r in $(seq 1 "$ROUNDS"); do
  for spec in "${WORKLOADS[@]}"; do
    read -r -a a <<< "$spec"
    for v in plain old new; do run "${a[0]}" "$v" "$r" "${a[@]:1}"; done
  done
done

for spec in "${WORKLOADS[@]}"; do
  read -r -a a <<< "$spec"
  for v in old new; do
    echo "== records: ${a[0]} under $v, round 1"
    python3 "$REPO/scripts/cupti/check.py" "$W/rec/${a[0]}-$v-1" | grep -E 'CHECK|records|nvtx push|api calls'
    wc -c "$W/rec/${a[0]}-$v-1"/*.tsv
  done
done

python3 - "$OUT/runs.txt" <<'PY'
import collections, json, statistics, sys
rows = collections.defaultdict(list)
walls = collections.defaultdict(list)
for line in open(sys.argv[1]):
    w, v, r, wall, js = line.rstrip("\n").split("\t", 4)
    try:
        rows[w, v].extend(json.loads(js)["repeats_ms"])
        walls[w, v].append(int(wall))
    except ValueError:
        print("unreadable: %r" % line)
print("== summary: timed part, median of every timed repeat of every round (ms); ratio to plain")
for w in sorted({k[0] for k in rows}):
    base = statistics.median(rows[w, "plain"]) if rows[w, "plain"] else None
    for v in ("plain", "old", "new"):
        xs = rows[w, v]
        if not xs:
            continue
        m = statistics.median(xs)
        print("%-10s %-5s n=%-3d median %8.3f ms  min %8.3f  max %8.3f  %s  process wall median %d ms"
              % (w, v, len(xs), m, min(xs), max(xs), "%.3fx" % (m / base) if base else "-",
                 statistics.median(walls[w, v])))
PY
