"""deepprof's rank wrapper: one ncu per rank of a multi-GPU workload.

The launcher (torchrun --no-python) starts this script once per rank, with
  python3 rank-exec.py --program N [--only R] ARGV...
ARGV is ncu's argv followed by the program's (its last N elements). Every
"{rank}" in ARGV becomes this process's rank ($RANK), so that each rank's ncu
writes its own report (the global rank: ranks of other nodes write their own
names). With --only R, a process whose $LOCAL_RANK is not R runs the program
alone, without ncu (the deep pass one rank at a time, on each node). The wrapper replaces
itself with what it runs (exec): the launcher sees that process's exit status.
Written into the run directory by deepprof (package harness/ranks); no shell.
"""
import os
import sys


def main(argv):
    only, program = None, None
    while argv and argv[0].startswith("--"):
        opt = argv.pop(0)
        if opt == "--":
            break
        if not argv:
            sys.exit(f"rank-exec: {opt} needs a value")
        val = argv.pop(0)
        if opt == "--program":
            program = int(val)
        elif opt == "--only":
            only = int(val)
        else:
            sys.exit(f"rank-exec: unknown option {opt}")
    if program is None or program < 1 or program > len(argv):
        sys.exit("rank-exec: --program N must count the program's arguments at the end of ARGV")
    rank = os.environ.get("RANK")
    if rank is None or not rank.isdigit():
        sys.exit("rank-exec: $RANK is not set: run me under a launcher (torchrun)")
    local = os.environ.get("LOCAL_RANK", rank)
    if only is not None and (not local.isdigit() or int(local) != only):
        argv = argv[len(argv) - program:]
    argv = [a.replace("{rank}", rank) for a in argv]
    for a in argv:
        if "/ranks/rank" + rank + "/" in a:
            os.makedirs(os.path.dirname(a), exist_ok=True)
    sys.stdout.flush()
    os.execvp(argv[0], argv)


if __name__ == "__main__":
    main(sys.argv[1:])
