# Run with deepprof's sitecustomize and the SYNTHETIC stubs on PYTHONPATH:
# prints the NVTX calls of a generate() with no ranges of the program's,
# then of one whose forward hooks push prefill and decode (issue 54).
import torch
from transformers.generation.utils import GenerationMixin, _Tokens

nvtx = torch.cuda.nvtx


class Model(GenerationMixin):
    def forward(self, **k):
        return k


m = Model()
m.generate(_Tokens(8), max_new_tokens=3)
print("plain:", "; ".join(nvtx.calls))
nvtx.calls.clear()
state = {"first": True}


def pre(module, a, k):
    nvtx.range_push("prefill" if state["first"] else "decode")
    state["first"] = False


def post(module, a, k, out):
    nvtx.range_pop()


m.pre_hooks, m.hooks = [pre], [post]
m.generate(_Tokens(8), max_new_tokens=3)
print("hooks:", "; ".join(nvtx.calls))
