"""``cute.copy`` with ``warp.LdMatrix8x8x16bOp`` inside a traced kernel: ``ldmatrix`` from
shared memory into registers (and ``warp.StMatrix8x8x16bOp``: ``stmatrix`` back, SM90).

``kernel_ldmatrix(atom, src, dst)`` takes a thread's partitions (``partition_S`` of a shared
tensor, ``retile`` of a register fragment) of profile (CPY, REST...) and emits one ``LdMatrix``
op per rest coordinate. Each lane hands in the address of one 16-byte row: its CPY source
values, which must be 8 consecutive b16 elements of shared memory (after the swizzle, if any).

``LdMatrix`` is a warp op:

- CPU: the rows of lanes 0..8*num_matrices-1 are read (16*num_matrices for SM100's 16x16 b8
  ``LdMatrix16x16x8bOp``, ``ldmatrix.m16n16.trans.b8``); row value v of lane t lands at atom
  offset ``src_tv(t, v)``, and destination value v of lane t is the one at ``dst_tv(t, v)`` (the
  exchange nvgpu's host copy does, warp by warp);
- CUDA: ``ldmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16`` on the row's 32-bit
  shared-window address (``LoweringContext.shared_address``); register j of the instruction holds destination
  values 2j (low half) and 2j+1 (high half); of the 16x16 b8 one, the bytes of each register pair
  are exchanged as CuTe's SM100_U8x{8,16}_LDSM_T exchange them (``_m16n16_byte``).

``StMatrix`` is the same exchange the other way: every lane's registers go in at
``src_tv(t, v)``, and lane t < 8*num_matrices writes its 16-byte row, value j from ``dst_tv(t, j)``.

>>> from cutelab.nvgpu import warp
>>> ptx_name(warp.LdMatrix8x8x16bOp(True, 4))
'ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16'
"""

from __future__ import annotations

from typing import Any, Dict, List

import numpy as np

from ... import int_tuple as it
from ...errors import TraceError
from ..ir.symbolic import is_sym
from ..ir.nodes import Access, Op, Reg
from ..frontend.engines import SmemEngine
from ..frontend.trace import TraceValue, _static_offsets, current

__all__ = ["LdMatrix", "StMatrix", "kernel_ldmatrix", "kernel_stmatrix", "ptx_name", "is_ldmatrix", "is_stmatrix"]


def ptx_name(op: Any) -> str:
    t = ".trans" if op.transpose else ""
    name = "stmatrix" if is_stmatrix(op) else "ldmatrix"
    unpack = ".b8x16.b4x16_p64" if getattr(op, "unpack_bits", None) == 4 else ""
    if _is_m16n16(op):
        return f"ldmatrix.sync.aligned.m16n16.x{op.num_matrices}.trans.shared{unpack or '.b8'}"
    if unpack:
        return f"ldmatrix.sync.aligned.m8n16.x{op.num_matrices}.shared{unpack}"
    return f"{name}.sync.aligned.m8n8.x{op.num_matrices}{t}.shared.b16"


def _is_m16n16(op: Any) -> bool:
    from ...nvgpu.warp.copy import LdMatrix16x16x8bOp

    return type(op) is LdMatrix16x16x8bOp


def _m16n16_byte(v: int) -> tuple:
    """(register, byte) of the ldmatrix .m16n16 .trans .b8 result that is value v of the atom's destination
    TV layout: CuTe's SM100_U8x{8,16}_LDSM_T take, of each pair of registers (a, b), the value registers
    {a.x, a.y, b.x, b.y} and {a.z, a.w, b.z, b.w} (copy_sm100.hpp), which its layout describes."""
    pair, q = divmod(v, 8)
    return 2 * pair + ((q >> 1) & 1), (q & 1) + 2 * (q >> 2)


def _unpack4(rows: np.ndarray) -> np.ndarray:
    """ldmatrix's .b8x16.b4x16_p64 source format: each 16-byte row's first 8 bytes hold 16 4-bit values (the
    even one in the low nibble), each read into a byte of its own, zero-extended (the last 8 bytes: padding).

    >>> _unpack4(np.array([[0x21, 0xF3] + [0] * 6 + [0x55] * 8], dtype=np.uint8).view(np.int8)).tolist()
    [[1, 2, 3, 15, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]]
    """
    u = rows.view(np.uint8)[..., :8]
    out = np.empty(rows.shape, dtype=np.uint8)
    out[..., 0::2] = u & 0xF
    out[..., 1::2] = u >> 4
    return out.view(rows.dtype)


