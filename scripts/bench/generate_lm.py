"""model.generate() with no NVTX ranges, for deepprof's automatic ranges (issue 39).

A Llama-shaped causal LM from transformers (random weights from a config),
batch 4, a 128-token prompt, 32 new tokens (greedy, no early stop), 4
generates. --batch, --layers and --hidden change its shape: at --batch 2048
--layers 4 --hidden 4096 the GPU, not the host's launches, sets its pace. With --annotate the program marks its phases by hand instead,
with forward hooks: prefill (the pass over the prompt), decode_all around
the later passes, each in decode_step (run it with
workload.auto_ranges=off).

With --compile the model's forward is torch.compile'd (inductor's default
mode): a compiled decoder, its first generate compiling.

    python3 generate_lm.py [--annotate[=hooks]] [--compile] [--generates 4] [--tokens 32] [--batch 4] [--layers 8] [--hidden 1024] [--warmup]
"""

import argparse
import functools

import torch
from transformers import LlamaConfig, LlamaForCausalLM

p = argparse.ArgumentParser()
p.add_argument("--annotate", nargs="?", const="forward", choices=["forward", "hooks"])
p.add_argument("--generates", type=int, default=4)
p.add_argument("--tokens", type=int, default=32)
p.add_argument("--batch", type=int, default=4)
p.add_argument("--layers", type=int, default=8)
p.add_argument("--hidden", type=int, default=1024)
p.add_argument("--warmup", action="store_true", help="a forward pass over the prompt first, outside every range")
p.add_argument("--compile", action="store_true", help="torch.compile the model's forward")
args = p.parse_args()

torch.manual_seed(0)
heads = args.hidden // 64
cfg = LlamaConfig(hidden_size=args.hidden, intermediate_size=args.hidden * 11 // 4, num_hidden_layers=args.layers,
                  num_attention_heads=heads, num_key_value_heads=heads // 2, vocab_size=32000,
                  max_position_embeddings=1024)
with torch.device("cuda"):
    model = LlamaForCausalLM(cfg).to(torch.bfloat16).eval()
if args.compile:
    model.forward = torch.compile(model.forward)
ids = torch.randint(1, cfg.vocab_size, (args.batch, 128), device="cuda")
if args.warmup:
    # The first pass at a shape plans its kernels (cuDNN's attention, for
    # one): done here, the first generate's prefill is like the others.
    with torch.inference_mode():
        model(ids)
    torch.cuda.synchronize()

nvtx = torch.cuda.nvtx
state = {"decoding": False}


def push_phase(a, k):
    t = k.get("input_ids", a[0] if a else None)
    if t is not None and t.shape[1] > 1:
        nvtx.range_push("prefill")
    else:
        if not state["decoding"]:
            nvtx.range_push("decode_all")
            state["decoding"] = True
        nvtx.range_push("decode_step")


def pop_phase(module, a, k, out):
    nvtx.range_pop()  # a hook that returns something replaces the output


if args.annotate == "hooks":
    model.register_forward_pre_hook(lambda m, a, k: push_phase(a, k), with_kwargs=True)
    model.register_forward_hook(pop_phase, with_kwargs=True)
elif args.annotate == "forward":
    forward = model.forward

    @functools.wraps(forward)
    def annotated(*a, **k):
        push_phase(a, k)
        try:
            return forward(*a, **k)
        finally:
            nvtx.range_pop()

    model.forward = annotated

for _ in range(args.generates):
    with torch.inference_mode():
        model.generate(ids, max_new_tokens=args.tokens, min_new_tokens=args.tokens, do_sample=False, pad_token_id=0)
    if args.annotate and state["decoding"]:
        torch.cuda.nvtx.range_pop()
        state["decoding"] = False
print("generated %d x %d tokens" % (args.generates, args.tokens))
