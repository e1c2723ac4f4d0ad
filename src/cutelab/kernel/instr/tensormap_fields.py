"""One field of a TMA descriptor in memory, and the words of a tensor-map kernel parameter: what
``cutlass.experimental.primitives`` programs do to build and patch a descriptor themselves.

- ``TensorMapWordOp``: word ``k`` (8 bytes) of a ``cutlass.GridConstant[cuda.TensorMap]`` parameter,
  read through ``cutlass.Pointer(tmap.get_ptr(), dtype=cutlass.Int64)``. A kernel copies the 16 words
  to a workspace and patches them there (CUTLASS's ``tma_tensormap_replace.py``). CUDA: the word of
  the ``CUtensorMap`` parameter (the one TMA loads of the map use, encoded at launch). CPU: the word
  of kernel/instr/tensormap.py's image of the map (``encode``: tag, static part, the tensor's address,
  extents, byte strides), so the copied bytes are a descriptor that image's readers (TMA through a
  descriptor pointer) decode.
- ``TensorMapReplaceOp``: ``tensormap.replace.tile.{global_address,global_dim,global_stride}`` on the
  descriptor in global or shared memory (``prims.tensormap_replace``). CPU: the field of the image
  is rewritten; bytes that hold no descriptor, a dimension past the map's rank, an extent outside
  1..2^32 or a stride that is not a multiple of 16 below 2^40 are a LaunchError naming the op and
  line. CUDA: the PTX instruction, and for a new extent or stride the reset of the out-of-bounds
  fetch-window bit (bit 21 of 32-bit word 2) that CuTe DSL's wrapper applies unless
  ``keep_oob_fetch_window=True`` (it has no CPU effect: the image has no such bit).
"""

from __future__ import annotations

from typing import Any, List, Tuple

import numpy as np

from ...errors import LaunchError, TraceError
from ..frontend.trace import TraceValue, current
from ..ir.nodes import Access, Op
from ..ir.symbolic import is_sym
from .tensormap import DescLoc, _WORDS, decode, desc_loc, encode
from .tma import TENSORMAP_STRUCT, name_tensor_map

__all__ = ["TensorMapWordOp", "TensorMapReplaceOp", "tensormap_word", "tensormap_replace"]

FIELDS = ("global_address", "global_dim", "global_stride")


class TensorMapWordOp(Op):
    """``dst`` = word ``word`` of the tensor map of kernel argument ``param`` (descriptor ``desc``)."""

    __slots__ = ("desc", "param", "word", "dst", "tmap_name", "where")

    def __init__(self, desc: Any, param: Any, word: int, dst: Any, where: str):
        self.desc, self.param, self.word, self.dst, self.where = desc, param, word, dst, where
        self.tmap_name = f"tmap_{param.name}"

    def __repr__(self) -> str:
        return f"{self.dst!r} = {self.tmap_name}.word[{self.word}]"

    def kernel_params(self) -> List[Tuple[str, str]]:
        return [(TENSORMAP_STRUCT, f"const __grid_constant__ cl_tensormap {self.tmap_name}")]

    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
        addr = int((getattr(b, "addresses", None) or {}).get(self.param.index, 0))
        v = encode(self.desc, addr)[self.word:self.word + 1].view(np.int64)[0]
        res = b.regs.get(self.dst.id)
        if res is None:
            res = np.zeros((b.n, 1), dtype=self.dst.dtype.storage)
        if mask is None:
            res[:, 0] = v
        else:
            res[mask, 0] = v
        b.regs[self.dst.id] = res

    def cuda(self, r: Any) -> None:
        r.declare(self.dst)
        r.emit(f"{r.reg(self.dst)}[0] = (long long)((const unsigned long long*)&{self.tmap_name})[{self.word}];")


def tensormap_word(tmap: Any, word: Any, what: str) -> TraceValue:
    """Word ``word`` (a compile-time int in 0..15) of the tensor map ``tmap`` (a kernel argument's
    ``cutlass.experimental.cuda.TensorMap``), as an Int64 value."""
    from ...numeric import Int64
    from ..frontend.engines import GmemEngine, SmemEngine

    t = current(what)
    w = getattr(word, "value", word)
    if isinstance(w, bool) or not isinstance(w, (int, np.integer)):
        raise TraceError(f"kernel {t.name}: {what}: the descriptor's word must be a compile-time index, got "
                         f"{type(word).__name__}{t.where()}")
    if not 0 <= int(w) < _WORDS:
        raise TraceError(f"kernel {t.name}: {what}: word {int(w)} is outside the 128-byte descriptor (words "
                         f"0..{_WORDS - 1}){t.where()}")
    g = tmap.tensor.engine
    if not isinstance(g, GmemEngine) or isinstance(g, SmemEngine) or getattr(g, "param", None) is None:
        raise TraceError(f"kernel {t.name}: {what}: the tensor map must be a kernel argument (cutlass.GridConstant"
                         f"[cuda.TensorMap]) built by the jit function that launches the kernel{t.where()}")
    dst = t.new_reg(Int64, 1)
    op = TensorMapWordOp(tmap.desc, g.param, int(w), dst, t.where())
    name_tensor_map(t, op, g.param.index, tmap.desc)
    t.emit(op)
    return TraceValue([(dst, 0)], (), Int64)


