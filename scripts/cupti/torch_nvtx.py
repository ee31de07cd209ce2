"""torch_nvtx.py: a tiny PyTorch workload with NVTX ranges, for checking
deepprof's CUPTI library and measuring its overhead
(scripts/cupti/build-and-check.sh runs it plain and under the library).

One repeat: `prefill` (a 512-token batch through 4 linear layers, 16 matmuls),
then `decode_all` holding `decode_step` per step (one token through the same
layers: small, launch-bound matmuls), then a copy of the logits to the host.
A start/end range `repeat` (torch.cuda.nvtx.range_start/range_end) spans each
repeat and a mark names it. After one warm-up repeat, each timed repeat is
measured with torch.cuda.synchronize() around it; the last line printed is
JSON: {"repeats_ms": [...], "median_ms": ...}.
"""

import argparse
import json
import statistics
import time

import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--decode-steps", type=int, default=32)
    ap.add_argument("--hidden", type=int, default=1024)
    ap.add_argument("--layers", type=int, default=4)
    args = ap.parse_args()

    torch.manual_seed(0)
    dev = torch.device("cuda")
    weights = [torch.randn(args.hidden, args.hidden, device=dev, dtype=torch.bfloat16) * 0.02
               for _ in range(args.layers)]

    def forward(x):
        for w in weights:
            x = torch.nn.functional.gelu(x @ w)
        return x

    def one_repeat(i):
        rid = torch.cuda.nvtx.range_start(f"repeat_{i}")
        torch.cuda.nvtx.mark(f"repeat_{i}_begins")
        prompt = torch.randn(512, args.hidden, device=dev, dtype=torch.bfloat16)
        torch.cuda.nvtx.range_push("prefill")
        h = forward(prompt)
        torch.cuda.nvtx.range_pop()
        tok = h[-1:]
        torch.cuda.nvtx.range_push("decode_all")
        for _ in range(args.decode_steps):
            torch.cuda.nvtx.range_push("decode_step")
            tok = forward(tok)
            torch.cuda.nvtx.range_pop()
        torch.cuda.nvtx.range_pop()
        logits = tok.float().cpu()
        torch.cuda.nvtx.range_end(rid)
        return logits

    one_repeat(-1)  # warm-up: cuBLAS handles, kernel loading
    torch.cuda.synchronize()
    times = []
    for i in range(args.repeats):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        one_repeat(i)
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
    print(json.dumps({"repeats_ms": [round(t, 3) for t in times],
                      "median_ms": round(statistics.median(times), 3)}))


if __name__ == "__main__":
    main()
