#!/usr/bin/env python3
# Usage, on a GPU machine: scripts/bench/injected_idle.py RUN, RUN a default session's run directory.
# Whether the CUPTI library's mere presence (CUDA_INJECTION64_PATH set, CUPTI never
# initialized: DEEPPROF_CUPTI_DIR unset) slows the stage-1 command: alternated runs.
import glob, json, os, statistics, subprocess, sys, time, yaml
run = sys.argv[1]
inp = yaml.safe_load(open(os.path.join(run, "inputs.yaml")))
lib = glob.glob("/root/.cache/deepprof/cupti/*/libdeepprof_cupti.so")[0]
base = dict(os.environ)
for kv in inp["env"]:
    k, v = kv.split("=", 1)
    base[k] = v
argv = [a for a in inp["argv"] if a != "--operators"]
cwd = os.path.dirname(os.path.dirname(os.path.dirname(run.rstrip("/"))))
for i in range(2):
    for name in ("plain", "injected-idle"):
        env = dict(base, DEEPPROF_REPORT="/tmp/inj-%s-%d.json" % (name, i))
        if name != "plain":
            env["CUDA_INJECTION64_PATH"] = lib
        t0 = time.monotonic()
        r = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True)
        dt = time.monotonic() - t0
        rep = json.load(open(env["DEEPPROF_REPORT"]))
        print("%s %d: %.1f s, exit %d, prefill median %.3f ms, decode median %.3f ms; %s" % (
            name, i, dt, r.returncode, statistics.median(rep["stages"]["prefill"]["ms"]),
            statistics.median(rep["stages"]["decode"]["ms"]), r.stderr.strip().splitlines()[-1:] ))