def _column(b: Any, v: Any, act: np.ndarray) -> np.ndarray:
    """The values (int64, per active thread) of an int, a register element or a kernel argument's
    address (Param, element offset)."""
    from ...numeric import Int64

    if isinstance(v, (int, np.integer)):
        return np.full(act.size, int(v), dtype=np.int64)
    if isinstance(v, tuple) and getattr(v[0], "kind", None) == "pointer":
        p, off = v
        base = int((getattr(b, "addresses", None) or {}).get(p.index, 0))
        o = np.broadcast_to(np.asarray(b.index(off), dtype=np.int64), (b.n,))[act]
        return base + o * p.dtype.bytes
    return np.broadcast_to(np.asarray(b.column(v, Int64, real=True), dtype=np.int64), (b.n,))[act]


class TensorMapReplaceOp(Op):
    """``tensormap.replace.tile.<field>`` of the descriptor at ``dloc``: ``value`` (an int, a register
    element, or for the address (Param, element offset) of a kernel argument) into the field, of
    dimension ``ord`` (global_dim: that dimension's extent; global_stride: the byte stride of dimension
    ord + 1, the innermost one's being the element size)."""

    __slots__ = ("dloc", "field", "ord", "value", "fixup", "where")

    def __init__(self, loc: DescLoc, field: str, ord: Any, value: Any, fixup: bool, where: str):
        self.dloc, self.field, self.ord, self.value, self.fixup, self.where = loc, field, ord, value, fixup, where

    def __repr__(self) -> str:
        from ..ir.nodes import _ref_str

        o = "" if self.ord is None else f"[{self.ord}]"
        return f"tensormap.replace {self.dloc.mem.name}[{_ref_str(self.dloc.base)}].{self.field}{o}"

    def accesses(self) -> List[Access]:
        return [self.dloc.access(self, False), self.dloc.access(self, True)]

    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
        act = np.arange(b.n) if mask is None else np.nonzero(mask)[0]
        if act.size == 0:
            return
        what = f"{b.ir.name}{self.where}: tensormap.replace.{self.field}"
        words = self.dloc.read(b, buffers, act, what).copy()
        vals = _column(b, self.value, act)
        for i in range(act.size):
            desc = decode(words[i], what)[0]  # a descriptor must be there
            if self.field == "global_address":
                continue
            dim = self.ord if self.field == "global_dim" else self.ord + 1
            if dim >= desc.rank:
                raise LaunchError(f"{what}: the descriptor has {desc.rank} dimensions; ord={self.ord} names "
                                  f"{'dimension' if self.field == 'global_dim' else 'the stride of dimension'} {dim}")
        v = vals
        if self.field == "global_address":
            words[:, 2] = v.astype(np.uint64)
        elif self.field == "global_dim":
            bad = (v < 1) | (v > 1 << 32)
            if bad.any():
                raise LaunchError(f"{what}: extent {int(v[bad][0])} of TMA dimension {self.ord} is not in 1..2^32")
            words[:, 3 + self.ord] = v.astype(np.uint64)
        else:
            bad = (v % 16 != 0) | (v < 0) | (v >= 1 << 40)
            if bad.any():
                raise LaunchError(f"{what}: byte stride {int(v[bad][0])} of TMA dimension {self.ord + 1} is not a "
                                  f"multiple of 16 below 2^40, as TMA requires")
            words[:, 8 + self.ord + 1] = v.astype(np.uint64)
        self.dloc.write(b, buffers, act, words, what)

    def cuda(self, r: Any) -> None:
        from ...numeric import Int32, Int64

        a, ss = self.dloc.cuda_addr(r)
        v = self.value
        if isinstance(v, (int, np.integer)):
            code = str(int(v))
        elif isinstance(v, tuple) and getattr(v[0], "kind", None) == "pointer":
            p, off = v
            code = f"({p.name} + {r.expr(off)[0] if is_sym(off) else int(off)})"
        else:
            code = r.value(v, Int32 if self.field == "global_dim" else Int64)
        if self.field == "global_dim":
            val, cons, width = f"(unsigned)({code})", "r", "b32"
        else:
            val, cons, width = f"(unsigned long long)({code})", "l", "b64"
        o = "" if self.ord is None else f" {int(self.ord)},"
        with r.braces():
            r.emit(f"unsigned long long cl_td = {a};")
            r.emit(f'asm volatile("tensormap.replace.tile.{self.field}{ss}.b1024.{width} [%0],{o} %1;" :: "l"(cl_td), '
                   f'"{cons}"({val}) : "memory");')
            if self.fixup:  # CuTe DSL: back to the always-safe out-of-bounds fetch mode (bit 21 of word 2)
                if ss == ".global":
                    r.emit("((unsigned*)cl_td)[2] &= ~(1u << 21);")
                else:
                    r.emit('{ unsigned cl_w; asm volatile("ld.shared.b32 %0, [%1];" : "=r"(cl_w) : '
                           '"r"((unsigned)cl_td + 8)); asm volatile("st.shared.b32 [%0], %1;" :: '
                           '"r"((unsigned)cl_td + 8), "r"(cl_w & ~(1u << 21)) : "memory"); }')


