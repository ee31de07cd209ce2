"""A program whose GPU work runs in a child process it spawns (scripts/corpus).

The parent imports no CUDA library: it starts `torch_decode.py` (eager, its
own `prefill` and `decode` ranges, its own clock) as a child with the
arguments given after its own, waits for it and exits with its status, as a
launcher script or a serving front end does. The clock lines are the child's.

    python3 spawn_child.py [torch_decode.py's arguments]
"""

import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
child = [sys.executable, os.path.join(here, "torch_decode.py"), *sys.argv[1:]]
sys.exit(subprocess.run(child, check=False).returncode)
