"""check.py: read the deepprof-cupti/1 record files of one run and print what
they hold, for scripts/cupti/build-and-check.sh (Python 3, stdlib only; the
project's reader of these files is Go, package internal/cupti).

usage: python3 check.py [--cut] DIR
  DIR holds cupti-<pid>.tsv files. Per file: the header, record counts by
  type, notes, whether each kernel/copy/set has its launching API record,
  NVTX events by kind/domain/name, the threads seen, and kernels attributed
  to the NVTX push/pop stack open on the launching thread at the API call's
  start (the attribution internal/timeline makes). --cut: the process was
  killed, so the E line must be missing.
Lines starting "CHECK FAIL" mark a broken expectation; the exit status is 1
when there is one.
"""

import collections
import glob
import os
import sys

FORMAT = "#deepprof-cupti/1"
NFIELDS = {"K": 13, "C": 8, "S": 7, "A": 7, "N": 6, "X": 2, "E": 2}
ESC = {"\\": "\\", "t": "\t", "n": "\n", "r": "\r"}
failures = 0


def check(ok, what):
    global failures
    print(("CHECK ok   " if ok else "CHECK FAIL ") + what)
    if not ok:
        failures += 1


def unescape(s):
    out, i = [], 0
    while i < len(s):
        c = s[i]
        if c == "\\":
            nxt = s[i + 1] if i + 1 < len(s) else ""
            if nxt not in ESC:
                raise ValueError("bad escape \\%s" % nxt)
            out.append(ESC[nxt])
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def read(path):
    data = open(path, "rb").read().decode("utf-8")
    lines = data.split("\n")
    partial = lines.pop()  # "" when the file ends with a newline
    header, recs, bad = lines[0] if lines else "", [], []
    for no, line in enumerate(lines[1:], start=2):
        f = line.split("\t")
        if f[0] not in NFIELDS or len(f) - 1 != NFIELDS[f[0]]:
            bad.append("%s:%d: %r" % (path, no, line[:120]))
            continue
        try:
            recs.append([f[0]] + [unescape(x) for x in f[1:]])
        except ValueError as e:
            bad.append("%s:%d: %s" % (path, no, e))
    return header, recs, bad, partial


def path_name(stack):
    return "/".join((d + "@" + n) if d else n.replace("@", "\\@") for d, n in stack) or "(no range)"


def summarize(path, cut):
    header, recs, bad, partial = read(path)
    print("== %s" % os.path.basename(path))
    print("header: %s" % header.replace("\t", "  "))
    check(header.startswith(FORMAT + "\t"), "header is %s" % FORMAT)
    check(not bad, "every line has its type's field count (%d bad)" % len(bad))
    for b in bad[:5]:
        print("  bad: " + b)
    if partial:
        print("partial last line (no newline): %r" % partial[:80])
    by = collections.defaultdict(list)
    for r in recs:
        by[r[0]].append(r)
    print("records: " + ", ".join("%s=%d" % (t, len(by[t])) for t in "KCSANXE"))
    for x in by["X"]:
        print("  note: %s = %s" % (x[1], x[2]))
    if cut:
        check(not by["E"], "no E line (the process was killed)")
    else:
        check(len(by["E"]) == 1 and recs[-1][0] == "E", "one E line, last")
        if by["E"]:
            check(int(by["E"][0][1]) == len(recs) - 1, "E counts the records before it (%s)" % by["E"][0][1])
    api = {}
    for a in by["A"]:
        api.setdefault(a[4], a)
    for t in "KCS":
        if by[t]:
            n = sum(1 for r in by[t] if r[6] in api)
            check(n == len(by[t]), "%s records with their launching API record: %d of %d" % (t, n, len(by[t])))
    kinds = collections.Counter(r[7] for r in by["C"])
    if kinds:
        print("copies: " + ", ".join("%s=%d" % kv for kv in sorted(kinds.items())))
    names = collections.Counter(k[13] for k in by["K"])
    for name, n in names.most_common(8):
        print("  kernel x%d: %s" % (n, name[:110]))
    apis = collections.Counter((a[5], a[7]) for a in by["A"])
    print("api calls: " + ", ".join("%s %s=%d" % (k[0], k[1], n) for k, n in apis.most_common(8)))
    nv = collections.Counter((n[1], n[5], n[6]) for n in by["N"])
    for (kind, dom, name), n in sorted(nv.items()):
        print("  nvtx %-5s domain=%r name=%r x%d" % (kind, dom, name, n))
    print("threads: A %s, N %s" % (sorted({a[3] for a in by["A"]}), sorted({n[3] for n in by["N"]})))
    for k in by["K"]:
        if int(k[2]) < int(k[1]):
            check(False, "kernel ends before it starts: %s" % k[:3])
            break

    # Attribution: the push/pop stack (all domains, in push order) open on
    # the launching thread when its API call started.
    events = collections.defaultdict(list)
    for n in by["N"]:
        if n[1] in ("push", "pop"):
            events[n[3]].append((int(n[2]), n[1], n[5], n[6]))
    for ev in events.values():
        ev.sort(key=lambda e: e[0])
    regions = collections.Counter()
    for k in by["K"]:
        a = api.get(k[6])
        if not a:
            regions["(no API record)"] += 1
            continue
        t, stack = int(a[1]), []
        for ts, kind, dom, name in events.get(a[3], []):
            if ts > t:
                break
            if kind == "push":
                stack.append((dom, name))
            else:
                for i in range(len(stack) - 1, -1, -1):
                    if stack[i][0] == dom:
                        del stack[i]
                        break
        regions[path_name(stack)] += 1
    for name, n in sorted(regions.items()):
        print("  region %-40r kernels=%d" % (name, n))
    return by


def main():
    args = sys.argv[1:]
    cut = "--cut" in args
    args = [a for a in args if a != "--cut"]
    files = sorted(glob.glob(os.path.join(args[0], "cupti-*.tsv")))
    check(bool(files), "record files in %s: %d" % (args[0], len(files)))
    for f in files:
        summarize(f, cut)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
