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

Under torchrun (WORLD_SIZE > 1, RANK and LOCAL_RANK set) it runs tensor parallel (issue 17): one process
per GPU, each building the same model with the same seed and keeping its Megatron-style share of every
decoder layer (see TensorParallel). The ranks run the same generates inside the same NVTX ranges; rank 0
alone writes the report (its timings, and every rank's in "ranks") and the oracle's figures (summed over
the ranks, and every rank's in "ranks"). With $DEEPPROF_VISIBLE_PER_RANK=1 each rank sees only its own GPU
(CUDA_VISIBLE_DEVICES set to the LOCAL_RANK-th of the launcher's list, or to LOCAL_RANK), as launchers that
give each process one GPU do: every rank's GPU is then its "device 0".
"""
import argparse
import ctypes
import json
import os
import inspect
import platform
import re
import subprocess
import sys
import tempfile
import time

_STARTED = time.perf_counter()

if os.environ.get("DEEPPROF_VISIBLE_PER_RANK") == "1" and os.environ.get("LOCAL_RANK", "").isdigit():
    _visible = [d for d in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if d]
    _local = int(os.environ["LOCAL_RANK"])
    os.environ["CUDA_VISIBLE_DEVICES"] = _visible[_local] if _local < len(_visible) else str(_local)

import torch
import transformers
from transformers import AutoConfig, AutoModelForCausalLM

_IMPORTS_S = time.perf_counter() - _STARTED

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

# A communication kernel: identical to the "communication=" rule of internal/kernels/categories.go
# (defaultSpecs), which the harness uses to total the timeline's collectives per device; keep the two
# the same.
#   `communication=(?i)nccl|all_?reduce|all_?gather|reduce_?scatter|all_?to_?all|cross_device`
COMMUNICATION = re.compile(r"(?i)nccl|all_?reduce|all_?gather|reduce_?scatter|all_?to_?all|cross_device")


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
        self.off = False  # set for the repeats after the CUPTI library detached: they push no range
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
        if self.off:
            return
        if self.lib:
            self.lib.dp_push(name.encode())
        else:
            torch.cuda.nvtx.range_push(name)

    def pop(self):
        if self.off:
            return
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


class TensorParallel:
    """The ranks of a torchrun launch (WORLD_SIZE > 1), and the Megatron-style split of a Llama-like
    model's decoder layers between them, written out rather than through transformers' tp_plan (which
    needs from_pretrained): in each layer, self_attn.q_proj/k_proj/v_proj and mlp.gate_proj/up_proj are
    column parallel (this rank keeps its slice of the output rows: its heads, its part of the
    intermediate size), self_attn.o_proj and mlp.down_proj row parallel (its slice of the input
    columns, the partial outputs summed across the ranks by an all-reduce in a forward hook). The
    embedding, the norms and the output head stay whole on every rank. A single process is world 1
    and changes nothing."""

    def __init__(self):
        self.world = int(os.environ.get("WORLD_SIZE", "1") or "1")
        self.rank, self.local_rank = 0, 0
        self.gpu = 0  # this rank's device ordinal: its local rank, or 0 where it sees only its own GPU
        self.dist = None
        if self.world <= 1:
            self.world = 1
            return
        try:
            self.rank, self.local_rank = int(os.environ["RANK"]), int(os.environ["LOCAL_RANK"])
        except (KeyError, ValueError):
            sys.exit(f"workload: WORLD_SIZE={self.world} but RANK and LOCAL_RANK are not both set: "
                     "tensor-parallel mode runs under torchrun (or a launcher that sets all three)")
        import torch.distributed as dist
        self.dist = dist
        self.gpu = 0 if os.environ.get("DEEPPROF_VISIBLE_PER_RANK") == "1" else self.local_rank
        if self.gpu >= torch.cuda.device_count():
            sys.exit(f"workload: rank {self.rank}: LOCAL_RANK={self.local_rank} but this process sees "
                     f"{torch.cuda.device_count()} CUDA device(s) (CUDA_VISIBLE_DEVICES="
                     f"{os.environ.get('CUDA_VISIBLE_DEVICES')!r})")
        torch.cuda.set_device(self.gpu)
        dist.init_process_group("nccl", device_id=torch.device("cuda", self.gpu))

    @property
    def on(self):
        return self.world > 1

    def device(self):
        return torch.device("cuda", self.gpu) if self.on else torch.device("cuda")

    def barrier(self):
        """Every rank here before the next timed generate, so that they start together. NCCL's
        barrier is a small all-reduce: callers keep it outside the NVTX ranges and profiler sessions."""
        if self.on:
            self.dist.barrier()

    def gather(self, obj):
        """obj of every rank, in rank order, on rank 0 (None elsewhere); every rank must call it."""
        if not self.on:
            return [obj]
        out = [None] * self.world if self.rank == 0 else None
        self.dist.gather_object(obj, out, dst=0)
        return out

    def agree(self, flag):
        """True when flag is true on every rank: what decides how many generates a rank runs must be
        the same everywhere, or a rank waits in a collective that the others never start."""
        if not self.on:
            return bool(flag)
        t = torch.tensor([1 if flag else 0], dtype=torch.int32, device=self.device())
        self.dist.all_reduce(t, op=self.dist.ReduceOp.MIN)
        return bool(t.item())

    def broadcast(self, t):
        if self.on:
            self.dist.broadcast(t, src=0)

    def close(self):
        if self.on:
            self.dist.destroy_process_group()

    def refuse(self, why):
        sys.exit(f"workload: tensor-parallel mode over {self.world} ranks: {why}")

    def shard(self, model):
        """Split every decoder layer between the ranks (see the class). Refuses, saying why, a model
        that is not Llama-like or whose heads, key/value heads or intermediate size do not divide by
        the world size."""
        c, w = model.config, self.world
        layers = getattr(getattr(model, "model", None), "layers", None)
        need = "TP mode supports Llama-like models (model.model.layers[i] with self_attn.q_proj, k_proj, " \
               "v_proj, o_proj and mlp.gate_proj, up_proj, down_proj, each a torch.nn.Linear)"
        if layers is None or len(layers) == 0:
            gpt2 = " (GPT-2 keeps transformer.h, with fused Conv1D projections)" if hasattr(model, "transformer") else ""
            self.refuse(f"{type(model).__name__} has no model.model.layers{gpt2}: {need}")
        heads = getattr(c, "num_attention_heads", None)
        kv = getattr(c, "num_key_value_heads", None) or heads
        inter = getattr(c, "intermediate_size", None)
        if not heads or not inter:
            self.refuse(f"{type(model).__name__}'s configuration has no num_attention_heads or intermediate_size: {need}")
        bad = [f"{n} = {v}" for n, v in (("num_attention_heads", heads), ("num_key_value_heads", kv),
                                          ("intermediate_size", inter)) if v % w]
        if bad:
            self.refuse("each must divide by the world size: " + ", ".join(bad))
        for i, layer in enumerate(layers):
            attn, mlp = getattr(layer, "self_attn", None), getattr(layer, "mlp", None)
            names = [("self_attn", attn, n) for n in ("q_proj", "k_proj", "v_proj", "o_proj")] + \
                    [("mlp", mlp, n) for n in ("gate_proj", "up_proj", "down_proj")]
            missing = [f"{p}.{n}" for p, m, n in names if not isinstance(getattr(m, n, None), torch.nn.Linear)]
            if missing:
                self.refuse(f"layer {i} ({type(layer).__name__}) has no torch.nn.Linear {', '.join(missing)} "
                            f"(GPT-2's fused Conv1D attention, a mixture of experts...): {need}")
            head_dim = getattr(attn, "head_dim", None)
            if not head_dim or attn.q_proj.out_features != heads * head_dim or attn.k_proj.out_features != kv * head_dim:
                self.refuse(f"layer {i}: q_proj/k_proj out_features {attn.q_proj.out_features}/"
                            f"{attn.k_proj.out_features} are not heads x head_dim ({heads}/{kv} x {head_dim}): {need}")
            if i == 0:
                self._check_reshape(attn)
            for n in ("q_proj", "k_proj", "v_proj"):
                setattr(attn, n, self._column(getattr(attn, n)))
            attn.o_proj = self._row(attn.o_proj)
            for n in ("gate_proj", "up_proj"):
                setattr(mlp, n, self._column(getattr(mlp, n)))
            mlp.down_proj = self._row(mlp.down_proj)
            # The attention reshapes with -1 heads; attributes that hold head counts (older or other
            # attention modules keep them) become this rank's. num_key_value_groups, heads per key/value
            # head, is the same ratio on every rank.
            for n, v in (("num_heads", heads // w), ("num_attention_heads", heads // w),
                         ("num_key_value_heads", kv // w)):
                if isinstance(getattr(attn, n, None), int):
                    setattr(attn, n, v)
            if hasattr(attn, "num_key_value_groups") and attn.num_key_value_groups != heads // kv:
                self.refuse(f"layer {i}: self_attn.num_key_value_groups = {attn.num_key_value_groups}, "
                            f"not heads / kv heads = {heads // kv}: {need}")
            if hasattr(mlp, "intermediate_size"):
                mlp.intermediate_size = inter // w
        return model

    _RESHAPE = re.compile(r"\(\s*\*\s*input_shape\s*,\s*-1\s*,\s*self\.head_dim\s*\)")

    def _check_reshape(self, attn):
        """The sliced q/k/v only work with an attention that reshapes its projections with -1 heads, as
        transformers' Llama-like attentions do (`hidden_shape = (*input_shape, -1, self.head_dim)`, and
        `attn_output.reshape(*input_shape, -1)`); one that reshapes by its configuration's head counts
        would not. Its source says which; where it cannot be read or says otherwise (a decorator without
        functools.wraps, another spelling), a warning, and the logits check after sharding decides."""
        try:
            src = inspect.getsource(type(attn).forward)
        except (OSError, TypeError):
            src = ""
        if not self._RESHAPE.search(src) and self.rank == 0:
            print(f"workload: warning: could not confirm that {type(attn).__name__}.forward reshapes q/k/v "
                  "with -1 heads (hidden_shape = (*input_shape, -1, self.head_dim)); the report's "
                  "tensor_parallel_check says whether the split model computes the whole one", flush=True)

    def _new_linear(self, weight, bias):
        # skip_init: no random initialisation (and no draw from the RNG) for weights overwritten at once
        lin = torch.nn.utils.skip_init(torch.nn.Linear, weight.shape[1], weight.shape[0], bias=bias is not None,
                                       device=weight.device, dtype=weight.dtype)
        with torch.no_grad():
            lin.weight.copy_(weight)
            if bias is not None:
                lin.bias.copy_(bias)
        return lin.eval()

    def _column(self, lin):
        """This rank's slice of the output rows (and of the bias)."""
        n = lin.out_features // self.world
        sl = slice(self.rank * n, (self.rank + 1) * n)
        return self._new_linear(lin.weight[sl], None if lin.bias is None else lin.bias[sl])

    def _row(self, lin):
        """This rank's slice of the input columns; the output all-reduced (summed) over the ranks. The
        bias is added once: rank 0 keeps it, the others drop it. A synchronous all_reduce
        (async_op=False) runs on the current stream, the default one here, from PyTorch 2.8 on
        (pytorch/pytorch#150398): the NCCL kernel sits in line with the compute kernels."""
        n = lin.in_features // self.world
        sl = slice(self.rank * n, (self.rank + 1) * n)
        new = self._new_linear(lin.weight[:, sl], lin.bias if self.rank == 0 else None)
        dist = self.dist

        def reduce(_mod, _inp, out):
            dist.all_reduce(out)
            return out

        new.register_forward_hook(reduce)
        return new


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
    the report's "overhead" holds both (internal/session says why in one process). None when the
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
            recording = lib.deepprof_cupti_recording
            # An older library has no detach: the session then makes a plain run.
            r.detach = getattr(lib, "deepprof_cupti_detach", None)
        except OSError:
            return None
        except AttributeError:
            print("workload: the CUPTI library loaded here has no pause and resume: the repeats run with recording "
                  "on only, and report.md gives no in-process overhead", flush=True)
            return None
        return r if recording() else None


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
    """(name, duration us) of each kernel torch.profiler saw, in start order; memcpys and memsets are not
    kernels."""
    out = []
    cuda = torch.autograd.DeviceType.CUDA
    for e in prof.events():
        if getattr(e, "device_type", None) != cuda:
            continue
        if e.name.startswith(("Memcpy", "Memset")):
            continue
        out.append((e.time_range.start, e.name, e.time_range.end - e.time_range.start))
    out.sort(key=lambda x: x[0])
    return [(name, us) for _, name, us in out]


def oracle(model, ids, a, nvtx, repeats, tp):
    """torch.profiler's view of the timed generates, phase by phase: the prefill and the decode loop
    each run inside a profiler session of their own (CUDA activity only, so that the figures hold
    kernels and nothing else), inside the same NVTX ranges as the timed run. Returns the oracle JSON:
    per phase (keyed by its NVTX range) kernel time and launches, and per kernel total time and calls,
    summed over the repeats; [ms, launches] of its communication kernels (COMMUNICATION), and per phase
    each one's duration in start order (a collective runs until the last rank joins it: the harness
    takes each call's shortest duration over the ranks as its time net of waiting), for the per-rank
    figures of a tensor-parallel run. Every rank runs it (the generates hold collectives); the
    ranks meet at a barrier before each profiler session, outside it, so that one rank's profiler start
    is not timed as another's wait inside a collective."""
    from torch.profiler import ProfilerActivity, profile
    phases = {a.prefill_range: [0.0, 0], a.decode_range: [0.0, 0]}
    kernels = {}
    collective = [0.0, 0]
    calls = {}  # per phase, each collective's duration in ms, in start order: the per-call comparison

    def account(phase, prof):
        for name, us in _kernel_events(prof):
            phases[phase][0] += us / 1e3
            phases[phase][1] += 1
            k = kernels.setdefault(name, [0.0, 0])
            k[0] += us / 1e3
            k[1] += 1
            if COMMUNICATION.search(name):
                collective[0] += us / 1e3
                collective[1] += 1
                calls.setdefault(phase, []).append(us / 1e3)

    for _ in range(repeats):
        tp.barrier()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as p:
            nvtx.push(a.prefill_range)
            out = model(ids, use_cache=True)
            nvtx.pop()
            torch.cuda.synchronize()
        account(a.prefill_range, p)
        past, nxt = out.past_key_values, out.logits[:, -1:].argmax(-1)
        tp.barrier()
        torch.cuda.synchronize()
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
            tp.barrier()
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
                         "profiled_ms": profiled, "plain_ms": plain}}, collective, calls


