"""A tour of cutelab on an embedded default: the seeds' layouts, algebra, a TV layout and a
partition over real data. Run: python examples/tour.py"""

import numpy as np

import cutelab as cute
from cutelab.runtime import from_dlpack


def section(title: str) -> None:
    print(f"\n== {title}")


section("A hierarchical layout and its index -> coordinate table (seed: hierarchical layouts)")
L = cute.Layout.parse("(2,2,2):(2,1,4)")
print(L)
for i in range(cute.size(L)):
    print(f"{i} -> {cute.int_tuple.tuple_str(L.get_hier_coord(i))}")

section("Composition: TV2Memory = MN2Memory o TV2MN (seed: layout algebra)")
tv2mn = cute.Layout.parse("(4,2,2):(2,1,8)")
mn2mem = cute.Layout.parse("(4,4):(4,1)")
print(f"composition({mn2mem}, {tv2mn}) = {cute.composition(mn2mem, tv2mn)}")
print(f"complement((2,3):(2,4), 24) = {cute.complement(cute.Layout.parse('(2,3):(2,4)'), 24)}")

section("A thread-value layout over 24 elements (seed: thread-value layouts)")
tv = cute.make_layout(((2, 2), (2, 3)), stride=((2, 12), (1, 4)))
print(f"TV Layout: {tv}")
data = from_dlpack(np.arange(24, dtype=np.int32).reshape(24, 1), assumed_align=16)
composed = cute.composition(data, tv)
for tidx in range(cute.size(tv, mode=[0])):
    print(f"TIDX {tidx}: {' '.join(str(v) for v in composed[(tidx, None)].load().numpy().ravel())}")

section("make_layout_tv for the copy kernel (seed: CuTe partitions)")
tiler, tv_layout = cute.make_layout_tv(cute.make_layout((32, 8), stride=(8, 1)), cute.make_layout((4, 8), stride=(8, 1)))
print(f"tiler_mn = {tiler}, tv_layout = {tv_layout}")
S = np.arange(256 * 128, dtype=np.float32).reshape(256, 128)
tile = cute.zipped_divide(from_dlpack(S, assumed_align=16), tiler)[((None, None), 1)]
print(f"block 1 tile: {tile}")
val = cute.composition(tile, tv_layout)[(5, None)]
print(f"thread 5 of block 1: {val}")
print(f"  its values: {val.load().numpy().ravel()[:8]} ...")

section("An error, explained")
try:
    cute.composition(cute.Layout.parse("(4,3):(3,1)"), cute.Layout.parse("5:2"))
except cute.LayoutError as e:
    print(f"LayoutError: {e}")
