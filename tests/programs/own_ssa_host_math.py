# Written for cutelab's trial of CuTe DSL programs (issue 9): TensorSSA arithmetic on the host, inside a
# @cute.jit function over numpy memory: loads, elementwise math, comparisons, where, reductions, stores,
# and conversions between element types. Runs unchanged under CuTe DSL 4.8.1 (CUTE_DSL_ARCH=sm_90a).
import numpy as np

import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import from_dlpack


@cute.jit
def ssa(a: cute.Tensor, b: cute.Tensor, out: cute.Tensor, iout: cute.Tensor):
    x = a.load()
    y = b.load()
    print("loaded", x, y)
    s = x + y * 2.0 - 1.0
    m = cute.where(x > y, x, y)
    out[0, None].store(s[0, None])
    out[1, None].store(m[1, None])
    out[2, None].store((x * x / (y + 1.0))[2, None])
    cute.print_tensor(out)
    i = x.to(cutlass.Int32)
    iout.store(i + 3)
    cute.print_tensor(iout)
    total = s.reduce(cute.ReductionOp.ADD, 0.0, reduction_profile=0)
    big = x.reduce(cute.ReductionOp.MAX, -1000.0, reduction_profile=0)
    cute.printf("sum {} max {}", total, big)


a = np.arange(12, dtype=np.float32).reshape(3, 4) / 4.0
b = np.flip(a, axis=1).copy()
out = np.zeros_like(a)
iout = np.zeros((3, 4), dtype=np.int32)
ssa(from_dlpack(a), from_dlpack(b), from_dlpack(out), from_dlpack(iout))
print(out)
print(iout)
