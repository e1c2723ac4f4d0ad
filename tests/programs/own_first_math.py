# Written for cutelab's trial of CuTe DSL programs (issue 9): the first things a newcomer tries: math on
# loaded values (TensorSSA): elementwise functions, where, comparisons, conversions, reductions.
# Runs unchanged under CuTe DSL 4.8.1 (CUTE_DSL_ARCH=sm_90a), no GPU needed.

import numpy as np

import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import from_dlpack


@cute.jit
def math_on_values(x: cute.Tensor, y: cute.Tensor):
    v = x.load()
    print(v.shape, v.dtype, v.element_type)
    e = cute.math.exp(v)
    s = cute.math.sqrt(v * v + 1.0)
    m = cute.where(v > 2.0, v, cute.full_like(v, 0.0))
    h = v.to(cutlass.Float16)
    print(h)
    y.store(e)
    cute.print_tensor(e)
    cute.print_tensor(s)
    cute.print_tensor(m)
    cute.print_tensor(h)
    cute.print_tensor(v > 1.5)
    cute.print_tensor(cute.where(v > 1.5, cute.full_like(v, 1.0), cute.full_like(v, -1.0)))
    cute.print_tensor(v.reduce(cute.ReductionOp.MAX, -1000.0, reduction_profile=(None, 1)))


x = np.array([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]], dtype=np.float32)
y = np.zeros_like(x)
math_on_values(from_dlpack(x), from_dlpack(y))
print(np.round(y, 3))
