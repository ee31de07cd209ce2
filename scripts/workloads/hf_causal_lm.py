#!/usr/bin/env python3
"""deepprof's default workload: any causal LM that transformers knows, run as warm-up, prefill and
decode with a KV cache, its phases marked with NVTX ranges, writing the workload report of
DESIGN.md to $DEEPPROF_REPORT.

The model comes from $DEEPPROF_MODEL (the profile's model section as JSON: name, arch, dtype,
options). With options.random_init (the default) it is built from its configuration with random
weights, directly on the GPU in its dtype (random initialisation of 8B parameters on the CPU takes
minutes); with options.weights=PATH it is loaded from a local checkpoint. Nothing is downloaded.

NVTX ranges: --prefill-range (prefill), --decode-range (decode_all) holding one --step-range
(decode_step) per generated token, each optionally in the domain $DEEPPROF_NVTX_DOMAIN (torch only
pushes default-domain ranges: a named domain goes through a small shim compiled with gcc against
CUDA's nvtx3 headers). --sub-stage MODULE=RANGE adds a range around every call of a named module.

Under a profiler ($DEEPPROF_PHASE=nsys, ncu or cupti) the torch profiler stays off (CUPTI conflicts).
With $DEEPPROF_PHASE=oracle (and $DEEPPROF_ORACLE set to a path) each timed generate runs its prefill and
its decode under torch.profiler (CUDA activity only) and the kernel figures it saw are written there as
JSON: the independent check of a CUPTI timeline's kernel times (see oracle()).
"""
import argparse
import ctypes
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

import torch
import transformers
from transformers import AutoConfig, AutoModelForCausalLM

# The model_type of each architecture the profiles name; options.model_type overrides.
MODEL_TYPES = {
    "LlamaForCausalLM": "llama",
    "Qwen2ForCausalLM": "qwen2",
    "GPT2LMHeadModel": "gpt2",
    "MistralForCausalLM": "mistral",
    "MixtralForCausalLM": "mixtral",
    "Qwen2MoeForCausalLM": "qwen2_moe",
}
DTYPES = {"bf16": torch.bfloat16, "bfloat16": torch.bfloat16, "fp16": torch.float16,
          "float16": torch.float16, "fp32": torch.float32, "float32": torch.float32}
HARNESS_KEYS = {"random_init", "weights", "model_type"}


class NVTX:
    """Push/pop ranges in the default domain (torch) or in a named one (the nvtx3 shim)."""

    SHIM = r"""
#include <nvtx3/nvToolsExt.h>
static nvtxDomainHandle_t d;
void dp_init(const char *name) { d = nvtxDomainCreateA(name); }
int dp_push(const char *msg) {
  nvtxEventAttributes_t a = {0};
  a.version = NVTX_VERSION; a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII; a.message.ascii = msg;
  return nvtxDomainRangePushEx(d, &a);
}
int dp_pop(void) { return nvtxDomainRangePop(d); }
"""

    def __init__(self, domain):
        self.lib = None
        if domain:
            self.lib = self._shim()
            self.lib.dp_init(domain.encode())

    def _shim(self):
        cuda = os.environ.get("CUDA_HOME", "/usr/local/cuda")
        d = tempfile.mkdtemp(prefix="deepprof-nvtx-")
        src, so = os.path.join(d, "shim.c"), os.path.join(d, "libdpnvtx.so")
        with open(src, "w") as f:
            f.write(self.SHIM)
        cmd = ["gcc", "-shared", "-fPIC", "-O2", "-I" + os.path.join(cuda, "include"), "-o", so, src, "-ldl"]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit("workload: a named NVTX domain needs the nvtx3 shim, and building it failed:\n"
                     + " ".join(cmd) + "\n" + r.stderr)
        return ctypes.CDLL(so)

    def push(self, name):
        if self.lib:
            self.lib.dp_push(name.encode())
        else:
            torch.cuda.nvtx.range_push(name)

    def pop(self):
        if self.lib:
            self.lib.dp_pop()
        else:
            torch.cuda.nvtx.range_pop()


