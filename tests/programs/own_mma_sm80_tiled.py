# Written for cutelab's trial of CuTe DSL programs (issue 8): the kind of program people write while
# learning CuTe DSL. Runs unchanged under CuTe DSL 4.8.1 (CUTE_DSL_ARCH=sm_90a), no GPU needed.

import cutlass
import cutlass.cute as cute


@cute.jit
def show_tiled_mma():
    # Ampere's 16x8x16 half-precision tensor-core MMA, four warps as a 2x2 grid
    op = cute.nvgpu.warp.MmaF16BF16Op(cutlass.Float16, cutlass.Float32, (16, 8, 16))
    atom = cute.make_mma_atom(op)
    print(atom)
    tiled = cute.make_tiled_mma(atom, (2, 2, 1))
    print(tiled)
    print("size:", cute.size(tiled))
    print("tile MNK:", tiled.get_tile_size(0), tiled.get_tile_size(1), tiled.get_tile_size(2))
    print("A atom TV:", tiled.tv_layout_A)
    print("B atom TV:", tiled.tv_layout_B)
    print("C atom TV:", tiled.tv_layout_C)
    print("A tiled TV:", tiled.tv_layout_A_tiled)
    print("C tiled TV:", tiled.tv_layout_C_tiled)


show_tiled_mma()
