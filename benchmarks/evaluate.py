"""Whole-domain evaluation: Layout.offsets() (every index's offset as numpy) on large layouts.

Prints the median of 5 runs per layout. Run: python benchmarks/evaluate.py
"""

import statistics
import time

import cutelab as cute

CASES = [
    "(16777216):(1)",
    "(4096,4096):(4096,1)",
    "((4,4,4),(8,8),(16,16,2),(16,4)):((1,4,16),(64,512),(4096,65536,1048576),(2097152,33554432))",
    "((2,2),(2,3)):((2,12),(1,4))",
]


def main() -> None:
    print(f"{'layout':<60} {'size':>10} {'median ms':>10}")
    for text in CASES:
        layout = cute.Layout.parse(text)
        times = []
        for _ in range(5):
            t0 = time.perf_counter()
            layout.offsets()
            times.append(time.perf_counter() - t0)
        label = text if len(text) <= 58 else text[:55] + "..."
        print(f"{label:<60} {cute.size(layout):>10} {statistics.median(times) * 1e3:>10.1f}")


if __name__ == "__main__":
    main()
