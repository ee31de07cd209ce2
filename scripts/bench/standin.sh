#!/usr/bin/env bash
# Whether the CUPTI run stands in for stage 1 (issue 36), and what the
# session costs then, on a GPU machine: each preset is profiled from an
# empty folder with the binary alone; "plain" is the workload's stage-1
# command (argv and environment from the run's inputs.yaml) run alone after
# the session, start to exit. Prints one Markdown row a preset, and on
# stderr each stage's median in the plain run against the CUPTI run's
# recorded, paused and program-alone (library detached) repeats; leaves the run directories (and the plain
# run's report, plain-report.json) under OUT.
#
#   scripts/bench/standin.sh DEEPPROF OUT [PRESET...]   (default: tiny-llama qwen2-0.5b)
#
# A PRESET may carry overrides after a colon, comma-separated:
# llama3-8b:model.options.num_hidden_layers=4.
set -euo pipefail
deepprof=$(realpath "$1")
out=$(realpath -m "$2")
shift 2
presets=("$@")
[ ${#presets[@]} -gt 0 ] || presets=(tiny-llama qwen2-0.5b)
mkdir -p "$out"
echo "| preset | plain s | session s (steps) | session / plain | stage 1 | in-process overhead | deep pass s |"
echo "| --- | ---: | ---: | ---: | --- | --- | ---: |"
for spec in "${presets[@]}"; do
	p=${spec%%:*}
	overrides=()
	if [ "$spec" != "$p" ]; then IFS=, read -r -a overrides <<< "${spec#*:}"; fi
	dir="$out/$p"
	rm -rf "$dir" && mkdir -p "$dir"
	rc=0
	t0=$(date +%s.%N)
	(cd "$dir" && "$deepprof" profile "workloads=$p" "${overrides[@]}") > "$dir/session.log" 2>&1 || rc=$?
	wall=$(python3 -c "import sys; print(round($(date +%s.%N) - float(sys.argv[1]), 2))" "$t0")
	run=$(ls -d "$dir"/tmp/stage2/*/ 2>/dev/null | head -1)
	if [ -z "$run" ]; then
		echo "| $p | no run directory (exit $rc): $dir/session.log | | | | | |"
		continue
	fi
	python3 - "$run" "$p" "$rc" "$wall" <<'PY'
import json, os, re, subprocess, sys, tempfile, time
run, preset, rc, wall = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
import yaml
inp = yaml.safe_load(open(os.path.join(run, "inputs.yaml")))
env = dict(os.environ)
report = tempfile.mktemp(suffix=".json")
for kv in inp["env"]:
    k, v = kv.split("=", 1)
    env[k] = report if k == "DEEPPROF_REPORT" else v
t0 = time.monotonic()
subprocess.run(inp["argv"], env=env, cwd=os.path.dirname(os.path.dirname(os.path.dirname(run.rstrip("/")))),
               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
plain = time.monotonic() - t0
# The same without the operator table (one generate under torch.profiler
# after the timed repeats), which deepprof's own workloads make only in
# stage 1: the program's cost with nothing of deepprof's.
t0 = time.monotonic()
subprocess.run([a for a in inp["argv"] if a != "--operators"], env=dict(env, DEEPPROF_REPORT=report + ".noops"),
               cwd=os.path.dirname(os.path.dirname(os.path.dirname(run.rstrip("/")))),
               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
bare = time.monotonic() - t0
m = json.load(open(os.path.join(run, "manifest.json")))
steps = {s["name"]: s["seconds"] for s in m["steps"]}
session = sum(steps.values())
stage1 = next((a for a in m.get("artifacts", []) if a["path"] == "stage1/report.json"), {})
ran = "ran" if "stage1" in steps else "stood in for" if stage1.get("status") == "skipped" else "?"
note = next((n for n in m.get("notes", []) if n.startswith("stage 1:")), "")
over = re.search(r"cost ([0-9.]+x)", note)
print("| %s | %.1f | %.1f | %.2fx | %s | %s | %.1f |" % (preset, plain, session, session / plain, ran,
      over.group(1) if over else "", steps.get("ncu-deep", 0.0)))
print("%s: plain %.1f s with the operator table, %.1f s without (session / plain %.2fx)" % (preset, plain, bare, session / bare),
      file=sys.stderr)
# The steps summed count the exports, which run at once, each; the session's
# own wall time (start to exit, preflight and rebuild included) does not.
print("%s: the session's wall time %.1f s (wall / plain %.2fx)" % (preset, wall, wall / plain), file=sys.stderr)
print("%s: status %s (exit %s); steps: %s; %s" % (preset, m["status"], rc,
      ", ".join("%s %.1f s" % (k, v) for k, v in steps.items()), note), file=sys.stderr)
# Per stage, the medians of the plain run's repeats against the CUPTI run's
# recorded, paused (overhead.paused_stages) and alone ones (alone.stages).
import shutil, statistics
shutil.copy(report, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(run.rstrip("/")))), "plain-report.json"))
plain_rep = json.load(open(report))
for f in (report, report + ".noops"):
    if os.path.exists(f):
        os.remove(f)
cupti_path = os.path.join(run, "timeline", "report.json")
if not os.path.exists(cupti_path):
    print("%s: no %s: no per-stage comparison" % (preset, cupti_path), file=sys.stderr)
    sys.exit(0)
cupti = json.load(open(cupti_path))
paused = cupti.get("overhead", {}).get("paused_stages", {})
alone = cupti.get("alone", {}).get("stages", {})
nan = float("nan")
for st in sorted(plain_rep["stages"]):
    p = statistics.median(plain_rep["stages"][st]["ms"])
    rec = statistics.median(cupti["stages"][st]["ms"]) if st in cupti["stages"] else nan
    pa = statistics.median(paused[st]["ms"]) if st in paused else nan
    al = statistics.median(alone[st]["ms"]) if st in alone else nan
    print("%s: stage %s medians: plain %.3f ms, alone (library detached) %.3f ms (%.3fx), paused %.3f ms (%.3fx), recording %.3f ms (%.3fx)" % (
        preset, st, p, al, al / p if p else nan, pa, pa / p if p else nan, rec, rec / p if p else nan), file=sys.stderr)
PY
done
