"""session_pairs.py DEEPPROF WORK OUT NAME PAIRS [OVERRIDE...]: on a GPU machine, deepprof's own workload
(OVERRIDEs choose it, e.g. workloads=tiny-mixtral) warm and in pairs: one untimed session first (the
library built, the caches warm), then PAIRS pairs of its plain run (the warm session's stage-1 command,
from its inputs.yaml) and a session, in alternating order (ABBA), so that a drift of the machine weighs
on both alike. Each one's wall time, the session's steps and measured time, and the workload report's
parts_s (the wall seconds of its imports, build, warm-up, repeats, program-alone repeats and operator
table) to stdout and OUT/exp2.txt (fixtures/logs/h200-default-mixtral-pairs.txt); then the ratios and
their median."""
import json, os, subprocess, sys, tempfile, time, glob
import yaml
dp, work, out, name, pairs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
more = sys.argv[6:]
log = open(os.path.join(out, "exp2.txt"), "a")
def say(*a):
    s = " ".join(str(x) for x in a); print(s, flush=True); log.write(s + "\n"); log.flush()
common = ["workload.timeout=4m", "ncu.timeout=3m"]
def session(rid):
    t0 = time.monotonic()
    p = subprocess.run([dp, "profile", "run.root=" + work + "/runs", "run.id=" + rid] + common + more,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wall = time.monotonic() - t0
    run = os.path.join(work, "runs", rid)
    steps = ""
    try:
        m = json.load(open(run + "/manifest.json"))
        steps = ", ".join("%s %.2f" % (s["name"], s.get("seconds", 0)) for s in m.get("steps", []))
    except Exception as e:
        steps = str(e)
    parts, cut = {}, 0.0
    try:
        parts = json.load(open(run + "/timeline/report.json")).get("parts_s", {})
    except Exception:
        pass
    for f in glob.glob(run + "/timeline/cupti/*.tsv*"):
        import gzip
        op = gzip.open if f.endswith(".gz") else open
        for line in op(f, "rt", errors="replace"):
            if line.startswith("W\t"):
                t = line.split("\t"); cut += (int(t[3]) - int(t[2])) / 1e9
    say(f"{rid} session rc={p.returncode} wall_s={wall:.2f} measuring_s={cut:.2f} steps: {steps}")
    say(f"{rid} session parts", json.dumps({k: round(v, 2) for k, v in parts.items()}))
    if p.returncode != 0:
        say(p.stdout[-2000:])
    return wall
def plain(rid, label):
    inp = yaml.safe_load(open(os.path.join(work, "runs", rid, "inputs.yaml")))
    env = dict(os.environ)
    rep = tempfile.mktemp(dir=work, suffix=".json")
    for kv in inp["env"]:
        k, v = kv.split("=", 1)
        env[k] = rep if k == "DEEPPROF_REPORT" else v
    t0 = time.monotonic()
    rc = subprocess.run(inp["argv"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
    wall = time.monotonic() - t0
    parts = {}
    try:
        parts = json.load(open(rep)).get("parts_s", {})
    except Exception:
        pass
    say(f"{label} plain rc={rc} wall_s={wall:.2f}")
    say(f"{label} plain parts", json.dumps({k: round(v, 2) for k, v in parts.items()}))
    return wall
say(f"== {name}: a warm-up session, then {pairs} pairs")
session(name + "-warm")
ratios = []
for i in range(pairs):
    if i % 2 == 0:
        p = plain(name + "-warm", f"{name}-p{i}"); s = session(f"{name}-s{i}")
    else:
        s = session(f"{name}-s{i}"); p = plain(name + "-warm", f"{name}-p{i}")
    ratios.append(s / p)
    say(f"{name} pair {i}: {s:.2f} / {p:.2f} = {s/p:.3f}x")
ratios.sort()
say(f"{name} ratios {' '.join('%.3f' % r for r in ratios)} median {ratios[len(ratios)//2]:.3f}")
