"""Swizzled shared memory inside traced kernels.

A swizzled shared-memory tensor is kept as CuTe keeps a swizzled pointer: a plain layout (its
offsets linear in the coordinates, so slicing and partitioning with thread-dependent
coordinates stay symbolic sums) over an engine that swizzles the final element offset, counted
from the start of the shared array: element ``i`` of the tensor lives at
``swizzle(offset + layout(i))``. A ``ComposedLayout`` ``S o 0 o L`` allocated in shared memory
becomes this (layout L, swizzle S in element units, as CuTe DSL evaluates a ComposedLayout); a
pointer swizzle given in byte units (``get_tensor(layout, swizzle=S<3,4,3>)``) is turned into
element units first.

Accesses split into runs the swizzle keeps contiguous (it never moves the bits below m), each a
``Load``/``Store`` whose base is the symbolic ``swizzle(...)`` expression
(``cutelab.kernel.ir.symbolic.Swz``), so both back ends and the launch's bounds checks see
ordinary accesses.

A view whose swizzle came from its layout shows that layout as a ``SwizzledViewLayout`` (the swizzle and
the view's offset kept with the plain layout): ``make_tensor(make_ptr(swizzled address), view.layout)``, quack's
position-independent partitions, is the view again (``view_tensor``).

Printing shows what CuTe DSL holds instead (``dsl_view``): the allocated tensor as
``ptr<f16, smem, align<16>> o S<3,3,3> o 0 o (8,64):(64,1)``, and each view as CuTe's
slice_and_offset left it: the swizzle kept with the offset's Y/Z bits (``S o 16 o (8,16):(64,1)``)
or decayed to strides (``(8):(72)``), run-time parts as ``?{div=N}``, the bits a run-time
coordinate may set taken over its mode's whole extent (``note_slice``), as CuTe DSL does.
"""

from __future__ import annotations

from typing import Any, List, Sequence, Tuple

from ...errors import TraceError
import math

from ...layout import Layout
from ..ir.symbolic import add, is_sym, mul, sym_div, swizzle_expr
from ..ir.nodes import Load, Store, _align_of
from .shared_address import SharedAddress  # noqa: F401  (re-exported: inline PTX operands)
from .engines import SmemEngine, UndefinedValue
from .trace import TraceValue, _refs_of, _static_offsets, current

__all__ = ["SwizzledSmemEngine", "SwizzledViewLayout", "element_swizzle", "smem_runs", "struct", "SmemRegion", "SmemPtr", "use_dynamic_smem",
           "SharedAddress"]


def _log2(n: int) -> int:
    return n.bit_length() - 1


