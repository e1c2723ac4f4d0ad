# Written for cutelab's trial of CuTe DSL programs (issue 9): coalesce with target profiles and composition
# with a layout, with a tuple of layouts (a tiler) and with a shape.
# Runs unchanged under CuTe DSL 4.8.1 (CUTE_DSL_ARCH=sm_90a), no GPU needed.
import cutlass
import cutlass.cute as cute


@cute.jit
def algebra():
    layout = cute.make_layout((2, (1, 6)), stride=(1, (6, 2)))
    print("coalesce", cute.coalesce(layout))
    for prof in ((1, 2), (1, (2, 3)), (1,), (1, 1)):
        print("profile", prof, cute.coalesce(layout, target_profile=prof))
    a = cute.make_layout((6, 2), stride=(8, 2))
    b = cute.make_layout((4, 3), stride=(3, 1))
    print("a o b", cute.composition(a, b))
    print("6:2 o 4:3", cute.composition(cute.make_layout(6, stride=2), cute.make_layout(4, stride=3)))
    big = cute.make_layout((12, (4, 8)), stride=(59, (13, 1)))
    tiler = (cute.make_layout(3, stride=4), cute.make_layout(8, stride=2))
    r = cute.composition(big, tiler)
    print("by tiler", r, cute.composition(big[0], tiler[0]), cute.composition(big[1], tiler[1]))
    print("by shape", cute.composition(big, (3, 8)))
    print("complement", cute.complement(cute.make_layout(4, stride=2), 24),
          cute.complement(cute.make_layout((2, 2), stride=(1, 6)), 24))
    print("right_inverse", cute.right_inverse(cute.make_layout((4, 8), stride=(8, 1))),
          "left_inverse", cute.left_inverse(cute.make_layout((4, 8), stride=(8, 1))))
    cute.printf("composed {}", r)


algebra()
