#!/usr/bin/env bash
# What a deepprof session costs against its program's plain run (issue 25),
# on a GPU machine: each case is profiled from an empty folder with the
# binary alone, and its manifest's step times are summed. "plain" is the
# program alone, timed from start to exit: run here before the session for
# a command (the session makes no plain run of a program whose CUPTI run
# gives its stages), the session's own stage 1 otherwise; the
# torch.profiler oracle is a check, counted apart. Prints one Markdown row a
# case and leaves the run directories under OUT.
#
#   scripts/bench/deep-pass-cost.sh DEEPPROF OUT [CASE...]
#
# Cases: moe (scripts/bench/moe_lm.py: 24 layers of 60 experts, top 4, as
# Qwen2-MoE; 3 generates of 24 tokens), moe-5x
# (120 tokens each), tiny-llama (the default session), llama3-8b-roofline
# (workloads=llama3-8b ncu=roofline: Llama-3-8B shapes, random weights),
# compiled (scripts/bench/generate_lm.py --compile: a torch.compile'd
# Llama decoder, model.generate() with no NVTX range), cpp
# (scripts/corpus/decode_loop.cu built with nvcc before the timing: a C++
# program of its own kernels, no framework, under 4 s).
set -euo pipefail
deepprof=$(realpath "$1")
out=$(realpath -m "$2")
shift 2
cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=(moe moe-5x tiny-llama)
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
echo "| case | plain s | session s (oracle apart) | session / plain | deep pass s | deep / plain | planned launches | wall s |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | --- | ---: |"
for c in "${cases[@]}"; do
	dir="$out/$c"
	rm -rf "$dir" && mkdir -p "$dir"
	cp "$here/moe_lm.py" "$here/generate_lm.py" "$dir/"
	cmd=()
	case $c in
	moe) cmd=(python3 moe_lm.py); argv=(profile -- "${cmd[@]}") ;;
	moe-5x) cmd=(python3 moe_lm.py --tokens 120); argv=(profile -- "${cmd[@]}") ;;
	tiny-llama) argv=(profile) ;;
	llama3-8b-roofline) argv=(profile workloads=llama3-8b ncu=roofline) ;;
	compiled) cmd=(python3 generate_lm.py --compile); argv=(profile -- "${cmd[@]}") ;;
	cpp)
		nvcc -O2 -arch=sm_90 -o "$dir/decode_loop" "$here/../corpus/decode_loop.cu"
		cmd=(./decode_loop); argv=(profile -- "${cmd[@]}") ;;
	*) echo "unknown case $c" >&2; exit 2 ;;
	esac
	plain=0
	if [ ${#cmd[@]} -gt 0 ]; then
		start=$(date +%s%N)
		(cd "$dir" && "${cmd[@]}") > "$dir/plain.log" 2>&1
		plain=$(python3 -c "import sys; print((int(sys.argv[2]) - int(sys.argv[1])) / 1e9)" "$start" "$(date +%s%N)")
	fi
	start=$(date +%s%N)
	rc=0
	(cd "$dir" && "$deepprof" "${argv[@]}") > "$dir/session.log" 2>&1 || rc=$?
	wall=$(python3 -c "import sys; print((int(sys.argv[2]) - int(sys.argv[1])) / 1e9)" "$start" "$(date +%s%N)")
	run=$(ls -d "$dir"/tmp/stage2/*/ 2>/dev/null | head -1)
	if [ -z "$run" ]; then
		echo "| $c | no run directory (exit $rc): $dir/session.log | | | | | | $wall |"
		continue
	fi
	python3 - "$run/manifest.json" "$c" "$wall" "$rc" "$plain" <<'PY'
import json, re, sys
m = json.load(open(sys.argv[1]))
case, wall, rc = sys.argv[2], float(sys.argv[3]), sys.argv[4]
steps = {s["name"]: s["seconds"] for s in m["steps"]}
plain = float(sys.argv[5]) or steps.get("stage1", 0.0)
oracle = sum(v for k, v in steps.items() if k.startswith("oracle"))
session = sum(steps.values()) - oracle
deep = sum(v for k, v in steps.items() if k.startswith("ncu-deep"))
planned = next((n for n in m.get("notes", []) if n.startswith("deep pass on")), "")
mm = re.search(r"(\d+) launch\(es\)", planned)
stopped = next((n for n in m.get("notes", []) if "planned launches were profiled" in n), "")
print("| %s | %.1f | %.1f | %.2fx | %.1f | %.2fx | %s%s | %.1f |" % (
    case, plain, session, session / plain if plain else 0, deep, deep / plain if plain else 0,
    mm.group(1) if mm else "?", " (stopped early)" if stopped else "", wall))
print("%s: status %s (exit %s) %s; steps: %s" % (case, m["status"], rc, m.get("reason", ""),
      ", ".join("%s %.1f s" % (k, v) for k, v in steps.items())), file=sys.stderr)
PY
done
