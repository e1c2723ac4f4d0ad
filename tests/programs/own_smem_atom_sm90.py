# Written for cutelab's trial of CuTe DSL programs (issue 8): the kind of program people write while
# learning CuTe DSL. Runs unchanged under CuTe DSL 4.8.1 (CUTE_DSL_ARCH=sm_90a), no GPU needed.

import cutlass
import cutlass.cute as cute
from cutlass.cute.nvgpu import warpgroup


@cute.jit
def hopper_smem_atoms():
    for kind in (warpgroup.SmemLayoutAtomKind.K_SW128, warpgroup.SmemLayoutAtomKind.K_SW64,
                 warpgroup.SmemLayoutAtomKind.MN_SW128, warpgroup.SmemLayoutAtomKind.K_INTER):
        atom = warpgroup.make_smem_layout_atom(kind, cutlass.Float16)
        print(kind, atom)
    atom = warpgroup.make_smem_layout_atom(warpgroup.SmemLayoutAtomKind.K_SW128, cutlass.BFloat16)
    staged = cute.tile_to_shape(atom, (128, 64, 3), (0, 1, 2))
    print("staged:", staged)
    print("size, cosize:", cute.size(staged), cute.cosize(staged))


hopper_smem_atoms()
