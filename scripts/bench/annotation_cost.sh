#!/bin/bash
# annotation_cost.sh [PAIRS]: what annotating generate_lm.py costs, with no
# profiler: each way of marking its phases (none, deepprof's automatic
# ranges, by hand around forward, by hand with forward hooks) run as its
# own process, in turn, PAIRS times (default 2); each process prints its
# generates' wall times (ms), the first one left out as warm-up.
set -euo pipefail
pairs=${1:-2}
here=$(cd "$(dirname "$0")" && pwd)
auto=$(cd "$here/../../internal/session/autorange" && pwd)
run() { # label, env..., args...
	local label=$1; shift
	env "$@" python3 - <<'PY' | sed "s/^/$label /"
import os, runpy, sys, time, torch
import transformers.generation.utils as gu
gen = gu.GenerationMixin.generate
times = []
def timed(self, *a, **k):
    torch.cuda.synchronize(); t = time.perf_counter()
    out = gen(self, *a, **k)
    torch.cuda.synchronize(); times.append((time.perf_counter() - t) * 1e3)
    return out
gu.GenerationMixin.generate = timed
sys.argv = ["generate_lm.py", "--generates", "6"] + os.environ.get("GEN_ARGS", "").split()
runpy.run_path(os.environ["GEN_SCRIPT"], run_name="__main__")
print("generate ms (steady):", " ".join("%.1f" % t for t in times[1:]))
PY
}
for i in $(seq "$pairs"); do
	run none GEN_SCRIPT="$here/generate_lm.py" GEN_ARGS=""
	run auto GEN_SCRIPT="$here/generate_lm.py" GEN_ARGS="" PYTHONPATH="$auto"
	run forward GEN_SCRIPT="$here/generate_lm.py" GEN_ARGS="--annotate"
	run hooks GEN_SCRIPT="$here/generate_lm.py" GEN_ARGS="--annotate=hooks"
done
