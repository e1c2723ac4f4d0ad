# Written for cutelab's trial of CuTe DSL programs (issue 8): the kind of program people write while
# learning CuTe DSL. Runs unchanged under CuTe DSL 4.8.1 (CUTE_DSL_ARCH=sm_90a), no GPU needed.
import cutlass
import cutlass.cute as cute


@cute.jit
def layout_queries():
    L = cute.make_layout(((2, 4), (3, 5)), stride=((1, 6), (2, 24)))
    print(L, cute.rank(L), cute.depth(L), cute.size(L), cute.cosize(L))
    print("mode 1:", cute.get(L, mode=[1]), "mode (0,1):", cute.get(L, mode=[0, 1]))
    print("select 1,0:", cute.select(L, mode=[1, 0]))
    print("group 0..2:", cute.group_modes(cute.flatten(L), 0, 2))
    print("flatten:", cute.flatten(L))
    print("coalesce:", cute.coalesce(L))
    print("crd2idx:", cute.crd2idx((3, 7), L), cute.crd2idx(((1, 2), (2, 3)), L))
    print("idx2crd:", cute.idx2crd(17, L.shape))
    print("ordered:", cute.make_ordered_layout((4, 3, 2), order=(2, 0, 1)))
    print("complement:", cute.complement(cute.make_layout(4, stride=2), 24))
    print("right inverse:", cute.right_inverse(L), "left inverse:", cute.left_inverse(L))
    print("slice:", cute.slice_(L, ((None, 1), 2)))
    print("tile_to_shape:", cute.tile_to_shape(cute.make_layout((2, 2), stride=(2, 1)), (8, 6), (1, 0)))


layout_queries()
