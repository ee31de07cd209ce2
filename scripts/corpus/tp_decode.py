"""Tensor-parallel decode under torchrun, with its own clock (scripts/corpus).

A Megatron-split MLP stack of our own (--layers 16 of hidden 4096, FFN 4x,
bf16, random weights; column-parallel up, row-parallel down, an NCCL
all-reduce a layer), batch 8, a 128-token prompt, --generates (4) generates
of --steps (12) decode steps. NVTX: `prefill`, then `decode_all` holding a
`decode_step` a token. The host never waits inside the decode: it runs
ahead of the GPU (the token stays on the device), so each rank's clock
reads the decode as a whole: TTFT from the call to the prefill's token on
the host, TPOT the decode's time after it over its steps.

    torchrun --nproc-per-node 2 tp_decode.py [--generates 4] [--steps 12]
"""

import argparse
import math
import os
import time

import torch
import torch.distributed as dist

import clock

p = argparse.ArgumentParser()
p.add_argument("--generates", type=int, default=4)
p.add_argument("--steps", type=int, default=12)
p.add_argument("--batch", type=int, default=8)
p.add_argument("--layers", type=int, default=16)
p.add_argument("--hidden", type=int, default=4096)
args = p.parse_args()

rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
dist.init_process_group("nccl")
torch.manual_seed(rank)
dev, dt = "cuda", torch.bfloat16
H, F, V, B, P = args.hidden, 4 * args.hidden // world, 32000, args.batch, 128


def w(*shape):
    return (torch.randn(*shape, device=dev) / math.sqrt(shape[0])).to(dt)


emb, head = w(V, H), w(H, V)
ups = [w(H, F) for _ in range(args.layers)]
downs = [w(F, H) for _ in range(args.layers)]


def forward(x):
    for up, down in zip(ups, downs):
        y = torch.nn.functional.gelu(x @ up) @ down
        dist.all_reduce(y)
        x = x + y
    return (x[:, -1] @ head).argmax(-1)


nvtx = torch.cuda.nvtx
prompt = torch.randint(1, V, (B, P), device=dev)
with torch.inference_mode():
    forward(emb[prompt[:, :8]])  # NCCL's communicator and cuBLAS's handles, outside every range
    torch.cuda.synchronize()
    for g in range(args.generates):
        dist.barrier()
        torch.cuda.synchronize()
        call = time.perf_counter()
        nvtx.range_push("prefill")
        tok = forward(emb[prompt])
        nvtx.range_pop()
        tok.cpu()
        first = time.perf_counter()
        nvtx.range_push("decode_all")
        for _ in range(args.steps):
            nvtx.range_push("decode_step")
            tok = forward(emb[tok][:, None])
            nvtx.range_pop()
        nvtx.range_pop()
        tok.cpu()
        last = time.perf_counter()
        # The steps' tokens were never read one by one: their times are the
        # decode's, spread evenly, which is what the mean gap is.
        times = [first + (last - first) * i / args.steps for i in range(args.steps + 1)]
        clock.emit("tp_decode", g, times, call, B, rank=rank, world=world)
dist.destroy_process_group()