def _rows_read(op: Any) -> int:
    """The lanes whose row addresses the instruction reads: 8 per 8x8 matrix, 16 per 16x16 (SM100 b8)."""
    return (16 if _is_m16n16(op) else 8) * op.num_matrices


def is_stmatrix(op: Any) -> bool:
    """Any warp stmatrix op (those kernel_stmatrix cannot run it refuses: never a per-thread copy)."""
    from ...nvgpu.warp.copy import StMatrix8x8x16bOp, StMatrix16x8x8bOp

    return type(op) in (StMatrix8x8x16bOp, StMatrix16x8x8bOp)


def is_ldmatrix(op: Any) -> bool:
    """Any warp ldmatrix op (those kernel_ldmatrix cannot run it refuses: never a per-thread copy)."""
    from ...nvgpu.warp.copy import LdMatrix8x8x16bOp, LdMatrix8x16x8bOp, LdMatrix16x8x8bOp, LdMatrix16x16x8bOp

    return type(op) in (LdMatrix8x8x16bOp, LdMatrix8x16x8bOp, LdMatrix16x8x8bOp, LdMatrix16x16x8bOp)


def _supported(t: Any, op: Any) -> None:
    """ldmatrix .m8n8 .b16 (LdMatrix8x8x16bOp; LdMatrix8x16x8bOp without unpacking, which CuTe DSL
    says is the same instruction, over 8-bit elements), SM100's ldmatrix .m16n16 .trans .b8
    (LdMatrix16x16x8bOp without unpacking) and stmatrix .m8n8 .b16 run in kernels."""
    from ...nvgpu.warp.copy import LdMatrix8x8x16bOp, LdMatrix8x16x8bOp, LdMatrix16x16x8bOp, StMatrix8x8x16bOp

    if type(op) in (LdMatrix8x8x16bOp, StMatrix8x8x16bOp):
        return
    if type(op) in (LdMatrix8x16x8bOp, LdMatrix16x16x8bOp) and op.unpack_bits in (None, 4):
        return  # unpack_bits=4: each row's first 8 bytes hold 16 4-bit values, unpacked one a byte (_unpack4)
    what = (f"{type(op).__name__} with unpack_bits={op.unpack_bits} (ldmatrix .b{op.unpack_bits} "
            f"unpacking)" if type(op) in (LdMatrix8x16x8bOp, LdMatrix16x16x8bOp) else type(op).__name__)
    raise TraceError(f"kernel {t.name}: cute.copy with {what} is not supported inside cutelab kernels "
                     f"(LdMatrix8x8x16bOp, LdMatrix8x16x8bOp and LdMatrix16x16x8bOp without unpacking or "
                     f"unpacking 4 bits, and StMatrix8x8x16bOp are){t.where()}")


def _tv_offsets(tv: Any) -> np.ndarray:
    nv = it.product(tv.shape[1]) if isinstance(tv.shape, tuple) else 1
    return np.asarray(tv.offsets()).reshape(nv, 32).T  # (lane, value)


_LANES: Dict[int, Any] = {}  # id(LdMatrix op) -> (op, its _lanes gather)


