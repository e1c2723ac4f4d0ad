"""``cutlass.Array`` and ``cutlass.Pointer``: the typed arrays and raw pointers of CuTe DSL's
low-level API (``cutlass.experimental.primitives`` takes them), over cutelab's kernel tensors.

- ``cutlass.Array(dtype, shape, space=cutlass.AddressSpace.smem, alignment=...)`` inside a
  ``@cute.kernel`` allocates shared memory (one ``SmemAllocator`` tensor; ``space=rmem``: a
  register tensor). The array is row-major: ``a[i, j]``, ``a[i] = v``, ``a.subview(k)`` (the array
  from element ``k`` on), ``a.data_ptr(k)`` (a ``Pointer`` to element ``k``).
- ``tensor.iterator.raw_ptr()`` and ``a.data_ptr()`` are ``Pointer``s: ``p + k``, ``p[i]``,
  ``p.load()`` (one element), ``p.load(count=n)`` (a vector of n), ``p.store(v)``,
  ``p.masked_load(mask)``, ``p.masked_store(v, mask)``.
- A kernel argument annotated ``cutlass.Array`` is the tensor passed, seen as an Array
  (``as_array``): the primitives and the methods above take either.

Every operation lowers to cutelab's tensor loads and stores, so both back ends run them. What is
not supported (a dynamic-shape allocation, a pointer into another CTA's shared memory read
element by element, ...) is a TraceError naming the operation.
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

from ...errors import TraceError

__all__ = ["Array", "Pointer", "as_array", "as_pointer", "cute_pointer", "make_array_view"]


def _prod(shape: Tuple[int, ...]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def _row_major(shape: Tuple[int, ...]) -> Tuple[int, ...]:
    st, acc = [], 1
    for s in reversed(shape):
        st.append(acc)
        acc *= s
    return tuple(reversed(st))


def _index(k: Any) -> Any:
    """An element offset added to a pointer: a value in a register (an Int32 computed in the kernel) is
    read as an index at run time (TraceValue.as_index), as a tensor's coordinate is."""
    from ...kernel.frontend.trace import TraceValue

    return k.as_index() if isinstance(k, TraceValue) else k


def _start_count(sl: slice, what: str) -> Tuple[Any, int]:
    if sl.step is not None:
        raise TraceError(f"{what}: a step is not supported (CuTe DSL's slice is start:count)")
    return (0 if sl.start is None else sl.start), _count(sl.stop, what)


def _count(n: Any, what: str) -> int:
    v = getattr(n, "value", n)
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise TraceError(f"{what}: the element count must be a positive compile-time int, got {n!r}")
    return int(v)


def _elements(value: Any) -> list:
    if hasattr(value, "elements") and callable(value.elements):
        return list(value.elements())
    if isinstance(value, (tuple, list)):
        return list(value)
    if isinstance(value, Array):
        return [value[i] for i in range(_prod(value.shape))]
    refs = getattr(value, "refs", None)
    if refs is not None and len(refs) > 1:  # a kernel value of several elements (a TensorSSA)
        return [value[i] for i in range(len(refs))]
    return [value]


def _mask_at(mask: Any, i: int) -> Any:
    if hasattr(mask, "elements") and callable(mask.elements):
        return mask.elements()[i]
    return mask[i]


def _when(cond: Any, fn: Any, what: str) -> None:
    """fn() where cond holds: at once for a static condition, else inside a runtime branch."""
    from ...kernel.frontend.control import _cond_ref
    from ...kernel.frontend.trace import current

    if isinstance(cond, (bool, int)):
        if cond:
            fn()
        return
    t = current(what)
    op = t.begin_if(_cond_ref(t, cond, t.where()))
    outer, t.cur = t.cur, op.then
    try:
        fn()
    finally:
        t.cur = outer


def _space_name(space: Any) -> str:
    return str(getattr(space, "value", space)).split(".")[-1]


