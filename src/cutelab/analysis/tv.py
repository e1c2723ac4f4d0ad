"""Access traces from layouts: a TV layout over a tensor layout, and ldmatrix over a shared tile.

``tv_trace(tv, layout, dtype, space)`` is CuTe's copy of a thread-value partition: thread t's
value v is element ``tv(t, v)`` of the tile, at memory offset ``layout(tv(t, v))`` elements from
the base. Like CuTe's auto-vectorising copy, each thread moves its values in vectors of the
widest width that every thread can use: a power of two of elements, at most 128 bits, that
divides the number of values, such that each vector's offsets are consecutive and its first
byte address is a multiple of the vector's size (given the base address alignment). For an
affine layout this is max_common_vector(layout o tv-of-a-thread, its register fragment) cut
down by the alignment; for a swizzled layout it also sees where the swizzle breaks contiguity.
Instruction k of a warp is the k-th vector of each of its 32 threads.

The tensor layout may be a ``Layout``, a ``ComposedLayout`` (``make_composed_layout(
make_swizzle(3, 3, 3), 0, layout)``: the swizzle acts on element offsets), either one as CuTe
notation text (``"S<3,3,3> o 0 o (8,64):(64,1)"``), or any callable from element index to offset
(numpy arrays in, numpy arrays out; or one int at a time).

>>> tr = tv_trace("(32,8):(1,32)", "(32,8):(8,1)", "f16", "shared")  # thread t: row t of 8 halves
>>> tr.bytes_per_lane, tr.num_instructions
(16, 1)
"""

from __future__ import annotations

import re
from typing import Any, Callable

import numpy as np

from .. import int_tuple as it
from ..errors import LayoutError
from ..layout import Layout, size
from ..numeric import NUMERICS, is_numeric_type
from ..swizzle import ComposedLayout, parse_composed
from .access import WARP_SIZE, AccessReport, AccessTrace, analyze

__all__ = [
    "element_bits", "offset_function", "parse_tensor_layout", "tv_offsets", "vector_width", "tv_trace",
    "ldmatrix_trace", "copy_trace", "analyze_tv",
]

_ALIASES = {"half": "f16", "float16": "f16", "bfloat16": "bf16", "float32": "f32", "float": "f32",
            "float64": "f64", "double": "f64", "int8": "i8", "uint8": "u8", "int16": "i16", "int32": "i32",
            "int64": "i64", "fp16": "f16", "fp32": "f32", "tf32": "f32"}


def element_bits(dtype: Any) -> int:
    """The width in bits of an element type: a cutelab Numeric, its name ('f16', 'bf16'), or a bit count.

    >>> element_bits("bf16"), element_bits(32)
    (16, 32)
    """
    if is_numeric_type(dtype):
        bits = dtype.width
    elif isinstance(dtype, (int, np.integer)) and not isinstance(dtype, bool):
        bits = int(dtype)
    elif isinstance(dtype, str):
        name = _ALIASES.get(dtype.lower(), dtype.lower())
        if name not in NUMERICS:
            raise LayoutError(f"element type {dtype!r} is unknown; use one of {', '.join(sorted(NUMERICS))} "
                              "or a bit count")
        bits = NUMERICS[name].width
    else:
        raise LayoutError(f"element type must be a Numeric, a name like 'f16' or a bit count, got {dtype!r}")
    if bits not in (8, 16, 32, 64):
        raise LayoutError(f"element type of {bits} bits: the analysis handles 8-, 16-, 32- and 64-bit elements")
    return bits


def parse_tensor_layout(text: str) -> Any:
    """A Layout from CuTe notation, or a ComposedLayout from ``"S<B,M,S> o offset o layout"``.

    >>> print(parse_tensor_layout("Sw<2,3,3> o 0 o (8,32):(32,1)"))
    S<2,3,3> o 0 o (8,32):(32,1)
    """
    if not isinstance(text, str):
        raise LayoutError(f"parse_tensor_layout: expected a string, got {type(text).__name__}")
    if re.search(r"\so\s", text):
        return parse_composed(text)
    return Layout.parse(text)