def element_swizzle(sw: Any, elem_bytes: int, units: str, what: str, bits: int = 8) -> Any:
    """The Swizzle acting on element offsets for sw given in 'elements' or 'bytes'; ``bits`` < 8: elements
    of that many bits, packed into bytes (4-bit ones two to a byte: the swizzle's base moves up one bit)."""
    from ...swizzle import Swizzle

    if units == "elements" or sw.num_bits == 0:
        return sw
    if bits < 8:
        if 8 % bits:
            raise TraceError(f"{what}: the byte swizzle {sw} has no element form for {bits}-bit elements")
        return Swizzle(sw.num_bits, sw.num_base + _log2(8 // bits), sw.num_shift)
    e = _log2(elem_bytes)
    if sw.num_base < e:
        raise TraceError(f"{what}: the byte swizzle {sw} moves bits inside one {elem_bytes}-byte element "
                         f"(its base {sw.num_base} < log2({elem_bytes})); it has no element form")
    return Swizzle(sw.num_bits, sw.num_base - e, sw.num_shift)


def smem_runs(sw: Any, base: Any, offsets: Sequence[int]) -> List[Tuple[Any, Tuple[int, ...], List[int]]]:
    """Split the accesses ``swizzle(base + offsets[i])`` into runs of consecutive elements that
    the swizzle keeps together: a list of (swizzled base, offsets inside the run, positions i).

    >>> from cutelab.swizzle import Swizzle
    >>> from cutelab.kernel.ir.symbolic import Var
    >>> t = Var("tid.x", 32)
    >>> [(b.expr_str(), o, p) for b, o, p in smem_runs(Swizzle(3, 3, 3), t * 64, range(16))]
    [('swizzle<3,3,3>((64 * tid.x))', (0, 1, 2, 3, 4, 5, 6, 7), [0, 1, 2, 3, 4, 5, 6, 7]), ('swizzle<3,3,3>((64 * tid.x + 8))', (0, 1, 2, 3, 4, 5, 6, 7), [8, 9, 10, 11, 12, 13, 14, 15])]
    """
    b, m, s = sw.num_bits, sw.num_base, sw.num_shift
    chunk = 1 << m
    # base is a multiple of d (a power of two dividing the chunk), so base + o can start a new chunk
    # only where o % d == 0: a run of consecutive offsets goes on until then (d == chunk: base + o
    # sits at o % chunk inside its chunk; d == 2: pairs, e.g. an MMA fragment's two columns)
    d = math.gcd(sym_div(base), chunk)
    runs: List[Tuple[Any, Tuple[int, ...], List[int]]] = []
    cur: List[int] = []
    offsets = [int(o) for o in offsets]

    def flush() -> None:
        if cur:
            o0 = offsets[cur[0]]
            runs.append((swizzle_expr(add(base, o0) if is_sym(base) else int(base) + o0, b, m, s),
                         tuple(offsets[i] - o0 for i in cur), list(cur)))
            cur.clear()

    for i, o in enumerate(offsets):
        if cur and o == offsets[cur[-1]] + 1 and o % d != 0:
            cur.append(i)
            continue
        flush()
        cur.append(i)
    flush()
    return runs


class _Part:
    """One part (the Y/Z bits, or the others) of a view's offset: a static value and the bits a
    run-time value may set (CuTe DSL's mixed bits)."""

    def __init__(self, static: int = 0, dyn_bits: int = 0):
        self.static, self.dyn_bits = static, dyn_bits

    def moved(self) -> int:
        """The value, or (with run-time bits) a number of its divisibility: what alignment needs."""
        if not self.dyn_bits:
            return self.static
        return math.gcd(self.static, self.dyn_bits & -self.dyn_bits)

    def shown(self) -> Any:
        """As CuTe DSL prints it: the value, or '?{div=N}' when it has run-time bits."""
        from ...dynamic import DynInt

        if not self.dyn_bits:
            return self.static
        return DynInt(0, div=self.moved())


def _split_zy(sw: Any, t: Any, dyn_bits: Any = None) -> Any:
    """t (an int or a symbolic sum) as two _Parts: its bits on the swizzle's Y and Z bits, and the
    others. A term k * x (k a power of two) splits into the bit fields of x it moves, as CuTe's
    projections of the sliced coordinate split it. None where the split is not exact (terms that
    may carry into each other, or a term with another factor that reaches both kinds of bits)."""
    from ..ir.symbolic import lin_form

    zy = sw.swizzle_code
    terms, const = lin_form(t)
    if const < 0:
        return None
    zyp, anti = _Part(const & zy), _Part(const & ~zy)
    if dyn_bits is not None:  # the bits CuTe DSL's slices let the run-time part set (note_slice)
        zyp.dyn_bits, anti.dyn_bits = dyn_bits & zy, dyn_bits & ~zy
        return zyp, anti
    used = const
    for atom, coef in terms.values():
        if coef <= 0 or atom.lo < 0 or atom.hi <= 0:
            return None
        step = coef * (atom.div if atom.div else 1)
        low = step & -step
        bits = ((1 << (coef * atom.hi).bit_length()) - 1) & ~(low - 1)  # every bit the term can set
        if bits & used or (coef & (coef - 1) and bits & zy and bits & ~zy):
            return None
        used |= bits
        zyp.dyn_bits |= bits & zy
        anti.dyn_bits |= bits & ~zy
    return zyp, anti


def dsl_view(sw: Any, t: Any, layout: Any, dyn_bits: Any = None) -> Any:
    """How CuTe DSL shows a view of a swizzled shared-memory tensor: (pointer shift, layout text).

    The view is ``swizzle(t + layout(i))``, t elements from the tensor's start. CuTe DSL holds it
    as its slices left it (CuTe's slice_and_offset): the offset's Y and Z bits (zy) stay with the
    swizzle, the other bits (anti) move the pointer. If the layout reaches a Y bit and its Z bit the
    swizzle stays: ``S o zy o layout`` at pointer + anti; otherwise the swizzle decays to strides
    (which depend on zy's bits) and the pointer moves by swizzle(zy) + anti. Dynamic parts print as
    '?{div=N}'. None if t does not split (a term reaching both kinds of bits).

    >>> from cutelab.swizzle import Swizzle
    >>> from cutelab.layout import Layout
    >>> dsl_view(Swizzle(3, 3, 3), 0, Layout.parse("(8,64):(64,1)"))
    (0, 'S<3,3,3> o 0 o (8,64):(64,1)')
    >>> dsl_view(Swizzle(3, 3, 3), 3, Layout.parse("(8):(64)"))
    (3, '(8):(72)')
    """
    from ...algebra import _compose_layouts
    from ...dynamic import DynInt
    from ...layout import Layout
    from ...swizzle import _eval_last, _only_zy, _project

    parts = _split_zy(sw, t, dyn_bits)
    if parts is None:
        return None
    zy, anti = parts
    zmask = sw.swizzle_code
    only = _only_zy(sw)
    active = _project(only, layout, layout.size() - 1, _eval_last(layout) & zmask)
    if active & ~sw(active):  # the layout hits a Y bit and its Z bit: the swizzle stays
        return anti.moved(), f"{sw} o {zy.shown()} o {layout}"
    b, m, s = sw.num_bits, sw.num_base, abs(sw.num_shift)
    zm, ym = sw.zzz_msk, sw.yyy_msk
    z, y = zm & -zm, ym & -ym
    zs, dyn_bits = zy.static, zy.dyn_bits

    def strides(lower: bool) -> tuple:
        out = []
        for i in range(b):
            bit = (y << i) if lower else (z << i)
            a, c = ((z << i), -(z << i)) if lower else ((y + z) << i, (y - z) << i)
            if bit & dyn_bits:  # the condition is a run-time value: either stride
                out.append(DynInt(a, div=math.gcd(a, c)))
            else:
                out.append(a if (zs & bit) == 0 else c)
        return tuple(out)

    lo_s, hi_s = strides(z < y), strides(z > y)
    sw_layout = Layout._raw((1 << m,) + (2,) * b + (1 << (s - b),) + (2,) * b + (1,),
                            (1,) + lo_s + (1 << (m + b),) + hi_s + (1 << (m + b + s),))
    res = _compose_layouts(sw_layout, layout)
    # the pointer moves by swizzle(zy) + anti; with run-time bits, by a value of that divisibility
    moved = sw(zs)
    if dyn_bits:  # swizzled: a run-time Y bit lands s bits lower, on its Z bit
        d = dyn_bits & -dyn_bits
        moved = math.gcd(moved, d if not d & ym else max(1 << m, d >> s))
    return math.gcd(moved, anti.moved()) if anti.dyn_bits else moved + anti.static, str(res)


def _is_batch_offset(offset: Any) -> bool:
    return hasattr(offset, "shape") and hasattr(offset, "dtype") and not is_sym(offset)


class SwizzledSmemEngine(SmemEngine):
    """A shared array read and written through a swizzle of its element offsets."""

    def __init__(self, param: Any, swizzle: Any, origin: int = 0, base_align: int = 0, ptr_swizzle: Any = None):
        super().__init__(param)
        self.swizzle = swizzle  # element units
        # a swizzle of the pointer (byte units, get_tensor(..., swizzle=S)): CuTe DSL keeps it in the
        # pointer's type (ptr<f16, smem, align<1024>, S<3,4,3>>) and slices the layout as a plain one
        self.ptr_swizzle = ptr_swizzle
        # for printing as CuTe DSL: where the tensor's pointer starts (elements into the array) and the
        # alignment it was allocated with (bytes; 0: the array's, at most a swizzle row)
        self.origin, self.base_align = origin, base_align
        self._dsl_bits: dict = {}  # offset expression -> bits its run-time part may set (note_slice)

    def alignment(self, offset: Any) -> int:
        a = super().alignment(offset)
        return min(a, max(self.dtype.bytes, (1 << self.swizzle.num_base) * self.dtype.bytes))

    def view_layout(self, layout: Any, offset: Any) -> Any:
        """The layout a tensor over this engine at offset shows (Tensor.layout): a SwizzledViewLayout where the
        swizzle came from a composed layout (a swizzled pointer's views keep plain layouts, as in CuTe DSL)."""
        if self.ptr_swizzle is not None or self.swizzle.is_identity or _is_batch_offset(offset):
            return layout
        return SwizzledViewLayout.of(layout, self, offset)

    def unswizzled(self) -> SmemEngine:
        """The same shared array read without the swizzle (a plain pointer made from this one's address)."""
        return SmemEngine(self.param)

    def ptr_align(self, offset: Any) -> int:
        """The alignment CuTe DSL prints for the swizzled pointer of a view at offset: the address's."""
        return _align_of(self.base_align or self.param.align, self.dtype.bytes, offset - self.origin)

    def ptr_str(self, offset: Any) -> str:
        if self.ptr_swizzle is not None:  # CuTe DSL's swizzled pointer: its alignment is the address's
            a = self.ptr_align(offset)
            al = f", align<{a}>" if a > self.dtype.bytes else ""
            return f"ptr<{self.dtype.name}, {self.memspace}{al}, {self.ptr_swizzle}>"
        a = self.alignment(offset)
        al = f", align<{a}>" if a > self.dtype.bytes else ""
        return f"ptr<{self.dtype.name}, {self.memspace}{al}, {self.swizzle}>"

    def note_slice(self, old: Any, new: Any, coord: Any, layout: Any) -> None:
        """Remember the bits a slice's run-time coordinates may set in the view's offset, as CuTe DSL
        sees them: a coordinate c of a mode of extent n and stride d sets the bits of d * [0, n), over
        the mode's whole extent (cutelab's offset expression knows the thread index's smaller range)."""
        if not is_sym(new):
            return
        from ... import int_tuple as it

        bits = self._dsl_bits.get(old.key, 0) if is_sym(old) else 0

        def leaf_bits(step: int, n: int) -> int:
            step, top = abs(step), abs(step) * (n - 1)
            if not step or n <= 1:
                return 0
            return ((1 << top.bit_length()) - 1) & ~((step & -step) - 1)

        def walk(c: Any, shp: Any, std: Any) -> None:
            nonlocal bits
            if c is None or not (isinstance(c, tuple) or is_sym(c)):
                return
            if isinstance(c, tuple):
                for ci, si, di in zip(c, shp, std):
                    walk(ci, si, di)
                return
            div = sym_div(c) or 1
            for j, (sj, dj) in enumerate(zip(it.flatten_to_tuple(shp), it.flatten_to_tuple(std))):
                if isinstance(dj, int):
                    bits |= leaf_bits(dj * (div if j == 0 else 1), sj)

        walk(coord if isinstance(layout.shape, tuple) or not isinstance(coord, tuple) else coord[0],
             layout.shape, layout.stride)
        if bits:
            self._dsl_bits[new.key] = bits

    def dsl_parts(self, offset: Any, layout: Any) -> tuple:
        """(layout text, pointer alignment in bytes) as CuTe DSL holds this view (see dsl_view);
        cutelab's own form (layout, alignment of the swizzled pointer) where the view's offset does
        not split as CuTe splits it (then the text says 'S<b,m,s> o ptr o layout')."""
        if self.ptr_swizzle is not None:  # a swizzled pointer: ptr_str prints it, the layout stays plain
            return None
        v = dsl_view(self.swizzle, offset - self.origin, layout,
                     self._dsl_bits.get(offset.key) if is_sym(offset) else None)
        if v is None:
            return None
        shift, text = v
        base = self.base_align or min(self.param.align, max(self.dtype.bytes, (1 << self.swizzle.num_base) * self.dtype.bytes))
        return text, _align_of(base, self.dtype.bytes, shift)

    def tensor_str(self, offset: Any, layout: Any) -> str:
        """'ptr<...> o layout' as CuTe DSL prints this view; cutelab's own form
        'ptr<..., S<b,m,s>> o layout' where the view's offset does not split as CuTe splits it."""
        v = self.dsl_parts(offset, layout)
        if v is None:
            return f"{self.ptr_str(offset)} o {layout}"
        text, a = v
        al = f", align<{a}>" if a > self.dtype.bytes else ""
        return f"ptr<{self.dtype.name}, {self.memspace}{al}> o {text}"

    def runs(self, offset: Any, offsets: Sequence[int]) -> List[Tuple[Any, Tuple[int, ...], List[int]]]:
        return smem_runs(self.swizzle, offset, offsets)

    def load(self, offset: Any, layout: Any) -> TraceValue:
        t = current("loading from a tensor")
        t.check_index(offset, "load")
        offs = _static_offsets(layout, "load")
        refs: List[Any] = [None] * len(offs)
        self.param.read = True
        for base, run, pos in self.runs(offset, offs):
            dst = t.new_reg(self.dtype, len(run))
            t.emit(Load(dst, self.param, base, run))
            for j, p in enumerate(pos):
                refs[p] = (dst, j)
        return TraceValue(refs, layout.shape, self.dtype)

    def store(self, offset: Any, layout: Any, value: Any) -> None:
        t = current("storing to a tensor")
        t.check_index(offset, "store")
        offs = _static_offsets(layout, "store")
        refs = _refs_of(value, len(offs), self.dtype, "store", f"a swizzled {self.param.name} tensor of layout {layout}")
        self.param.written = True
        for base, run, pos in self.runs(offset, offs):
            t.emit(Store(self.param, base, run, tuple(refs[p] for p in pos)))

    def read_one(self, off: Any) -> TraceValue:
        t = current("reading a tensor element")
        t.check_index(off, "read")
        dst = t.new_reg(self.dtype, 1)
        self.param.read = True
        sw = self.swizzle
        t.emit(Load(dst, self.param, swizzle_expr(off, sw.num_bits, sw.num_base, sw.num_shift), (0,)))
        return TraceValue([(dst, 0)], (), self.dtype)

    def write_one(self, off: Any, v: Any) -> None:
        t = current("writing a tensor element")
        t.check_index(off, "write")
        if isinstance(v, UndefinedValue):  # as CuTe DSL's compiled kernel: no store (kernel.ir.fault)
            return
        refs = _refs_of(v, 1, self.dtype, "store", f"an element of {self.param.name}")
        self.param.written = True
        sw = self.swizzle
        t.emit(Store(self.param, swizzle_expr(off, sw.num_bits, sw.num_base, sw.num_shift), (0,), refs))


# --------------------------------------------------------------------------- cute.struct in shared memory

_DYN_ALIGN = 1024  # bytes: shared arrays start on a swizzle period (CuTe's largest, 128B x 8 rows)
MAX_SMEM = 227 * 1024  # the most shared memory a block may use (H100: 227 KiB)


def _align_up(n: int, a: int) -> int:
    return -(-n // a) * a


def _nbytes(n: int, dtype: Any) -> int:
    """The bytes of n elements of dtype (4-bit elements: two to a byte)."""
    return -(-n * dtype.width // 8)


def _elems(nbytes: int, dtype: Any, up: bool = False) -> int:
    """The elements of dtype in nbytes bytes (rounded up when up)."""
    return -(-nbytes * 8 // dtype.width) if up else nbytes * 8 // dtype.width


def _total(t: Any) -> int:
    """The block's shared memory if every array is dynamic: aligned arrays, those that alias (one
    region's views as several element types) counted once, at the longest."""
    ext: dict = {}
    for sh in t.shared:
        base = sh.alias if sh.alias is not None else sh.index
        ext[base] = max(ext.get(base, 0), _align_up(sh.bytes, _DYN_ALIGN))
    return sum(ext.values())


def use_dynamic_smem(t: Any) -> None:
    """Above 48 KiB a block's shared memory must be dynamic (``extern __shared__``, the launch asks
    for it with cuFuncSetAttribute): mark every shared array of the kernel so, each padded to a
    whole number of alignment units so that the arrays' sum is what the launch gives."""
    total = _total(t)
    needs = t.__dict__.get("_smem_need", {})
    if total > MAX_SMEM and needs:
        for sh in t.shared:  # regions viewed as several element types: each array only as long as its views reach
            n = needs.get(sh.index)
            if n is not None and n < sh.bytes:
                sh.length = max(1, _elems(n, sh.dtype, up=True))
        total = _total(t)
    if total > MAX_SMEM:
        raise TraceError(f"kernel {t.name}: {total} bytes of shared memory; a thread block may use at most "
                         f"{MAX_SMEM} bytes{t.where()}")
    if sum(sh.bytes for sh in t.shared) <= 48 * 1024 and not any(sh.dynamic for sh in t.shared):
        return
    for sh in t.shared:
        per = max(1, _DYN_ALIGN * 8 // sh.dtype.width)
        sh.length = _align_up(sh.length, per)
        sh.align = max(sh.align, _DYN_ALIGN)
        sh.dynamic = True


class SmemRegion:
    """Bytes of shared memory from ``SmemAllocator.allocate``: typed views are made on demand,
    one shared array per element type. A kernel that writes a region as one type and reads it as
    another is not supported: on the CPU the arrays are separate; on the GPU, once the block's
    shared memory is dynamic, the arrays of one region start at the same byte (``Shared.alias``),
    so that a struct of mbarriers and operand tiles, or an epilogue buffer recast over a mainloop
    tile of another type, takes the region's bytes once, as in CuTe DSL."""

    def __init__(self, nbytes: int, align: int):
        self.nbytes, self.align = nbytes, max(align, 16)
        self.declared = align  # the alignment asked for: what CuTe DSL prints for pointers into the region
        self.arrays: dict = {}

    def array(self, dtype: Any, need: Any = None) -> Any:
        """The shared array of dtype over this region (as long as the region), noting that views
        reach its first ``need`` bytes (all of it when None): if the kernel's arrays then exceed
        the block's shared memory, use_dynamic_smem cuts each region's arrays to what their views
        reach (a struct of mbarriers and operand tiles gets a short Int64 array)."""
        sh = self.arrays.get(dtype.name)
        t = current("shared memory")
        if sh is None:
            first = next(iter(self.arrays.values()), None)
            sh = t.add_shared(dtype, max(1, _elems(self.nbytes, dtype)), max(self.align, _DYN_ALIGN))
            self.arrays[dtype.name] = sh
            if first is not None:
                sh.alias = first.index  # on the GPU (dynamic arrays) one memory, as in CuTe DSL
            t.__dict__.setdefault("_smem_region_of", {})[sh.index] = self  # recast_ptr finds the region
        needs = t.__dict__.setdefault("_smem_need", {})
        b = self.nbytes if need is None else min(self.nbytes, int(need))
        needs[sh.index] = max(needs.get(sh.index, 0), b)
        if sh.bytes < b:
            sh.length = _elems(b, dtype, up=True)
        use_dynamic_smem(t)
        return sh


class SmemPtr:
    """A pointer into an SmemRegion at a byte offset (what ``SmemAllocator.allocate(bytes)`` returns)."""

    memspace = "smem"
    _smem_ptr = True  # make_tensor and recast_ptr take these (cutelab.tensor, cutelab.runtime)

    def __init__(self, region: SmemRegion, byte_offset: int = 0, dtype: Any = None, swizzle: Any = None):
        self.region, self.byte_offset, self.dtype = region, byte_offset, dtype
        self.swizzle = swizzle  # a swizzle on byte addresses (recast_ptr(..., swizzle_=S)): tensors made here use it

    def recast(self, dtype: Any) -> "SmemPtr":
        """The same address as a pointer to dtype (cute.recast_ptr)."""
        if self.byte_offset % dtype.bytes:
            raise TraceError(f"recast_ptr({self}, dtype={dtype}): byte offset {self.byte_offset} is not a multiple "
                             f"of {dtype}'s size")
        return SmemPtr(self.region, self.byte_offset, dtype, self.swizzle)

    def as_pointer(self) -> Any:
        """The same address as a cutelab Pointer into the region's array of the pointer's type."""
        from ...layout import make_layout
        from ...tensor import Pointer

        if self.dtype is None:
            raise TraceError(f"{self}: an untyped pointer has no element offset (recast_ptr it first)")
        first = SmemPtr(self.region, 0, self.dtype).tensor(make_layout(1), self.dtype)
        return Pointer(first.engine, first.offset + self.byte_offset // self.dtype.bytes)

    def toint(self, *, loc: Any = None, ip: Any = None) -> Any:
        """CuTe DSL's Pointer.toint(): the shared-memory address, an Int32 (see cutelab.address)."""
        return self.as_pointer().toint()

    def _one(self) -> Any:
        from ...layout import make_layout

        if self.dtype is None:
            raise TraceError(f"{self}: an untyped pointer cannot be loaded or stored (recast_ptr it first)")
        return self.tensor(make_layout(1), self.dtype)

    def load(self) -> Any:
        """The element it points to (``storage.counter.ptr.load()``)."""
        return self._one()[0]

    def store(self, value: Any) -> None:
        """Write the element it points to."""
        self._one()[0] = value

    def __add__(self, k: int) -> "SmemPtr":
        return SmemPtr(self.region, self.byte_offset + k * (self.dtype.bytes if self.dtype else 1), self.dtype,
                       self.swizzle)

    @property
    def llvm_ptr(self) -> "SmemPtr":
        """CuTe DSL's raw LLVM pointer of this pointer: cutelab's instructions take the pointer itself."""
        return self

    @property
    def alignment(self) -> int:
        """The alignment CuTe DSL gives this pointer (Pointer.alignment, a property): the region's declared
        alignment, lowered by the offset."""
        a = self.region.declared
        if self.byte_offset:
            a = min(a, self.byte_offset & -self.byte_offset)
        return a

    def __repr__(self) -> str:
        """As CuTe DSL prints a shared-memory pointer: ``ptr<f32, smem, align<128>>`` (no align<> at the
        element's own size)."""
        dt = self.dtype.name if self.dtype else "i8"
        size = self.dtype.bytes if self.dtype else 1
        a = self.alignment
        return f"ptr<{dt}, smem{f', align<{a}>' if a > size else ''}>"

    def tensor(self, layout: Any, dtype: Any, swizzle: Any = None) -> Any:
        """A tensor of dtype over layout (a Layout or a swizzled ComposedLayout) starting here."""
        from ...layout import Layout, make_layout
        from ...swizzle import ComposedLayout, Swizzle
        from ...tensor import Tensor

        where = "get_tensor"
        if swizzle is None and self.swizzle is not None and not isinstance(layout, ComposedLayout):
            swizzle = self.swizzle
        if dtype is None:
            raise TraceError(f"{where}: the element type of the tensor is not known (pass dtype=)")
        dyn = is_sym(self.byte_offset)  # a pointer moved by a runtime amount (ptr + layout((tidx, i)))
        if (sym_div(self.byte_offset) if dyn else self.byte_offset) % dtype.bytes:
            raise TraceError(f"{where}: byte offset {self.byte_offset} is not a multiple of {dtype}'s size")
        sw = None
        if isinstance(layout, ComposedLayout):
            if swizzle is not None:
                raise TraceError(f"{where}: incompatible layout with swizzle (a composed layout {layout} and "
                                 f"swizzle={swizzle})")
            if not isinstance(layout.inner, Swizzle) or not isinstance(layout.offset, int):
                raise TraceError(f"{where}: composed layout {layout} must be a Swizzle o int o Layout")
            sw, off, layout = layout.inner, layout.offset, layout.outer
        else:
            off = 0
            if not isinstance(layout, Layout):
                layout = make_layout(layout)
            if swizzle is not None:
                sw = element_swizzle(swizzle, dtype.bytes, "bytes", where, dtype.width)
        offs = _static_offsets(layout, where)
        if len(offs) and offs.min() < 0:
            raise TraceError(f"{where}: layout {layout} reaches negative offsets")
        start = _elems(self.byte_offset, dtype)
        if dyn:  # the view may reach the whole region: its accesses are checked where they happen
            if sw is not None and not sw.is_identity:
                raise TraceError(f"{where}: a swizzled view at a runtime offset ({self.byte_offset} bytes) is not "
                                 f"supported")
            return Tensor(SmemEngine(self.region.array(dtype)), layout, start + off, _checked=True)
        need = _nbytes(int(offs.max()) + 1 + off if len(offs) else 1, dtype) + self.byte_offset
        if sw is not None and not sw.is_identity:
            # the swizzle moves an offset only inside its aligned block of 2^(highest bit it changes + 1)
            # elements (S<3,4,3> on bytes: within 128 bytes), so the tensor reaches that block's end at most
            hi = sw.num_base + sw.num_bits + max(0, -sw.num_shift)
            need = _align_up(need, _nbytes(1 << hi, dtype))
        if need > self.region.nbytes:
            raise TraceError(f"{where}: layout {layout} of {dtype} needs {need} bytes from the region's start, "
                             f"the region has {self.region.nbytes}")
        sh = self.region.array(dtype, need)
        if sw is not None and not sw.is_identity:
            base = self.region.align if self.byte_offset % self.region.align == 0 else \
                self.byte_offset & -self.byte_offset
            return Tensor(SwizzledSmemEngine(sh, sw, origin=start, base_align=base,
                                             ptr_swizzle=swizzle if swizzle is not None else None),
                          layout, start + off, _checked=True)
        return Tensor(SmemEngine(sh), layout, start + off, _checked=True)


def _is_numeric(x: Any) -> bool:
    from ...numeric import is_numeric_type

    return is_numeric_type(x)


class _MemRangeType:
    def __init__(self, dtype: Any, size: int):
        self.dtype, self.size = dtype, int(size)

    @property
    def size_in_bytes(self) -> int:
        return -(-self.size * self.dtype.width // 8)  # 4-bit elements: two to a byte

    def __repr__(self) -> str:
        return f"struct.MemRange[{self.dtype}, {self.size}]"


class _AlignType:
    def __init__(self, inner: Any, align: int):
        self.inner, self.align = inner, int(align)


class _MemRangeView:
    """A struct field of MemRange type: ``get_tensor(layout, swizzle=None, dtype=None)``, ``data_ptr()``."""

    def __init__(self, kind: _MemRangeType, ptr: SmemPtr):
        self._kind, self._ptr = kind, ptr

    def data_ptr(self) -> SmemPtr:
        return SmemPtr(self._ptr.region, self._ptr.byte_offset, self._kind.dtype)

    @property
    def ptr(self) -> SmemPtr:
        """A scalar field's pointer (``storage.counter.ptr``): the same as data_ptr()."""
        return self.data_ptr()

    def _flat(self) -> Any:
        from ...layout import make_layout

        return self.get_tensor(make_layout(self._kind.size))

    def __getitem__(self, i: Any) -> Any:
        return self._flat()[i]

    def __setitem__(self, i: Any, value: Any) -> None:
        self._flat()[i] = value

    def get_tensor(self, layout: Any, swizzle: Any = None, dtype: Any = None, **kwargs: Any) -> Any:
        return self.data_ptr().tensor(layout, dtype or self._kind.dtype, swizzle)

    def __repr__(self) -> str:
        return f"<{self._kind!r} at +{self._ptr.byte_offset} B>"


def _size_align(ft: Any, where: str) -> tuple:
    if isinstance(ft, _AlignType):
        s, a = _size_align(ft.inner, where)
        return s, max(a, ft.align)
    if isinstance(ft, _MemRangeType):
        return ft.size_in_bytes, ft.dtype.bytes
    if _is_numeric(ft):
        return ft.bytes, ft.bytes
    if isinstance(ft, type) and getattr(ft, "_cl_struct", False):
        return ft.size_in_bytes(), ft.__alignof__()
    raise TraceError(f"cute.struct {where}: field type {ft!r} is not a MemRange, Align, element type or struct")


class struct:
    """``@cute.struct``: a C-like struct of shared memory (MemRange arrays, element types, nested
    structs, ``Align[field, bytes]``), laid out field by field as C would.

    >>> import cutelab as cute
    >>> @cute.struct
    ... class S:
    ...     a: cute.struct.Align[cute.struct.MemRange[cute.Float16, 100], 128]
    ...     x: cute.Int32
    >>> S.size_in_bytes(), S.__alignof__()
    (256, 128)
    """

    class _Sub:
        def __init__(self, make: Any):
            self._make = make

        def __getitem__(self, params: Any) -> Any:
            return self._make(*params)

    MemRange = _Sub(lambda dtype, size: _MemRangeType(dtype, size))
    Align = _Sub(lambda inner, align: _AlignType(inner, align))

    def __new__(cls, user_cls: Any) -> Any:  # the decorator
        ann = dict(getattr(user_cls, "__annotations__", {}))
        fields, off, align = [], 0, 1
        for name, ft in ann.items():
            if isinstance(ft, str):  # postponed annotations: evaluate where the class was written
                import sys

                frame = sys._getframe(1)
                mod = sys.modules.get(user_cls.__module__)
                env = dict(getattr(mod, "__dict__", {}))
                env.update(frame.f_globals)
                env.update(frame.f_locals)
                env.update(vars(user_cls))  # names of the class body (an alignment set beside the field)
                try:
                    ft = eval(ft, env)  # noqa: S307 - the user's own annotation text
                except Exception as e:
                    raise TraceError(f"cute.struct {user_cls.__name__}.{name}: cannot evaluate the annotation "
                                     f"{ft!r} ({e})") from None
            s, a = _size_align(ft, f"{user_cls.__name__}.{name}")
            if a & (a - 1):
                raise TraceError(f"cute.struct {user_cls.__name__}.{name}: alignment {a} is not a power of two")
            off = _align_up(off, a)
            fields.append((name, ft, off))
            off += s
            align = max(align, a)
        size = _align_up(off, align)

        def init(self: Any, base: Any) -> None:
            if not isinstance(base, SmemPtr):
                raise TraceError(f"{user_cls.__name__}(...): expected shared memory from SmemAllocator.allocate, "
                                 f"got {type(base).__name__}")
            object.__setattr__(self, "_base", base)

        def getattr_(self: Any, name: str) -> Any:
            for n, ft, o in fields:
                if n == name:
                    inner = ft.inner if isinstance(ft, _AlignType) else ft
                    ptr = SmemPtr(self._base.region, self._base.byte_offset + o)
                    if isinstance(inner, _MemRangeType):
                        return _MemRangeView(inner, ptr)
                    if _is_numeric(inner):
                        return _MemRangeView(_MemRangeType(inner, 1), ptr)
                    return inner(ptr)
            raise AttributeError(f"struct {user_cls.__name__} has no field {name!r}")

        def setattr_(self: Any, name: str, value: Any) -> None:  # storage.counter = 16: a scalar field's store
            view = getattr_(self, name)
            if not (isinstance(view, _MemRangeView) and view._kind.size == 1 and _scalar_field(name)):
                raise TraceError(f"struct {user_cls.__name__}: only a scalar field can be assigned, not {name!r}")
            view.ptr.store(value)

        def _scalar_field(name: str) -> bool:
            for n, ft, _ in fields:
                if n == name:
                    return _is_numeric(ft.inner if isinstance(ft, _AlignType) else ft)
            return False

        new_cls = type(user_cls.__name__, (), {
            "__init__": init, "__getattr__": getattr_, "__setattr__": setattr_, "_cl_struct": True,
            "_fields": tuple(fields),
            "size_in_bytes": classmethod(lambda c: size), "__sizeof__": classmethod(lambda c: size),
            "__alignof__": classmethod(lambda c: align), "__doc__": user_cls.__doc__,
            "__repr__": lambda self: f"<struct {user_cls.__name__} at +{self._base.byte_offset} B>",
        })
        return new_cls


def recast_smem_ptr(ptr: Any, swizzle_: Any, dtype: Any) -> Any:
    """recast_ptr(ptr, swizzle_=S, dtype=...) of a kernel's shared-memory pointer (None for any other
    pointer: cutelab.runtime.recast_ptr answers those): the same shared array read through swizzle S
    (on byte addresses, as CuTe DSL's swizzled pointers), e.g. an epilogue's buffer over a mainloop
    operand's memory."""
    eng = getattr(ptr, "engine", None)
    if not (isinstance(eng, SmemEngine) and hasattr(eng, "param")):
        return None
    import numpy as np

    from ...tensor import Pointer

    dt = eng.dtype if dtype is None else dtype
    if dt.name != eng.dtype.name:
        return _smem_region_ptr(ptr, swizzle_, dt)
    sw = element_swizzle(swizzle_, dt.bytes, "bytes", f"recast_ptr({ptr}, swizzle_={swizzle_})", dt.width)
    origin = ptr.offset if isinstance(ptr.offset, (int, np.integer)) else 0
    new = SwizzledSmemEngine(eng.param, sw, origin=int(origin), base_align=getattr(eng, "base_align", 0),
                             ptr_swizzle=swizzle_)
    return Pointer(new, ptr.offset)


def _smem_region_ptr(ptr: Any, swizzle_: Any, dtype: Any) -> Any:
    """recast_ptr of a kernel's shared-memory pointer to another element type with a swizzle: a
    pointer into the SmemAllocator region the memory came from, whose tensors are that region's
    array of the new type (cutelab keeps one array per element type of a region: views of
    different types do not alias, see SmemRegion)."""
    import numpy as np

    from ...errors import TensorError

    eng = ptr.engine
    what = f"recast_ptr({ptr}, swizzle_={swizzle_}, dtype={dtype})"
    t = current(what)
    regions = t.__dict__.setdefault("_smem_region_of", {})
    region = regions.get(eng.param.index)
    sh = eng.param
    if region is None and getattr(sh, "alias", None) is None and sh.dtype.name == eng.dtype.name:
        # an array of its own (SmemAllocator.allocate_tensor): it becomes a region's first array, so that a
        # view of its memory as another type is that region's array of the type (an epilogue buffer over
        # mainloop tiles, as CUTLASS's FMHA decode puts its Float32 O over its bf16 Q and what follows it).
        # The region reaches as far as the arrays allocated from it on do (an allocator's memory is one
        # range); the view is an array of its own on the CPU, and on the GPU starts where the array does
        # and takes as many bytes as its views reach (the arrays after it are not reused)
        reach = sum(_align_up(a.bytes, max(a.align, 16)) for a in t.shared if a.index >= sh.index and a.alias is None)
        region = SmemRegion(max(reach, sh.bytes), sh.align)
        region.arrays[sh.dtype.name] = sh
        regions[sh.index] = region
    off = ptr.offset
    if region is None or not isinstance(off, (int, np.integer)):
        raise TensorError(f"{what}: cutelab views memory of one element type as another only through the "
                          f"SmemAllocator region it came from, at a static offset")
    nbytes = int(off) * eng.dtype.bytes
    if nbytes % dtype.bytes:
        raise TensorError(f"{what}: byte offset {nbytes} is not a multiple of {dtype}'s size")
    return SmemPtr(region, nbytes, dtype, swizzle_)


class SwizzledViewLayout(Layout):
    """The ``.layout`` of a view of swizzled shared memory whose swizzle came from its layout (a slice or a
    partition of ``make_tensor(ptr, S o 0 o L)``). CuTe DSL holds such a view as its slices left it
    (``dsl_view``): the offset's Y/Z bits stay with the swizzle, or the swizzle decays to strides that
    depend on them, run-time values where the offset is. cutelab keeps the view as the swizzle S, the
    view's offset o (elements from the array's start) and the plain layout L (this object's shape and
    stride, so the algebra sees L). What CuTe DSL's decayed layout maps i to is S(o + L(i)) - S(o), and
    ``make_tensor(p, view.layout)`` is the tensor that reads ``p + S(o + L(i)) - S(o)``
    (``view_tensor``): quack's position-independent partitions (``partition_D_position_independent``) put
    such a layout on the pointer ``make_ptr(swizzle(address of the thread's element))``."""

    __slots__ = ("view_engine", "view_offset")

    @classmethod
    def of(cls, layout: Layout, engine: Any, offset: Any) -> "SwizzledViewLayout":
        obj = cls._raw(layout.shape, layout.stride)
        object.__setattr__(obj, "view_engine", engine)
        object.__setattr__(obj, "view_offset", offset)
        return obj

    def plain(self) -> Layout:
        return Layout._raw(self.shape, self.stride)


def _layout_bits(layout: Layout, what: str) -> int:
    """Every bit an offset of layout can set: the union over its modes of the bits of stride * [0, extent)."""
    from ... import int_tuple as it

    bits = 0
    for n, d in zip(it.flatten_to_tuple(layout.shape), it.flatten_to_tuple(layout.stride)):
        if not isinstance(n, int) or not isinstance(d, int):
            raise TraceError(f"{what}: the layout {layout} has run-time entries")
        if n > 1 and d:
            top = abs(d) * (n - 1)
            low = abs(d) & -abs(d)
            bits |= ((1 << top.bit_length()) - 1) & ~(low - 1)
    return bits


def view_tensor(ptr: Any, layout: SwizzledViewLayout) -> Any:
    """make_tensor(p, view.layout) for the layout of a swizzled shared-memory view (SwizzledViewLayout): the
    tensor reading p + S(o + L(i)) - S(o), which is what CuTe DSL's form of the layout gives where the view's
    offset o, split into its Y/Z bits zy and the others, and the layout's bits are disjoint (then S(o + l) -
    S(o) = S(zy + l) - S(zy), the decayed layout's value (bits above the swizzle's span may carry); and where the swizzle stays in CuTe DSL's form,
    S o zy o L, zy must be 0). Supported where p is S(o) of the same array: the tensor is then the view
    itself (p = swizzle(address of element o) is quack's swizzle_ptr of the view's own pointer)."""
    from ...swizzle import _eval_last, _only_zy, _project
    from ...tensor import Tensor
    from ..analysis.bits import possible_bits

    src, o = layout.view_engine, layout.view_offset
    sw, plain = src.swizzle, layout.plain()
    eng = ptr.engine
    what = f"make_tensor({ptr}, {plain}) (the layout of a swizzled shared-memory view, {sw} at a thread's offset)"
    if type(eng) is not SmemEngine or eng.param is not src.param:
        raise TraceError(f"{what}: the pointer must be a plain pointer into the view's own shared array "
                         f"({src.param.name}); cutelab does not carry such a layout to other memory")
    ob = (int(o) if int(o) >= 0 else -1) if isinstance(o, int) else possible_bits(o)
    lb = _layout_bits(plain, what)
    span = (1 << (sw.num_base + sw.num_bits + abs(sw.num_shift))) - 1  # the bits the swizzle reads and writes:
    if ob & lb & span:  # above them offsets add freely; below, o and L(i) must not carry into each other
        raise TraceError(f"{what}: the view's offset and its layout can set the same bits below the swizzle's "
                         f"span (offset bits {ob & span:#x}, layout bits {lb & span:#x}); CuTe DSL's form of such a "
                         f"layout is not S(o + L(i)) - S(o), which is all cutelab represents")
    only = _only_zy(sw)
    active = _project(only, plain, plain.size() - 1, _eval_last(plain) & sw.swizzle_code)
    if active & ~sw(active) and ob & sw.swizzle_code:  # CuTe DSL keeps S o zy o L: p + S(zy + L(i)), zy != 0
        raise TraceError(f"{what}: CuTe DSL keeps this view's swizzle with the offset's Y/Z bits (S o zy o L); a "
                         f"layout of that form on another pointer is not supported")
    shift = add(ptr.offset, mul(swizzle_expr(o, sw.num_bits, sw.num_base, sw.num_shift), -1))
    if not (isinstance(shift, int) and shift == 0):
        raise TraceError(f"{what}: the pointer is not the swizzled address of the view's own element (its offset "
                         f"{ptr.offset} is not {sw}({o})); cutelab supports this layout only on that pointer "
                         f"(quack's swizzle_ptr of the view's pointer)")
    view = SwizzledSmemEngine(src.param, sw, origin=src.origin, base_align=src.base_align)
    return Tensor(view, plain, o, _checked=True)


def swizzled_view(ptr: Any, layout: Any) -> Any:
    """make_tensor(smem pointer, S o k o L) in a kernel: the shared array read through the swizzle S
    (element units, as CuTe DSL evaluates a composed layout) at offsets k + L(i) from the pointer.
    The pointer of a tensor whose swizzle came from its layout is a plain pointer, as in CuTe DSL;
    None where this is not a kernel's shared memory. A view's layout (SwizzledViewLayout): view_tensor."""
    from ...swizzle import Swizzle
    from ...tensor import Tensor, TensorError

    if isinstance(layout, SwizzledViewLayout):
        return view_tensor(ptr, layout)
    eng = ptr.engine
    if not isinstance(eng, SmemEngine) or not isinstance(layout.inner, Swizzle) or not isinstance(layout.offset, int):
        return None
    if getattr(eng, "ptr_swizzle", None) is not None:
        raise TensorError(f"make_tensor: the pointer {ptr} is itself swizzled ({eng.ptr_swizzle}); a composed "
                          f"layout {layout} over it would swizzle twice")
    view = SwizzledSmemEngine(eng.param, layout.inner, origin=ptr.offset if isinstance(ptr.offset, int) else 0,
                              base_align=getattr(eng, "base_align", 0))
    off = ptr.offset + layout.offset if layout.offset else ptr.offset
    return Tensor(view, layout.outer, off, _checked=True)
