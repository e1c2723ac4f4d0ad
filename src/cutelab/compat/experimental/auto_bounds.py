"""``cutlass.cute.experimental``'s tensor-level API: kernels whose copies bound themselves.

CuTe DSL 4.8.1's ``@cute.experimental.kernel`` lowers through its ``lir`` dialect, which predicates a
copy out of a tiled view automatically: every element whose coordinate in the kernel's tensor
argument (its *origin*) lies outside that argument's shape is left alone. CUTLASS's
``cute_ext/ampere/memcpy_simt_universal_copy.py`` relies on it (an M of 136 tiled by 128).

cutelab carries each element's origin coordinate through the views: an origin tensor's ``coord`` is
an identity tensor of its shape (``Tensor.coord``, ``cutelab.tensor``), and every view that slices,
divides, composes, regroups or partitions the tensor derives its ``coord`` the same way
(``Tensor._map``). ``copy`` then predicates each element on ``elem_less(coord, origin shape)`` and
calls ``cute.copy`` with those flags, so the two back ends run it as any predicated copy (the launch
proves the accesses under the flags). A view that the coordinates do not follow (``filter_zeros``, a
view carried through a runtime loop) holds a ``LostCoords``; a bounded copy of it is refused with the
operation that lost them. A tensor made anew from an iterator (``cute.make_tensor(t.iterator, ...)``)
is a new tensor with no origin: its copies are not bounded (cutelab's launch still checks that every
access stays inside its storage).

Names: ``kernel``, ``jit``, ``compile``, ``allocate``, ``partition``, ``copy``,
``simt_auto_vec_copy``, ``partition_and_copy``, ``predicated_tensor_origin``.

May import: any of cutelab, as ``cutelab.compat`` may.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Optional

from ... import int_tuple as it
from ...errors import TraceError
from ...layout import Layout, make_layout
from ...tensor import IdentityEngine, LostCoords, Tensor, make_identity_tensor

__all__ = ["namespace", "origin", "bound_flags"]


class OriginEngine(IdentityEngine):
    """The identity engine of an origin's coordinates; ``bounds`` is the origin's shape."""

    def __init__(self, bounds: Any, profile: Any):
        super().__init__(profile)
        self.bounds = bounds


def origin(t: Any) -> Any:
    """t as an origin: its elements' coordinates are its own (``predicated_tensor_origin``). Anything
    that is not a tensor in memory is returned as it is."""
    if not isinstance(t, Tensor) or isinstance(t.engine, IdentityEngine):
        return t
    ident = make_identity_tensor(t.layout.shape)
    coords = Tensor(OriginEngine(t.layout.shape, ident.engine.profile), ident.layout, 0, _checked=True)
    out = Tensor(t.engine, t.layout, t.offset, _checked=True)
    out.coord = coords
    return out


class _Flags:
    """One predicate per element of a copy, as ``cute.copy(..., pred=)`` reads them."""

    def __init__(self, flags: list):
        self.flags = flags
        self.layout = make_layout(len(flags))

    def __getitem__(self, i: Any) -> Any:
        return self.flags[i]

    def __str__(self) -> str:
        return f"automatic bounds ({len(self.flags)} flags)"


def _bounded(x: Tensor, what: str) -> Optional[tuple]:
    """x's coordinate tensor and its origin's shape; None when x has no origin."""
    c = x.coord
    if c is None:
        return None
    if isinstance(c, LostCoords):
        raise TraceError(f"{what}: the tensor {x} comes from a @cute.experimental.kernel argument, but through "
                         f"{c.why}, which does not carry the coordinates that its automatic bounds check needs; "
                         f"derive it by slicing, dividing, composing or partitioning, or mark it with "
                         f"cute.experimental.predicated_tensor_origin")
    return c, c.engine.bounds


def bound_flags(tensors: Any, what: str) -> Optional[list]:
    """Per element (in index order) of the tensors (of one size): whether each one's origin coordinate is
    inside its origin's shape (True/False when static, else one kernel condition); None when none of
    them has an origin."""
    from ...kernel.frontend.control import elem_less

    bounded = [b for b in (_bounded(x, what) for x in tensors if isinstance(x, Tensor)) if b is not None]
    if not bounded:
        return None
    n = it.product(tensors[0].layout.shape)
    bounds = tuple(b for _, b in bounded)
    return [elem_less(tuple(c[i] for c, _ in bounded), bounds) for i in range(n)]


def _predicated_copy(atom: Any, src: Any, dst: Any, what: str) -> None:
    import cutelab

    flags = bound_flags((src, dst), what)
    if flags is None or all(f is True for f in flags):
        cutelab.copy(atom, src, dst)
    else:
        cutelab.copy(atom, src, dst, pred=_Flags(flags))


def _experimental_kernel(fn: Optional[Callable] = None, **options: Any) -> Any:
    """``@cute.experimental.kernel``: a ``@cute.kernel`` whose tensor arguments are origins, so that
    ``cute.experimental.copy`` bounds every copy out of their views by their shapes."""
    from ...kernel.launch.api import Kernel

    class ExperimentalKernel(Kernel):
        def traced_fn(self) -> Callable:
            inner = super().traced_fn()

            def traced(**args: Any) -> Any:
                return inner(**{k: origin(v) for k, v in args.items()})

            return traced

    if fn is None:
        return lambda f: ExperimentalKernel(f, options.get("interpret"))
    return ExperimentalKernel(fn, options.get("interpret"))


def _allocate(type: Any, address_space: Any, layout: Any, alignment: Any = 16, is2cta: bool = False,
              loc: Any = None, ip: Any = None) -> Tensor:
    """``cute.experimental.allocate``: a register (``rmem``) or shared-memory (``smem``) tensor of the layout."""
    import cutelab

    space = str(getattr(address_space, "value", address_space))
    if is2cta:
        raise TraceError("cute.experimental.allocate(is2cta=True): tensor memory spanning a CTA pair is SM100's; "
                         "cutelab does not support it here")
    if space == "rmem":
        return cutelab.make_rmem_tensor(layout, type)
    if space == "smem":
        from ...utils.smem_allocator import SmemAllocator

        align = int(getattr(alignment, "value", alignment) or 16)
        return SmemAllocator().allocate_tensor(type, layout, byte_alignment=max(align, 16))
    raise TraceError(f"cute.experimental.allocate: address space {space} is not supported (rmem or smem)")


def _partition(buffer: Tensor, agent_id: Any, *, layout_tv: Layout, tiler: Any, loc: Any = None,
               ip: Any = None) -> Tensor:
    """``cute.experimental.partition``: agent ``agent_id``'s share of buffer, tiled by tiler, the tile read
    through layout_tv (thread, value) -> tile offset; the result is (values, tiles)."""
    import cutelab

    if not isinstance(buffer, Tensor):
        raise TraceError(f"cute.experimental.partition: expected a Tensor, got {type(buffer).__name__}")
    tv = cutelab.composition(cutelab.zipped_divide(buffer, tiler), (layout_tv, None))
    return tv[((agent_id, None), None)]


def _copy(src: Tensor, dst: Tensor, *, copy_atom: Any, loc: Any = None, ip: Any = None) -> None:
    """``cute.experimental.copy``: cute.copy with the atom, every element outside its origin's shape left alone."""
    _predicated_copy(copy_atom, src, dst, "cute.experimental.copy")


