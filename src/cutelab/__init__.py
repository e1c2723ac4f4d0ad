"""cutelab: CuTe layouts, their algebra, tensors, pictures and kernels, in plain Python.

Names follow cutlass.cute, so CuTe DSL code ports by changing its import line:

>>> import cutelab as cute
>>> L = cute.make_layout(((2, 2), (2, 3)), stride=((2, 12), (1, 4)))
>>> print(L, cute.size(L), cute.cosize(L))
((2,2),(2,3)):((2,12),(1,4)) 24 24
"""

from .errors import CompileError, LaunchError, LayoutError, ParseError, TensorError, TraceError
from .int_tuple import congruent, compatible, prefix_product
from .layout import (
    E, Layout, ScaledBasis, append, coshape, cosize, crd2idx, depth, dice, flatten,
    get, group_modes, idx2crd, is_layout, make_identity_layout, make_layout, make_layout_like,
    make_ordered_layout, parse_layout, parse_tuple, prepend, product_each, rank, select,
    shape, shape_div, size, slice_, slice_and_offset, stride, unflatten,
)
from .layout import evaluate_all, get_hier_coord
from .algebra import (
    blocked_product, ceil_div, coalesce, complement, composition, downcast, filter, filter_zeros,
    flat_divide, flat_product, left_inverse, logical_divide, logical_product, make_layout_tv,
    max_common_layout, max_common_vector, nullspace, raked_product, recast_layout,
    right_inverse, tile_to_shape, tiled_divide, tiled_product, upcast, zipped_divide,
    zipped_product,
)

from .swizzle import *  # noqa: F401,F403  (Swizzle, ComposedLayout, make_swizzle, make_composed_layout, ...)

from .numeric import (
    BFloat16, Boolean, Float16, Float32, Float64, Int8, Int16, Int32, Int64, Numeric, Uint8,
    Uint16, Uint32, Uint64,
)
from .tensor import (
    Pointer, Tensor, TensorSSA, local_partition, local_tile, make_fragment, make_fragment_like,
    make_identity_tensor, make_rmem_tensor, make_tensor, print_tensor,
)

from . import nvgpu  # noqa: E402  (atoms: cutelab.nvgpu.warp, .warpgroup, .cpasync)
from .nvgpu.mma_atom import *  # noqa: F401,F403,E402  (make_mma_atom, make_tiled_mma, TiledMma, ...)
from .nvgpu.copy_atom import *  # noqa: F401,F403,E402  (make_copy_atom, make_tiled_copy_tv, TiledCopy, ...)

__version__ = "0.1.0"

from . import render  # noqa: E402  (pictures: cute.render.layout_figure, render.render(fig, 'svg'), ...)

# --- kernels (cutelab.kernel): @cute.kernel / @cute.jit traced to CUDA C++, or run by numpy on the CPU.
# `kernel` is CuTe DSL's decorator; attribute access on it falls through to the subpackage.
from .kernel import Constexpr, arch, compile, jit, printf  # noqa: E402
from .kernel import kernel_decorator as kernel  # noqa: E402
from .kernel import driver as cuda  # noqa: E402  (cutlass.cuda.initialize_cuda_context())

Shape = Coord = IntTuple = Tile = tuple  # annotations, as cute.Shape etc. in CuTe DSL

# --- kernels II (issue 9): runtime control flow, scalars, shared memory. `range` is cutlass.range (a
# runtime loop in a kernel); it is served by __getattr__ so that `from cutelab import *` keeps the builtin.
from .kernel.control import const_expr, dynamic_expr, range_constexpr  # noqa: E402
from .kernel.trace import where  # noqa: E402
from .numeric import Int4, Int128, Uint128  # noqa: E402
from . import utils  # noqa: E402  (cutlass.utils.SmemAllocator)


def _kernel2_getattr(name: str):
    if name == "range":
        from .kernel.control import range_

        return range_
    raise AttributeError(f"module 'cutelab' has no attribute {name!r}")


if "__getattr__" not in globals():
    __getattr__ = _kernel2_getattr

from .kernel.control import elem_less  # noqa: E402
from .kernel.copy import make_copy as _make_copy  # noqa: E402

copy = _make_copy(globals().get("copy"))  # in a kernel: the kernel's copy; on the host: nvgpu's
