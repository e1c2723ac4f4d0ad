"""cutelab: CuTe layouts, their algebra, tensors, pictures and kernels, in plain Python.

Names follow cutlass.cute, so CuTe DSL code ports by changing its import line:

>>> import cutelab as cute
>>> L = cute.make_layout(((2, 2), (2, 3)), stride=((2, 12), (1, 4)))
>>> print(L, cute.size(L), cute.cosize(L))
((2,2),(2,3)):((2,12),(1,4)) 24 24

Layers, bottom up: the core (this folder's modules: int_tuple, numeric, dynamic, layout, algebra,
swizzle, dynamic_layout, tensor, address, fake, runtime, emulated_gpu, ...) imports nothing above it; ``nvgpu``
(atoms) imports the core; ``render`` (pictures) and ``analysis`` build on the atoms; the kernel
compiler (``kernel``) uses all of these; ``pipeline*``, ``testing``, ``compat`` and the command
line sit on top (``cli_words`` < ``cli_sm100`` < ``commands`` < ``web`` < ``cli``; ``utils`` holds
helpers of both kinds: layout helpers below the kernel, allocators above it). The core and
the atoms reach what is above them through two protocols that import nothing: ``tracing`` (the
kernel implements it when imported) and ``display`` (this package wires it to ``render``).
"""

import importlib as _importlib
import sys as _sys
import types as _types

from . import display as _display
from . import tracing as _tracing
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

# `import cutelab` loads the algebra only: no numpy (which tensors, atoms, pictures and kernels
# import on first use). Everything else below is bound on first use (_LAZY).

__version__ = "0.1.0"

Shape = Coord = IntTuple = Tile = tuple  # annotations, as cute.Shape etc. in CuTe DSL