class Pointer:
    """``cutlass.Pointer``: a typed raw pointer inside a kernel (an element offset into a tensor's
    memory). ``peer`` is the CTA rank of the cluster it points into, after ``prims.mapa``."""

    def __new__(cls, ptr: Any = None, dtype: Any = None, *args: Any, **kwargs: Any) -> Any:
        of = getattr(type(ptr), "cutlass_pointer", None)
        if of is not None:  # cutlass.Pointer(tmap.get_ptr(), dtype=Int64): the map's words (tensor_map.py)
            return of(ptr, dtype)
        return super().__new__(cls)

    def __init__(self, ptr: Any, dtype: Any = None, peer: Any = None, granule: int = 0, **kwargs: Any):
        if isinstance(ptr, Pointer):  # cutlass.Pointer(p, dtype=...) of a cutlass.Pointer
            if dtype is not None and dtype.width != ptr.dtype.width:
                raise TraceError(f"cutlass.Pointer({ptr!r}, dtype={dtype}): cutelab reads a pointer as elements of its "
                                 f"own width ({ptr.dtype}); recast the tensor instead")
            ptr, peer, granule = ptr.ptr, ptr.peer, ptr.granule
        self.ptr = ptr  # a cutelab.tensor.Pointer
        self.dtype = dtype if dtype is not None else ptr.element_type
        self.peer = peer
        self.granule = granule  # bytes: from cutlass.apply_swizzle, one access within one swizzle granule

    # -- arithmetic
    def __add__(self, k: Any) -> "Pointer":
        if self.granule and not (isinstance(k, int) and k == 0):
            raise TraceError(f"cutlass.Pointer + {k!r}: on a pointer from cutlass.apply_swizzle (the swizzle of p + k "
                             f"is not the swizzled p plus k); add to the unswizzled pointer, then swizzle")
        return Pointer(self.ptr + _index(k), self.dtype, self.peer)

    __radd__ = __add__

    def __sub__(self, k: Any) -> "Pointer":
        return Pointer(self.ptr + (-_index(k)), self.dtype, self.peer)

    @property
    def memspace(self) -> Any:
        return self.ptr.memspace

    @property
    def alignment(self) -> int:
        return self.ptr.alignment

    # -- shared-memory swizzles of byte addresses (cutlass.Swizzle: swizzle.py)
    def apply_swizzle(self, swizzle: Any, *, loc: Any = None, ip: Any = None) -> "Pointer":
        from .swizzle import apply_swizzle

        return apply_swizzle(self, swizzle)

    def load_swizzled(self, swizzle: Any, alignment: Optional[int] = None, *, count: Optional[int] = None,
                      loc: Any = None, ip: Any = None) -> Any:
        from .swizzle import load_swizzled

        return load_swizzled(self, swizzle, alignment, count=count)

    def store_swizzled(self, value: Any, swizzle: Any, alignment: Optional[int] = None, *, loc: Any = None,
                       ip: Any = None) -> None:
        from .swizzle import store_swizzled

        store_swizzled(self, value, swizzle, alignment)

    def toint(self, dtype: Any = None, *, loc: Any = None, ip: Any = None) -> Any:
        """The address as an integer (``cutelab.address.PointerInt``): of type ``dtype`` (CuTe DSL's
        default: Int64; a shared-memory address is an Int32)."""
        from ...address import PointerInt
        from ...numeric import Int32, Int64

        if self.peer is not None:
            raise TraceError("cutlass.Pointer.toint(): of a pointer into another CTA's shared memory (prims.mapa) is "
                             "not supported in cutelab")
        a = self.ptr.toint()
        if dtype is None or not isinstance(a, PointerInt):
            return a
        if dtype not in (Int32, Int64):
            raise TraceError(f"cutlass.Pointer.toint({dtype}): an address is an Int64 (or an Int32 for shared memory)")
        return PointerInt(a.ptr, a.delta, Int32 if str(self.memspace) == "smem" else dtype)

    def tospace(self, space: Any, *, loc: Any = None, ip: Any = None) -> "Pointer":
        """The pointer in address space ``space`` (CuTe DSL's ``llvm.addrspacecast``): the same memory (a
        cutelab pointer is its memory and an offset). As in CuTe DSL, one of the two spaces must be generic."""
        target = _space_name(space)
        here = str(self.memspace)
        if target != here and "generic" not in (target, here):
            raise ValueError(f"cutlass.Pointer.tospace({target}) of a {here} pointer: cannot cast from non-generic "
                             f"memory space to another non-generic memory space")
        return self

    def raw_ptr(self, *, loc: Any = None, ip: Any = None) -> "Pointer":
        return self

    # -- memory
    def _tensor(self, n: int, what: str) -> Any:
        from ...layout import make_layout
        from ...tensor import Tensor

        if self.peer is not None:
            raise TraceError(f"cutlass.Pointer.{what}: through a pointer into another CTA's shared memory (prims.mapa) "
                             f"cutelab's kernels load one element at a time; vector loads and stores are not supported")
        if self.granule:
            nb = n * self.dtype.width // 8
            if nb > self.granule or self.ptr.engine.alignment(self.ptr.offset) < min(nb, self.granule):
                raise TraceError(f"cutlass.Pointer.{what}: {n} elements through a pointer from cutlass.apply_swizzle "
                                 f"must lie in one {self.granule}-byte swizzle granule, aligned; use load_swizzled / "
                                 f"store_swizzled for wider accesses")
        return Tensor(self.ptr.engine, make_layout(n), self.ptr.offset)

    def load(self, *, count: Optional[int] = None, alignment: Optional[int] = None, loc: Any = None,
             ip: Any = None, **kwargs: Any) -> Any:
        """One element (count None) or a vector of ``count`` consecutive elements. Through a pointer
        from ``prims.mapa``: one element of that CTA's shared memory (``ld.shared::cluster``)."""
        if self.peer is not None and count is None:
            from ...kernel.instr.cluster import dsmem_load

            return dsmem_load(self.ptr, self.peer, "cutlass.Pointer.load (prims.mapa pointer)")
        if count is None:
            return self._tensor(1, "load")[0]
        if not isinstance(count, int) or count < 1:
            raise TraceError(f"cutlass.Pointer.load(count={count!r}): count must be a positive int")
        return self._tensor(count, "load").load()

    def store(self, value: Any, *, alignment: Optional[int] = None, loc: Any = None, ip: Any = None,
              **kwargs: Any) -> None:
        """Store one element, or a vector (its elements at consecutive addresses)."""
        from .vector import Vector

        if isinstance(value, Vector):
            vals = value.elements()
            t = self._tensor(len(vals), "store")
            for i, v in enumerate(vals):
                t[i] = v
            return
        shape = getattr(value, "shape", ())
        n = _prod(tuple(_flat(shape))) if shape not in ((), None) else 0
        if n == 0:
            t = self._tensor(1, "store")
            t[0] = value
        else:
            self._tensor(n, "store").store(value)

    def masked_load(self, mask: Any, *, other: Any = None, alignment: Optional[int] = None, loc: Any = None,
                    ip: Any = None, **kwargs: Any) -> Any:
        """The elements where mask (a static tuple of bools, or a cutlass.Vector of them) is true; the
        others are ``other`` (0 by default)."""
        bits = _static_mask(mask, "cutlass.Pointer.masked_load")
        vals = [self._tensor(len(bits), "masked_load")[i] if b else (0 if other is None else other)
                for i, b in enumerate(bits)]
        return _vector(vals, self.dtype)

    def masked_store(self, value: Any, mask: Any, *, alignment: Optional[int] = None, loc: Any = None,
                     ip: Any = None, **kwargs: Any) -> None:
        bits = _static_mask(mask, "cutlass.Pointer.masked_store")
        t = self._tensor(len(bits), "masked_store")
        vals = value.elements() if hasattr(value, "elements") else [value[i] for i in range(len(bits))]
        for i, b in enumerate(bits):
            if b:
                t[i] = vals[i]

    def __getitem__(self, i: Any) -> Any:
        return (self + i).load()

    def __setitem__(self, i: Any, v: Any) -> None:
        (self + i).store(v)

    def __repr__(self) -> str:
        return f"cutlass.Pointer({self.ptr}{'' if self.peer is None else f', cta {self.peer}'})"