class LdMatrix(Op):
    """One ldmatrix: lane t's 16-byte row starts at element ``base`` of shared array ``param``;
    ``dst`` gets the lane's 2 * num_matrices b16 values."""

    __slots__ = ("atom_op", "param", "base", "dst", "src_off", "dst_off", "epr", "into", "at")

    #: the CPU interpreter may set ``into`` (a mutable register) and ``at`` (its elements): the
    #: values go there instead of into ``dst`` (cpu/forward.py, for the Assign that copies them)
    into_elements = True

    def __init__(self, atom: Any, param: Any, base: Any, dst: Reg):
        self.atom_op = atom.op
        self.param, self.base, self.dst = param, base, dst
        self.src_off = _tv_offsets(atom.layout_src_tv)
        self.dst_off = _tv_offsets(atom.layout_dst_tv)
        self.epr = self.src_off.shape[1]  # elements in a lane's 16-byte row: 8 of 16 bits, 16 of 8 bits

    def __repr__(self) -> str:
        b = self.base.expr_str() if is_sym(self.base) else str(self.base)
        return f"{self.dst!r} = {ptx_name(self.atom_op)} [{self.param.name} + {b}]"

    def accesses(self) -> List[Access]:
        return [Access(self.param, self.base, tuple(range(self.epr)), False, self)]

    def profile(self, access: Access) -> dict:
        """For cutelab.profile: an ldmatrix, row addresses from lanes 0 .. 8 * num_matrices - 1 (see trace.Op)."""
        return {"op": "ldsm", "lanes": _rows_read(self.atom_op), "name": ptx_name(self.atom_op)}

    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:

        n = b.n
        name = ptx_name(self.atom_op)
        W = n // 32
        active = b.whole_warps(mask, name, "ldmatrix")
        data, length, shift = b.memory(self.param, buffers)
        e = self.epr
        used = _rows_read(self.atom_op)  # lanes whose addresses the instruction reads
        take = self._lanes(used)
        unpack = getattr(self.atom_op, "unpack_bits", None) == 4
        if take is not None and mask is None and not unpack:  # every lane: rows at fixed + c, fixed made once per batch
            at = b.index_at(self.base, tuple(range(e)), length, shift, f"{b.ir.name}: {name} from {self.param.name}")
            if at is not None:
                fixed, c = at
                cache = b.__dict__.setdefault("_ldmatrix_at", {})
                got = cache.get(id(self))
                if got is None or got[0] is not fixed:
                    if len(cache) >= 16:  # (a few MB at most)
                        cache.clear()
                    got = cache[id(self)] = (fixed, np.ascontiguousarray(fixed.reshape(W, 32 * e)[:, take]))  # (a gather
                    # through a contiguous index is 2-3x faster)
                sel = got[1]
                vals = np.take(data[c:], sel) if c >= 0 else np.take(data, sel + c)
                self._put(b, mask, vals.astype(self.param.dtype.storage, copy=False).reshape(n, self.dst.n))
                return
        idx = b.access_index(self.base, tuple(range(e)), length, f"{b.ir.name}: {name} from {self.param.name}", mask)
        if shift is not None:
            idx = idx + shift[:, None]
        if take is not None and bool(active.all()) and not unpack:  # each value one element of a row read: one gather
            got = data[idx.reshape(W, 32 * e)[:, take]]
            self._put(b, mask, got.astype(self.param.dtype.storage, copy=False).reshape(n, self.dst.n))
            return
        rows = data[idx].reshape(W, 32, e)  # lane t's row
        if unpack:
            rows = _unpack4(rows)
        span = int(max(self.src_off.max(), self.dst_off.max())) + 1
        buf = np.zeros((W, span), dtype=data.dtype)
        buf[:, self.src_off[:used].ravel()] = rows[:, :used].reshape(W, -1)
        got = buf[:, self.dst_off]  # (W, 32, values)
        out = np.zeros((W, 32, self.dst.n), dtype=self.param.dtype.storage)
        out[active] = got[active]
        self._put(b, mask, out.reshape(n, self.dst.n))

    def _put(self, b: Any, mask: Any, vals: np.ndarray) -> None:
        """The result: dst's array, or (``into``) elements ``at`` of that register, in the rows of
        the threads of mask, as the Assign that copied them there would write them."""
        into = getattr(self, "into", None)
        if into is None:
            b.regs[self.dst.id] = vals
        elif mask is None:
            b.regs[into.id][:, self.at] = vals
        else:
            arr = b.regs[into.id]
            arr[:, self.at] = np.where(mask[:, None], vals, arr[:, self.at])

    def _lanes(self, used: int) -> Any:
        """(32, values): the element of the warp's rows, lane-major, that each lane's value is (what
        the exchange below does, as one gather); None where a value is no element read (zero-filled)."""
        cache = _LANES.get(id(self))
        if cache is None or cache[0] is not self:
            span = int(max(self.src_off.max(), self.dst_off.max())) + 1
            at = np.full(span, -1, dtype=np.int64)
            at[self.src_off[:used].ravel()] = np.arange(used * self.epr)  # as the rows are placed below
            take = at[self.dst_off]
            if len(_LANES) > 1024:
                _LANES.clear()
            cache = _LANES[id(self)] = (self, None if (take < 0).any() else take)
        return cache[1]

    # the launch may guard it (guards.py) when it cannot prove the rows in bounds: a warp instruction
    # cannot be skipped by some lanes, so a lane whose row is out of range reads row 0 instead and
    # records the error (reported at the next launch / check_errors)
    guardable = True

    def cuda(self, r: Any) -> None:
        k = self.atom_op.num_matrices
        r.declare(self.dst)
        d = r.reg(self.dst)
        code, _ = r.expr(self.base, (0, 0)) if is_sym(self.base) else (f"{int(self.base)}", "")
        t = r.fresh("ldsm")
        with r.braces():
            code = _row_or_row0(r, self, t, code)
            r.emit(f"const unsigned int {t}_addr = {r.shared_address(self.param, code)};")
            w = self.param.dtype.width  # register i holds values per*i .. per*i+per-1, the first lowest
            per, ct = 32 // w, "unsigned short" if w == 16 else "unsigned char"
            k = self.dst.n // per  # 32-bit registers: one per 8x8 b16 matrix, two per 16x16 b8 one
            r.emit(f"unsigned int {t}[{k}];")
            regs = "{" + ",".join(f"%{i}" for i in range(k)) + "}"
            outs = ", ".join(f'"=r"({t}[{i}])' for i in range(k))
            r.emit(f'asm volatile("{ptx_name(self.atom_op)} {regs}, [%{k}];\\n" : {outs} : "r"({t}_addr));')
            for v in range(self.dst.n):
                i, j = _m16n16_byte(v) if _is_m16n16(self.atom_op) else divmod(v, per)
                r.emit(f"{d}[{v}] = ({ct})(({t}[{i}] >> {w * j}) & 0x{(1 << w) - 1:x}u);")