def _as_tv(tv: Any) -> Layout:
    if isinstance(tv, Layout):
        return tv
    if isinstance(tv, str):
        return Layout.parse(tv)
    raise LayoutError(f"a TV layout must be a Layout or CuTe notation text, got {type(tv).__name__}")


def offset_function(layout: Any) -> tuple[Callable[[np.ndarray], np.ndarray], int | None, str]:
    """(f, domain size or None, name): f maps an int64 array of element indices to offsets."""
    if isinstance(layout, str):
        layout = parse_tensor_layout(layout)
    if isinstance(layout, (Layout, ComposedLayout)):
        offs = layout.offsets()

        def f(idx: np.ndarray) -> np.ndarray:
            return offs[idx]

        return f, offs.size, str(layout)
    if callable(layout):
        n = None
        try:
            sz = getattr(layout, "size", None)
            n = int(sz() if callable(sz) else sz) if sz is not None else None
        except Exception:  # a size we cannot read is no size: we check the results instead
            n = None

        def g(idx: np.ndarray) -> np.ndarray:
            try:
                r = np.asarray(layout(idx))
                if r.shape == idx.shape and r.dtype.kind in "iu":
                    return r.astype(np.int64)
            except LayoutError:
                raise
            except Exception:  # not vectorized: call it one index at a time
                pass
            return np.array([int(layout(int(i))) for i in idx.reshape(-1)], np.int64).reshape(idx.shape)

        return g, n, str(layout)
    raise LayoutError(f"a tensor layout must be a Layout, text, a ComposedLayout or a callable, got "
                      f"{type(layout).__name__}")