def _flat(shape: Any) -> list:
    if isinstance(shape, int):
        return [shape]
    out = []
    for s in shape:
        out += _flat(s)
    return out


def _static_mask(mask: Any, what: str) -> list:
    vals = getattr(mask, "_cl_elements", None)
    if vals is None:
        vals = list(mask) if isinstance(mask, (tuple, list)) else None
    if vals is None or not all(isinstance(v, (bool, int)) for v in vals):
        raise TraceError(f"{what}: the mask must be static (a tuple of bools or cutlass.Vector.from_elements of "
                         f"them); got {mask!r}")
    return [bool(v) for v in vals]


def _vector(vals: list, dtype: Any) -> Any:
    from .vector import Vector

    return Vector.from_elements(tuple(vals), dtype)


class Array:
    """``cutlass.Array``: a row-major array of ``dtype`` over a 1-D cutelab tensor ``flat``."""

    def __new__(cls, dtype: Any = None, shape: Any = None, *args: Any, space: Any = None, **kwargs: Any) -> Any:
        if isinstance(dtype, Array):
            return dtype
        if space is None and "_flat" in kwargs:
            return super().__new__(cls)
        return _allocate(dtype, shape, space, kwargs)

    def __init__(self, *args: Any, _flat: Any = None, _shape: Any = None, **kwargs: Any) -> None:
        if _flat is not None:
            self.flat = _flat
            self._shape = tuple(_shape)

    @classmethod
    def _view(cls, flat: Any, shape: Tuple[int, ...]) -> "Array":
        return cls(_flat=flat, _shape=shape)

    @staticmethod
    def _cl_kernel_arg(x: Any) -> Any:
        """A kernel argument annotated ``cutlass.Array``: the tensor passed, seen as an Array (kernel/launch/
        plan.py calls this); anything else stays as it is."""
        from ...tensor import Tensor

        return as_array(x) if isinstance(x, Tensor) else x

    # -- what it is
    @property
    def dtype(self) -> Any:
        return self.flat.element_type

    @property
    def shape(self) -> Tuple[int, ...]:
        return self._shape

    @property
    def strides(self) -> Tuple[int, ...]:
        return _row_major(self._shape)

    @property
    def space(self) -> Any:
        from ...runtime import AddressSpace

        return AddressSpace(self.flat.memspace) if self.flat.memspace in AddressSpace.__members__ else \
            self.flat.memspace

    @property
    def iterator(self) -> Any:
        return self.flat.iterator

    # -- elements
    def _index(self, idx: Any) -> Any:
        if not isinstance(idx, tuple):
            idx = (idx,)
        if len(idx) == 1:
            return idx[0]
        if len(idx) != len(self._shape):
            raise TraceError(f"cutlass.Array{list(self._shape)}: index {idx!r} has {len(idx)} coordinates")
        off = 0
        for c, s in zip(idx, self.strides):
            off = off + c * s
        return off

    def _sliced(self, idx: tuple, what: str) -> Any:
        """``arr[i, j:count]`` (a trailing start:count after indices): (start index tuple, count); or
        ``arr[i, :]`` (indices, then whole dimensions): the row-major sub-array, as (view, None)."""
        k = 0
        while k < len(idx) and not isinstance(idx[k], slice):
            k += 1
        head, rest = idx[:k], idx[k:]
        if len(idx) > len(self._shape):
            raise IndexError(f"{what}: {len(idx)} indices for an array of {len(self._shape)} dimensions")
        if len(rest) == 1 and rest[0].start is not None and rest[0].stop is not None:
            start, count = _start_count(rest[0], what)
            return head + (start,) + (0,) * (len(self._shape) - len(idx)), count
        if all(r.start is None and r.stop is None and r.step is None for r in rest):
            off = self._index(head + (0,) * (len(self._shape) - k)) if k else 0
            return self.subview(off, self._shape[k:]), None
        raise TraceError(f"{what}: cutelab's Arrays are row-major views; it takes indices followed by whole "
                         f"dimensions (arr[i, :]) or one trailing start:count (arr[i, j:n]), got {idx!r}")

    def __getitem__(self, idx: Any) -> Any:
        if isinstance(idx, slice):  # arr[start:count]: count elements from start, a Vector (CuTe DSL's form)
            start, count = _start_count(idx, "cutlass.Array[start:count]")
            return self.load(start, count)
        if isinstance(idx, tuple) and any(isinstance(i, slice) for i in idx):
            at, count = self._sliced(idx, "cutlass.Array[...]")
            return at if count is None else self.load(at, count)
        return self.flat[_index(self._index(idx))]

    def __setitem__(self, idx: Any, value: Any) -> None:
        if isinstance(idx, slice):
            start, count = _start_count(idx, "cutlass.Array[start:count] =")
            self.store(value, start, count)
            return
        if isinstance(idx, tuple) and any(isinstance(i, slice) for i in idx):
            at, count = self._sliced(idx, "cutlass.Array[...] =")
            if count is None:
                at.store(value)
            else:
                self.store(value, at, count)
            return
        self.flat[_index(self._index(idx))] = value

    def subview(self, offset: Any, shape: Any = None, *, loc: Any = None, ip: Any = None) -> "Array":
        """The array from element ``offset`` (a flat, row-major index) on."""
        from ...layout import make_layout
        from ...tensor import Tensor

        n = _prod(self._shape)
        if shape is None:
            rest = n - offset if isinstance(offset, int) else n
            shape = (max(rest, 1),)
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        t = Tensor(self.flat.engine, make_layout(_prod(shape)), self.flat.offset + _index(offset))
        return Array._view(t, shape)

    def data_ptr(self, offset: Any = 0, *, loc: Any = None, ip: Any = None) -> Pointer:
        """A Pointer to element ``offset`` (flat, row-major)."""
        return Pointer(self.flat.iterator + _index(offset), self.dtype)

    def ir_value(self, *, loc: Any = None, ip: Any = None) -> Pointer:
        """The array's MLIR value in CuTe DSL (an ``!llvm.ptr`` to its first element): its Pointer here,
        what cutelab's dialect operations (``llvm.addrspacecast``) and the primitives take."""
        return self.data_ptr()

    def load(self, idx: Any = None, vector_size: Any = None, *, alignment: Any = None, is_volatile: bool = False,
             is_nontemporal: bool = False, is_invariant: bool = False, is_invariant_group: bool = False,
             loc: Any = None, ip: Any = None, **kwargs: Any) -> Any:
        """``arr.load()``: the whole array (a TensorSSA); ``arr.load(i)``: element i; ``arr.load(i, n)``: n
        elements from i, a Vector. The cache hints (volatile, non-temporal, invariant) change no value in
        a program without data races; cutelab's loads are ordinary loads."""
        if idx is None and vector_size is None:
            return self.flat.load()
        start = _index(self._index(0 if idx is None else idx))
        if vector_size is None:
            return self.flat[start]
        return Pointer(self.flat.iterator + start, self.dtype).load(count=_count(vector_size, "cutlass.Array.load"))

    def store(self, value: Any, idx: Any = None, vector_size: Any = None, *, alignment: Any = None,
              is_volatile: bool = False, is_nontemporal: bool = False, loc: Any = None, ip: Any = None,
              **kwargs: Any) -> None:
        """``arr.store(v)``: the whole array; ``arr.store(v, i)``: element i (a Vector or tuple: its elements
        from i on); ``arr.store(v, i, n)``: n elements from i (a scalar is broadcast)."""
        if idx is None and vector_size is None:
            self.flat.store(value)
            return
        start = _index(self._index(0 if idx is None else idx))
        vals = _elements(value)
        if vector_size is not None:
            n = _count(vector_size, "cutlass.Array.store")
            vals = vals * n if len(vals) == 1 else vals
            if len(vals) != n:
                raise TraceError(f"cutlass.Array.store: {len(vals)} values for vector_size={n}")
        p = Pointer(self.flat.iterator + start, self.dtype)
        for i, v in enumerate(vals):
            p[i] = v

    def masked_load(self, idx: Any, count: Any, mask: Any, default: Any = None, *, alignment: Any = None,
                    is_volatile: bool = False, is_nontemporal: bool = False, loc: Any = None, ip: Any = None) -> Any:
        """``count`` elements from ``idx`` as a Vector: element i is loaded where ``mask[i]`` (an Array or
        Vector of Booleans, static or computed in the kernel) is true, else ``default`` (0); a masked-off
        element is not read."""
        from ...tensor import make_rmem_tensor
        from ...layout import make_layout

        n = _count(count, "cutlass.Array.masked_load")
        start = _index(self._index(idx))
        regs = make_rmem_tensor(make_layout(n), self.dtype)
        p = Pointer(self.flat.iterator + start, self.dtype)
        for i in range(n):
            regs[i] = 0 if default is None else default
            _when(_mask_at(mask, i), lambda i=i: regs.__setitem__(i, p[i]), "cutlass.Array.masked_load")
        return _vector([regs[i] for i in range(n)], self.dtype)

    def masked_store(self, idx: Any, value: Any, mask: Any, *, alignment: Any = None, is_volatile: bool = False,
                     is_nontemporal: bool = False, loc: Any = None, ip: Any = None) -> None:
        """The elements of ``value`` from ``idx`` on where ``mask[i]`` is true; the others are not written."""
        vals = _elements(value)
        start = _index(self._index(idx))
        p = Pointer(self.flat.iterator + start, self.dtype)
        for i, v in enumerate(vals):
            _when(_mask_at(mask, i), lambda i=i, v=v: p.__setitem__(i, v), "cutlass.Array.masked_store")

    def print_runtime(self, max_elements: int = 16, *, loc: Any = None, ip: Any = None) -> None:
        """Print the array when the kernel runs, as CuTe DSL's ``Array.print_runtime``: a 1-D array as
        ``Array[n][Space=smem]: [a, b, ...]``, a 2-D one as ``Array[RxC]:`` and a line `` [i]: [...]``
        per row, at most ``max_elements`` per dimension, each element as ``%.1f`` (of its value as a
        Float32)."""
        from ...kernel.frontend.printing import printf
        from ...numeric import Float32

        def p(fmt: str, *args: Any) -> None:
            printf(fmt, *args, end="")

        def val(*idx: Any) -> Any:
            v = self[idx if len(idx) > 1 else idx[0]]
            return v if self.dtype.name == "f32" else Float32(v)

        shape, m = self._shape, int(max_elements)
        if len(shape) == 1:
            n = shape[0]
            p(f"Array[{n}][Space={str(self.flat.memspace).lower()}]: [")
            for i in range(min(n, m)):
                p("%.1f" if i == 0 else ", %.1f", val(i))
            p(", ...]\n" if n > m else "]\n")
        elif len(shape) == 2:
            rows, cols = shape
            p(f"Array[{rows}x{cols}]:\n")
            for i in range(min(rows, m)):
                p(f" [{i}]: [")
                for j in range(min(cols, m)):
                    p("%.1f" if j == 0 else ", %.1f", val(i, j))
                p(", ...]\n" if cols > m else "]\n")
            if rows > m:
                p(" ...\n")
        else:
            raise TraceError(f"cutlass.Array.print_runtime: cutelab prints 1-D and 2-D arrays, not shape {shape}")

    def __repr__(self) -> str:
        return f"cutlass.Array({self.dtype}, {self._shape}, {self.flat.memspace})"


