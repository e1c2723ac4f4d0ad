"""Compare two recordings made with scripts/record/sitecustomize.py.

    python scripts/record/compare.py BEFORE_DIR AFTER_DIR

Prints every launch whose CUDA or interpreter result differs, every launch present on one side
only, and a summary; exits 1 when anything differs. Launches are matched by (test, kernel, seq).
"""

import json
import os
import sys
from collections import Counter


def load(d):
    out = {}
    for f in os.listdir(d):
        if f.endswith(".jsonl"):
            with open(os.path.join(d, f)) as fh:
                for line in fh:
                    e = json.loads(line)
                    key = (e["test"], e["kernel"], e["seq"], "gpu" if "gpu_cuda" in e else "cpu")
                    out[key] = e
    return out


def main(a, b):
    A, B = load(a), load(b)
    bad = Counter()
    for k in sorted(set(A) | set(B), key=str):
        x, y = A.get(k), B.get(k)
        if x is None or y is None:
            bad["only in " + ("after" if x is None else "before")] += 1
            print(("+ " if x is None else "- ") + str(k))
            continue
        for f in ("cuda", "gpu_cuda", "out", "raised"):
            if x.get(f) != y.get(f):
                bad[f] += 1
                print(f"{f} differs: {k}: {x.get(f)} -> {y.get(f)}")
    cudas = {e.get("cuda") or e.get("gpu_cuda") for e in A.values()}
    print(f"{len(A)} launches before, {len(B)} after, {len(cudas)} distinct kernels; differences: {dict(bad) or 'none'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
