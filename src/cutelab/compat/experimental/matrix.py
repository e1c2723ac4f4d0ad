"""``prims.ldmatrix`` / ``prims.stmatrix`` of CuTe DSL 4.8.1's primitives, in their ``m8n8`` 16-bit form:
a warp moves ``num`` 8x8 matrices of b16 between shared memory and 32-bit registers, each lane
handing in the address of one 16-byte row (lanes ``8i .. 8i+7``: the rows of matrix ``i``).

Register word ``i`` of lane ``t`` holds, of matrix ``i``, the elements ``(t // 4, 2 (t % 4))`` and
``(t // 4, 2 (t % 4) + 1)`` (low half first); with ``MMALayout.COL`` (``.trans``) the elements
``(2 (t % 4), t // 4)`` and ``(2 (t % 4) + 1, t // 4)``. cutelab composes the instruction from its own
warp instructions, the same on both back ends: each lane gets the row address it needs from the lane
that holds it (``shfl.sync.idx`` of the address's offset), then loads or stores its two elements
there; the words are the elements' bits (``bitcast``). The narrow forms (``m8n16``, ``m16n16``,
``m16n8``: b8 and packed b4/b6 sources, SM100) are refused by name.
"""

from __future__ import annotations

from typing import Any, List, Tuple

from ...errors import TraceError
from ..where import NotEmulatedError, user_line

__all__ = ["ldmatrix", "stmatrix"]

FULL_MASK = 0xFFFFFFFF


def _s(x: Any) -> Any:
    return getattr(x, "value", x)


def _operand(ptr: Any, what: str) -> Tuple[Any, Any, Any]:
    """(engine, this lane's row offset (an element offset: int, index expression or register value),
    element type) of a row pointer."""
    from ...kernel.frontend.engines import SmemEngine
    from .memory import cute_pointer

    p, peer = cute_pointer(ptr, what)
    eng = p.engine
    if peer is not None or not isinstance(eng, SmemEngine):
        raise TraceError(f"{what}: the row addresses must point into this CTA's shared memory, got {ptr!r}")
    if eng.dtype.width != 16:
        raise NotEmulatedError(f"{what} of {eng.dtype} rows", "cutelab has the m8n8 form of 16-bit elements",
                               where=user_line(3))
    return eng, p.offset, eng.dtype


def _shape_ok(shape: Any, src_format: Any, names: Tuple[str, ...], what: str) -> None:
    s = None if shape is None else str(_s(shape)).lower()
    if (s is not None and s not in names) or src_format is not None:
        raise NotEmulatedError(f"{what}(shape={s}, src_format={_s(src_format)})", "cutelab has the m8n8 form of "
                               "16-bit elements (the narrow forms are SM100's)", where=user_line(3))


def _row_of(off: Any, lane: Any, what: str) -> Any:
    """The row offset lane ``lane`` holds (shfl.sync.idx over the whole warp)."""
    from .enums import Shfl
    from .wrappers import shfl_sync

    return shfl_sync(FULL_MASK, off, lane, 31, Shfl.IDX)


def _element(eng: Any, index: Any) -> Any:
    from ...layout import make_layout
    from ...tensor import Tensor

    return Tensor(eng, make_layout(1), index.as_index() if hasattr(index, "as_index") else index)


def _num(num: Any, what: str) -> int:
    n = _s(num)
    if n not in (1, 2, 4):
        raise ValueError(f"{what}: num must be 1, 2, or 4, got {num}")
    return int(n)


def _trans(layout: Any) -> bool:
    return str(_s(layout)).lower() in ("col", "mmalayout.col")


def ldmatrix(ptr: Any, num: Any, layout: Any, *, shape: Any = None, src_format: Any = None, loc: Any = None,
             ip: Any = None) -> Any:
    """``ldmatrix.sync.aligned.m8n8.x{num}[.trans].shared.b16``: an Int32 (num 1) or a Vector of num Int32
    register words."""
    from ...kernel.frontend.threads import lane_idx
    from ...kernel.frontend.trace import TraceValue
    from ...kernel.instr.bitcast import bitcast
    from ...numeric import Int32
    from .vector import Vector

    what = "prims.ldmatrix"
    n = _num(num, what)
    _shape_ok(shape, src_format, ("m8n8",), what)
    eng, off, dt = _operand(ptr, what)
    t = lane_idx()
    row, pair = t // 4, (t % 4) * 2
    words: List[Any] = []
    for i in range(n):
        if _trans(layout):
            a = _element(eng, _row_of(off, pair + 8 * i, what) + row)[0]
            b = _element(eng, _row_of(off, pair + 1 + 8 * i, what) + row)[0]
        else:
            base = _row_of(off, row + 8 * i, what) + pair
            a, b = _element(eng, base)[0], _element(eng, base + 1)[0]
        two = TraceValue([a.refs[0], b.refs[0]], (2,), dt)
        words.append(bitcast(two, Int32, what, n=1))
    return words[0] if n == 1 else Vector.from_elements(tuple(words), Int32)


def stmatrix(ptr: Any, value: Any, layout: Any, *, shape: Any = None, loc: Any = None, ip: Any = None) -> None:
    """``stmatrix.sync.aligned.m8n8.x{n}[.trans].shared.b16``: n (1, 2 or 4) register words per lane, an
    Int32, a Vector or a list of them, stored as ldmatrix loads them."""
    from ...kernel.frontend.threads import lane_idx
    from ...kernel.instr.bitcast import bitcast
    from ...numeric import Int32

    what = "prims.stmatrix"
    _shape_ok(shape, None, ("m8n8",), what)
    words = value.elements() if hasattr(value, "elements") else list(value) if isinstance(value, (list, tuple)) \
        else [value]
    _num(len(words), what)
    eng, off, dt = _operand(ptr, what)
    t = lane_idx()
    row, pair = t // 4, (t % 4) * 2
    for i, w in enumerate(words):
        w = w if getattr(w, "dtype", None) is not None and w.dtype.name == "i32" else Int32(w)
        a, b = (bitcast(w, dt, what, n=2)[k] for k in range(2))
        if _trans(layout):
            _element(eng, _row_of(off, pair + 8 * i, what) + row)[0] = a
            _element(eng, _row_of(off, pair + 1 + 8 * i, what) + row)[0] = b
        else:
            base = _row_of(off, row + 8 * i, what) + pair
            _element(eng, base)[0] = a
            _element(eng, base + 1)[0] = b
