"""Layouts whose extents or strides are runtime values, and tensors over them at runtime addresses.

``cute.make_layout((m, k, 1), stride=(s_m, s_k, 0))`` in a kernel, with ``m``, ``k``, ``s_m``, ``s_k``
integers the kernel read from memory (a grouped GEMM's per-group extents and strides), is a layout
CuTe DSL keeps in registers. cutelab's ``Layout`` is static (its algebra runs at trace time), so such
a layout is a ``RuntimeLayout``: a tuple of extents and a congruent one of strides (nested, as
``tile_to_shape`` of a scale-factor atom onto a runtime extent makes), each leaf an int or a traced
integer. What it supports:

- ``.shape``, ``.stride``, ``rank``, ``cute.size``-like ``size()`` (a traced product);
- ``cute.make_tensor(ptr, layout)`` with a pointer at a runtime address (kernel/instr/
  address_access.py): a ``RuntimeTensor``, whose ``[coordinate]`` with one integer per leaf mode reads and
  writes an element (offset = sum of coordinate * stride, computed in registers), and which
  ``cpasync.update_tma_descriptor`` takes (kernel/instr/tensormap.py reads its address, extents and
  strides).

Everything else (slicing, tiling, composing such a layout) is refused by name: the layout algebra
needs static layouts.
"""

from __future__ import annotations

from typing import Any, Tuple

import numpy as np

from ... import int_tuple as it
from ...errors import TraceError, user_location
from ...tensor import Tensor
from ..frontend.engines import GmemEngine
from ..frontend.trace import TraceValue
from ..ir.symbolic import is_sym

__all__ = ["RuntimeLayout", "RuntimeTensor", "runtime_layout", "runtime_tensor", "TMA_STAND_IN_EXTENT"]

#: the extent a runtime extent stands as when make_tiled_tma_atom builds an atom's static part in a kernel
TMA_STAND_IN_EXTENT = 1 << 16


def _leaf_ok(x: Any) -> bool:
    if isinstance(x, TraceValue):
        return len(x.refs) == 1 and x.dtype.is_integer
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


def _plain(x: Any) -> Any:
    """A cutlass integer constant (Int32(1)) as its int; a traced value as it is."""
    if isinstance(x, TraceValue) or isinstance(x, (int, np.integer)):
        return x
    v = getattr(x, "value", None)
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return int(v)
    return x


class RuntimeLayout:
    """A flat layout (extents, strides) whose entries are ints or traced integers."""

    def __init__(self, shape: Tuple[Any, ...], stride: Tuple[Any, ...]):
        self.shape, self.stride = shape, stride

    def __len__(self) -> int:
        return len(self.shape)

    @property
    def rank(self) -> int:
        return len(self.shape)

    def size(self) -> Any:
        n: Any = 1
        for e in it.flatten_to_tuple(self.shape):
            n = n * e
        return n

    @property
    def flat(self) -> bool:
        return all(not isinstance(e, tuple) for e in self.shape)

    def offset_of(self, coord: Any) -> Any:
        """The element offset of a full coordinate (one integer per mode)."""
        from ...numeric import Int32
        from ..frontend.trace import _index_value
        from ..ir.symbolic import is_sym

        c = it.flatten_to_tuple(coord) if isinstance(coord, tuple) else (coord,)
        c = tuple(_index_value(x, Int32) if is_sym(x) else x for x in c)  # a thread-index expression: its value
        leaves = it.flatten_to_tuple(self.stride)
        if len(c) != len(leaves) or not all(_leaf_ok(_plain(x)) for x in c):
            raise TraceError(f"a tensor over a layout with runtime extents {self} takes one integer per (leaf) mode, "
                             f"got {coord!r} (at {user_location()}); slicing it needs a static layout")
        off: Any = 0
        for x, s in zip(c, leaves):
            x = _plain(x)
            if isinstance(s, int) and s == 0 or isinstance(x, int) and x == 0:
                continue
            off = off + x * s
        return off

    def __str__(self) -> str:
        def f(t: Tuple[Any, ...]) -> str:
            return "(" + ",".join(f(x) if isinstance(x, tuple) else "?" if isinstance(x, TraceValue) else str(x)
                                  for x in t) + ")"

        return f"{f(self.shape)}:{f(self.stride)}"

    __repr__ = __str__

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise TraceError(f"layout {self} (with extents or strides known only when the kernel runs): .{name} is not "
                         f"supported in cutelab, whose layout algebra needs static layouts (at {user_location()})")


