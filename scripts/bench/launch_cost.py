"""launch_cost.py WORK OUT [PARTS]: on a GPU machine, after `scripts/sessions/in-run.sh` has run the default
workload and the eager decoder with WORK as its work folder (WORK/lib.so the library, WORK/runs/default
the session, WORK/torch_decode.py), what the CUPTI library costs the default workload (A: its stage-1
command plain, then with the library injected, without and with the deep metrics, without the
program-alone repeats, without the operator table) and what one measured launch costs by metric set (B:
the eager decoder with six targets whatever the cap, one metric set at a time, and, where WORK/lib-once.so
is built (from the repository root: the library's source with cuptiRangeProfilerSetConfig called at the
first measured launch only), that library). Each run's wall time, its measured
windows (W records) and the library's notes to stdout and OUT/exp.txt
(fixtures/logs/h200-measured-launch-cost-by-metric.txt). PARTS (default AB) says which to run."""
import glob, json, os, shutil, subprocess, sys, tempfile, time
import yaml
work, out = sys.argv[1], sys.argv[2]
lib = os.path.join(work, "lib.so")
log = open(os.path.join(out, "exp.txt"), "a")
def say(*a):
    s = " ".join(str(x) for x in a)
    print(s, flush=True); log.write(s + "\n"); log.flush()

def run(label, argv, env, cupti=None, cwd=None):
    e = dict(os.environ); e.update(env)
    d = None
    if cupti is not None:
        d = tempfile.mkdtemp(dir=work)
        e.update({"CUDA_INJECTION64_PATH": cupti, "NVTX_INJECTION64_PATH": cupti, "DEEPPROF_CUPTI_DIR": d})
    t0 = time.monotonic()
    p = subprocess.run(argv, env=e, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wall = time.monotonic() - t0
    say(f"{label} rc={p.returncode} wall_s={wall:.2f}")
    if p.returncode != 0:
        say(p.stdout[-1500:])
    if d:
        for f in glob.glob(d + "/*.tsv"):
            ws, notes = [], []
            for line in open(f, errors="replace"):
                t = line.rstrip("\n").split("\t")
                if t[0] == "W":
                    ws.append((int(t[3]) - int(t[2])) / 1e9)
                elif t[0] == "X" and t[1] not in ("recording", "device.0"):
                    notes.append(t[1] + ": " + t[2][:160])
            say(f"  {os.path.basename(f)} windows {len(ws)} sum {sum(ws):.2f} s:", " ".join(f"{w:.3f}" for w in ws))
            for n in notes:
                say("   ", n)
    return wall

parts = sys.argv[3] if len(sys.argv) > 3 else "AB"
# A: the default workload, split.
m3 = "sm__throughput.avg.pct_of_peak_sustained_elapsed,gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum"
def env_of(phase, **more):
    e = dict(base); e["DEEPPROF_PHASE"] = phase; e["DEEPPROF_REPORT"] = tempfile.mktemp(dir=work, suffix=".json")
    e.update(more); return e
if "A" in parts:
    inp = yaml.safe_load(open(os.path.join(work, "runs/default/inputs.yaml")))
    base = dict(kv.split("=", 1) for kv in inp["env"])
    argv = inp["argv"]
    say("== A: default workload")
    run("A0 plain", argv, env_of("stage1"))
    run("A1 cupti, no metrics", argv, env_of("cupti"), lib)
    run("A2 cupti, metrics", argv, env_of("cupti", DEEPPROF_CUPTI_METRICS=m3, DEEPPROF_CUPTI_METRICS_SHARE="20"), lib)
    run("A3 cupti, metrics, no alone", argv, env_of("cupti", DEEPPROF_CUPTI_METRICS=m3, DEEPPROF_CUPTI_METRICS_SHARE="20", DEEPPROF_ALONE="0"), lib)
    run("A4 plain, no operators", [a for a in argv if a != "--operators"], env_of("stage1"))
    run("A5 cupti, no metrics, no operators", [a for a in argv if a != "--operators"], env_of("cupti"), lib)
    run("A6 plain", argv, env_of("stage1"))
if "B" in parts:
    # B: a measured launch's cost by metric set, eager decoder, six targets whatever the cap.
    say("== B: passes")
    eager = ["python3", "torch_decode.py", "--layers", "4", "--generates", "3", "--mode", "eager"]
    fix = {"DEEPPROF_CUPTI_METRICS_SHARE": "1000", "DEEPPROF_CUPTI_METRICS_FLOOR_MS": "100000", "DEEPPROF_CUPTI_METRICS_KERNELS": "6"}
    sets = {"B1 duration": "gpu__time_duration.sum", "B2 sm": "sm__throughput.avg.pct_of_peak_sustained_elapsed",
            "B3 mem": "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", "B4 dram bytes": "dram__bytes.sum", "B5 three": m3}
    for label, ms in sets.items():
        run(label, eager, dict(fix, DEEPPROF_CUPTI_METRICS=ms), lib, cwd=work)
    def build_once():
        """WORK/lib-once.so: the library with cuptiRangeProfilerSetConfig called once, or None."""
        src = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "internal", "session", "src", "deepprof_cupti.c")).read()
        old = '  MX_TRY(cuptiRangeProfilerSetConfig(&sc), "cuptiRangeProfilerSetConfig");'
        if old not in src:
            return None
        once = os.path.join(work, "once.c")
        open(once, "w").write(src.replace(old, "  static int sc_once;\n  if (!sc_once) {\n" + old + "\n  sc_once = 1;\n  }"))
        cuda = os.environ.get("CUDA_HOME", "/usr/local/cuda")
        lib_once = os.path.join(work, "lib-once.so")
        argv = ["gcc", "-shared", "-fPIC", "-O2", "-std=gnu11", "-Wall", "-I" + os.path.join(work, "cxx-shim"),
                "-I" + cuda + "/include", "-I" + cuda + "/extras/CUPTI/include", "-o", lib_once, once,
                "-L" + cuda + "/lib64", "-L" + cuda + "/extras/CUPTI/lib64", "-lcupti", "-ldl", "-lpthread"]
        return lib_once if subprocess.run(argv).returncode == 0 else None
    lib_once = build_once()
    if lib_once:
        run("B6 three, SetConfig once", eager, dict(fix, DEEPPROF_CUPTI_METRICS=m3), lib_once, cwd=work)
    run("B7 three, default cap", eager, dict(DEEPPROF_CUPTI_METRICS=m3), lib, cwd=work)
