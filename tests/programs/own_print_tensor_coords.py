# Written for cutelab's trial of CuTe DSL programs (issue 9): print_tensor of coordinate (identity)
# tensors: flat, tiled, nested and rank-1, plain and verbose.
# Runs unchanged under CuTe DSL 4.8.1 (CUTE_DSL_ARCH=sm_90a), no GPU needed.

import cutlass
import cutlass.cute as cute


@cute.jit
def coords():
    c = cute.make_identity_tensor((3, 4))
    cute.print_tensor(c)
    cute.print_tensor(c, verbose=True)
    cute.print_tensor(cute.local_tile(cute.make_identity_tensor((4, 6)), (2, 3), (1, 1)))
    cute.print_tensor(cute.make_identity_tensor(5))
    cute.print_tensor(cute.make_identity_tensor(3), verbose=True)
    cute.print_tensor(cute.make_identity_tensor((2, (2, 2))))


@cute.jit
def nested():
    # (CuTe DSL prints a jit function's print() output before its print_tensor output: kept apart here)
    print(cute.make_identity_tensor((2, (2, 2))))
    print(cute.make_identity_tensor(((2, 2), 3)))
    print(cute.make_identity_tensor((2, (3, (2, 2)))))


coords()
nested()
