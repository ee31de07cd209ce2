"""A program the OOM killer ends mid-run, for deepprof's partial runs (issue 35).

Six iterations of a small matmul decode loop with NVTX ranges (prefill,
decode_all > decode_step), about half a second each; after the fourth it
sends itself SIGKILL, as the kernel's out-of-memory killer would: no
atexit, no flush at exit.

    python3 killed_lm.py [--kill-after 4]
"""

import argparse
import os
import signal
import time

import torch

p = argparse.ArgumentParser()
p.add_argument("--kill-after", type=int, default=4)
args = p.parse_args()
nvtx = torch.cuda.nvtx
w = torch.randn(2048, 2048, device="cuda", dtype=torch.bfloat16)
x = torch.randn(64, 2048, device="cuda", dtype=torch.bfloat16)
for it in range(6):
    nvtx.range_push("prefill")
    y = x @ w
    torch.cuda.synchronize()
    nvtx.range_pop()
    nvtx.range_push("decode_all")
    for _ in range(32):
        nvtx.range_push("decode_step")
        y = (y[:1] @ w).relu()
        torch.cuda.synchronize()
        nvtx.range_pop()
        time.sleep(0.01)
    nvtx.range_pop()
    print("iteration", it + 1, flush=True)
    if it + 1 == args.kill_after:
        time.sleep(1.5)  # past the library's one-second flush
        os.kill(os.getpid(), signal.SIGKILL)