def _simt_auto_vec_copy(src: Tensor, dst: Tensor, async_op: bool = False, loc: Any = None, ip: Any = None) -> None:
    """``cute.experimental.simt_auto_vec_copy``: one thread's element-wise copy, bounded as ``copy``."""
    import cutelab

    from ...nvgpu.universal_copy import CopyUniversalOp

    atom = cutelab.make_copy_atom(CopyUniversalOp(), src.element_type)
    _predicated_copy(atom, src, dst, "cute.experimental.simt_auto_vec_copy")


def _partition_and_copy(tiled_copy: Any, src: Tensor, dst: Tensor, *, loc: Any = None, ip: Any = None) -> None:
    """``cute.experimental.partition_and_copy``: the thread's share of the non-register operands by the tiled
    copy's layouts, then a bounded copy."""
    import cutelab

    tid = tiled_copy.thr_idx
    parts = []
    for x, tv in ((src, tiled_copy.layout_src_tv_tiled), (dst, tiled_copy.layout_dst_tv_tiled)):
        if str(x.memspace) == "rmem":
            parts.append(x)
        else:
            parts.append(_partition(x, tid, layout_tv=tv, tiler=tiled_copy.tiler_mn))
    atom = cutelab.make_copy_atom(tiled_copy.op, src.element_type)
    _predicated_copy(atom, parts[0], parts[1], "cute.experimental.partition_and_copy")


def _predicated_tensor_origin(tensor: Tensor, *, loc: Any = None, ip: Any = None) -> Tensor:
    """``cute.experimental.predicated_tensor_origin``: tensor as the origin of its views' automatic bounds."""
    return origin(tensor)


def namespace() -> Dict[str, Any]:
    import cutelab

    return {
        "kernel": _experimental_kernel,
        "jit": cutelab.jit,
        "compile": cutelab.compile,
        "allocate": _allocate,
        "partition": _partition,
        "copy": _copy,
        "simt_auto_vec_copy": _simt_auto_vec_copy,
        "partition_and_copy": _partition_and_copy,
        "predicated_tensor_origin": _predicated_tensor_origin,
    }