def runtime_layout(shape: Any, stride: Any) -> Any:
    """make_layout(shape, stride=stride) in a kernel when an entry is a traced integer: a RuntimeLayout,
    or None when no entry is traced (make_layout goes on)."""
    sh = shape if isinstance(shape, tuple) else (shape,)
    if stride is None:
        return None
    st = stride if isinstance(stride, tuple) else (stride,)
    psh, pst = tuple(_plain(x) for x in sh), tuple(_plain(x) for x in st)
    if not any(isinstance(x, TraceValue) for x in it.flatten_to_tuple(psh + pst)):
        from ...dynamic import DynInt

        def static(x: Any) -> Any:  # a cutlass integer constant (Int32(1) in a kernel) as its int
            if type(x) is int or isinstance(x, (DynInt, bool)) or is_sym(x):
                return x
            return int(x) if isinstance(x, (int, np.integer)) else x

        csh, cst = tuple(static(x) for x in psh), tuple(static(x) for x in pst)
        if any(c is not x for c, x in zip(csh + cst, psh + pst)):
            # (CUTLASS's MoE kernels rewrite a tensor's shape with Int32(1) for a mode of one element)
            from ...layout import make_layout

            return make_layout(csh if isinstance(shape, tuple) else csh[0],
                               stride=cst if isinstance(stride, tuple) else cst[0])
        return None
    sh, st = tuple(_plain_tree(x) for x in sh), tuple(_plain_tree(x) for x in st)
    fsh, fst = it.flatten_to_tuple(sh), it.flatten_to_tuple(st)
    if not it.congruent(sh, st) or not all(_leaf_ok(x) for x in fsh + fst):
        raise TraceError(f"make_layout({shape}, stride={stride}) with runtime entries: cutelab takes a shape and a "
                         f"congruent stride of integers (ints or traced integers), one stride per extent (at "
                         f"{user_location()})")
    return RuntimeLayout(sh, st)


def _plain_tree(x: Any) -> Any:
    return tuple(_plain_tree(e) for e in x) if isinstance(x, tuple) else _plain(x)