# --- loaded on first use, so that `import cutelab` stays fast (the layout algebra needs only numpy):
#   render: pictures (cute.render.layout_figure, render.render(fig, 'svg'), ...)
#   kernels (cutelab.kernel): @cute.kernel / @cute.jit traced to CUDA C++, or run by numpy on the CPU.
#   `kernel` is CuTe DSL's decorator; attribute access on it falls through to the subpackage.
#   numeric, tensor: element types and tensors (they need numpy, which the layout algebra does not)
_LAZY = {
    **{name: ("numeric", name) for name in (
        "BFloat16", "Boolean", "Float16", "Float32", "Float64", "Int8", "Int16", "Int32", "Int64", "Numeric",
        "Uint8", "Uint16", "Uint32", "Uint64", "Float8E4M3FN", "Float8E5M2", "TFloat32")},
    **{name: ("tensor", name) for name in (
        "Pointer", "Tensor", "TensorSSA", "domain_offset", "local_partition", "local_tile", "make_fragment", "make_fragment_like",
        "make_identity_tensor", "make_rmem_tensor", "print_tensor",
        "full", "full_like", "zeros_like", "ones_like", "empty_like", "all_", "any_")},
    "render": ("render", None),
    "Constexpr": ("kernel", "Constexpr"), "arch": ("kernel", "arch"), "compile": ("kernel", "compile"),
    "jit": ("kernel", "jit"), "printf": ("kernel", "printf"), "kernel": ("kernel", "kernel_decorator"),
    "cuda": ("kernel.cuda.driver", None),  # cutlass.cuda.initialize_cuda_context()
    # kernels II (issue 9): runtime control flow, predication, shared memory. `range` is cutlass.range
    # (a runtime loop in a kernel); being lazy, `from cutelab import *` keeps the builtin range.
    "range": ("kernel.frontend.control", "range_"), "range_constexpr": ("kernel.frontend.control", "range_constexpr"),
    "const_expr": ("kernel.frontend.control", "const_expr"), "dynamic_expr": ("kernel.frontend.control", "dynamic_expr"),
    "elem_less": ("kernel.frontend.control", "elem_less"), "where": ("kernel.frontend.trace", "where"),
    "min": ("kernel.frontend.control", "min_"), "max": ("kernel.frontend.control", "max_"),  # cutlass.min/max (lazy: builtins stay)
    "utils": ("utils", None),  # cutlass.utils.SmemAllocator
    "pipeline": ("pipeline", None),  # cutlass.pipeline.CooperativeGroup after a bare "import cutlass"
    "dsl_user_op": ("kernel.frontend.control", "dsl_user_op"), "GenerateLineInfo": ("kernel.launch.api", "GenerateLineInfo"),
    **{name: ("kernel.launch.options", name) for name in (
        "OptLevel", "PtxasOptions", "EnableAssertions", "KeepCUBIN", "KeepPTX", "KeepSASS", "NvdisasmOptions", "GPUArch")},
    "testing": ("testing", None), "struct": ("kernel.frontend.smem", "struct"),
    "AddressSpace": ("runtime", "AddressSpace"), "recast_ptr": ("runtime", "recast_ptr"),
    **{name: ("mlir_only", name) for name in ("for_generate", "if_generate", "while_generate", "yield_out")},
    "viz": ("viz", None),  # cute.viz.print_latex / print_latex_tv
    "make_ptr": ("runtime", "make_ptr"),
    "make_tensor": ("runtime", "make_tensor"),  # tensor.make_tensor, and torch/DLPack arrays through from_dlpack
    **{name: ("fake", name) for name in ("sym_int", "sym_int32", "sym_int64", "SymInt")},
    **{name: ("tuple_helpers", name) for name in (
        "is_static", "is_integer", "is_int_tuple", "has_underscore", "flatten_to_tuple", "product", "product_like",
        "repeat", "repeat_as_tuple", "tuple_cat", "transform_leaf", "filter_tuple", "find", "find_if", "front",
        "round_up", "is_congruent", "is_weakly_congruent", "leading_dim", "is_major", "append_ones", "prepend_ones",
        "size_in_bytes", "get_swizzle_portion", "get_nonswizzle_portion", "make_rmem_tensor_like", "recast_tensor")},
    "math": ("kernel.instr.mathops", None), "ReductionOp": ("kernel.instr.mathops", "ReductionOp"),
    "profile": ("kernel.cpu.profiler", "profile"), "Profiler": ("kernel.cpu.profiler", "Profiler"),  # the CPU memory profiler
    # atoms (cutelab.nvgpu.warp, .warpgroup, .cpasync): they import numpy, so they load on first use
    "nvgpu": ("nvgpu", None),
    "make_layout_image_mask": ("kernel.instr.cluster", "make_layout_image_mask"),  # multicast masks of a cluster
    **{name: ("nvgpu.mma_atom", name) for name in (
        "MmaOp", "MmaAtom", "TiledMma", "ThrMma", "make_mma_atom", "make_tiled_mma")},
    **{name: ("nvgpu.copy_atom", name) for name in (
        "CopyAtom", "TiledCopy", "ThrCopy", "make_copy_atom", "make_tiled_copy", "make_tiled_copy_tv",
        "make_tiled_copy_S", "make_tiled_copy_D", "make_tiled_copy_A", "make_tiled_copy_B", "make_tiled_copy_C",
        "make_tiled_copy_C_atom", "make_cotiled_copy", "copy_atom_call", "basic_copy", "basic_copy_if",
        "autovec_copy")},
    # cute.copy and cute.gemm: the atoms' host functions, wrapped to dispatch inside a kernel trace
    "copy": ("nvgpu.copy_atom", "copy"), "gemm": ("nvgpu.mma_atom", "gemm"),
    "prefetch": ("kernel.instr.tma_prefetch", "prefetch"),  # TMA's L2 prefetch, in a kernel
    **{name: ("numeric", name) for name in ("Int4", "Int128", "Uint128")},  # kernels II (issue 9): scalar types
    **{name: ("numeric", name) for name in (  # the type model as CuTe DSL's (issue 18): metaclasses, bases, fp4/fp6/e8m0
        "NumericMeta", "IntegerMeta", "FloatMeta", "Integer", "Float", "Float8E8M0FNU", "Float8E4M3", "Float4E2M1FN", "Float6E2M3FN",
        "Float6E3M2FN", "Float4E2M1FNx2", "Float6E3M2FNx4", "Float6E2M3FNx4")},
}

#: the names `from cutelab import *` binds: the eager ones, and the lazy atoms and types that were eager
#: before (binding them imports numpy); kernel names (range, min, max, ...) stay out, as builtins stay
_STAR_LAZY = [name for name, (sub, _) in _LAZY.items() if sub in ("numeric", "nvgpu.mma_atom", "nvgpu.copy_atom")
              or name == "nvgpu"]


