"""Stream-K for the last partial wave of sm90_gemm.py's persistent schedule (``HopperGemm(stream_k=True)``).

With U (cluster) tiles over G persistent clusters, the first ``D = U // G`` waves go as whole tiles (data parallel),
and the ``R = U - D G`` tiles left over, which would keep R clusters busy for one more tile while G - R idle, are cut
along K instead: their ``T = R k_tiles`` k-tiles, laid end to end (tile 0's, then tile 1's, ...), are shared out
evenly, cluster c taking positions ``[c T // G, (c + 1) T // G)``. At 4096^3 with 128x256 tiles in clusters of two
(U = 256 on G = 66) a cluster then multiplies 3 x 64 + 56 or 57 k-tiles instead of 4 x 64 for the busiest.

Each range is shorter than a tile's k-tiles (R < G), so it holds at most one tile boundary: at most two segments,

- a *partial* one, the start of the range's last tile when the range stops before that tile's end: its f32 sums
  go to the cluster's slot of a workspace in global memory, and one thread adds 1 to the tile's flag (release);
- a *final* one, the end of the range's first tile: its sums plus the slots of the tile's other clusters (all of
  lower index, read in their order once the flag says they are there: acquire), rounded and stored as a whole
  tile's; the finishing thread puts the flag back to 0 for the next launch.

A cluster runs its partial segment first (right after its whole tiles) and its final one last, so the partial sums
a final segment waits for were written at the start of the other clusters' stream-K work. Every cluster of the
grid is resident at once (one CTA per SM, at most one cluster per SM pair), so the waits end.

The workspace (``slots x slot_floats`` f32) keeps value v of consumer thread t of a slot at
``(v // 4) * 4 threads + 4 t + v % 4``: a warp's 16-byte accesses of one v // 4 cover 512 contiguous bytes.

Run as a program, it prints the schedule for sm90_gemm.py's arguments, then runs sm90_gemm.py with them and
``--stream-k`` (on the CPU, or with ``--gpu`` on an H100/H200: the command compute-sanitizer checks)::

    PYTHONPATH=src python examples/gemm/sm90_streamk.py --mnk 512,512,320 --ctas 6 --ws --mma-wgs 2 \
        --tile 128,128,64 --stages 3 --dtype bf16 --c-dtype bf16
"""

from __future__ import annotations

import argparse
import os
import sys

import cutelab as cute
import cutelab as cutlass


class StreamKTail:
    """The schedule's numbers (values of the kernel, or ints on the host): D whole tiles per cluster, R tail tiles,
    T tail k-tiles over G clusters of kt k-tiles per tile; cluster c's two segments."""

    def __init__(self, units, clusters, k_tiles):
        self.G, self.kt = clusters, k_tiles
        self.D = units // clusters
        self.R = units - self.D * clusters
        self.T = self.R * k_tiles

    def start(self, c):
        """The first tail position of cluster c (its range ends at start(c + 1))."""
        return c * self.T // self.G

    def owner(self, x):
        """The cluster whose range holds tail position x."""
        return ((x + 1) * self.G - 1) // _max(self.T, 1)  # (T = 0: no tail, nothing asks)

    def segments(self, c):
        """Cluster c's (partial, final) segments, each (tail tile, first k-tile, end k-tile) of that tile; an absent
        one is empty (first == end). The partial one is the start of the tile that holds the range's end, when the
        range stops inside it; the final one the end of the tile the range starts in, when it reaches that end."""
        s, e, kt = self.start(c), self.start(c + 1), self.kt
        up = e // kt  # (e a tile's end: the partial segment is empty, kb = ke = 0)
        kb_p = _max(s, up * kt) - up * kt
        uf = s // kt
        kb_f = s - uf * kt
        reaches = (e - uf * kt) // kt  # 1 when the range reaches the end of tile uf, else 0 (the range is < kt)
        segs = ((up, kb_p, e - up * kt), (uf, kb_f, kb_f + reaches * (kt - kb_f)))
        if isinstance(s, int):
            return segs
        # (in a kernel: the same values, clamped to where they lie, for the launch's bounds proof and the printer's
        # exact index arithmetic: tail tile in [0, R), k-tiles in [0, kt])
        return tuple((in_range(u, _max(self.R, 1)), _clamp(kb, kt), _clamp(ke, kt)) for u, kb, ke in segs)


def _max(a, b):
    return max(a, b) if isinstance(a, int) and isinstance(b, int) else cutlass.max(a, b)


def _clamp(i, hi):
    return cutlass.min(cutlass.max(i, 0), hi)


def in_range(i, n):
    """i, which the schedule keeps in [0, n), clamped there in a way the launch's bounds proof can follow."""
    return cutlass.min(cutlass.max(i, 0), n - 1)