def merge_ranks(fig, ranks):
    """Rank 0's oracle figures with every rank's: "phases" and "kernels" become the sums over the ranks
    (the timeline's regions sum over every process: like is compared with like), and "ranks" holds each
    rank's own. The overhead stays rank 0's."""
    phases, kernels = {}, {}
    for r in ranks:
        for p in r["phases"]:
            v = phases.setdefault(p["range"], [0.0, 0])
            v[0] += p["kernel_ms"]
            v[1] += p["launches"]
        for k in r["kernels"]:
            v = kernels.setdefault(k["name"], [0.0, 0])
            v[0] += k["total_ms"]
            v[1] += k["calls"]
    rows = [{"name": n, "total_ms": v[0], "calls": v[1]} for n, v in kernels.items()]
    rows.sort(key=lambda r: (-r["total_ms"], r["name"]))
    fig["phases"] = [{"range": n, "kernel_ms": v[0], "launches": v[1]} for n, v in phases.items()]
    fig["kernels"] = rows
    fig["ranks"] = sorted(ranks, key=lambda r: r["rank"])
    return fig


# Events torch.profiler lists among the operators that are its own work, not the program's.
PROFILER_EVENTS = {"Activity Buffer Request"}


def operator_table(model, ids, a, nvtx, tp):
    """torch.profiler's operator table of one generate. Every rank runs the generate (it holds
    collectives); the caller keeps rank 0's rows."""
    from torch.profiler import ProfilerActivity, profile
    tp.barrier()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        generate(model, ids, a.new_tokens, nvtx, a)
    rows = []
    cpu = getattr(torch.autograd, "DeviceType", None)
    for e in prof.key_averages():
        # key_averages also lists each CUDA kernel as an event of its own
        # (no CPU time): those are kernels, not operators.
        if cpu is not None and getattr(e, "device_type", cpu.CPU) != cpu.CPU:
            continue
        # The profiler's own bookkeeping (Kineto asking CUPTI for a buffer) is not the program's.
        if e.key in PROFILER_EVENTS:
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
    embedding's weights; embeddings are lookups; of a mixture of experts' experts, the share a
    token runs, num_experts_per_tok of them, whether they are Linear modules or stacked weight
    tensors), and the attention shapes."""
    from transformers.pytorch_utils import Conv1D
    c = model.config
    top_k = getattr(c, "num_experts_per_tok", None)
    n_experts = getattr(c, "num_local_experts", None) or getattr(c, "num_experts", None)
    experts = {}
    if top_k and n_experts:
        for m in model.modules():
            e = getattr(m, "experts", None)
            if isinstance(e, torch.nn.Module):
                experts[id(e)] = e
    inside = {id(x) for e in experts.values() for x in e.modules()}
    matmul = sum(m.weight.numel() for m in model.modules()
                 if isinstance(m, (torch.nn.Linear, Conv1D)) and id(m) not in inside)
    if experts:
        weights = sum(p.numel() for e in experts.values() for p in e.parameters() if p.dim() >= 2)
        matmul += weights * top_k // n_experts
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
    p.add_argument("--operators", action="store_true",
                   help="add the torch.profiler operator table (in stage 1, or in the CUPTI run once the library has detached)")
    p.add_argument("--operators-top", type=int, default=50)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()

    phase = os.environ.get("DEEPPROF_PHASE", "stage1")
    spec = json.loads(os.environ.get("DEEPPROF_MODEL") or "{}")
    if not torch.cuda.is_available():
        sys.exit("workload: no CUDA device visible (CUDA_VISIBLE_DEVICES=%r)" % os.environ.get("CUDA_VISIBLE_DEVICES"))
    tp = TensorParallel()
    torch.manual_seed(a.seed)
    device = tp.device()
    # The wall seconds of each part of this process, for setting a profiled run beside a plain one.
    parts = {"imports": _IMPORTS_S}
    t_build = time.perf_counter()
    model, dtype = build_model(spec, device)
    build_s = time.perf_counter() - t_build
    parts["build"] = build_s
    # The whole model's facts, before a tensor-parallel run keeps its share of it.
    params = sum(x.numel() for x in model.parameters())
    facts = flop_facts(model)
    vocab = model.config.vocab_size
    ids = torch.randint(0, vocab, (a.batch, a.prompt_tokens), device=device)
    tp_check = None
    if tp.on:
        # The same seed gives every rank the same weights and prompt; the prompt is rank 0's all the
        # same, in case a rank's random stream differed.
        tp.broadcast(ids)
        t_shard = time.perf_counter()
        with torch.inference_mode():
            ref = model(ids).logits[:, -1].float()
        tp.shard(model)
        torch.cuda.empty_cache()
        with torch.inference_mode():
            got = model(ids).logits[:, -1].float()
        # The split model must compute what the whole one did, up to the order of bf16 sums.
        tp_check = {"max_abs_diff": (got - ref).abs().max().item(), "ref_max_abs": ref.abs().max().item(),
                    "shard_s": time.perf_counter() - t_shard}
        del ref, got
        if tp_check["max_abs_diff"] > 0.05 * tp_check["ref_max_abs"] and tp.rank == 0:
            print(f"workload: warning: the tensor-parallel model's last logits differ from the whole model's by "
                  f"{tp_check['max_abs_diff']:.4g} (largest logit {tp_check['ref_max_abs']:.4g})", flush=True)
    nvtx = NVTX(os.environ.get("DEEPPROF_NVTX_DOMAIN", ""))
    subs = SubStages(model, nvtx, a.sub_stage)

    with torch.inference_mode():
        # Warm up a whole generate: the first decode pays for kernel
        # selection and for every KV-cache length it meets (on an H200, a
        # prefill-only warm-up left 1002 ms against 154 ms, a 2-token one
        # 345 ms against 150 ms for 8 tokens).
        t_part = time.perf_counter()
        for _ in range(a.warmup):
            generate(model, ids, a.new_tokens, NoNVTX(), a)
        torch.cuda.synchronize()
        subs.collect()
        parts["warmup"] = time.perf_counter() - t_part
        if phase == "oracle":
            path = os.environ.get("DEEPPROF_ORACLE")
            if not path:
                sys.exit("workload: DEEPPROF_PHASE=oracle needs DEEPPROF_ORACLE, the path of the JSON to write")
            fig, collective, calls = oracle(model, ids, a, nvtx, a.repeats, tp)
            fig["device"] = torch.cuda.get_device_name()
            if tp.on:
                ranks = tp.gather({"rank": tp.rank, "device": torch.cuda.current_device(),
                                   "collective_ms": collective[0], "collective_launches": collective[1],
                                   "collective_calls_ms": calls,
                                   "phases": fig["phases"], "kernels": fig["kernels"]})
                if tp.rank == 0:
                    fig = merge_ranks(fig, ranks)
            if tp.rank == 0:
                tmp = path + ".tmp"
                with open(tmp, "w") as f:
                    json.dump(fig, f, indent=1)
                os.replace(tmp, path)
                print(f"workload: oracle figures of {a.repeats} generate(s)"
                      + (f" on {tp.world} ranks" if tp.on else "") + f" written to {path}", flush=True)
            tp.close()
            return
        prefill, decode, sub_ms = [], [], {}
        rec = Recording.find() if phase == "cupti" else None
        if tp.on and not tp.agree(rec is not None):
            rec = None  # some rank's process is not recorded: no rank pauses
        traced, untraced = [], []
        # The repeats with recording paused, stage by stage: the program with the library loaded and idle,
        # in the same process as the recorded ones, to set beside stage 1's (scripts/bench/standin.sh).
        paused = {"prefill": [], "decode": []}
        paused_sub = {}
        t_part = time.perf_counter()
        for i in range(a.repeats):
            # Recording on and off alternate, in ABBA order, so that a drift of the machine's speed
            # weighs on both alike.
            for on in ((True, False) if i % 2 == 0 else (False, True)) if rec else (True,):
                if not on:
                    rec.pause()
                tp.barrier()
                pm, dm = generate(model, ids, a.new_tokens, nvtx, a, subs)
                got = subs.collect()
                if not on:
                    rec.resume()
                    untraced.append(pm + dm)
                    paused["prefill"].append(pm)
                    paused["decode"].append(dm)
                    for k, v in got.items():
                        paused_sub.setdefault(k, []).append(v)
                    continue
                traced.append(pm + dm)
                prefill.append(pm)
                decode.append(dm)
                for k, v in got.items():
                    sub_ms.setdefault(k, []).append(v)
        # The library detached (CUPTI no longer attached to this process), the program-alone repeats:
        # stage 1's figures from this process, with no profiler and no NVTX range, so that the session
        # needs no second run of the program (internal/session: plainRunNeeded). Not under a launcher:
        # NCCL's own threads make CUDA calls (CUPTI detaches safely only when none runs) and push NVTX
        # ranges of their own. Nor where the session makes a plain run anyway (DEEPPROF_ALONE=0).
        parts["repeats"] = time.perf_counter() - t_part
        alone, alone_sub = None, {}
        t_part = time.perf_counter()
        if rec and not tp.on and rec.detach is not None and os.environ.get("DEEPPROF_ALONE", "1") != "0":
            if rec.detach() == 1:
                nvtx.off = True
                alone = {"prefill": [], "decode": []}
                for _ in range(a.repeats):
                    pm, dm = generate(model, ids, a.new_tokens, nvtx, a, subs)
                    alone["prefill"].append(pm)
                    alone["decode"].append(dm)
                    for k, v in subs.collect().items():
                        alone_sub.setdefault(k, []).append(v)
        # torch.profiler's operator table is made with no other profiler attached: in stage 1, or here
        # once the library has detached.
        parts["alone"] = time.perf_counter() - t_part
        t_part = time.perf_counter()
        ops = operator_table(model, ids, a, nvtx, tp) if a.operators and (phase == "stage1" or alone is not None) else []
        parts["operators"] = time.perf_counter() - t_part
        ranks = tp.gather({"rank": tp.rank, "device": torch.cuda.current_device(),
                           "prefill_ms": prefill, "decode_ms": decode}) if tp.on else None
    if tp.rank != 0:
        tp.close()
        return

    model_facts = {"name": spec.get("name") or model.config.model_type, "arch": type(model).__name__,
                   "params": params, "dtype": str(dtype).replace("torch.", "")}
    model_facts.update(facts)
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
        "parts_s": parts,
        "batch": a.batch,
        "ranges": {"prefill": a.prefill_range, "decode": a.decode_range, "step": a.step_range,
                   "domain": os.environ.get("DEEPPROF_NVTX_DOMAIN", "")},
    }
    if tp.on:
        # The whole model's facts (above) and how it was split; the stages are rank 0's, every rank's
        # own beside them.
        model_facts["tensor_parallel"] = tp.world
        report["world_size"] = tp.world
        report["ranks"] = sorted(ranks, key=lambda r: r["rank"])
        report["tensor_parallel_check"] = tp_check
    if rec:
        report["overhead"] = {"method": "alternating repeats in one process, recording on and paused",
                              "recording_ms": traced, "paused_ms": untraced,
                              "paused_stages": {**{k: {"ms": v} for k, v in paused.items()},
                                                **{k: {"ms": v, "parent": k.split("/")[0]}
                                                   for k, v in sorted(paused_sub.items())}}}
    if alone is not None:
        report["alone"] = {"method": "repeats after the CUPTI library detached from the process (cuptiFinalize): no "
                                     "profiler attached, no NVTX range",
                           "stages": {**{k: {"ms": v} for k, v in alone.items()},
                                      **{k: {"ms": v, "parent": k.split("/")[0]} for k, v in sorted(alone_sub.items())}}}
    if not a.operators or not (phase == "stage1" or alone is not None):
        del report["operators"]
    path = os.environ.get("DEEPPROF_REPORT")
    if path:
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(report, f, indent=1)
        os.replace(tmp, path)
    print(f"workload={report['model']['name']} params={params} phase={phase} "
          + (f"ranks={tp.world} " if tp.on else "")
          + f"prefill_ms={min(prefill):.3f} decode_ms={min(decode):.3f}", flush=True)
    tp.close()


if __name__ == "__main__":
    main()