class _Package(_types.ModuleType):
    """The cutelab module: names in _LAZY are imported when first used."""

    def __getattr__(self, name: str):
        if name not in _LAZY:
            raise AttributeError(f"module 'cutelab' has no attribute {name!r}")
        sub, attr = _LAZY[name]
        mod = _importlib.import_module(f"{__name__}.{sub}")
        value = mod if attr is None else getattr(mod, attr)
        if name in _DISPATCH:
            value = _DISPATCH[name](value)
        self.__dict__[name] = value
        return value

    def __setattr__(self, name: str, value) -> None:
        # importing the subpackage cutelab.kernel binds it here; the name stays CuTe DSL's decorator
        if name == "kernel" and isinstance(value, _types.ModuleType):
            value = value.kernel_decorator
        super().__setattr__(name, value)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(_LAZY))


_sys.modules[__name__].__class__ = _Package


def _register_ipython() -> None:
    """In IPython/Jupyter, draw (tiler, Layout) pairs (make_layout_tv's answer) as their TV picture."""
    ipy = _sys.modules.get("IPython")
    get = getattr(ipy, "get_ipython", None) if ipy is not None else None
    shell = get() if get is not None else None
    formatters = getattr(getattr(shell, "display_formatter", None), "formatters", None)
    if not formatters or "image/svg+xml" not in formatters:
        return

    def tv_pair_svg(obj):
        if not (len(obj) == 2 and isinstance(obj[1], Layout) and isinstance(obj[0], tuple)
                and len(obj[0]) == 2 and all(type(x) is int for x in obj[0])):
            return None  # any other tuple: IPython's own text
        from .render import figure, svg

        try:
            return svg.render(figure.tv_figure(obj[1], obj[0]))
        except LayoutError:
            return None

    formatters["image/svg+xml"].for_type(tuple, tv_pair_svg)


_register_ipython()


def _notebook_html(x):
    from .render import notebook

    return notebook.html(x)


def _notebook_svg(x):
    from .render import notebook

    return notebook.svg(x)


_display.install(html=_notebook_html, svg=_notebook_svg)  # the values' pictures in Jupyter (cutelab.display)


_layout_slice = slice_


def slice_(src, coord):
    """cute.slice_: the sub-layout (or sub-tensor) of src selected by the None modes of coord.

    >>> import numpy as np
    >>> print(slice_(make_tensor(np.arange(12, dtype=np.float32), make_layout((4, 3))), (None, 1)))
    tensor<ptr<f32, generic> o (4):(1)>
    """
    from .tensor import Tensor as _Tensor  # tensors load on first use

    if isinstance(src, _Tensor):
        return src[coord]
    if isinstance(src, tuple):  # an IntTuple (a shape or tiler): its None modes, as CuTe DSL slices tuples
        from . import int_tuple as _it

        return _it.slice_tuple(coord, src)
    return _layout_slice(src, coord)


def repeat_like(x, target):
    """CuTe DSL's repeat_like: an object congruent to target, every leaf x.

    >>> repeat_like(None, (1, (2, 3)))
    (None, (None, None))
    """
    from .int_tuple import repeat_like as _rl

    return _rl(target, x)


def _copy_dispatch(host):
    def copy(atom, src, dst, *, pred=None, **kwargs):
        if _tracing.hooks.kernel_tracing():
            return _tracing.hooks.copy(atom, src, dst, pred=pred, **kwargs)
        return host(atom, src, dst, pred=pred, **kwargs)

    copy.__doc__ = host.__doc__
    copy.__wrapped__ = host
    return copy


def _gemm_dispatch(host):
    def gemm(atom, d, a, b, c, **kwargs):
        if _tracing.hooks.kernel_tracing():
            return _tracing.hooks.gemm(atom, d, a, b, c)
        return host(atom, d, a, b, c, **kwargs)

    gemm.__doc__ = host.__doc__
    gemm.__wrapped__ = host
    return gemm


#: lazy names whose value wraps the module's: cute.copy and cute.gemm run kernel/instr/copy.py and kernel/instr/gemm.py in a kernel
_DISPATCH = {"copy": _copy_dispatch, "gemm": _gemm_dispatch}


def dtype(name):
    """cutlass.dtype: the element type named name ("Float16", "BFloat16", ...; a type is returned as is).

    >>> dtype("BFloat16") is BFloat16
    True
    """
    from . import numeric as _numeric

    if _numeric.is_numeric_type(name):
        return name
    t = getattr(_numeric, str(name), None)
    if not _numeric.is_numeric_type(t):
        raise TypeError(f"cutlass.dtype({name!r}): no element type of that name (Float16, BFloat16, Float32, ...)")
    return t


__all__ = sorted({name for name in globals() if not name.startswith("_")} - {"annotations"} | set(_STAR_LAZY))