def _allocate(dtype: Any, shape: Any, space: Any, kwargs: dict) -> Array:
    from ...layout import make_layout
    from ...numeric import is_numeric_type
    from ...kernel.frontend.trace import tracing

    if not is_numeric_type(dtype):
        raise TypeError(f"cutlass.Array: the element type must be a cutlass numeric type, got {dtype!r}")
    sp = "rmem" if space is None else _space_name(space)  # CuTe DSL's default space: registers
    bad = set(kwargs) - {"alignment", "bounds_check", "loc", "ip"}
    if bad:
        raise TypeError(f"cutlass.Array: keyword argument(s) {sorted(bad)} are not valid for space={sp}")
    if shape is None:
        raise ValueError(f"cutlass.Array(space={sp}) requires an explicit shape")
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if not all(isinstance(s, int) and not isinstance(s, bool) and s > 0 for s in shape):
        raise TraceError(f"cutlass.Array({dtype}, {shape}, space={sp}): the shape must be positive compile-time ints")
    if not tracing():
        raise TraceError(f"cutlass.Array(space={sp}) allocates memory inside a @cute.kernel; cutelab does not "
                         f"allocate it outside one")
    n = _prod(shape)
    if sp == "smem":
        from ...utils.smem_allocator import SmemAllocator

        align = int(kwargs.get("alignment", 4))
        flat = SmemAllocator().allocate_tensor(dtype, make_layout(n), byte_alignment=align)
    elif sp in ("rmem", "generic"):
        from ...tensor import make_rmem_tensor

        flat = make_rmem_tensor(make_layout(n), dtype)
    else:
        raise TraceError(f"cutlass.Array(space={sp}): cutelab allocates shared (smem) and register (rmem) arrays; "
                         f"{sp} is not supported")
    return Array._view(flat, shape)


