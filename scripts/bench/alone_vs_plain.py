#!/usr/bin/env python3
# Usage, on a GPU machine: scripts/bench/alone_vs_plain.py RUN PAIRS, RUN a default session's run directory
# (its inputs.yaml gives the stage-1 command) and the CUPTI library already built in the cache.
# Alternated processes of the default workload: plain (stage 1's command) against a CUPTI run
# (the library recording, then detached, then the program-alone repeats): per-stage medians.
import glob, json, os, statistics, subprocess, sys, tempfile, time, yaml
run, pairs = sys.argv[1], int(sys.argv[2])
inp = yaml.safe_load(open(os.path.join(run, "inputs.yaml")))
lib = glob.glob("/root/.cache/deepprof/cupti/*/libdeepprof_cupti.so")[0]
base = dict(os.environ)
for kv in inp["env"]:
    k, v = kv.split("=", 1)
    base[k] = v
argv = [a for a in inp["argv"] if a != "--operators"]
cwd = os.path.dirname(os.path.dirname(os.path.dirname(run.rstrip("/"))))
med = statistics.median
rows = {"plain": [], "alone": [], "paused": [], "recording": []}
for i in range(pairs):
    for name in (("plain", "cupti") if i % 2 == 0 else ("cupti", "plain")):
        env = dict(base, DEEPPROF_REPORT="/tmp/al-%s-%d.json" % (name, i))
        if name == "cupti":
            d = tempfile.mkdtemp()
            env.update(CUDA_INJECTION64_PATH=lib, NVTX_INJECTION64_PATH=lib, DEEPPROF_CUPTI_DIR=d, DEEPPROF_PHASE="cupti")
        t0 = time.monotonic()
        r = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True)
        dt = time.monotonic() - t0
        rep = json.load(open(env["DEEPPROF_REPORT"]))
        if name == "plain":
            got = {"plain": rep["stages"]}
        else:
            got = {"recording": rep["stages"], "paused": rep.get("overhead", {}).get("paused_stages", {}),
                   "alone": rep.get("alone", {}).get("stages", {})}
        for k, st in got.items():
            if st:
                rows[k].append((med(st["prefill"]["ms"]), med(st["decode"]["ms"])))
        print("%d %s: %.1f s exit %d: %s" % (i, name, dt, r.returncode,
              "; ".join("%s prefill %.3f decode %.3f" % (k, med(st["prefill"]["ms"]), med(st["decode"]["ms"])) for k, st in got.items() if st)), flush=True)
for k, v in rows.items():
    if v:
        print("%s over %d processes: prefill median %.3f ms (%s), decode median %.3f ms (%s)" % (
            k, len(v), med(p for p, _ in v), " ".join("%.3f" % p for p, _ in v), med(d for _, d in v), " ".join("%.3f" % d for _, d in v)))
