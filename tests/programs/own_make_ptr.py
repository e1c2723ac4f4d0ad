# Written for cutelab's trial of CuTe DSL programs (issue 9): pointers made on the host with
# cute.runtime.make_ptr, passed to a jit function, moved, recast and wrapped in tensors.
# Runs unchanged under CuTe DSL 4.8.1 (CUTE_DSL_ARCH=sm_90a), no GPU needed.

import ctypes

import numpy as np

import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import make_ptr


@cute.jit
def use_pointers(p: cute.Pointer, q: cute.Pointer):
    print(p)
    print(q)
    print(p.memspace, p.alignment, q.alignment)
    print(p + 4)
    print(q + 4)
    t = cute.make_tensor(p, cute.make_layout((4, 8), stride=(8, 1)))
    print(t)
    r = cute.recast_ptr(q, dtype=cutlass.Int32)
    print(r)
    print(cute.make_tensor(r, 8))
    t[(0, 1)] = 100.0
    cute.print_tensor(t[(None, 1)])


a = np.arange(32, dtype=np.float32)
p = make_ptr(cutlass.Float32, a.ctypes.data_as(ctypes.POINTER(ctypes.c_float)))
q = make_ptr(cutlass.Float32, a.ctypes.data_as(ctypes.POINTER(ctypes.c_float)), assumed_align=16)
print(p.memspace)
use_pointers(p, q)
print(a[:3])