class RuntimeTensor:
    """A tensor at a runtime address over a RuntimeLayout: element access and the TMA descriptor update."""

    def __init__(self, ptr: Any, layout: RuntimeLayout):
        self.iterator, self.layout = ptr, layout
        self.made_at = user_location() or "an unknown line"

    @property
    def engine(self) -> Any:
        return self.iterator.engine

    @property
    def offset(self) -> Any:
        return self.iterator.offset

    @property
    def element_type(self) -> Any:
        return self.iterator.engine.dtype

    @property
    def shape(self) -> Tuple[Any, ...]:
        return self.layout.shape

    @property
    def stride(self) -> Tuple[Any, ...]:
        return self.layout.stride

    @property
    def memspace(self) -> str:
        return self.iterator.engine.memspace

    def __getitem__(self, coord: Any) -> Any:
        return self.engine.read_one(self.offset + self.layout.offset_of(coord))

    def tma_stand_in(self) -> Any:
        """For ``make_tiled_tma_atom`` of this tensor in a kernel (a descriptor the kernel builds, as CUTLASS's MoE
        GEMMs build one per expert): a tensor over a static layout of the same modes that stands in for it, each
        runtime extent as ``TMA_STAND_IN_EXTENT`` and each runtime stride as a multiple of 16 bytes past every
        other mode (in mode order), so that the atom's static part (box, swizzle, dimension order) is the one a
        tensor of these modes gets; the descriptor's address, extents and strides are this tensor's, written
        when the kernel runs (kernel/instr/tensormap.py)."""
        from ...layout import Layout
        from ...tensor import Tensor

        from ...dynamic import DynInt

        if not self.layout.flat:
            raise TraceError(f"make_tiled_tma_atom in a kernel of a tensor over the nested layout with runtime extents "
                             f"{self.layout} (made at {self.made_at}) is not supported by cutelab (flat ones are)")
        bits = self.element_type.width
        shape = tuple(TMA_STAND_IN_EXTENT if isinstance(e, TraceValue) else int(e) for e in self.shape)
        # a dynamic stride (a DynInt: a kernel argument's, known when cutelab traces) is a runtime one to CuTe DSL
        # (a mode of one element moves along no stride: its stride stands as 0, as a host tensor's Int32(0) of such a
        # mode, a DynInt, is; so the atom drops that mode as the host's atom of the same tensor does)
        stride = [0 if not isinstance(e, TraceValue) and int(e) == 1 else
                  None if isinstance(d, (TraceValue, DynInt)) else int(d) for e, d in zip(self.shape, self.stride)]
        top = max([abs(d) * e for d, e in zip(stride, shape) if d is not None] + [1])
        unit = max(1, 128 // bits)  # 16 bytes in elements
        for i, d in enumerate(stride):
            if d is None:
                stride[i] = -(-top // unit) * unit
                top = stride[i] * shape[i]
        return Tensor(self.engine, Layout._raw(shape, tuple(stride)), 0, _checked=True)

    def tma_modes(self, desc: Any, stand_in: Any) -> Tuple[int, ...]:
        """The mode of this tensor each TMA dimension of desc (made for ``stand_in``) is: the stand-in mode of
        that extent and byte stride (each is one mode's: the stand-in's runtime strides are distinct)."""
        bits = self.element_type.width
        shp, std = stand_in.layout.shape, stand_in.layout.stride
        out = []
        ones = [m for m in range(len(shp)) if shp[m] == 1]  # a mode of one element: its stride does not matter
        for k, (e, s) in enumerate(zip(desc.dims, desc.strides)):
            cand = [m for m in range(len(shp)) if shp[m] == e and (max(1, std[m] * bits // 8) == s or k == 0 and
                                                                   std[m] == 1)]
            if e == 1 and len(cand) != 1:
                cand = [m for m in ones if m not in out][:1]
            if len(cand) != 1:
                raise TraceError(f"make_tiled_tma_atom of a tensor over a layout with runtime extents {self.layout} in a "
                                 f"kernel: cutelab cannot tell which mode TMA dimension {k} is (at {user_location()})")
            out.append(cand[0])
        return tuple(out)

    def __setitem__(self, coord: Any, value: Any) -> None:
        self.engine.write_one(self.offset + self.layout.offset_of(coord), value)

    def __str__(self) -> str:
        return f"tensor<{self.iterator} o {self.layout}>"

    def __repr__(self) -> str:  # what an operation that needs a static layout names when it refuses one
        return (f"<a tensor over a layout with runtime extents {self.layout}, made at {self.made_at}: only its "
                f"elements and update_tma_descriptor take it in cutelab>")


def runtime_tensor(ptr: Any, layout: Any) -> Any:
    """make_tensor(ptr, layout) for a RuntimeLayout: a RuntimeTensor (the pointer must be at a runtime
    address, or be a kernel argument's global memory); None for other layouts."""
    from ...tensor import Pointer
    from .address_access import AddressEngine

    if not isinstance(layout, RuntimeLayout):
        return None
    from ..frontend.engines import GmemEngine, SmemEngine

    eng = getattr(ptr, "engine", None)
    if not isinstance(ptr, Pointer) or not (isinstance(eng, AddressEngine) or (
            isinstance(eng, GmemEngine) and not isinstance(eng, SmemEngine) and eng.tma_dims is None)):
        raise TraceError(f"make_tensor({ptr}, {layout}): a layout with runtime extents takes a pointer made from a "
                         f"runtime address (cute.make_ptr of an Int64) or into a kernel argument's global memory in "
                         f"cutelab (at {user_location()})")
    if isinstance(eng, AddressEngine):
        return RuntimeTensor(ptr, layout)
    return _tma_view(RuntimeTensor(ptr, layout))


class TmaOnlyEngine(GmemEngine):
    """The global memory of a kernel argument seen through a tensor whose extents are runtime values
    (``_tma_view``): TMA copies read and write it (their descriptor bounds them); element loads and stores
    are refused, since the view's extents are only bounds."""

    def __init__(self, base: GmemEngine, made_at: str):
        super().__init__(base.param, base.address, base.memspace)
        self.made_at = made_at

    def _refuse(self, what: str) -> Any:
        raise TraceError(f"{what} of a tensor over a layout with runtime extents (made at {self.made_at}): cutelab "
                         f"moves such a tensor by TMA only (its extents bound a TMA descriptor); at {user_location()}")

    def load(self, offset: Any, layout: Any) -> Any:
        return self._refuse("a load")

    def store(self, offset: Any, layout: Any, value: Any) -> None:
        self._refuse("a store")

    def read_one(self, off: Any) -> Any:
        return self._refuse("an element read")

    def write_one(self, off: Any, v: Any) -> None:
        self._refuse("an element write")


class BoundedRuntimeTensor(Tensor):
    """``_tma_view``'s tensor: a Tensor whose ``runtime`` is the RuntimeTensor it bounds."""

    def tma_stand_in(self) -> Any:
        return self.runtime.tma_stand_in()

    def tma_modes(self, desc: Any, stand_in: Any) -> Any:
        return self.runtime.tma_modes(desc, stand_in)


def _tma_view(rt: RuntimeTensor) -> Any:
    """A tensor over a kernel argument's global memory with runtime extents (CUTLASS's MoE kernels: an expert's
    rows of the tokens' tensor): a Tensor over a static layout in which each runtime extent is a bound (the
    extents the argument's memory has room for along that stride; a DynInt, so that tiles over it stay
    dynamic), over a TmaOnlyEngine, so that the layout algebra (domain_offset, local_tile, partitions) and TMA
    copies take it; ``runtime`` keeps the tensor itself, which make_tiled_tma_atom and the descriptor
    update read."""
    from ...dynamic import DynInt
    from ...layout import make_layout
    from ...numeric import Int32

    eng = rt.engine
    shape = []
    for e, d in zip(it.flatten_to_tuple(rt.layout.shape), it.flatten_to_tuple(rt.layout.stride)):
        if isinstance(d, TraceValue):
            raise TraceError(f"make_tensor({rt.iterator}, {rt.layout}): a stride computed in the kernel is not "
                             f"supported by cutelab for a tensor in a kernel argument's memory (at {rt.made_at})")
        if isinstance(e, TraceValue):
            e = DynInt(max(1, len(eng) // max(1, abs(int(d)))), Int32, track=False)
        shape.append(e)
    lay = make_layout(it.unflatten(tuple(shape), rt.layout.shape), stride=rt.layout.stride)
    view = BoundedRuntimeTensor(TmaOnlyEngine(eng, rt.made_at), lay, rt.offset, _checked=True)
    view.runtime = rt
    return view