def _address_value(v: Any, what: str) -> Any:
    """What TensorMapReplaceOp takes as a new global address: a kernel argument's pointer's address
    (``p.toint()``: (Param, element offset)), or an Int64 value computed in the kernel (its register)."""
    from ...address import PointerInt
    from ...numeric import Int64
    from ..frontend.engines import GmemEngine, SmemEngine
    from .address_access import AddressEngine

    t = current(what)
    if isinstance(v, PointerInt):
        eng, off, d = v.ptr.engine, v.ptr.offset, getattr(v.delta, "value", v.delta)
        if isinstance(eng, AddressEngine):
            base = eng.address_of(off) if not (isinstance(off, (int, np.integer)) and int(off) == 0) else None
            ref = base.refs[0] if base is not None else eng.addr
            if not (isinstance(d, (int, np.integer)) and int(d) == 0):
                raise TraceError(f"kernel {t.name}: {what}: an address at a runtime address plus a byte offset is "
                                 f"not supported; move the pointer instead{t.where()}")
            return ref
        if not isinstance(eng, GmemEngine) or isinstance(eng, SmemEngine) or getattr(eng, "param", None) is None:
            raise TraceError(f"kernel {t.name}: {what}: the new address must be in a kernel argument's global memory, "
                             f"got a {getattr(eng, 'memspace', '?')} pointer{t.where()}")
        eb = eng.dtype.bytes
        if not isinstance(d, (int, np.integer)) or int(d) % eb:
            raise TraceError(f"kernel {t.name}: {what}: the address is the pointer plus {d!r} bytes, not a whole number "
                             f"of its {eb}-byte elements{t.where()}")
        off = off + int(d) // eb
        if is_sym(off):
            t.check_index(off, what)
        eng.param.read = True
        return (eng.param, off)
    if isinstance(v, TraceValue):
        if len(v.refs) != 1 or v.dtype.kind not in ("int", "uint"):
            raise TraceError(f"kernel {t.name}: {what}: the new address must be one integer, got {v.dtype} of shape "
                             f"{v.shape}{t.where()}")
        x = v.to(Int64)
        t.check_refs(x.refs, what)
        return x.refs[0]
    raise TraceError(f"kernel {t.name}: {what}: the new address must be a pointer's toint() in the kernel, got "
                     f"{type(v).__name__}{t.where()}")


def _int_value(v: Any, what: str) -> Any:
    from ...numeric import Int64

    t = current(what)
    x = getattr(v, "value", v) if not isinstance(v, TraceValue) else v
    if isinstance(x, bool):
        x = int(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    if is_sym(x):  # an index expression (a scalar kernel argument, a loop index)
        t.check_index(x, what)
        return x
    if isinstance(x, TraceValue) and len(x.refs) == 1 and x.dtype.kind in ("int", "uint"):
        y = x.to(Int64)
        t.check_refs(y.refs, what)
        return y.refs[0]
    raise TraceError(f"kernel {t.name}: {what}: the new value must be one integer, got {type(v).__name__}{t.where()}")


def tensormap_replace(ptr: Any, field: str, ord: Any, value: Any, fixup: bool, what: str) -> None:
    """``tensormap.replace`` of ``field`` (one of FIELDS) of the descriptor at the cutelab pointer ptr (64-bit
    words in a kernel argument's global memory or in shared memory)."""
    t = current(what)
    if field not in FIELDS:
        raise TraceError(f"kernel {t.name}: {what}: field {field!r} is not one cutelab replaces ({', '.join(FIELDS)})"
                         f"{t.where()}")
    if field == "global_address":
        val = _address_value(value, what)
    else:
        val = _int_value(value, what)
    loc = desc_loc(ptr, what)
    t.emit(TensorMapReplaceOp(loc, field, ord, val, fixup and field != "global_address", t.where()))
