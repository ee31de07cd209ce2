"""model.generate() with no NVTX ranges, for deepprof's automatic ranges (issue 39).

A Llama-shaped causal LM from transformers (random weights from a config),
batch 4, a 128-token prompt, 32 new tokens (greedy, no early stop), 4
generates. With --annotate the program marks its phases by hand instead,
with forward hooks: prefill (the pass over the prompt), decode_all around
the later passes, each in decode_step (run it with
workload.auto_ranges=off).

    python3 generate_lm.py [--annotate] [--generates 4] [--tokens 32]
"""

import argparse

import torch
from transformers import LlamaConfig, LlamaForCausalLM

p = argparse.ArgumentParser()
p.add_argument("--annotate", action="store_true")
p.add_argument("--generates", type=int, default=4)
p.add_argument("--tokens", type=int, default=32)
args = p.parse_args()

torch.manual_seed(0)
cfg = LlamaConfig(hidden_size=1024, intermediate_size=2816, num_hidden_layers=8, num_attention_heads=16,
                  num_key_value_heads=8, vocab_size=32000, max_position_embeddings=1024)
model = LlamaForCausalLM(cfg).to("cuda", torch.bfloat16).eval()
ids = torch.randint(1, cfg.vocab_size, (4, 128), device="cuda")

if args.annotate:
    nvtx = torch.cuda.nvtx
    state = {"decoding": False}

    def pre(module, a, k):
        t = k.get("input_ids", a[0] if a else None)
        if t is not None and t.shape[1] > 1:
            nvtx.range_push("prefill")
        else:
            if not state["decoding"]:
                nvtx.range_push("decode_all")
                state["decoding"] = True
            nvtx.range_push("decode_step")

    def post(module, a, k, out):
        nvtx.range_pop()

    model.register_forward_pre_hook(pre, with_kwargs=True)
    model.register_forward_hook(post, with_kwargs=True)

for _ in range(args.generates):
    with torch.inference_mode():
        model.generate(ids, max_new_tokens=args.tokens, min_new_tokens=args.tokens, do_sample=False, pad_token_id=0)
    if args.annotate and state["decoding"]:
        torch.cuda.nvtx.range_pop()
        state["decoding"] = False
print("generated %d x %d tokens" % (args.generates, args.tokens))
