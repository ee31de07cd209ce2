# deepprof's automatic NVTX ranges (workload.auto_ranges): put first on the
# PYTHONPATH of the profiled program, so that a PyTorch program with no NVTX
# ranges of its own gets its phases with no change to its code. Once
# transformers' generation module is imported, each generate() call is
# marked where it is called (an NVTX mark, deepprof:generate: where TTFT
# starts), and each that runs outside every range the program pushed
# itself, and pushes none of its own inside, is annotated:
#   prefill      the forward pass that reads the prompt (more than one new
#                token a sequence, or the first pass)
#   decode_all   every later forward pass of the call, each in a
#     decode_step  range of its own
# the ranges deepprof's own workload pushes. A program that pushes ranges of
# its own inside generate() (forward hooks) gets none of these: its ranges
# alone make the phases, never interleaved with deepprof's on one NVTX
# stack. Only ranges and the mark are added: the
# program's behaviour is otherwise unchanged. A sitecustomize that was
# there before this one still runs. Where the session asks for them
# ($DEEPPROF_MODEL_FACTS), the model's facts (its shape, from its config
# and its weights) and the call's tokens are written there after each
# annotated generate(): deepprof's MFU and MBU read them.
import functools
import importlib.abc
import json
import importlib.machinery
import importlib.util
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))


def _chain():
    """Runs the sitecustomize this one hides, if any."""
    for p in sys.path:
        if os.path.abspath(p or ".") == _HERE:
            continue
        spec = importlib.machinery.PathFinder.find_spec("sitecustomize", [p])
        if spec is not None and spec.loader is not None:
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            return


_user_depth = [0]  # ranges the program pushed itself, on any thread


def _count_user_ranges(nvtx):
    push, pop = nvtx.range_push, nvtx.range_pop

    def range_push(msg):
        _user_depth[0] += 1
        return push(msg)

    def range_pop():
        _user_depth[0] = max(0, _user_depth[0] - 1)
        return pop()

    nvtx.range_push, nvtx.range_pop = range_push, range_pop
    _count_user_ranges.raw = (push, pop)


def _input_shape(args, kwargs):
    """The shape of the tokens a forward or generate() call is given:
    input_ids (by keyword or first), else inputs_embeds; None if neither."""
    t = kwargs.get("input_ids")
    if t is None and args:
        t = args[0]
    if t is None:
        t = kwargs.get("inputs_embeds")
    return getattr(t, "shape", None)


def _new_tokens(args, kwargs):
    shape = _input_shape(args, kwargs)
    if shape is None or len(shape) < 2:
        return 1
    return int(shape[1])


_DTYPES = {"torch.bfloat16": "bf16", "torch.float16": "fp16", "torch.float32": "fp32"}


_model_facts = {}  # the model's own facts, by id(model): read once


