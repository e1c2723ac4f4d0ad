# Written for cutelab's trial of CuTe DSL programs (issue 9): the first things a newcomer tries: @cute.jit
# functions with compile-time arguments, cute.compile, and helper functions called from them.
# Runs unchanged under CuTe DSL 4.8.1 (CUTE_DSL_ARCH=sm_90a), no GPU needed.

import numpy as np

import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import from_dlpack


def describe(name, layout):
    print(name, "=", layout, "size", cute.size(layout))


@cute.jit
def tile_it(t: cute.Tensor, tile: cutlass.Constexpr, verbose: cutlass.Constexpr[bool] = False):
    tiled = cute.zipped_divide(t, tile)
    describe("tiled", tiled.layout)
    if cutlass.const_expr(verbose):
        print("tiles:", cute.size(tiled, mode=[1]))
    for i in cutlass.range_constexpr(2):
        print("tile", i, tiled[(None, i)])


a = np.zeros((8, 8), dtype=np.float32)
tile_it(from_dlpack(a), (4, 4))
tile_it(from_dlpack(a), (2, 8), verbose=True)
compiled = cute.compile(tile_it, from_dlpack(a), (4, 2))
compiled(from_dlpack(a))
