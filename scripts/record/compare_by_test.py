"""Compare two recordings test by test, for a change that removes CUDA renders of its own.

    python scripts/record/compare_by_test.py BEFORE_DIR AFTER_DIR [BEFORE_TREE AFTER_TREE]

``compare.py`` matches launches by (test, kernel, seq); a change that stops some code from
printing CUDA it only inspected (the profiler rendered every kernel it recorded until the
compiler's passes made a Plan it can read) shifts every later seq of that test. This compares
each test's launches as an ordered list instead; where BEFORE has more launches than AFTER, it
leaves out of BEFORE the 'gpu' renders that repeat the CUDA of the interpreted launch just before
them (what cpu/profiler.py printed for itself). BEFORE_TREE and AFTER_TREE (the snapshots the recordings ran from) are replaced by one
name in error messages, which quote source paths. Prints what differs; exits 1 when the CUDA or
an error differs (interpreter outputs are listed: tests with unseeded random inputs differ
from run to run).
"""

import json
import os
import sys
from collections import defaultdict


def load(d):
    out = defaultdict(list)
    for f in os.listdir(d):
        if f.endswith(".jsonl"):
            with open(os.path.join(d, f)) as fh:
                for line in fh:
                    e = json.loads(line)
                    out[e["test"]].append(e)
    for t in out:
        out[t].sort(key=lambda e: e["seq"])
    return out


def own_renders_left_out(launches):
    keep = []
    for i, e in enumerate(launches):
        prev = launches[i - 1] if i else None
        if "gpu_cuda" in e and prev is not None and prev.get("cuda") == e["gpu_cuda"]:
            continue
        keep.append(e)
    return keep, len(launches) - len(keep)


def main(a_dir, b_dir, trees=()):
    A, B = load(a_dir), load(b_dir)

    def norm(r):
        for t in trees:
            r = r and r.replace(t, "TREE")
        return r

    cuda_bad, out_bad, raised_bad, n, dropped = [], set(), [], 0, 0
    for t in sorted(set(A) & set(B)):
        a, b = A[t], B[t]
        if len(a) != len(b):  # before has more: leave out its own renders (as many as there are)
            a, k = own_renders_left_out(a)
            dropped += k
        if len(a) != len(b):
            cuda_bad.append(f"{t}: {len(a)} launches before, {len(b)} after")
            continue
        for x, y in zip(a, b):
            n += 1
            kx = (x["kernel"], x.get("cuda"), x.get("gpu_cuda"))
            ky = (y["kernel"], y.get("cuda"), y.get("gpu_cuda"))
            if kx != ky:
                cuda_bad.append(f"{t} #{x['seq']}: {kx} -> {ky}")
            if x.get("out") != y.get("out"):
                out_bad.add(t)
            if norm(x.get("raised")) != norm(y.get("raised")):
                raised_bad.append(f"{t} #{x['seq']}: {x.get('raised')} -> {y.get('raised')}")
    for line in cuda_bad + raised_bad:
        print(line)
    print(f"{n} launches compared in {len(set(A) & set(B))} tests ({dropped} own renders left out of before); "
          f"tests only before: {len(set(A) - set(B))}, only after: {len(set(B) - set(A))}")
    print(f"CUDA or kernel differs: {len(cuda_bad)}; errors differ: {len(raised_bad)}; "
          f"interpreter outputs differ in {len(out_bad)} tests: {sorted(out_bad)}")
    return 1 if cuda_bad or raised_bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], tuple(sys.argv[3:5])))