def element_swizzle(layout: Any, bits: int, swizzle_units: str = "elements") -> Any:
    """The tensor layout with its swizzle in element units.

    A ComposedLayout's swizzle acts on what its outer layout produces: element offsets. CuTe's
    shared-memory atoms (``make_smem_layout_atom``, C++ ``GMMA::Layout_*_Atom``, the layouts of a
    swizzled smem pointer) swizzle byte addresses instead: ``S<3,4,3>`` for every element type.
    ``swizzle_units="bytes"`` reads the swizzle that way, as the hardware applies it: for
    2**k-byte elements S<B,M,S> on bytes is S<B,M-k,S> on elements.

    >>> print(element_swizzle("S<3,4,3> o 0 o (8,64):(64,1)", 16, "bytes"))
    S<3,3,3> o 0 o (8,64):(64,1)
    """
    if swizzle_units not in ("elements", "bytes"):
        raise LayoutError(f"swizzle_units must be 'elements' or 'bytes', got {swizzle_units!r}")
    if isinstance(layout, str):
        layout = parse_tensor_layout(layout)
    if swizzle_units == "elements" or not isinstance(layout, ComposedLayout):
        return layout
    from ..swizzle import Swizzle, make_composed_layout, make_swizzle

    sw = layout.inner
    if not isinstance(sw, Swizzle):
        raise LayoutError(f"swizzle_units='bytes': the inner function of {layout} is not a Swizzle")
    if bits % 8 or (bits // 8) & (bits // 8 - 1):
        raise LayoutError(f"swizzle_units='bytes': {bits}-bit elements are not a power-of-two number of bytes")
    k = (bits // 8).bit_length() - 1
    if sw.num_bits and sw.num_base < k:
        raise LayoutError(f"swizzle_units='bytes': {sw} on byte addresses moves bits below one {bits}-bit "
                          f"element (M={sw.num_base} < {k}): not an element permutation")
    return make_composed_layout(make_swizzle(sw.num_bits, max(sw.num_base - k, 0), sw.num_shift),
                                layout.offset, layout.outer)


def tv_offsets(tv: Any, layout: Any) -> np.ndarray:
    """(threads, values) int64 array: the memory offset in elements of thread t's value v.

    >>> tv_offsets("(2,2):(2,1)", "(4):(1)").tolist()
    [[0, 1], [2, 3]]
    """
    T, V, idx = _tv_indices(tv)
    f, n, name = offset_function(layout)
    if n is not None and idx.size and idx.max() >= n:
        raise LayoutError(f"TV layout {_as_tv(tv)} maps to element {int(idx.max())}, outside the tensor layout "
                          f"{name} of {n} elements")
    offs = f(idx.reshape(-1)).reshape(T, V)
    if offs.size and offs.min() < 0:
        raise LayoutError(f"tensor layout {name} gives a negative offset {int(offs.min())}")
    return offs


def _tv_indices(tv: Any) -> tuple[int, int, np.ndarray]:
    L = _as_tv(tv)
    if not isinstance(L.shape, tuple) or len(L.shape) != 2:
        raise LayoutError(f"a TV layout has two modes (thread, value), got {L}")
    T, V = it.product(L.shape[0]), it.product(L.shape[1])
    idx = L.offsets().reshape(V, T).T  # flat index t + T*v
    if idx.size and idx.min() < 0:
        raise LayoutError(f"TV layout {L} maps to a negative element index")
    return T, V, idx


def vector_width(offsets: np.ndarray, elem_bits: int, align: int = 16, base: int = 0,
                 max_bits: int = 128) -> int:
    """The widest vector (in elements) every thread can move: contiguous, aligned, dividing the values.

    >>> vector_width(np.array([[0, 1, 2, 3], [4, 5, 6, 7]]), 16)  # 4 halves, 8 bytes each
    4
    >>> vector_width(np.array([[0, 1, 2, 3], [4, 5, 6, 7]]), 16, align=4)
    2
    """
    eb = elem_bits // 8
    T, V = offsets.shape
    w = 1
    cand = 1
    while cand * 2 * elem_bits <= max_bits and V % (cand * 2) == 0 and (cand * 2 * eb) <= align:
        cand *= 2
    while cand > 1:
        o = offsets.reshape(T, V // cand, cand)
        contiguous = (o == o[..., :1] + np.arange(cand)).all()
        aligned = ((base + o[..., 0] * eb) % (cand * eb) == 0).all()
        if contiguous and aligned:
            w = cand
            break
        cand //= 2
    return w


def tv_trace(tv: Any, layout: Any, dtype: Any, space: str, align: int = 16, base: int = 0, op: str = "ld",
             vector_bits: int | None = None, swizzle_units: str = "elements") -> AccessTrace:
    """The warp instructions of a copy of the TV partition ``layout o tv``, auto-vectorised as CuTe does.

    tv:          (thread, value) -> element index of the tile.
    layout:      element index -> offset in elements (Layout, text, swizzled text, callable).
    dtype:       element type ('f16', Float16, 16).
    space:       'global' or 'shared'; op 'ld' or 'st'.
    align:       the base address is a multiple of this many bytes (limits the vector width).
    base:        the base byte address used for sectors and banks (a multiple of align).
    vector_bits: force a vector width (bits); an error if the layouts do not allow it.
    swizzle_units: 'bytes' for CuTe's smem-atom swizzles, which act on byte addresses (element_swizzle).

    >>> tr = tv_trace("(32,4):(4,1)", "(128):(1)", "f32", "global")
    >>> tr.bytes_per_lane, tr.addresses[0, :3].tolist()
    (16, [0, 16, 32])
    """
    bits = element_bits(dtype)
    eb = bits // 8
    if op not in ("ld", "st"):
        raise LayoutError(f"tv_trace: op must be 'ld' or 'st', got {op!r} (ldmatrix: ldmatrix_trace)")
    if align <= 0 or align & (align - 1):
        raise LayoutError(f"tv_trace: the base alignment must be a power of two of bytes, got {align}")
    if base < 0 or base % align:
        raise LayoutError(f"tv_trace: base address {base} is not a multiple of the alignment {align}")
    layout = element_swizzle(layout, bits, swizzle_units)
    offs = tv_offsets(tv, layout)
    T, V = offs.shape
    w = vector_width(offs, bits, align, base)
    if vector_bits is not None:
        if vector_bits % bits or vector_bits // bits < 1:
            raise LayoutError(f"tv_trace: a {vector_bits}-bit vector is not a whole number of {bits}-bit elements")
        want = vector_bits // bits
        if want > w or w % want:
            raise LayoutError(f"tv_trace: {vector_bits}-bit vectors are not possible for {tv} over {layout} "
                              f"with {align}-byte alignment; the widest is {w * bits} bits")
        w = want
    addr = base + offs.reshape(T, V // w, w)[..., 0] * eb  # (threads, vectors)
    label = f"{_as_tv(tv)} over {offset_function(layout)[2]}, {bits}-bit elements, {w * bits}-bit vectors"
    return AccessTrace.from_threads(addr.T, w * eb, space, op, label)


def ldmatrix_trace(layout: Any, dtype: Any = "f16", num: int = 4, trans: bool = False,
                   base: int = 0, swizzle_units: str = "elements") -> AccessTrace:
    """The ldmatrix.x{num} instructions one warp needs to read a shared (M, K) tile, block by block.

    ``layout`` maps the tile's (m, k) (flat index m + M*k) to element offsets. Each instruction
    reads num 8x8 matrices of 16-bit elements covering a block of (16, 16) (x4), (16, 8) (x2) or
    (8, 8) (x1); matrix j of x4 is rows 8*(j%2).., columns 8*(j//2).. (the A-operand order of
    mma.m16n8k16). Lane 8j+i gives the address of row i of matrix j: 8 elements that must be
    contiguous in memory along k, or along m with ``trans`` (ldmatrix .trans). Blocks are taken
    in column-major order of the tile. The tile shape is the layout's shape (a rank-2 Layout or
    swizzled layout).

    >>> tr = ldmatrix_trace("(16,16):(16,1)")
    >>> tr.addresses[0, :9].tolist()
    [0, 32, 64, 96, 128, 160, 192, 224, 256]
    """
    bits = element_bits(dtype)
    if bits != 16:
        raise LayoutError(f"ldmatrix_trace: ldmatrix .b16 moves 16-bit elements, got {bits}-bit {dtype!r}")
    if num not in (1, 2, 4):
        raise LayoutError(f"ldmatrix_trace: num must be 1, 2 or 4 (.x1, .x2, .x4), got {num}")
    layout = element_swizzle(layout, bits, swizzle_units)
    shp = getattr(layout, "shape", None)
    if not (isinstance(shp, tuple) and len(shp) == 2):
        raise LayoutError(f"ldmatrix_trace: needs a rank-2 (M, K) tile layout, got {layout}")
    M, K = it.product(shp[0]), it.product(shp[1])
    bm, bk = {4: (16, 16), 2: (16, 8), 1: (8, 8)}[num]
    if M % bm or K % bk:
        raise LayoutError(f"ldmatrix_trace: tile ({M},{K}) is not a whole number of ({bm},{bk}) blocks for .x{num}")
    f, _, name = offset_function(layout)
    lane = np.arange(8 * num)
    j, i = lane // 8, lane % 8
    # matrix j is the 8x8 block at rows r0, columns c0 of the (bm, bk) block; lane 8j+i gives its row i
    r0, c0 = 8 * (j % 2), 8 * (j // 2)
    e = np.arange(8)[None, :]
    if not trans:  # a memory row: logical row r0+i, columns c0..c0+7
        m, k = np.broadcast_to((r0 + i)[:, None], (lane.size, 8)), c0[:, None] + e
    else:  # .trans: a memory row is logical column c0+i, rows r0..r0+7
        m, k = r0[:, None] + e, np.broadcast_to((c0 + i)[:, None], (lane.size, 8))
    rows = []
    warps, index = [], []
    for bkk in range(K // bk):
        for bmm in range(M // bm):
            idx = (m + bm * bmm) + M * (k + bk * bkk)
            off = f(idx.reshape(-1)).reshape(idx.shape)
            if not (off == off[:, :1] + np.arange(8)).all():
                bad = int(np.nonzero(~(off == off[:, :1] + np.arange(8)).all(axis=1))[0][0])
                raise LayoutError(
                    f"ldmatrix_trace: {name}: row {bad % 8} of matrix {bad // 8} in block ({bmm},{bkk}) is not 8 "
                    f"contiguous elements (offsets {off[bad].tolist()}); ldmatrix{'.trans' if trans else ''} "
                    f"needs 16 contiguous bytes per row" + ("" if trans else " (try trans=True)"))
            row = np.full(WARP_SIZE, -1, np.int64)
            row[: lane.size] = base + off[:, 0] * 2
            rows.append(row)
            warps.append(0)
            index.append(len(index))
    label = f"ldmatrix.x{num}{'.trans' if trans else ''} over {name}"
    return AccessTrace(np.array(rows), 16, "shared", "ldsm", warps, index, label)


def copy_trace(tiled_copy: Any, layout: Any, space: str = "shared", side: str = "src", base: int = 0,
               align: int = 16, swizzle_units: str = "elements") -> AccessTrace:
    """The accesses of one side of a TiledCopy (``make_tiled_copy_*``) over a tensor layout.

    The thread-value layout is the tiled copy's ``layout_src_tv_tiled`` (or ``_dst_``), over
    ``layout``, the layout of the copied tile in memory (element index of the tiler_mn tile ->
    offset). A copy atom with a fixed width (``num_bits_per_copy``) moves vectors of that width;
    one without (CopyUniversalOp with no width) is auto-vectorised as in ``tv_trace``. An ldmatrix
    atom (``LdMatrix8x8x16bOp``, num_matrices n) makes one ldmatrix.x{n} per 8 values of each
    thread, with row addresses from lanes 0..8n-1 of each warp.

    >>> import cutelab as cute
    >>> from cutelab.nvgpu import warp
    >>> mma = cute.make_tiled_mma(cute.make_mma_atom(warp.MmaF16BF16Op(cute.Float16, cute.Float32, (16, 8, 16))))
    >>> tc = cute.make_tiled_copy_A(cute.make_copy_atom(warp.LdMatrix8x8x16bOp(False, 4), cute.Float16), mma)
    >>> tr = copy_trace(tc, "(16,16):(16,1)")  # A of mma.m16n8k16, row-major in shared memory
    >>> tr.kind(), tr.addresses[0, [0, 8, 16]].tolist()
    ('ldmatrix', [0, 256, 16])
    """
    if side not in ("src", "dst"):
        raise LayoutError(f"copy_trace: side must be 'src' or 'dst', got {side!r}")
    try:
        tv = getattr(tiled_copy, f"layout_{side}_tv_tiled")
        dtype = tiled_copy.value_type
    except AttributeError:
        raise LayoutError(f"copy_trace: expected a TiledCopy (layout_{side}_tv_tiled, value_type), got "
                          f"{type(tiled_copy).__name__}") from None
    op = getattr(tiled_copy, "op", None)
    opname = type(op).__name__
    if opname.startswith("StMatrix"):
        raise LayoutError(f"copy_trace: {opname} (stmatrix) is not modelled; ldmatrix and vector copies are")
    if opname.startswith("LdMatrix"):
        if opname != "LdMatrix8x8x16bOp":
            raise LayoutError(f"copy_trace: {opname} is not modelled; LdMatrix8x8x16bOp is")
        num = int(getattr(op, "num_matrices"))
        if side != "src" or space != "shared":
            raise LayoutError("copy_trace: ldmatrix reads shared memory: its src side, space 'shared'")
        tr = tv_trace(tv, layout, dtype, "shared", align=align, base=base, vector_bits=128,
                      swizzle_units=swizzle_units)
        a = tr.addresses.copy()
        a[:, 8 * num:] = -1  # the repeated rows of x1/x2 give no address
        return AccessTrace(a, 16, "shared", "ldsm", tr.warps, tr.index,
                           f"ldmatrix.x{num} of {tv} over {offset_function(layout)[2]}")
    bits = getattr(tiled_copy, "num_bits_per_copy", None)
    op_kind = "st" if side == "dst" else "ld"
    return tv_trace(tv, layout, dtype, space, align=align, base=base, op=op_kind, vector_bits=bits or None,
                    swizzle_units=swizzle_units)


def analyze_tv(tv: Any, layout: Any, dtype: Any, space: str, **kw: Any) -> AccessReport:
    """analyze(tv_trace(...)): the report of a TV partition's copy.

    >>> r = analyze_tv("(32,1):(1,1)", "(32,32):(32,1)", "f32", "shared")  # a column of a row-major tile
    >>> r.totals()["conflicts"]
    31
    """
    return analyze(tv_trace(tv, layout, dtype, space, **kw))