def as_array(x: Any) -> Array:
    """An Array for x: an Array, or a cutelab tensor (a kernel argument annotated cutlass.Array)."""
    from ...tensor import Tensor

    if isinstance(x, Array):
        return x
    if isinstance(x, Tensor):
        from ... import int_tuple as it
        from ...layout import make_layout

        shape = tuple(_flat(x.shape))
        stride = tuple(_flat(x.layout.stride))
        want = _row_major(shape)
        if any(s != 1 and st != w for s, st, w in zip(shape, stride, want)):
            raise TraceError(f"cutlass.Array of the tensor {x}: an Array is row-major and dense, but the tensor's "
                             f"strides are {it.tuple_str(stride)} (row-major: {it.tuple_str(want)})")
        n = _prod(shape)
        return Array._view(Tensor(x.engine, make_layout(n), x.offset), shape)
    raise TypeError(f"expected a cutlass.Array or a tensor, got {type(x).__name__}")


def make_array_view(t: Any, *, loc: Any = None, ip: Any = None) -> Array:
    """``cutlass.make_array_view(tensor)``: the tensor's memory as a row-major Array."""
    return as_array(t)


def cute_pointer(x: Any, what: str) -> Tuple[Any, Any]:
    """(cutelab Pointer, peer CTA rank or None) of an Array, a Pointer, a tensor or a cutelab pointer."""
    from ...tensor import Pointer as CPointer, Tensor

    if isinstance(x, Array):
        return x.flat.iterator, None
    if isinstance(x, Pointer):
        return x.ptr, x.peer
    if isinstance(x, Tensor):
        return x.iterator, None
    if isinstance(x, CPointer):
        return x, None
    raise TraceError(f"{what}: expected a cutlass.Array or cutlass.Pointer, got {type(x).__name__}")


def as_pointer(x: Any, what: str) -> Pointer:
    p, peer = cute_pointer(x, what)
    return Pointer(p, None, peer)
