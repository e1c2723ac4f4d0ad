# Written for cutelab's trial of CuTe DSL programs (issue 9): print_tensor over ranks 1-4, nested
# shapes, long modes (elided past 6), element types, verbose=True, register tensors and loaded values.
# Runs unchanged under CuTe DSL 4.8.1 (CUTE_DSL_ARCH=sm_90a), no GPU needed.

import numpy as np

import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import from_dlpack


@cute.jit
def show(x: cute.Tensor):
    cute.print_tensor(x)


@cute.jit
def show_verbose(x: cute.Tensor):
    cute.print_tensor(x, verbose=True)


@cute.jit
def views(x: cute.Tensor):
    cute.print_tensor(cute.make_tensor(x.iterator, cute.make_layout(((2, 2), (2, 3)), stride=((1, 2), (4, 8)))))
    cute.print_tensor(cute.make_tensor(x.iterator, cute.make_layout((2, (2, 3), 2), stride=(1, (2, 4), 12))))
    cute.print_tensor(cute.make_tensor(x.iterator, cute.make_layout(((2, 2), 3), stride=((1, 2), 4))), verbose=True)
    cute.print_tensor(cute.make_tensor(x.iterator, cute.make_layout(3)), verbose=True)
    cute.print_tensor(cute.make_tensor(x.iterator, cute.make_layout(1)))
    cute.print_tensor(cute.make_tensor(x.iterator, cute.make_layout((2, 1, 9), stride=(1, 0, 2))))


@cute.jit
def registers(x: cute.Tensor):
    v = x.load()
    cute.print_tensor(v)
    cute.print_tensor(v * 2.0)
    r = cute.make_rmem_tensor(cute.make_layout((2, 2), stride=(2, 1)), cutlass.Float16)
    r.fill(-0.5)
    cute.print_tensor(r)
    q = cute.make_rmem_tensor((4,), cutlass.Int32)
    q.fill(3)
    cute.print_tensor(q, verbose=True)


show(from_dlpack(np.arange(5, dtype=np.float32)))
show(from_dlpack(np.arange(7, dtype=np.float32)))
show(from_dlpack(np.arange(49, dtype=np.float32).reshape(7, 7)))
show(from_dlpack(np.arange(36, dtype=np.float32).reshape(6, 6)))
show(from_dlpack(np.arange(48, dtype=np.float32).reshape(2, 3, 4, 2)))
show(from_dlpack(np.arange(8 * 8 * 8, dtype=np.float32).reshape(8, 8, 8)))
show(from_dlpack(np.arange(-6, 6, dtype=np.int32).reshape(3, 4)))
show(from_dlpack(np.arange(-6, 6, dtype=np.int8).reshape(3, 4)))
show(from_dlpack((np.arange(-6, 6) / 3).astype(np.float16).reshape(3, 4)))
show(from_dlpack((np.arange(-6, 6) / 3).astype(np.float64).reshape(3, 4)))
show(from_dlpack(np.array([1e10, -1e-5, 123456.789, np.inf, -np.inf, np.nan], dtype=np.float32).reshape(2, 3)))
show_verbose(from_dlpack(np.array([-1.5, 2.0], dtype=np.float32)))
show_verbose(from_dlpack(np.arange(8, dtype=np.float32).reshape(2, 2, 2)))
show_verbose(from_dlpack(np.arange(4, dtype=np.int32).reshape(2, 2)))
views(from_dlpack(np.arange(24, dtype=np.float32)))
registers(from_dlpack(np.arange(6, dtype=np.float32).reshape(2, 3)))
