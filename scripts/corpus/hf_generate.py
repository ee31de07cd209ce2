"""HF generate() as people write it, with its own clock (scripts/corpus).

A transformers Llama (8 layers, hidden 1024, 16/8 heads, bf16, random
weights), batch 4, a 128-token prompt: first a short generate of
--warmup-tokens (4) tokens, then --generates (4) generates of --tokens (32),
greedy, no early stop, nothing else warmed up. No NVTX range of its own
(deepprof's automatic ranges find the phases), or with --hooks, forward
hooks that push `prefill` around the first forward of each generate and
`decode` around each later one: one range a token, no decode_all.

A streamer reads the clock: each token is on the host when generate()
hands it over (it copies it there); a synchronize, then perf_counter.

    python3 hf_generate.py [--hooks] [--generates 4] [--tokens 32] [--warmup-tokens 4]
"""

import argparse
import time

import torch
from transformers import LlamaConfig, LlamaForCausalLM
from transformers.generation.streamers import BaseStreamer

import clock

p = argparse.ArgumentParser()
p.add_argument("--hooks", action="store_true", help="push prefill and decode ranges from forward hooks")
p.add_argument("--generates", type=int, default=4)
p.add_argument("--tokens", type=int, default=32)
p.add_argument("--warmup-tokens", type=int, default=4)
p.add_argument("--batch", type=int, default=4)
p.add_argument("--layers", type=int, default=8)
p.add_argument("--hidden", type=int, default=1024)
args = p.parse_args()

torch.manual_seed(0)
heads = args.hidden // 64
cfg = LlamaConfig(hidden_size=args.hidden, intermediate_size=args.hidden * 11 // 4, num_hidden_layers=args.layers,
                  num_attention_heads=heads, num_key_value_heads=heads // 2, vocab_size=32000,
                  max_position_embeddings=1024)
with torch.device("cuda"):
    model = LlamaForCausalLM(cfg).to(torch.bfloat16).eval()
ids = torch.randint(1, cfg.vocab_size, (args.batch, 128), device="cuda")

nvtx = torch.cuda.nvtx
state = {"first": True}
if args.hooks:
    def pre(module, a, k):
        nvtx.range_push("prefill" if state["first"] else "decode")
        state["first"] = False

    def post(module, a, k, out):
        nvtx.range_pop()  # a hook that returns something replaces the output

    model.register_forward_pre_hook(pre, with_kwargs=True)
    model.register_forward_hook(post, with_kwargs=True)


class Clock(BaseStreamer):
    """When each new token was on the host; the prompt (the first put) is not one."""

    def __init__(self):
        self.times, self.prompt = [], True

    def put(self, value):
        if self.prompt:
            self.prompt = False
            return
        torch.cuda.synchronize()
        self.times.append(time.perf_counter())

    def end(self):
        pass


for g, n in enumerate([args.warmup_tokens] + [args.tokens] * args.generates):
    c = Clock()
    state["first"] = True
    torch.cuda.synchronize()
    call = time.perf_counter()
    with torch.inference_mode():
        model.generate(ids, max_new_tokens=n, min_new_tokens=n, do_sample=False, pad_token_id=0, streamer=c)
    clock.emit("hf_generate_hooks" if args.hooks else "hf_generate", g, c.times, call, args.batch)
