#!/usr/bin/env bash
# overhead-inprocess.sh: the CUPTI library's overhead as report.md measures
# it (deepprof's default workload under DEEPPROF_PHASE=cupti: repeats with
# recording on alternating with as many paused, in one process), for two
# builds of the library, alternated ROUNDS times, on one workload shape.
# Run on a GPU machine with the CUDA toolkit, gcc, PyTorch and transformers;
# no Go needed. Results go to $OUT/inprocess.txt: one line per process,
# "variant round recording_ms_median paused_ms_median ratio".
# Usage: OUT=DIR bash scripts/cupti/overhead-inprocess.sh A.c B.c PROFILE [ROUNDS] [WORKLOAD ARGS...]
#   PROFILE: profiles/workloads/<name>.yaml, whose model section is the model
#   (its options as the session passes them; more options as key=value in
#   $MODEL_OPTIONS, e.g. "num_hidden_layers=4").
set -u
set -o pipefail
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
REPO=$(cd "$(dirname "$0")/../.." && pwd)
A_SRC=$1 B_SRC=$2 PROFILE=$3 ROUNDS=${4:-2}
shift 4 || shift $#
W=/tmp/deepprof-cupti-inprocess
rm -rf "$W" && mkdir -p "$W/rec"
bash "$REPO/scripts/cupti/build-and-check.sh" --build-only "$A_SRC" "$W/a.so" || { echo "A BUILD FAILED"; exit 1; }
bash "$REPO/scripts/cupti/build-and-check.sh" --build-only "$B_SRC" "$W/b.so" || { echo "B BUILD FAILED"; exit 1; }
MODEL=$(python3 - "$REPO/$PROFILE" <<'PY'
import json, os, sys, yaml
m = yaml.safe_load(open(sys.argv[1]))["model"]
for kv in filter(None, os.environ.get("MODEL_OPTIONS", "").split(",")):
    k, v = kv.split("=", 1)
    m.setdefault("options", {})[k] = yaml.safe_load(v)
print(json.dumps(m))
PY
) || exit 1
for r in $(seq 1 "$ROUNDS"); do
  for v in a b; do
    rm -rf "$W/rec/$v$r" && mkdir -p "$W/rec/$v$r"
    env DEEPPROF_MODEL="$MODEL" DEEPPROF_PHASE=cupti DEEPPROF_REPEATS="${REPEATS:-5}" \
      DEEPPROF_REPORT="$W/$v$r.json" DEEPPROF_CUPTI_DIR="$W/rec/$v$r" \
      CUDA_INJECTION64_PATH="$W/$v.so" NVTX_INJECTION64_PATH="$W/$v.so" \
      python3 "$REPO/scripts/workloads/hf_causal_lm.py" "$@" > "$W/$v$r.log" 2>&1 || { echo "$v round $r FAILED"; tail -20 "$W/$v$r.log"; exit 1; }
    python3 - "$W/$v$r.json" "$v" "$r" >> "$OUT/inprocess.txt" <<'PY'
import json, statistics, sys
o = json.load(open(sys.argv[1]))["overhead"]
on, off = statistics.median(o["recording_ms"]), statistics.median(o["paused_ms"])
print(sys.argv[2], sys.argv[3], f"{on:.3f}", f"{off:.3f}", f"{on/off:.4f}", json.dumps(o))
PY
    tail -1 "$OUT/inprocess.txt" | cut -c1-60
  done
done
