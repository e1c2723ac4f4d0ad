"""Warp-collective matrix copies: ``ldmatrix`` (shared memory -> registers) and ``stmatrix``
(registers -> shared memory), as ``cutlass.cute.nvgpu.warp`` names them.

Their thread-value layouts are CuTe's (copy_traits_sm75.hpp, _sm90.hpp, _sm100.hpp), written in
bits and recast to the element type. On the shared-memory side each of the 32 threads holds the
address of one 128-bit row; on the register side each thread holds 32-bit pieces of the 8x8
matrices as ``mma.sync`` fragments expect them.

>>> import cutelab as cute
>>> a = cute.make_copy_atom(LdMatrix8x8x16bOp(num_matrices=4), cute.Float16)
>>> print(a.layout_src_tv, a.layout_dst_tv)
(32,8):(8,1) (32,(2,4)):(2,(1,64))
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from ... import int_tuple as it
from ...layout import Layout
from ...numeric import Numeric
from ..universal_copy import CopyOp, _recast_bits, _reject

__all__ = [
    "LdMatrix8x8x16bOp", "LdMatrix8x16x8bOp", "LdMatrix16x8x8bOp", "LdMatrix16x16x8bOp",
    "StMatrix8x8x16bOp", "StMatrix16x8x8bOp",
]

P = Layout.parse

# ---- bit layouts, (thread, value) -> bit offset within the atom's data
# shared-memory side: thread t holds the 128-bit row it points at (rows beyond the matrices
# addressed are repeats: stride 0)
_ROWS = {1: P("((8,4),128):((128,0),1)"), 2: P("((16,2),128):((128,0),1)"), 4: P("(32,128):(128,1)")}
# register side of the non-transposed 8x8 b16: 32 bits per thread per matrix
_FRAG_N = {1: P("(32,32):(32,1)"), 2: P("(32,(32,2)):(32,(1,1024))"), 4: P("(32,(32,4)):(32,(1,1024))")}
# register side of the transposed 8x8 b16
_FRAG_T = {
    1: P("((4,8),(16,2)):((256,16),(1,128))"),
    2: P("((4,8),(16,2,2)):((256,16),(1,128,1024))"),
    4: P("((4,8),(16,2,4)):((256,16),(1,128,1024))"),
}
# register side of the transposed 16x8 b8 (SM100 U8x{4,8,16} stmatrix / U8x{8,16} ldmatrix)
_FRAG_16x8_T = {
    1: P("((4,8),(8,2,2)):((256,8),(1,128,64))"),
    2: P("((4,8),(8,2,2,2)):((256,8),(1,128,64,1024))"),
    4: P("((4,8),(8,2,2,4)):((256,8),(1,128,64,1024))"),
}
# shared-memory side of the 16x8 b8 transposed ldmatrix (rows of two matrices interleaved)
_ROWS_16x8_T = {2: P("((2,2,4,2),128):((128,1024,256,0),1)"), 4: P("((2,2,4,2),128):((128,1024,256,2048),1)")}
# register side of the 16x16 b8 transposed ldmatrix
_FRAG_16x16_T = {1: P("((4,8),(8,4,2)):((512,8),(1,128,64))"), 2: P("((4,8),(8,4,2,2)):((512,8),(1,128,64,2048))")}


def _err(op: Any, msg: str) -> ValueError:
    return ValueError(f"{type(op).__name__}(transpose={op.transpose}, num_matrices={op.num_matrices}"
                      f"{'' if op.unpack_bits is None else f', unpack_bits={op.unpack_bits}'}): {msg}")


@dataclass(frozen=True)
class _MatrixOp(CopyOp):
    """Fields and printing shared by the ldmatrix/stmatrix ops."""

    transpose: bool = False
    num_matrices: int = 1
    unpack_bits: Optional[int] = None

    _MATRICES = (1, 2, 4)  # class constants (not dataclass fields: no annotation)
    _TRANSPOSE = (False, True)
    _UNPACK = (None,)

    def __post_init__(self) -> None:
        if not isinstance(self.transpose, bool):
            raise _err(self, "expects the 'transpose' Op parameter to be a bool")
        if self.transpose not in self._TRANSPOSE:
            raise _err(self, "Op only supports transpose" if self.transpose is False else "Op doesn't support transpose")
        if isinstance(self.num_matrices, bool) or self.num_matrices not in self._MATRICES:
            raise _err(self, f"expects the 'num_matrices' Op parameter to be one of [{','.join(map(str, self._MATRICES))}]")
        if self.unpack_bits not in self._UNPACK:
            raise _err(self, "Op doesn't support unpacking" if self._UNPACK == (None,)
                       else "Op unpack bits must be 4 or 6 or None")

    def __str__(self) -> str:
        s = f"{type(self).__name__[:-2]} Copy Operation\n  number of matrices = {self.num_matrices}"
        if self.transpose:
            s += "\n  transposed"
        if self.unpack_bits is not None:
            s += f"\n  unpack {self.unpack_bits}b to 8b"
        return s

    def _bits(self) -> tuple:  # (src, dst, ref is "src" or "dst")
        raise NotImplementedError

    def _atom_layouts(self, value_type: Numeric, **kwargs: Any) -> dict:
        _reject(self, kwargs, ())
        src, dst, ref = self._bits()
        s, d = _recast_bits(value_type, src), _recast_bits(value_type, dst)
        thr = Layout(32, 1)
        for side, lay in (("source", s), ("destination", d)):
            n = it.product(lay.shape[0])
            if n != 32:
                raise ValueError(
                    f"make_copy_atom({self!r}, {value_type}): recast to {value_type.width}-bit elements the "
                    f"{side} TV layout {lay} has {n} threads, not the 32 of the warp; this copy cannot move "
                    f"{value_type} elements (CuTe: 'CopyOperation is not valid for Src/Dst of ValType')"
                )
        return {"thr_id": thr, "src": s, "dst": d, "ref": s if ref == "src" else d, "num_bits_per_copy": None}


@dataclass(frozen=True)
class LdMatrix8x8x16bOp(_MatrixOp):
    """``ldmatrix.m8n8.b16`` (``.trans`` with transpose=True), 1, 2 or 4 matrices.

    >>> print(LdMatrix8x8x16bOp(True, 2))
    LdMatrix8x8x16b Copy Operation
      number of matrices = 2
      transposed
    """

    def _bits(self) -> tuple:
        return _ROWS[self.num_matrices], (_FRAG_T if self.transpose else _FRAG_N)[self.num_matrices], "dst"


@dataclass(frozen=True)
class LdMatrix8x16x8bOp(_MatrixOp):
    """``ldmatrix.m8n16`` with unpacking of 4- or 6-bit elements to 8 bits (unpack_bits), or
    without (the same as LdMatrix8x8x16bOp). The layouts do not depend on unpack_bits."""

    _TRANSPOSE = (False,)
    _UNPACK = (None, 4, 6)

    def _bits(self) -> tuple:
        return _ROWS[self.num_matrices], _FRAG_N[self.num_matrices], "dst"


@dataclass(frozen=True)
class LdMatrix16x8x8bOp(_MatrixOp):
    """16x8 8-bit transposed ldmatrix (``.m16n16`` with permutations matching stmatrix.m16n8.trans);
    transpose must be True, 2 or 4 matrices."""

    transpose: bool = True
    num_matrices: int = 2
    _TRANSPOSE = (True,)
    _MATRICES = (2, 4)
    _UNPACK = (None, 4, 6)

    def _bits(self) -> tuple:
        return _ROWS_16x8_T[self.num_matrices], _FRAG_16x8_T[self.num_matrices], "dst"


@dataclass(frozen=True)
class LdMatrix16x16x8bOp(_MatrixOp):
    """``ldmatrix.m16n16.trans.b8``; transpose must be True, 1 or 2 matrices."""

    transpose: bool = True
    _TRANSPOSE = (True,)
    _MATRICES = (1, 2)
    _UNPACK = (None, 4, 6)

    def _bits(self) -> tuple:
        return {1: _ROWS[2], 2: _ROWS[4]}[self.num_matrices], _FRAG_16x16_T[self.num_matrices], "dst"


@dataclass(frozen=True)
class StMatrix8x8x16bOp(_MatrixOp):
    """``stmatrix.m8n8.b16`` (``.trans`` with transpose=True): ldmatrix with source and
    destination exchanged."""

    def _bits(self) -> tuple:
        return (_FRAG_T if self.transpose else _FRAG_N)[self.num_matrices], _ROWS[self.num_matrices], "src"


@dataclass(frozen=True)
class StMatrix16x8x8bOp(_MatrixOp):
    """``stmatrix.m16n8.trans.b8``; transpose must be True."""

    transpose: bool = True
    _TRANSPOSE = (True,)

    def _bits(self) -> tuple:
        return _FRAG_16x8_T[self.num_matrices], _ROWS[self.num_matrices], "src"
