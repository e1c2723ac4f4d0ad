"""The swizzle search's workload: analyze() of one ldmatrix.x4 trace per Swizzle<B,M,S> candidate.

suggest_swizzle replays an access through every S<B,M,S> that fits the tile; nearly all its time is
cutelab.analysis.analyze. This times that part alone (the traces are built first, outside the
clock), so it runs on trees without suggest.py too: compare two trees by alternating them,

    for i in 1 2 3; do PYTHONPATH=/path/to/main/src python benchmarks/swizzle_search.py
                       PYTHONPATH=src python benchmarks/swizzle_search.py; done

and, on a tree that has it, the whole suggest_swizzle call.
"""

from __future__ import annotations

import statistics
import time

import cutelab
from cutelab.analysis import analyze, ldmatrix_trace
from cutelab.errors import LayoutError
from cutelab.swizzle import make_composed_layout, make_swizzle
from cutelab.layout import Layout


def main(rounds: int = 5) -> None:
    L = Layout.parse("(64,64):(64,1)")
    traces = []
    for b in range(1, 6):
        for m in range(12):
            for s in range(b, 12):
                if b + m + s <= 12:
                    try:
                        traces.append(ldmatrix_trace(make_composed_layout(make_swizzle(b, m, s), 0, L), "f16", 4))
                    except LayoutError:
                        pass
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for tr in traces:
            analyze(tr)
        times.append(time.perf_counter() - t0)
    print(f"{cutelab.__file__}: analyze of {len(traces)} ldmatrix.x4 traces of a 64x64 fp16 tile: "
          f"median {statistics.median(times) * 1e3:.0f} ms of {rounds} rounds")
    try:
        from cutelab.analysis.suggest import suggest_swizzle
    except ImportError:
        return
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        r = suggest_swizzle(L, "f16", ldmatrix=4)
        times.append(time.perf_counter() - t0)
    print(f"  suggest_swizzle(64x64, ldmatrix x4) -> {r.best.swizzle}: median {statistics.median(times) * 1e3:.0f} ms")


if __name__ == "__main__":
    main()
