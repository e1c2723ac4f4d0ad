# Written for cutelab's trial of CuTe DSL programs (issue 9): the first things a newcomer tries: layouts.
# Runs unchanged under CuTe DSL 4.8.1 (CUTE_DSL_ARCH=sm_90a), no GPU needed.

import cutlass
import cutlass.cute as cute


@cute.jit
def first_layouts():
    a = cute.make_layout((4, 8))
    print(a)
    print(a.shape, a.stride)
    print(cute.size(a), cute.cosize(a), cute.rank(a), cute.depth(a))
    b = cute.make_layout((4, 8), stride=(8, 1))
    print(b)
    print(b(0), b(1), b(5), b((1, 2)), b((3, 7)))
    c = cute.make_layout(((2, 2), (2, 4)), stride=((1, 4), (2, 8)))
    print(c, cute.size(c, mode=[0]), cute.size(c, mode=[1]))
    print(cute.get(c, mode=[1]))
    print(c[0], c[1])
    print(cute.make_layout(8))
    print(cute.make_layout((8,)))
    print(cute.make_ordered_layout((4, 8), order=(1, 0)))
    print(cute.make_layout((4, 1, 2)))
    print(cute.idx2crd(13, (4, 8)), cute.crd2idx((1, 3), (4, 8)))
    print(cute.crd2idx((1, 3), b))
    print(cute.shape(c), cute.flatten(c))
    print(cute.select(b, mode=[1, 0]))
    print(cute.coalesce(c))
    print(cute.make_layout((2, 3)) == cute.make_layout((2, 3), stride=(1, 2)))
    cute.printf("a = {}", a)
    cute.printf("b(5) = {}", b(5))


first_layouts()
