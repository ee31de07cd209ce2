"""Holistic Trace Analysis on deepprof traces: its temporal, idle-time and
kernel breakdowns of each folder given (one trace.json.gz in each).

HTA's source (github.com/facebookresearch/HolisticTraceAnalysis) goes in
src/ beside this file; pandas, numpy and networkx must be installed;
plotly, which HTA imports for charts, is stood in for by stubs/ (no chart
is drawn). Two HTA bugs are worked around, and said when they apply:
its correlation column downcast to int16 (pandas 2 refuses to store event
indices in a copy of it), and its rounding of float ns times to whole us
(ts up, end down), which gives a kernel under a microsecond a negative
duration that fails its own assertion.

    python3 run_hta.py DIR...
"""
import sys, os
sys.path[:0] = [os.path.join(os.path.dirname(__file__), "stubs"), os.path.join(os.path.dirname(__file__), "src")]
import pandas as pd
print("pandas", pd.__version__)
pd.set_option("display.width", 200); pd.set_option("display.max_columns", 20)
import hta.common.trace as _trace
# HTA downcasts the correlation column (int16 for a short trace) and then
# stores event indices in a column copied from it; pandas 2 refuses the
# lossy store. Widen it first (an HTA bug, not the trace's).
_orig = _trace.transform_correlation_to_index
def _widened(df, symbol_table):
    if "correlation" in df.columns:
        df["correlation"] = df["correlation"].astype("int64")
    return _orig(df, symbol_table)
_trace.transform_correlation_to_index = _widened
from hta.trace_analysis import TraceAnalysis
for d in sys.argv[1:]:
    print("==", d)
    a = TraceAnalysis(trace_dir=d)
    for rank, df in a.t.traces.items():
        neg = df["dur"].lt(0)
        print("rank", rank, "events", len(df), "negative dur after HTA's ns rounding:", int(neg.sum()),
              "of which GPU:", int((neg & df["stream"].ne(-1)).sum()))
    try:
        print(a.get_temporal_breakdown(visualize=False).to_string())
    except AssertionError:
        print("temporal breakdown: HTA's assertion failed; again with negative durations set to 0")
        for rank, df in a.t.traces.items():
            df.loc[df["dur"].lt(0), "dur"] = 0
        print(a.get_temporal_breakdown(visualize=False).to_string())
    try:
        r = a.get_idle_time_breakdown(visualize=False)
        print((r[0] if isinstance(r, tuple) else r).to_string())
    except Exception as e:
        print("idle time breakdown:", repr(e))
    try:
        k, kt = a.get_gpu_kernel_breakdown(visualize=False)
        print(k.to_string())
    except Exception as e:
        print("kernel breakdown:", repr(e))
