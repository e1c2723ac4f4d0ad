# Written for cutelab's trial of CuTe DSL programs (issue 9): the first things a newcomer tries: tensors over numpy arrays.
# Runs unchanged under CuTe DSL 4.8.1 (CUTE_DSL_ARCH=sm_90a), no GPU needed.

import numpy as np

import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import from_dlpack


@cute.jit
def first_tensors(t: cute.Tensor):
    print(t)
    print(t.layout, t.shape, t.stride)
    print(t.element_type, t.memspace)
    print(t.iterator)
    print(t[(1, None)])
    print(t[(None, 2)])
    print(cute.size(t), cute.rank(t))
    print(cute.zipped_divide(t, (2, 2)))
    print(cute.local_tile(t, (2, 3), (1, 0)))
    v = t.load()
    print(v)
    w = v * 2.0 + 1.0
    print(w.shape, w.dtype)
    r = cute.make_rmem_tensor(t.layout.shape, cutlass.Float32)
    print(r)
    r.store(w)
    t[(0, 0)] = 42.0
    cute.print_tensor(r)
    cute.print_tensor(t[(None, 1)])


@cute.jit
def writes(t: cute.Tensor):
    t.fill(7.0)
    t[(1, 2)] = -1.0
    u = cute.make_fragment_like(t)
    print(u)
    u.store(t.load())
    cute.print_tensor(u)


a = np.arange(24, dtype=np.float32).reshape(4, 6)
first_tensors(from_dlpack(a))
print(a[0, 0])
b = np.zeros((2, 3), dtype=np.float32)
writes(from_dlpack(b))
print(b)