def _rest(t: Any) -> int:
    shp = t.layout.shape
    if not isinstance(shp, tuple) or len(shp) == 1:
        return 1
    return it.product(shp[1:])


def _call_view(t: Any, r: int, nrest: int) -> Any:
    """The (CPY) values of rest coordinate r of a (CPY, REST...) tensor."""
    shp = t.layout.shape
    if nrest == 1 and (not isinstance(shp, tuple) or len(shp) == 1):
        return t
    if len(shp) == 2:
        return t[None, r]
    rest_shape = shp[1:]
    crd = it.idx2crd(r, rest_shape)
    return t[(None,) + tuple(crd)]


def _checked_operands(t: Any, atom: Any, src: Any, dst: Any, pred: Any, kind: str) -> tuple:
    """The checks ldmatrix and stmatrix share (kind says which; its shared-memory side is src for
    ldmatrix, dst for stmatrix): (values per call of src and dst, src's value-mode size, the
    number of calls of src and dst)."""
    op = atom.op
    _supported(t, op)
    who = f"kernel {t.name}: cute.copy with {type(op).__name__}"
    if pred is not None:
        raise TraceError(f"{who}: {kind} takes no predicate{t.where()}")
    if kind == "ldmatrix":
        if not isinstance(src.engine, SmemEngine):
            raise TraceError(f"{who}: the source {src} must be in shared memory (ldmatrix reads shared memory)"
                             f"{t.where()}")
        if getattr(dst, "memspace", None) != "rmem":
            raise TraceError(f"{who}: the destination {dst} must be a register fragment{t.where()}")
    else:
        if getattr(src, "memspace", None) != "rmem":
            raise TraceError(f"{who}: the source {src} must be a register fragment{t.where()}")
        if not isinstance(dst.engine, SmemEngine):
            raise TraceError(f"{who}: the destination {dst} must be in shared memory (stmatrix writes shared "
                             f"memory){t.where()}")
    from ...nvgpu.warp.copy import LdMatrix8x16x8bOp, LdMatrix16x16x8bOp

    width = 8 if type(op) in (LdMatrix8x16x8bOp, LdMatrix16x16x8bOp) else 16
    for what, x in (("source", src), ("destination", dst)):
        if x.element_type.width != width:
            raise TraceError(f"{who}: the {what} holds {x.element_type}; {type(op).__name__} moves {width}-bit "
                             f"elements{t.where()}")
    if src.element_type.name != dst.element_type.name:
        raise TraceError(f"{who}: the source holds {src.element_type} and the destination {dst.element_type}; "
                         f"{kind} moves bits, it does not convert{t.where()}")
    ns, nd = atom.num_val_src, atom.num_val_dst
    nrs, nrd = _rest(src), _rest(dst)
    vs = it.product(src.layout.shape[0]) if isinstance(src.layout.shape, tuple) else it.product(src.layout.shape)
    vd = it.product(dst.layout.shape[0]) if isinstance(dst.layout.shape, tuple) else it.product(dst.layout.shape)
    if vs % ns or vd % nd or vs // ns != vd // nd or nrs != nrd:
        raise TraceError(f"{who}: source {src.layout} and destination {dst.layout} do not split into the same atom "
                         f"calls ({ns} source and {nd} destination values per call){t.where()}")
    return ns, nd, vs, nrs, nrd


