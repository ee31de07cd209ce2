"""gpt2_generate.py: a launch-bound transformers generate for measuring
deepprof's CUPTI library (scripts/cupti/overhead.sh runs it plain and under
builds of the library).

GPT-2's shapes (transformers' GPT2Config defaults: 12 layers, 768 wide),
random weights (no download), float16, a 128-token random prompt, greedy
generate of exactly --new-tokens tokens. NVTX: `generate` (push/pop) around
each call. After one warm-up generate, each timed generate is measured with
torch.cuda.synchronize() around it; the last line printed is JSON:
{"repeats_ms": [...], "median_ms": ...}.
"""

import argparse
import json
import statistics
import time

import torch
import transformers


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--new-tokens", type=int, default=32)
    ap.add_argument("--prompt", type=int, default=128)
    args = ap.parse_args()

    torch.manual_seed(0)
    dev = torch.device("cuda")
    model = transformers.GPT2LMHeadModel(transformers.GPT2Config()).to(dev, torch.float16).eval()
    ids = torch.randint(0, model.config.vocab_size, (1, args.prompt), device=dev)

    def generate():
        torch.cuda.nvtx.range_push("generate")
        with torch.no_grad():
            out = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=args.new_tokens,
                                 min_new_tokens=args.new_tokens, do_sample=False,
                                 pad_token_id=model.config.eos_token_id)
        torch.cuda.nvtx.range_pop()
        return out

    generate()  # warm-up
    torch.cuda.synchronize()
    times = []
    for _ in range(args.repeats):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        generate()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
    print(json.dumps({"repeats_ms": [round(t, 3) for t in times],
                      "median_ms": round(statistics.median(times), 3)}))


if __name__ == "__main__":
    main()
