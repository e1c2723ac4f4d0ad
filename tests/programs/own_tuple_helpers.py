# Written for cutelab's trial of CuTe DSL programs (issue 9): the small tuple, layout and tensor helpers
# of cutlass.cute that programs reach for (is_static, find, tuple_cat, round_up, append_ones, ...).
# Runs unchanged under CuTe DSL 4.8.1 (CUTE_DSL_ARCH=sm_90a), no GPU needed.

import numpy as np

import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import from_dlpack


@cute.jit
def helpers(t: cute.Tensor):
    L = cute.make_layout((4, (2, 8)), stride=(16, (8, 1)))
    print(cute.is_static(L), cute.is_static((4, 8)), cute.is_int_tuple((1, (2, 3))), cute.is_integer(3))
    print(cute.has_underscore((1, None)), cute.has_underscore((1, (2, 3))))
    print(cute.flatten_to_tuple((1, (2, (3, 4)))), cute.product((2, (3, 4))), cute.product_like(((2, 3), (4, 5)), (0, (0, 0))))
    print(cute.repeat(7, 1), cute.repeat(7, 3), cute.repeat_as_tuple(None, 2))
    print(cute.tuple_cat((1, 2), (3,), ((4, 5),)))
    print(cute.transform_leaf(lambda a, b: a * b, (2, (3, 4)), (5, (6, 7))))
    print(cute.find((3, (4, 1)), 1), cute.find((3, (4, 1)), 4, hierarchical=False), cute.find((3, 4), 9))
    print(cute.find_if((3, (4, 1)), lambda v, pos: v > 3))
    print(cute.front(((5, 6), 7)), cute.front(L))
    print(cute.round_up(10, 4), cute.round_up((10, 3, 7), (4, 2)))
    print(cute.is_congruent((1, (2, 3)), (4, (5, 6))), cute.is_congruent((1, 2), (1, (2, 3))))
    print(cute.is_weakly_congruent((1, 2), (1, (2, 3))), cute.is_weakly_congruent((1, (2, 3)), (1, 2)))
    print(cute.leading_dim((4, 8), (8, 1)), cute.leading_dim((4, (2, 8)), (16, (8, 1))), cute.leading_dim((1, 8), (1, 2)))
    print(cute.is_major(1, (8, 1)), cute.is_major(0, (8, 1)))
    print(cute.append_ones(cute.make_layout((4, 8))), cute.append_ones(cute.make_layout(4), 3))
    print(cute.prepend_ones(t), cute.append_ones(t, 4))
    print(cute.size_in_bytes(cutlass.Float16, cute.make_layout((4, 8))), cute.size_in_bytes(cutlass.Float32, L))
    sw = cute.make_composed_layout(cute.make_swizzle(3, 4, 3), 0, cute.make_layout((8, 64), stride=(64, 1)))
    print(cute.get_swizzle_portion(sw), cute.get_nonswizzle_portion(sw))
    print(cute.make_rmem_tensor_like(t))
    print(cute.make_rmem_tensor_like(t, cutlass.Int32))
    print(cute.recast_tensor(t, cutlass.Float16))
    print(cute.recast_tensor(t, cutlass.Int32))


helpers(from_dlpack(np.zeros((4, 6), dtype=np.float32), assumed_align=16))
