# Written for cutelab's trial of CuTe DSL programs (issue 8): the kind of program people write while
# learning CuTe DSL. Runs unchanged under CuTe DSL 4.8.1 (CUTE_DSL_ARCH=sm_90a), no GPU needed.

import cutlass
import cutlass.cute as cute


@cute.jit
def coordinate_tensors():
    # identity (coordinate) tensors: their offset is a coordinate, printed as one
    c = cute.make_identity_tensor((64, 32))
    print(c)
    print(cute.local_tile(c, (16, 16), (0, 0)))
    print(cute.local_tile(c, (16, 16), (1, 0)))
    print(cute.local_tile(c, (16, 16), (2, 1)))
    print(c[(None, 0)])
    print(c[(3, None)])
    print(cute.make_identity_tensor(8))
    print(cute.make_identity_tensor((4, (2, 3))))


coordinate_tensors()