def _shape_facts(model):
    """The model's shape, from its config and weights: what stays the same
    from one generate() to the next."""
    import torch

    c = model.config
    linear = [torch.nn.Linear]
    try:
        from transformers.pytorch_utils import Conv1D
        linear.append(Conv1D)
    except Exception:
        pass
    heads = getattr(c, "num_attention_heads", None) or 0
    hidden = getattr(c, "hidden_size", None) or 0
    head_dim = getattr(c, "head_dim", None) or (hidden // heads if hidden and heads else 0)
    dtype = str(getattr(model, "dtype", ""))
    facts = {
        "name": getattr(c, "model_type", "") or "", "arch": type(model).__name__,
        "params": sum(p.numel() for p in model.parameters()),
        "dtype": _DTYPES.get(dtype, dtype.replace("torch.", "")),
        "layers": getattr(c, "num_hidden_layers", None) or 0, "hidden_size": hidden, "heads": heads,
        "kv_heads": getattr(c, "num_key_value_heads", None) or heads, "head_dim": head_dim or 0,
        "vocab_size": getattr(c, "vocab_size", None) or 0,
    }
    # The weights every generated token multiplies: each linear layer's,
    # the output head's too. Left to the user (model.matmul_params) where
    # some linear layers do not run for each token: a mixture of experts
    # (only the routed experts), an encoder-decoder (the encoder runs
    # once), a vision-language model (its vision tower).
    partial = any(getattr(c, k, None) for k in ("num_experts_per_tok", "num_local_experts", "num_experts",
                                                  "is_encoder_decoder", "vision_config"))
    if not partial:
        facts["matmul_params"] = sum(m.weight.numel() for m in model.modules() if isinstance(m, tuple(linear)))
    return facts


def _facts(model, args, kwargs, out, decode_passes):
    """The facts file's content: the model's shape and the call's tokens,
    the whole batch's (workload.ModelFacts in deepprof): the prompt's
    tokens of each sequence, and a token of each for every decode pass."""
    seqs = getattr(out, "sequences", out)
    shape, got = _input_shape(args, kwargs), getattr(seqs, "shape", None)
    if shape is None or len(shape) < 2 or got is None or len(got) < 2:
        return None
    batch, prompt = int(got[0]), int(shape[1])  # the output's rows: beams and returned sequences too
    key = id(model)
    if key not in _model_facts:
        _model_facts[key] = _shape_facts(model)
    return {"format": "deepprof-model-facts/1", "from": "the transformers config of " + type(model).__name__,
            "model": _model_facts[key], "tokens": {"prompt": batch * prompt, "generated": batch * decode_passes},
            "batch": batch}


def _write_facts(model, args, kwargs, out, decode_passes):
    path = os.environ.get("DEEPPROF_MODEL_FACTS")
    if not path or os.environ.get("RANK", "0") != "0":
        return  # one process writes them: rank 0 of a distributed run
    try:
        facts = _facts(model, args, kwargs, out, decode_passes)
        if facts is None:
            return
        # A file of its own, made new, never through a link: a link planted
        # at the name makes the write fail, not land outside the run.
        tmp = "%s.%d.tmp" % (path, os.getpid())
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
        with os.fdopen(fd, "w") as f:
            json.dump(facts, f, indent=1)
        os.replace(tmp, path)  # replaces a link at path, never writes through it
    except Exception as e:  # never break the program
        sys.stderr.write("deepprof auto ranges: no model facts: %r\n" % (e,))


def _patch_generation(mod):
    gm = getattr(mod, "GenerationMixin", None)
    if gm is None or getattr(gm.generate, "_deepprof", False):
        return
    import torch

    nvtx = torch.cuda.nvtx
    if not hasattr(_count_user_ranges, "raw"):
        _count_user_ranges(nvtx)
    push, pop = _count_user_ranges.raw
    generate = gm.generate

    def annotated(self, *args, **kwargs):
        nvtx.mark("deepprof:generate")
        if _user_depth[0] > 0:
            return generate(self, *args, **kwargs)  # the program's own ranges
        forward = self.forward
        state = {"passes": 0, "decoding": False, "own": False}

        # functools.wraps keeps forward's signature visible: generate reads
        # it (inspect.signature) to choose the arguments it passes.
        @functools.wraps(forward)
        def wrapped(*a, **k):
            first = state["passes"] == 0
            state["passes"] += 1
            if first and _user_depth[0] > 0:
                state["own"] = True  # the program's hooks pushed a range around the pass
            if state["own"]:
                return forward(*a, **k)
            if first or _new_tokens(a, k) > 1:
                push("prefill")
                try:
                    return forward(*a, **k)
                finally:
                    pop()
            if not state["decoding"]:
                push("decode_all")
                state["decoding"] = True
            push("decode_step")
            try:
                return forward(*a, **k)
            finally:
                pop()

        self.forward = wrapped
        try:
            out = generate(self, *args, **kwargs)
        finally:
            try:
                del self.forward
            except AttributeError:
                pass
            if state["decoding"]:
                pop()
        # after the ranges close: the facts' cost is in no phase
        _write_facts(self, args, kwargs, out, max(state["passes"] - 1, 0))
        return out

    annotated._deepprof = True
    gm.generate = annotated


class _AfterImport(importlib.abc.MetaPathFinder):
    """Patches transformers' generation module once it is loaded."""

    def find_spec(self, name, path=None, target=None):
        if name != "transformers.generation.utils":
            return None
        for finder in sys.meta_path:
            if finder is self:
                continue
            spec = finder.find_spec(name, path, target) if hasattr(finder, "find_spec") else None
            if spec is not None and spec.loader is not None:
                loader = spec.loader
                exec_module = loader.exec_module

                def patched_exec(module):
                    exec_module(module)
                    try:
                        _patch_generation(module)
                    except Exception as e:  # never break the program
                        sys.stderr.write("deepprof auto ranges: not installed: %r\n" % (e,))

                loader.exec_module = patched_exec
                return spec
        return None


_chain()
if os.environ.get("DEEPPROF_AUTO_RANGES", "1") != "0":
    sys.meta_path.insert(0, _AfterImport())