def build_model(spec, device):
    opts = dict(spec.get("options") or {})
    dtype = DTYPES.get(str(spec.get("dtype") or "bf16"))
    if dtype is None:
        sys.exit(f"workload: model.dtype {spec.get('dtype')!r}: want one of {sorted(DTYPES)}")
    weights = opts.get("weights")
    if not opts.get("random_init", not weights):
        if not weights:
            sys.exit("workload: model.options.random_init is false but no model.options.weights path is given "
                     "(nothing is downloaded: point weights at a local checkpoint)")
        model = AutoModelForCausalLM.from_pretrained(weights, dtype=dtype, local_files_only=True).to(device)
        return model.eval(), dtype
    shapes = {k for k in opts if k not in HARNESS_KEYS}
    if not shapes:
        sys.exit("workload: model.options gives no shapes (hidden_size, num_hidden_layers, ...): refusing to "
                 "build transformers' default configuration in its place. $DEEPPROF_MODEL must be "
                 '{"name", "arch", "dtype", "options": {...}}, as deepprof writes it')
    arch = spec.get("arch") or "LlamaForCausalLM"
    mtype = opts.get("model_type") or MODEL_TYPES.get(arch)
    if mtype is None:
        sys.exit(f"workload: model.arch {arch!r} has no known model_type: set model.options.model_type")
    cfg = AutoConfig.for_model(mtype, **{k: v for k, v in opts.items() if k not in HARNESS_KEYS})
    with torch.device(device):
        model = AutoModelForCausalLM.from_config(cfg, dtype=dtype)
    return model.eval(), dtype


class SubStages:
    """--sub-stage MODULE=RANGE: an NVTX range around every call of a named module, and its GPU time
    (CUDA events on the current stream, read once the repeat has synchronized) summed per top-level
    stage it ran in. The report lists them as stages "PARENT/RANGE" with "parent": PARENT, so that a
    reader never adds them to the parent's time twice."""

    def __init__(self, model, nvtx, specs):
        self.stage, self.events, self.names = None, [], []
        for s in specs:
            module, _, rng = s.partition("=")
            try:
                m = model.get_submodule(module)
            except AttributeError:
                sys.exit(f"workload: --sub-stage {s!r}: the model has no module {module!r}")
            rng = rng or module
            self.names.append(rng)
            m.register_forward_pre_hook(lambda *_a, r=rng: self._start(nvtx, r))
            m.register_forward_hook(lambda *_a, r=rng: self._stop(nvtx, r))

    # Only the timed generates (stage set) push ranges and record events: the
    # warm-up stays outside every range, as the top-level stages' warm-up does.
    def _start(self, nvtx, rng):
        if self.stage:
            nvtx.push(rng)
            e = torch.cuda.Event(enable_timing=True)
            e.record()
            self.events.append([self.stage, rng, e, None])

    def _stop(self, nvtx, rng):
        if self.stage:
            nvtx.pop()
            for ev in reversed(self.events):
                if ev[1] == rng and ev[3] is None:
                    ev[3] = torch.cuda.Event(enable_timing=True)
                    ev[3].record()
                    break

    def collect(self):
        """The summed ms per "stage/range" of what ran since the last collect (after a synchronize)."""
        out = {}
        for stage, rng, a, b in self.events:
            if b is not None:
                key = stage + "/" + rng
                out[key] = out.get(key, 0.0) + a.elapsed_time(b)
        self.events = []
        return out


class NoNVTX:
    """Warm-up pushes no range: profilers gated on the ranges skip it."""

    def push(self, name):
        pass

    def pop(self):
        pass


