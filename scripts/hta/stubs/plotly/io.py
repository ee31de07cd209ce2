# A stand-in for plotly (not installed where HTA runs here): HTA imports it
# for its charts; visualize=False draws none.
class _Any:
    def __call__(self, *a, **k): return _Any()
    def __getattr__(self, n): return _Any()
def __getattr__(name): return _Any()
