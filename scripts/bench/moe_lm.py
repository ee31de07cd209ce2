"""A mixture-of-experts decoder with random weights, for measuring what a
deepprof session costs (scripts/bench/deep-pass-cost.sh): top-k routing,
the experts' GEMMs grouped (torch._grouped_mm: a CUTLASS grouped GEMM on
Hopper, the kernel CUPTI leaves mangled), attention with a KV cache, a few
generates. NVTX ranges: prefill and decode_all (deepprof's defaults), a
decode_step per token.

    python3 moe_lm.py [--tokens 24] [--generates 3]
"""

import argparse
import math

import torch
import torch.nn.functional as F

p = argparse.ArgumentParser()
p.add_argument("--tokens", type=int, default=24, help="tokens generated per generate")
p.add_argument("--generates", type=int, default=3)
p.add_argument("--batch", type=int, default=4)
p.add_argument("--prompt", type=int, default=128)
args = p.parse_args()

torch.manual_seed(0)
dev, dt = "cuda", torch.bfloat16
# Qwen2-MoE-A2.7B's shapes (60 routed experts, top 4, expert width 1408),
# its shared expert left out.
H, HEADS, LAYERS, VOCAB = 2048, 16, 24, 32000
EXPERTS, TOPK, INTER = 60, 4, 1408
D = H // HEADS


def w(*shape):
    return (torch.randn(*shape, device=dev, dtype=torch.float32) / math.sqrt(shape[-2] if len(shape) > 1 else 1)).to(dt)


def grouped(x, wts, offs):
    return torch._grouped_mm(x, wts, offs=offs)


def looped(x, wts, offs):
    out, start = [], 0
    for e, end in enumerate(offs.tolist()):
        out.append(x[start:end] @ wts[e])
        start = end
    return torch.cat(out)


layers = [dict(qkv=w(H, 3 * H), o=w(H, H), router=w(H, EXPERTS),
               up=w(EXPERTS, H, 2 * INTER), down=w(EXPERTS, INTER, H),
               n1=torch.ones(H, device=dev, dtype=dt), n2=torch.ones(H, device=dev, dtype=dt)) for _ in range(LAYERS)]
embed, head = w(VOCAB, H), w(H, VOCAB)

gemm = grouped
try:
    x = torch.randn(2 * EXPERTS, H, device=dev, dtype=dt)
    grouped(x, layers[0]["up"], torch.arange(2, 2 * EXPERTS + 1, 2, device=dev, dtype=torch.int32))
except Exception as e:  # not Hopper, or an older PyTorch
    print("torch._grouped_mm unavailable (%s): the experts' GEMMs run one by one" % e)
    gemm = looped


def moe(x, L):
    t = x.shape[0]
    logits = x @ L["router"]
    weights, experts = torch.topk(torch.softmax(logits.float(), dim=-1), TOPK, dim=-1)
    weights = (weights / weights.sum(-1, keepdim=True)).to(dt)
    flat = experts.reshape(-1)
    order = torch.argsort(flat)
    counts = torch.bincount(flat, minlength=EXPERTS)
    offs = torch.cumsum(counts, 0).to(torch.int32)
    xs = x.repeat_interleave(TOPK, dim=0)[order]
    h = gemm(xs, L["up"], offs)
    a, b = h.chunk(2, dim=-1)
    y = gemm(F.silu(a) * b, L["down"], offs)
    out = torch.empty_like(y)
    out[order] = y
    out = (out.view(t, TOPK, H) * weights.unsqueeze(-1)).sum(1)
    return out


def rms(x, g):
    return x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6).to(dt) * g


def step(ids, cache, pos):
    b, s = ids.shape
    x = embed[ids].view(b * s, H)
    for i, L in enumerate(layers):
        q, k, v = (rms(x, L["n1"]) @ L["qkv"]).view(b, s, 3, HEADS, D).unbind(2)
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))
        kc, vc = cache[i]
        kc[:, :, pos:pos + s], vc[:, :, pos:pos + s] = k, v
        att = F.scaled_dot_product_attention(q, kc[:, :, :pos + s], vc[:, :, :pos + s], is_causal=s > 1)
        x = x + att.transpose(1, 2).reshape(b * s, H) @ L["o"]
        x = x + moe(rms(x, L["n2"]), L)
    return (x.view(b, s, H)[:, -1] @ head).argmax(-1)


@torch.inference_mode()
def generate():
    b = args.batch
    total = args.prompt + args.tokens
    cache = [(torch.zeros(b, HEADS, total, D, device=dev, dtype=dt), torch.zeros(b, HEADS, total, D, device=dev, dtype=dt)) for _ in layers]
    ids = torch.randint(0, VOCAB, (b, args.prompt), device=dev)
    torch.cuda.nvtx.range_push("prefill")
    tok = step(ids, cache, 0)
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
    torch.cuda.nvtx.range_push("decode_all")
    for i in range(args.tokens - 1):
        torch.cuda.nvtx.range_push("decode_step")
        tok = step(tok.view(b, 1), cache, args.prompt + i)
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()
    torch.cuda.nvtx.range_pop()


for g in range(args.generates):
    generate()
torch.cuda.synchronize()
print("generated %d x %d tokens, experts' GEMMs %s" % (args.generates, args.tokens, gemm.__name__))