def _row_base(t: Any, op: Any, tensor: Any, offset: Any, offs: Any, sw: Any) -> Any:
    """The shared-memory offset of a lane's 16-byte row: offs (the row's elements, relative to the
    view's offset) must be consecutive after the swizzle sw and start on 16 bytes."""
    n = len(offs)
    if sw is not None:
        from ..frontend.smem import smem_runs

        runs = smem_runs(sw, offset, offs)
    else:
        runs = [(offset + int(offs[0]), tuple(int(x - offs[0]) for x in offs), list(range(n)))]
    if len(runs) != 1 or runs[0][1] != tuple(range(n)):
        raise TraceError(
            f"kernel {t.name}: cute.copy with {type(op).__name__}: a lane's row must be {n} consecutive "
            f"elements of shared memory (16 bytes), but {tensor} places them at offsets "
            f"{[int(x) for x in offs]}{' before its swizzle ' + str(sw) if sw is not None else ''}{t.where()}")
    base = runs[0][0]
    if (base.div if is_sym(base) else (abs(int(base)) or n)) % n:
        raise TraceError(f"kernel {t.name}: cute.copy with {type(op).__name__}: a lane's row must start on "
                         f"16 bytes; its offset {base} is not a multiple of {n} elements{t.where()}")
    return base


