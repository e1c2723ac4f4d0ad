# A newcomer's first look at dynamic layouts: from_dlpack, mark_layout_dynamic, mark_compact_shape_dynamic.
import numpy as np
import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import from_dlpack


@cute.jit
def show(mA: cute.Tensor):
    print("layout:", mA.layout)
    print("shape:", mA.shape, "stride:", mA.stride)
    print("size:", cute.size(mA), "mode 0:", cute.size(mA, mode=[0]))
    tiles = cute.zipped_divide(mA.layout, (4, 8))
    print("tiles:", tiles)
    print("tile (1,0):", cute.local_tile(mA, (4, 8), (1, 0)).layout)
    m = mA.shape[0]
    print("m:", m, m * 2, m + 1, m // 2)
    cute.printf("runtime: {} {} size={}", mA.layout, mA.shape, cute.size(mA))


a = np.zeros((16, 32), dtype=np.float32)
show(from_dlpack(a))
show(from_dlpack(a).mark_layout_dynamic())
show(from_dlpack(a).mark_compact_shape_dynamic(mode=0, divisibility=16))
show(from_dlpack(a).mark_compact_shape_dynamic(mode=1, divisibility=8))
b = np.zeros((8, 12), dtype=np.float32).T
show(from_dlpack(b).mark_layout_dynamic(leading_dim=0))
try:
    from_dlpack(a).mark_layout_dynamic(leading_dim=0)
except Exception as e:
    print("refused leading_dim=0")
try:
    from_dlpack(a).mark_compact_shape_dynamic(mode=0, divisibility=3)
except Exception as e:
    print("refused divisibility=3")
