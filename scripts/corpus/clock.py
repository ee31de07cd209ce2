"""The program's own clock: one `deepprof-clock` line a generate.

Every corpus program prints, for each generate, a line

    deepprof-clock {"program": ..., "generate": i, "tokens": n, "steps": n-1,
                    "batch": b, "ttft_ms": x, "tpot_ms": y[, "rank": r]}

read with host timers once the token is on the host (after a synchronize):
TTFT from the call to the first token, TPOT the mean gap between the
tokens after it ((last - first) / steps). deepprof's tests read these lines
(internal/workload, ReadClock) as the reference for its serving figures.
"""

import json
import sys

PREFIX = "deepprof-clock "


def emit(program, generate, token_times, call, batch, **extra):
    """Prints the line of one generate: call is when it was called,
    token_times when each of its tokens was on the host (perf_counter s)."""
    steps = len(token_times) - 1
    rec = {"program": program, "generate": generate, "tokens": len(token_times), "steps": steps, "batch": batch,
           "ttft_ms": round((token_times[0] - call) * 1e3, 4),
           "tpot_ms": round((token_times[-1] - token_times[0]) * 1e3 / steps, 4) if steps > 0 else None}
    rec.update(extra)
    sys.stdout.write(PREFIX + json.dumps(rec, sort_keys=True) + "\n")
    sys.stdout.flush()
