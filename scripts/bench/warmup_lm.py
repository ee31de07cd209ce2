"""A program with its own warm-up, for deepprof's steady-state rule (issue 34).

A Llama-shaped causal LM from transformers (random weights: built from a
config, nothing downloaded), batch 4, a 128-token prompt, greedy decode of
32 tokens, 4 generates. Nothing warms it up first, so the first generate
pays the one-time costs (cuBLAS handles and plans, lazy module loading, the
first kernels' loads) inside its ranges. NVTX ranges, pushed by hand:
generate > prefill, decode_all > decode_step.

    python3 warmup_lm.py [--generates 4] [--tokens 32]
"""

import argparse

import torch
from transformers import LlamaConfig, LlamaForCausalLM

p = argparse.ArgumentParser()
p.add_argument("--generates", type=int, default=4)
p.add_argument("--tokens", type=int, default=32)
p.add_argument("--batch", type=int, default=4)
p.add_argument("--prompt", type=int, default=128)
args = p.parse_args()

torch.manual_seed(0)
cfg = LlamaConfig(hidden_size=1024, intermediate_size=2816, num_hidden_layers=8, num_attention_heads=16,
                  num_key_value_heads=8, vocab_size=32000, max_position_embeddings=1024)
model = LlamaForCausalLM(cfg).to("cuda", torch.bfloat16).eval()
ids = torch.randint(0, cfg.vocab_size, (args.batch, args.prompt), device="cuda")
nvtx = torch.cuda.nvtx


@torch.inference_mode()
def generate():
    nvtx.range_push("prefill")
    out = model(input_ids=ids, use_cache=True)
    cache, tok = out.past_key_values, out.logits[:, -1:].argmax(-1)
    torch.cuda.synchronize()
    nvtx.range_pop()
    nvtx.range_push("decode_all")
    for _ in range(args.tokens - 1):
        nvtx.range_push("decode_step")
        out = model(input_ids=tok, past_key_values=cache, use_cache=True)
        cache, tok = out.past_key_values, out.logits[:, -1:].argmax(-1)
        torch.cuda.synchronize()
        nvtx.range_pop()
    nvtx.range_pop()


for _ in range(args.generates):
    generate()
params = sum(p.numel() for p in model.parameters())
print("generated %d x %d tokens, batch %d, %d parameters" % (args.generates, args.tokens, args.batch, params))
