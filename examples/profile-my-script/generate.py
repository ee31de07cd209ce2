"""A small PyTorch program as a user writes it: no deepprof import. Its phases are NVTX ranges: prefill,
and decode_all holding one decode_step per generated token."""
import torch

torch.manual_seed(0)
d = 2048
layers = [torch.nn.Linear(d, d, device="cuda", dtype=torch.float16) for _ in range(8)]


def forward(x):
    for layer in layers:
        x = torch.relu(layer(x))
    return x


with torch.inference_mode():
    forward(torch.randn(64, d, device="cuda", dtype=torch.float16))  # warm-up, outside every range
    torch.cuda.synchronize()
    for _ in range(3):
        torch.cuda.nvtx.range_push("prefill")
        x = forward(torch.randn(256, d, device="cuda", dtype=torch.float16))
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()
        torch.cuda.nvtx.range_push("decode_all")
        for _ in range(16):
            torch.cuda.nvtx.range_push("decode_step")
            x = forward(x[:1])
            torch.cuda.synchronize()
            torch.cuda.nvtx.range_pop()
        torch.cuda.nvtx.range_pop()
print("done")
