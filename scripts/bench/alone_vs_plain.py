#!/usr/bin/env python3
"""Alternated processes of deepprof's default workload, per-stage medians of each (issue 36).

  scripts/bench/alone_vs_plain.py RUN PAIRS [--injected-idle]

RUN is a default session's run directory (its inputs.yaml gives the stage-1 command; the CUPTI library
must be built in the user's cache, as that session left it). Each pair is a plain process (stage 1's
command, the operator table left out) and, alternated:
  - by default, a CUPTI run of it (the library recording, then detached, then the program-alone
    repeats): its recorded, paused and alone repeats;
  - with --injected-idle, the same command with the library injected but CUPTI never initialized
    (DEEPPROF_CUPTI_DIR unset): whether the library's mere presence costs anything.
"""
import glob, json, os, statistics, subprocess, sys, tempfile, time, yaml

run, pairs = sys.argv[1], int(sys.argv[2])
idle = "--injected-idle" in sys.argv[3:]
inp = yaml.safe_load(open(os.path.join(run, "inputs.yaml")))
lib = glob.glob(os.path.expanduser("~/.cache/deepprof/cupti/*/libdeepprof_cupti.so"))[0]
base = dict(os.environ)
for kv in inp["env"]:
    k, v = kv.split("=", 1)
    base[k] = v
argv = [a for a in inp["argv"] if a != "--operators"]
cwd = os.path.dirname(os.path.dirname(os.path.dirname(run.rstrip("/"))))
med = statistics.median
other = "injected-idle" if idle else "cupti"
rows = {}
for i in range(pairs):
    for name in (("plain", other) if i % 2 == 0 else (other, "plain")):
        env = dict(base, DEEPPROF_REPORT="/tmp/al-%s-%d.json" % (name, i))
        if name == "injected-idle":
            env.update(CUDA_INJECTION64_PATH=lib)
        elif name == "cupti":
            env.update(CUDA_INJECTION64_PATH=lib, NVTX_INJECTION64_PATH=lib, DEEPPROF_CUPTI_DIR=tempfile.mkdtemp(),
                       DEEPPROF_PHASE="cupti")
        t0 = time.monotonic()
        r = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True)
        dt = time.monotonic() - t0
        rep = json.load(open(env["DEEPPROF_REPORT"]))
        if name == "cupti":
            got = {"recording": rep["stages"], "paused": rep.get("overhead", {}).get("paused_stages", {}),
                   "alone": rep.get("alone", {}).get("stages", {})}
        else:
            got = {name: rep["stages"]}
        for k, st in got.items():
            if st:
                rows.setdefault(k, []).append((med(st["prefill"]["ms"]), med(st["decode"]["ms"])))
        print("%d %s: %.1f s exit %d: %s" % (i, name, dt, r.returncode,
              "; ".join("%s prefill %.3f decode %.3f" % (k, med(st["prefill"]["ms"]), med(st["decode"]["ms"]))
                        for k, st in got.items() if st)), flush=True)
for k, v in rows.items():
    print("%s over %d processes: prefill median %.3f ms (%s), decode median %.3f ms (%s)" % (
        k, len(v), med(p for p, _ in v), " ".join("%.3f" % p for p, _ in v), med(d for _, d in v),
        " ".join("%.3f" % d for _, d in v)))
