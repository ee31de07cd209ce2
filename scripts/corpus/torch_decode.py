"""A hand-written PyTorch decode loop with its own clock (scripts/corpus).

A Llama-shaped decoder of our own (--layers 8, hidden 1024, 16 heads of 64,
vocab 32000, bf16, random weights) with a static KV cache, batch 4, a
128-token prompt, --generates (4) generates of --tokens (32) tokens, greedy.
The prefill runs eagerly; each decode step is one call of `step`, whose
shapes never change, run as --mode says:

  eager    as written
  compile  torch.compile(step) (inductor, --compile-mode, default "default")
  graphs   captured once in a CUDA graph, replayed for each token

--ranges hand pushes `prefill` around the prefill and `decode` around each
step (one range a token, no decode_all); --ranges none pushes none. The
token is read on the host after each step (a synchronize), as a loop that
stops at an end token would.

    python3 torch_decode.py [--mode eager|compile|graphs] [--ranges hand|none]
"""

import argparse
import math
import time

import torch

import clock

p = argparse.ArgumentParser()
p.add_argument("--mode", choices=["eager", "compile", "graphs"], default="eager")
p.add_argument("--compile-mode", default="default")
p.add_argument("--ranges", choices=["hand", "none"], default="hand")
p.add_argument("--generates", type=int, default=4)
p.add_argument("--tokens", type=int, default=32)
p.add_argument("--batch", type=int, default=4)
p.add_argument("--layers", type=int, default=8)
p.add_argument("--hidden", type=int, default=1024)
args = p.parse_args()

torch.manual_seed(0)
dev, dt = "cuda", torch.bfloat16
B, P, T, L, Hd = args.batch, 128, args.tokens, args.layers, args.hidden
NH, D, V, F = Hd // 64, 64, 32000, Hd * 11 // 4
MAX = P + T + 1


def w(*shape):
    return (torch.randn(*shape, device=dev) / math.sqrt(shape[0])).to(dt)


emb = w(V, Hd)
layers = [dict(qkv=w(Hd, 3 * Hd), o=w(Hd, Hd), up=w(Hd, 2 * F), down=w(F, Hd)) for _ in range(L)]
head = w(Hd, V)
K = torch.zeros(L, B, NH, MAX, D, device=dev, dtype=dt)
Vc = torch.zeros_like(K)


def norm(x):
    return x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6).to(x.dtype)


def block(x, l, pos, n, kc, vc):
    """One layer over n new tokens at positions pos..pos+n-1 (pos a tensor)."""
    q, k, v = (norm(x) @ layers[l]["qkv"]).view(B, n, 3, NH, D).permute(2, 0, 3, 1, 4)
    idx = pos + torch.arange(n, device=dev)
    kc[l].index_copy_(2, idx, k)
    vc[l].index_copy_(2, idx, v)
    keys = torch.arange(MAX, device=dev)
    mask = keys[None, :] <= idx[:, None]  # causal, and nothing past the last written position
    a = torch.nn.functional.scaled_dot_product_attention(q, kc[l], vc[l], attn_mask=mask)
    x = x + a.transpose(1, 2).reshape(B, n, Hd) @ layers[l]["o"]
    g, u = (norm(x) @ layers[l]["up"]).chunk(2, -1)
    return x + (torch.nn.functional.silu(g) * u) @ layers[l]["down"]


def forward(tok, pos, n, kc, vc):
    x = emb[tok]
    for l in range(L):
        x = block(x, l, pos, n, kc, vc)
    return (norm(x[:, -1]) @ head).argmax(-1)


def step(tok, pos, kc, vc):
    """One decode step: the next token, and the position moved on (in place)."""
    nxt = forward(tok[:, None], pos, 1, kc, vc)
    tok.copy_(nxt)
    pos.add_(1)


tok = torch.zeros(B, dtype=torch.long, device=dev)
pos = torch.zeros(1, dtype=torch.long, device=dev)
run = step
if args.mode == "compile":
    run = torch.compile(step, mode=args.compile_mode)
elif args.mode == "graphs":
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):  # warm-up outside the graph, as capture asks
            step(tok, pos, K, Vc)
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        step(tok, pos, K, Vc)

    def run(tok, pos, kc, vc):
        graph.replay()

hand = args.ranges == "hand"
nvtx = torch.cuda.nvtx
prompt = torch.randint(1, V, (B, P), device=dev)
name = "torch_decode_" + args.mode
for g in range(args.generates):
    times = []
    torch.cuda.synchronize()
    call = time.perf_counter()
    with torch.inference_mode():
        if hand:
            nvtx.range_push("prefill")
        pos.zero_()
        tok.copy_(forward(prompt, pos, P, K, Vc))
        pos.fill_(P)
        if hand:
            nvtx.range_pop()
        tok.cpu()
        times.append(time.perf_counter())
        for _ in range(T - 1):
            if hand:
                nvtx.range_push("decode")
            run(tok, pos, K, Vc)
            if hand:
                nvtx.range_pop()
            tok.cpu()
            times.append(time.perf_counter())
    clock.emit(name, g, times, call, B)