def workspace_shape(gemm, M, N):
    """((slots, floats per slot), flags) of the stream-K workspace for an M x N C: a slot of partial sums per CTA of
    the grid, a flag per CTA tile of the tail (at least one)."""
    bM, bN, _ = gemm.tile_mnk
    ctas, _ = gemm.grid(M, N)
    c = gemm.cluster_size
    tail = StreamKTail((M // bM) * (N // bN) // c, ctas // c, 1).R
    return (ctas, bM * bN), max(1, tail * c)


def _views(acc, mWork, slot, ctid, threads):
    """acc's registers and consumer thread ctid's part of partial slot ``slot``, both as (4, V / 4): column j one
    16-byte access (see the module docstring for the slot's order)."""
    V = cute.size(acc)
    mine = cute.make_tensor(acc.iterator, cute.make_layout((4, V // 4)))
    theirs = cute.make_tensor(mWork.iterator + slot * (threads * V) + ctid * 4,
                              cute.make_layout((4, V // 4), stride=(1, 4 * threads)))
    return mine, theirs


def store_slot(acc, mWork, slot, ctid, threads):
    """Consumer thread ctid's partial sums (acc) into slot ``slot``."""
    mine, theirs = _views(acc, mWork, slot, ctid, threads)
    for j in range(cute.size(mine, mode=[1])):
        theirs[(None, j)].store(mine[(None, j)].load())


def add_slot(acc, mWork, slot, ctid, threads):
    """acc += consumer thread ctid's partial sums in slot ``slot``, 4 values (one 16-byte load) at a time: a whole
    slot loaded at once would double the accumulators' registers."""
    mine, theirs = _views(acc, mWork, slot, ctid, threads)
    for j in range(cute.size(mine, mode=[1])):
        part = mine[(None, j)]
        part.store(part.load() + theirs[(None, j)].load())


@cute.jit
def wait_count(flag: cute.Pointer, count: cutlass.Int32):
    """Spin until *flag >= count (ld.acquire.gpu): the partial sums released before each increment are visible to
    this thread, and after a barrier to the others."""
    seen = cute.arch.load(flag, cutlass.Int32, sem="acquire", scope="gpu")
    while seen < count:
        seen = cute.arch.load(flag, cutlass.Int32, sem="acquire", scope="gpu")


def describe(M, N, bM, bN, k_tiles, ctas, cluster=1):
    """The schedule of an M x N C in bM x bN tiles of k_tiles k-tiles on ctas CTAs in clusters of ``cluster``, in
    words: whole waves, tail tiles, each cluster's segments, the busiest cluster's k-tiles against whole tiles only."""
    units = (M // bM) * (N // bN) // cluster
    clusters = min(max(1, ctas // cluster), units)
    sk = StreamKTail(units, clusters, k_tiles)
    lines = [f"{units} (cluster) tiles on {clusters} clusters: {sk.D} whole per cluster, {sk.R} left over "
             f"({sk.T} k-tiles of {sk.kt} a tile)"]
    for c in range(clusters if sk.R else 0):
        (up, kb_p, ke_p), (uf, kb_f, ke_f) = sk.segments(c)
        parts = [f"partial of tail tile {up}: k-tiles {kb_p}..{ke_p - 1}"] if ke_p > kb_p else []
        if ke_f > kb_f:
            parts.append(f"final of tail tile {uf}: k-tiles {kb_f}..{ke_f - 1}, adds {c - sk.owner(uf * sk.kt)} slot(s)")
        lines.append(f"  cluster {c}: " + ("; ".join(parts) or "nothing"))
    busiest = max(sk.start(c + 1) - sk.start(c) for c in range(clusters)) if sk.R else 0
    lines.append(f"busiest cluster: {sk.D * sk.kt + busiest} k-tiles (whole tiles only: "
                 f"{-(-units // clusters) * sk.kt})")
    return "\n".join(lines)


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--mnk", default="256,256,128")
    p.add_argument("--tile", default="64,64,64")
    p.add_argument("--ctas", type=int, default=8)
    p.add_argument("--cluster-m", type=int, default=1)
    p.add_argument("--cluster-n", type=int, default=1)
    a, _ = p.parse_known_args(argv)
    M, N, K = (int(x) for x in a.mnk.split(","))
    bM, bN, bK = (int(x) for x in a.tile.split(","))
    if a.ctas > 0:
        print(describe(M, N, bM, bN, K // bK, a.ctas, a.cluster_m * a.cluster_n))
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import sm90_gemm

    return sm90_gemm.main(argv + ["--stream-k"])


if __name__ == "__main__":
    sys.exit(main())