class Recording:
    """Pause and resume of deepprof's CUPTI library when it records this process (DEEPPROF_PHASE=cupti):
    the timed repeats then alternate with as many repeats with recording paused, in one process, and
    the report's "overhead" holds both (harness/cuptilib says why in one process). None when the
    library is not loaded here."""

    @staticmethod
    def find():
        path = os.environ.get("CUDA_INJECTION64_PATH")
        if not path:
            return None
        try:
            lib = ctypes.CDLL(path, mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
            r = Recording()
            r.pause, r.resume = lib.deepprof_cupti_pause, lib.deepprof_cupti_resume
        except (OSError, AttributeError):
            return None
        if not r.pause():
            return None
        r.resume()
        return r


def generate(model, ids, new_tokens, nvtx, a, subs=None):
    """One prefill and new_tokens decode steps; returns (prefill_ms, decode_ms)."""
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    if subs:
        subs.stage = "prefill"
    nvtx.push(a.prefill_range)
    out = model(ids, use_cache=True)
    nvtx.pop()
    torch.cuda.synchronize()
    t1 = time.perf_counter()
    past = out.past_key_values
    nxt = out.logits[:, -1:].argmax(-1)
    if subs:
        subs.stage = "decode"
    nvtx.push(a.decode_range)
    for _ in range(new_tokens):
        nvtx.push(a.step_range)
        out = model(nxt, past_key_values=past, use_cache=True)
        past = out.past_key_values
        nxt = out.logits[:, -1:].argmax(-1)
        nvtx.pop()
    nvtx.pop()
    torch.cuda.synchronize()
    t2 = time.perf_counter()
    if subs:
        subs.stage = None
    return (t1 - t0) * 1e3, (t2 - t1) * 1e3


def _kernel_events(prof):
    """(name, duration us) of each kernel torch.profiler saw; memcpys and memsets are not kernels."""
    out = []
    cuda = torch.autograd.DeviceType.CUDA
    for e in prof.events():
        if getattr(e, "device_type", None) != cuda:
            continue
        if e.name.startswith(("Memcpy", "Memset")):
            continue
        out.append((e.name, e.time_range.end - e.time_range.start))
    return out


def oracle(model, ids, a, nvtx, repeats):
    """torch.profiler's view of the timed generates, phase by phase: the prefill and the decode loop
    each run inside a profiler session of their own (CUDA activity only, so that the figures hold
    kernels and nothing else), inside the same NVTX ranges as the timed run. Returns the oracle JSON:
    per phase (keyed by its NVTX range) kernel time and launches, and per kernel total time and calls,
    summed over the repeats."""
    from torch.profiler import ProfilerActivity, profile
    phases = {a.prefill_range: [0.0, 0], a.decode_range: [0.0, 0]}
    kernels = {}

    def account(phase, prof):
        for name, us in _kernel_events(prof):
            phases[phase][0] += us / 1e3
            phases[phase][1] += 1
            k = kernels.setdefault(name, [0.0, 0])
            k[0] += us / 1e3
            k[1] += 1

    for _ in range(repeats):
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as p:
            nvtx.push(a.prefill_range)
            out = model(ids, use_cache=True)
            nvtx.pop()
            torch.cuda.synchronize()
        account(a.prefill_range, p)
        past, nxt = out.past_key_values, out.logits[:, -1:].argmax(-1)
        with profile(activities=[ProfilerActivity.CUDA]) as p:
            nvtx.push(a.decode_range)
            for _ in range(a.new_tokens):
                nvtx.push(a.step_range)
                out = model(nxt, past_key_values=past, use_cache=True)
                past, nxt = out.past_key_values, out.logits[:, -1:].argmax(-1)
                nvtx.pop()
            nvtx.pop()
            torch.cuda.synchronize()
        account(a.decode_range, p)
    rows = [{"name": n, "total_ms": v[0], "calls": v[1]} for n, v in kernels.items()]
    rows.sort(key=lambda r: (-r["total_ms"], r["name"]))
    # torch.profiler's own overhead on this machine, measured as deepprof measures its CUPTI library's:
    # whole generates alternating, in ABBA order, between plain and inside a profiler session (CUDA
    # activity), the profiler's start and stop outside the timed part. The reference the library's
    # overhead is read against.
    plain, profiled = [], []
    for i in range(repeats):
        for on in ((True, False) if i % 2 == 0 else (False, True)):
            if on:
                with profile(activities=[ProfilerActivity.CUDA]):
                    pm, dm = generate(model, ids, a.new_tokens, nvtx, a)
                profiled.append(pm + dm)
            else:
                pm, dm = generate(model, ids, a.new_tokens, nvtx, a)
                plain.append(pm + dm)
    return {"tool": "torch.profiler", "torch": torch.__version__, "activities": ["CUDA"], "repeats": repeats,
            "domain": os.environ.get("DEEPPROF_NVTX_DOMAIN", ""),
            "phases": [{"range": r, "kernel_ms": v[0], "launches": v[1]} for r, v in phases.items()],
            "kernels": rows,
            "overhead": {"method": "alternating generates in one process, inside a profiler session and plain",
                         "profiled_ms": profiled, "plain_ms": plain}}


def operator_table(model, ids, a, nvtx):
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        generate(model, ids, a.new_tokens, nvtx, a)
    rows = []
    cpu = getattr(torch.autograd, "DeviceType", None)
    for e in prof.key_averages():
        # key_averages also lists each CUDA kernel as an event of its own
        # (no CPU time): those are kernels, not operators.
        if cpu is not None and getattr(e, "device_type", cpu.CPU) != cpu.CPU:
            continue
        dev = getattr(e, "device_time_total", None)
        if dev is None:
            dev = getattr(e, "cuda_time_total", 0)
        rows.append({"name": e.key, "calls": int(e.count), "total_ms": e.cpu_time_total / 1e3, "cuda_ms": dev / 1e3})
    rows.sort(key=lambda r: (-r["cuda_ms"], r["name"]))
    return rows[: a.operators_top]


def flop_facts(model):
    """What the harness needs to count a token's FLOPs (its MFU formula): the weights every token
    multiplies (each Linear or GPT-2 Conv1D, the output head included even when it shares the
    embedding's weights; embeddings are lookups), and the attention shapes."""
    from transformers.pytorch_utils import Conv1D
    c = model.config
    matmul = sum(m.weight.numel() for m in model.modules() if isinstance(m, (torch.nn.Linear, Conv1D)))
    heads = getattr(c, "num_attention_heads", None)
    hidden = getattr(c, "hidden_size", None)
    head_dim = getattr(c, "head_dim", None) or (hidden // heads if hidden and heads else None)
    return {"matmul_params": matmul, "layers": getattr(c, "num_hidden_layers", None), "hidden_size": hidden,
            "heads": heads, "kv_heads": getattr(c, "num_key_value_heads", None) or heads, "head_dim": head_dim,
            "vocab_size": getattr(c, "vocab_size", None)}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--prompt-tokens", type=int, default=64)
    p.add_argument("--new-tokens", type=int, default=4)
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--repeats", type=int, default=int(os.environ.get("DEEPPROF_REPEATS", "1")))
    p.add_argument("--prefill-range", default="prefill")
    p.add_argument("--decode-range", default="decode_all")
    p.add_argument("--step-range", default="decode_step")
    p.add_argument("--sub-stage", action="append", default=[], metavar="MODULE=RANGE")
    p.add_argument("--operators", action="store_true", help="add the torch.profiler operator table (stage 1 only)")
    p.add_argument("--operators-top", type=int, default=50)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()

    phase = os.environ.get("DEEPPROF_PHASE", "stage1")
    spec = json.loads(os.environ.get("DEEPPROF_MODEL") or "{}")
    if not torch.cuda.is_available():
        sys.exit("workload: no CUDA device visible (CUDA_VISIBLE_DEVICES=%r)" % os.environ.get("CUDA_VISIBLE_DEVICES"))
    torch.manual_seed(a.seed)
    device = torch.device("cuda")
    t_build = time.perf_counter()
    model, dtype = build_model(spec, device)
    build_s = time.perf_counter() - t_build
    nvtx = NVTX(os.environ.get("DEEPPROF_NVTX_DOMAIN", ""))
    subs = SubStages(model, nvtx, a.sub_stage)
    vocab = model.config.vocab_size
    ids = torch.randint(0, vocab, (a.batch, a.prompt_tokens), device=device)

    with torch.inference_mode():
        # Warm up a whole generate: the first decode pays for kernel
        # selection and for every KV-cache length it meets (on an H200, a
        # prefill-only warm-up left 1002 ms against 154 ms, a 2-token one
        # 345 ms against 150 ms for 8 tokens).
        for _ in range(a.warmup):
            generate(model, ids, a.new_tokens, NoNVTX(), a)
        torch.cuda.synchronize()
        subs.collect()
        if phase == "oracle":
            path = os.environ.get("DEEPPROF_ORACLE")
            if not path:
                sys.exit("workload: DEEPPROF_PHASE=oracle needs DEEPPROF_ORACLE, the path of the JSON to write")
            fig = oracle(model, ids, a, nvtx, a.repeats)
            fig["device"] = torch.cuda.get_device_name()
            tmp = path + ".tmp"
            with open(tmp, "w") as f:
                json.dump(fig, f, indent=1)
            os.replace(tmp, path)
            print(f"workload: oracle figures of {a.repeats} generate(s) written to {path}", flush=True)
            return
        prefill, decode, sub_ms = [], [], {}
        rec = Recording.find() if phase == "cupti" else None
        traced, untraced = [], []
        for i in range(a.repeats):
            # Recording on and off alternate, in ABBA order, so that a drift of the machine's speed
            # weighs on both alike.
            for on in ((True, False) if i % 2 == 0 else (False, True)) if rec else (True,):
                if not on:
                    rec.pause()
                pm, dm = generate(model, ids, a.new_tokens, nvtx, a, subs)
                got = subs.collect()
                if not on:
                    rec.resume()
                    untraced.append(pm + dm)
                    continue
                traced.append(pm + dm)
                prefill.append(pm)
                decode.append(dm)
                for k, v in got.items():
                    sub_ms.setdefault(k, []).append(v)
        ops = operator_table(model, ids, a, nvtx) if a.operators and phase == "stage1" else []

    params = sum(x.numel() for x in model.parameters())
    model_facts = {"name": spec.get("name") or model.config.model_type, "arch": type(model).__name__,
                   "params": params, "dtype": str(dtype).replace("torch.", "")}
    model_facts.update(flop_facts(model))
    report = {
        "model": model_facts,
        "tokens": {"prompt": a.prompt_tokens * a.batch, "generated": a.new_tokens * a.batch},
        "stages": {"prefill": {"ms": prefill}, "decode": {"ms": decode},
                   **{k: {"ms": v, "parent": k.split("/")[0]} for k, v in sorted(sub_ms.items())}},
        "operators": ops,
        "versions": {"python": platform.python_version(), "torch": torch.__version__,
                     "transformers": transformers.__version__, "cuda": torch.version.cuda or ""},
        "device": torch.cuda.get_device_name(),
        "phase": phase,
        "build_s": build_s,
        "batch": a.batch,
        "ranges": {"prefill": a.prefill_range, "decode": a.decode_range, "step": a.step_range,
                   "domain": os.environ.get("DEEPPROF_NVTX_DOMAIN", "")},
    }
    if rec:
        report["overhead"] = {"method": "alternating repeats in one process, recording on and paused",
                              "recording_ms": traced, "paused_ms": untraced}
    if not a.operators or phase != "stage1":
        del report["operators"]
    path = os.environ.get("DEEPPROF_REPORT")
    if path:
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(report, f, indent=1)
        os.replace(tmp, path)
    print(f"workload={report['model']['name']} params={params} phase={phase} "
          f"prefill_ms={min(prefill):.3f} decode_ms={min(decode):.3f}", flush=True)


if __name__ == "__main__":
    main()
