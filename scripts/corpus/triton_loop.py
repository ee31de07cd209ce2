"""A Triton program with NVTX ranges of its own (scripts/corpus, issue 50):
a `setup` range that makes the inputs, then ITERS `step` ranges, each a
Triton GEMM of 2048^3 in FP16 and a Triton add, then a synchronize. The
first step compiles both kernels (Triton's JIT): a gap of hundreds of ms
before its first launch that later steps do not have. It prints its own
clock, host timers after each step's synchronize:

    triton-clock {"program": "triton_loop", "steps": n, "first_ms": x, "steady_ms": y}

    python3 triton_loop.py [--steps 20]
"""

import argparse
import json
import time

import torch
import triton
import triton.language as tl

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=20)
args = p.parse_args()

N = 2048


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


@triton.jit
def matmul_kernel(a, b, c, K, sam, sak, sbk, sbn, scm, scn, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        at = tl.load(a + rm[:, None] * sam + (k + rk)[None, :] * sak)
        bt = tl.load(b + (k + rk)[:, None] * sbk + rn[None, :] * sbn)
        acc += tl.dot(at, bt)
    tl.store(c + rm[:, None] * scm + rn[None, :] * scn, acc.to(tl.float16))


torch.cuda.nvtx.range_push("setup")
a = torch.randn(N, N, device="cuda", dtype=torch.float16) / N**0.5
b = torch.randn(N, N, device="cuda", dtype=torch.float16) / N**0.5
c = torch.empty(N, N, device="cuda", dtype=torch.float16)
d = torch.empty(N, N, device="cuda", dtype=torch.float16)
torch.cuda.synchronize()
torch.cuda.nvtx.range_pop()

ms = []
for _ in range(args.steps):
    t0 = time.perf_counter()
    torch.cuda.nvtx.range_push("step")
    matmul_kernel[(N // 128, N // 128)](a, b, c, N, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                        c.stride(0), c.stride(1), BM=128, BN=128, BK=64)
    add_kernel[(N * N // 1024,)](c, a, d, N * N, BLOCK=1024)
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
    ms.append((time.perf_counter() - t0) * 1e3)
rec = {"program": "triton_loop", "steps": len(ms), "first_ms": round(ms[0], 4),
       "steady_ms": round(sum(ms[1:]) / max(len(ms) - 1, 1), 4)}
print("triton-clock " + json.dumps(rec, sort_keys=True), flush=True)
