class _Tokens:
    def __init__(self, n):
        self.shape = (1, n)


class GenerationMixin:
    """generate(): a prefill pass over the prompt, then a pass a token,
    each through the module call (pre-hooks, forward, hooks)."""

    def __call__(self, **k):
        for h in getattr(self, "pre_hooks", []):
            h(self, (), k)
        out = self.forward(**k)
        for h in getattr(self, "hooks", []):
            h(self, (), k, out)
        return out

    def generate(self, input_ids, max_new_tokens=1, **kwargs):
        self(input_ids=input_ids)
        for _ in range(max_new_tokens - 1):
            self(input_ids=_Tokens(1))
        return _Tokens(input_ids.shape[1] + max_new_tokens)