def kernel_ldmatrix(atom: Any, src: Any, dst: Any, pred: Any = None) -> None:
    """ldmatrix of a thread's shared-memory partition src into its register partition dst."""
    t = current("cute.copy")
    op = atom.op
    ns, nd, vs, nrs, nrd = _checked_operands(t, atom, src, dst, pred, "ldmatrix")
    sw = getattr(src.engine, "swizzle", None)
    for r in range(nrs):
        sv, dv = _call_view(src, r, nrs), _call_view(dst, r, nrd)
        soffs = _static_offsets(sv.layout, "cute.copy")
        doffs = _static_offsets(dv.layout, "cute.copy")
        for c in range(vs // ns):
            base = _row_base(t, op, src, sv.offset, soffs[c * ns:(c + 1) * ns], sw)
            reg = t.new_reg(src.element_type, nd)
            src.engine.param.read = True
            t.emit(LdMatrix(atom, src.engine.param, base, reg))
            vals = TraceValue([(reg, i) for i in range(nd)], (nd,), src.element_type)
            for i in range(nd):
                dv.engine._put([int(doffs[c * nd + i]) + _static_off(dv.offset)], [vals.refs[i]])


def _static_off(o: Any) -> int:
    if is_sym(o):
        lo, hi = o.lo, o.hi
        if lo != hi:
            raise TraceError("cute.copy: a register fragment can only be indexed with static coordinates")
        return lo
    return int(o)


def _row_or_row0(r: Any, op: Any, t: str, code: str) -> str:
    """CUDA: the row offset ``code`` of a guarded ldmatrix/stmatrix lane, row 0 where the launch could
    not prove it in bounds and it is out of range (the error recorded): a warp instruction, which no
    lane can skip. ``code`` as it is where the launch proved it."""
    fail = r.guard_code(op)
    if fail is None:
        return code
    r.emit(f"const bool {t}_ok = {r.guard_cond(op)};")
    r.emit(f"if (!{t}_ok) cl_fail({fail}u);")
    return f"({t}_ok ? (long long)({code}) : 0ll)"


class StMatrix(Op):
    """One stmatrix: the lane's 2 * num_matrices b16 register values ``src`` go out; lane t's row
    of 8 elements starts at element ``base`` of shared array ``param``."""

    __slots__ = ("atom_op", "param", "base", "src", "src_off", "dst_off")

    def __init__(self, atom: Any, param: Any, base: Any, src: Any):
        self.atom_op = atom.op
        self.param, self.base, self.src = param, base, tuple(src)
        self.src_off = _tv_offsets(atom.layout_src_tv)
        self.dst_off = _tv_offsets(atom.layout_dst_tv)

    def __repr__(self) -> str:
        b = self.base.expr_str() if is_sym(self.base) else str(self.base)
        return f"{ptx_name(self.atom_op)} [{self.param.name} + {b}] <- ({len(self.src)} values)"

    def accesses(self) -> List[Access]:
        return [Access(self.param, self.base, tuple(range(8)), True, self)]

    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:

        n = b.n
        name = ptx_name(self.atom_op)
        W = n // 32
        active = b.whole_warps(mask, name, "stmatrix")
        data, length, shift = b.memory(self.param, buffers)
        used = 8 * self.atom_op.num_matrices
        lane_mask = None if mask is None else mask & ((np.arange(n) % 32) < used)
        if lane_mask is None:
            lane_mask = (np.arange(n) % 32) < used
        idx = b.access_index(self.base, tuple(range(8)), length, f"{b.ir.name}: {name} to {self.param.name}",
                            lane_mask)
        if shift is not None:
            idx = idx + shift[:, None]
        vals = b.matrix(self.src, self.param.dtype).reshape(W, 32, len(self.src))
        span = int(max(self.src_off.max(), self.dst_off.max())) + 1
        buf = np.zeros((W, span), dtype=vals.dtype)
        buf[:, self.src_off.ravel()] = vals.reshape(W, -1)
        rows = buf[:, self.dst_off]  # (W, 32, 8): lane t's row
        write = (active[:, None] & (np.arange(32)[None, :] < used)).reshape(n)
        data[idx.reshape(n, 8)[write]] = rows.reshape(n, 8)[write]

    # the launch may guard it (guards.py) when it cannot prove the rows in bounds (an address computed in
    # registers): a warp instruction cannot be skipped by some lanes, so a lane whose row is out of range
    # writes row 0 instead and records the error, which the launch reports (the results are then wrong,
    # and said to be)
    guardable = True

    def cuda(self, r: Any) -> None:
        k = self.atom_op.num_matrices
        code, _ = r.expr(self.base, (0, 0)) if is_sym(self.base) else (f"{int(self.base)}", "")
        t = r.fresh("stsm")
        with r.braces():
            code = _row_or_row0(r, self, t, code)
            r.emit(f"const unsigned int {t}_addr = {r.shared_address(self.param, code)};")
            words = []
            for i in range(k):
                lo, hi = r.stored(self.src[2 * i], self.param.dtype), r.stored(self.src[2 * i + 1], self.param.dtype)
                words.append(f"((unsigned int)({lo}) | ((unsigned int)({hi}) << 16))")
            r.emit(f"const unsigned int {t}[{k}] = {{{', '.join(words)}}};")
            regs = "{" + ",".join(f"%{i + 1}" for i in range(k)) + "}"
            ins = ", ".join([f'"r"({t}_addr)'] + [f'"r"({t}[{i}])' for i in range(k)])
            r.emit(f'asm volatile("{ptx_name(self.atom_op)} [%0], {regs};\\n" :: {ins} : "memory");')


def kernel_stmatrix(atom: Any, src: Any, dst: Any, pred: Any = None) -> None:
    """stmatrix of a thread's register partition src into its shared-memory partition dst."""
    t = current("cute.copy")
    op = atom.op
    ns, nd, vs, nrs, nrd = _checked_operands(t, atom, src, dst, pred, "stmatrix")
    sw = getattr(dst.engine, "swizzle", None)
    for r in range(nrs):
        sv, dv = _call_view(src, r, nrs), _call_view(dst, r, nrd)
        vals = sv.load()
        doffs = _static_offsets(dv.layout, "cute.copy")
        for c in range(vs // ns):
            base = _row_base(t, op, dst, dv.offset, doffs[c * nd:(c + 1) * nd], sw)
            refs = vals.refs[c * ns:(c + 1) * ns]
            t.check_refs(refs, "stmatrix")
            dst.engine.param.written = True
            t.emit(StMatrix(atom, dst.engine.param, base, refs))
