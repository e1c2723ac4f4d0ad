"""The descriptor-level UMMA of ``cutlass.experimental.primitives`` (CuTe DSL 4.8.1): ``Tcgen05SmemDesc``,
``Tcgen05InstrDesc``, ``tcgen05_mma`` and ``tcgen05_commit``, lowered onto cutelab's UMMA
(``kernel.instr.tcgen05_mma``'s ``UmmaOp`` and ``UmmaCommitOp``): the same issue-then-complete-at-commit
semantics on the CPU, the same ``tcgen05.mma`` / ``tcgen05.commit`` PTX on the GPU.

- ``Tcgen05SmemDesc.build(array, leading_byte_offset=, stride_byte_offset=, layout=)`` is kept at trace time
  as what it describes: a shared-memory array, a byte offset in it, LBO, SBO and the swizzle;
  ``advance_start_address(bytes)`` (a compile-time multiple of 16) moves the start.
- ``Tcgen05InstrDesc.build(c_dtype=, a_dtype=, b_dtype=, a_major=, b_major=, n_dim=, m_dim=)`` is kept with
  its fields; its integer (``int(idesc)``) is the 32-bit descriptor.
- ``tcgen05_mma(kind, CTAGroup.CTA_1, d, desc_a, desc_b, idesc, enable_input_d)``: A (M x K) and B (N x K)
  are read through the descriptors as the hardware reads a K-major operand: element (r, k) of a row group
  at byte ``start + (r // 8) * SBO + (r % 8) * W + k * bytes`` (W the swizzle's row: 128, 64 or 32 bytes),
  then the swizzle Swizzle<B,4,3> on the byte offset in the shared buffer (the placement TMA gives with
  the same swizzle); without swizzle, 8 x 16-byte core matrices, LBO apart along K and SBO along M/N.
  D is the accumulator at the TMEM address of ``d`` (row m in lane m, column n; an f16 accumulator, of kind::f16
  or kind::f8f6f4, in the low half of each 32-bit column, rounded to f16 at each instruction). K is the kind's:
  16 for ``kind::f16``, 8 for ``tf32``, 32 for ``f8f6f4`` and ``i8``.

Refused by name: M other than 128, an array type other than the MMA's, MN-major operands (``a_major``/``b_major`` = 1), ``CTA_2``, negation, sparsity, the
block-scaled kinds, runtime descriptors or instruction descriptors, and the collector /
shift / scale-input-d options.
"""

from __future__ import annotations

from typing import Any, Dict

import numpy as np

from ...errors import TraceError
from ..where import user_line
from .enums import _enum
from .memory import Array, Pointer, cute_pointer

Tcgen05MMAKind = _enum("Tcgen05MMAKind", "MXF4NVF4=mxf4nvf4 F8F6F4=f8f6f4 MXF8F6F4=mxf8f6f4 INT8=int8 I8=int8 "
                                         "F16=f16 TF32=tf32 MXF4=mxf4")


class Tcgen05SmemSwizzle(int):
    """The descriptor's layout_type codes (SM100)."""

    NONE = 0
    SWIZZLE_128B_ATOM_32B = 1
    SWIZZLE_128B = 2
    SWIZZLE_64B = 4
    SWIZZLE_32B = 6


# layout_type -> (swizzle bits B of Swizzle<B,4,3>, row bytes W); 1 (128B with 32B atoms) is refused
_SWIZZLES = {0: (0, 16), 2: (3, 128), 4: (2, 64), 6: (1, 32)}
# layout_type -> GMMA's layout type (what kernel/instr/tcgen05_mma.umma_desc takes)
_GMMA_LT = {0: 0, 2: 1, 4: 2, 6: 3}


def _layout_code(layout: Any, what: str) -> int:
    """The descriptor's layout_type of a Tcgen05SmemSwizzle code (an int), a cuda.TensorMapSwizzle or a
    cutlass.Swizzle preset (Swizzle<B,4,3> on bytes), as the DSL converts them."""
    from .swizzle import Swizzle
    from .tensor_map import TensorMapSwizzle

    if isinstance(layout, TensorMapSwizzle):
        code = {0: 0, 1: 6, 2: 4, 3: 2}.get(int(layout))
        if code is None:
            raise TraceError(f"{what}: layout={layout!r} has no tcgen05 descriptor layout in cutelab ({user_line(3)})")
        return code
    if isinstance(layout, Swizzle):
        code = {0: 0, 1: 6, 2: 4, 3: 2}.get(layout.bbits) if (layout.mbase, layout.sshift) == (4, 3) or \
            layout.bbits == 0 else None
        if code is None:
            raise TraceError(f"{what}: layout={layout!r} is not a tcgen05 descriptor swizzle ({user_line(3)})")
        return code
    return _static(layout, what, "layout")


def _static(x: Any, what: str, arg: str) -> int:
    v = getattr(x, "value", x)
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise TraceError(f"{what}: cutelab needs {arg} as a compile-time int, got {type(x).__name__} ({user_line(3)})")
    return int(v)


class Tcgen05SmemDesc:
    """A tcgen05 shared-memory descriptor, kept as what it describes (see the module's docstring)."""

    def __init__(self, ptr: Any, byte_offset: int, lbo: int, sbo: int, layout: int):
        self.ptr, self.byte_offset, self.lbo, self.sbo, self.layout = ptr, byte_offset, lbo, sbo, layout

    @classmethod
    def build(cls, start_address: Any, leading_byte_offset: Any = 0, stride_byte_offset: Any = 0, version: Any = 1,
              base_offset: Any = 0, layout: Any = 0, leading_dim_mode: Any = 0,
              k_segment_offset: Any = 0) -> "Tcgen05SmemDesc":
        from ...kernel.frontend.engines import SmemEngine

        what = "cutlass.experimental.primitives.Tcgen05SmemDesc.build"
        if not isinstance(start_address, (Array, Pointer)):
            raise TraceError(f"{what}: cutelab builds descriptors of a shared-memory cutlass.Array or Pointer, not of "
                             f"an integer address ({type(start_address).__name__}) ({user_line(2)})")
        p, peer = cute_pointer(start_address, what)
        if peer is not None or not isinstance(getattr(p, "engine", None), SmemEngine):
            raise TraceError(f"{what}: the start address must be this CTA's shared memory ({user_line(2)})")
        if getattr(p.engine, "swizzle", None) is not None and p.engine.swizzle.num_bits:
            raise TraceError(f"{what}: the array is a swizzled cute tensor; give the descriptor a plain cutlass.Array "
                             f"(the descriptor's layout= says the swizzle) ({user_line(2)})")
        lt = _layout_code(layout, what)
        lbo, sbo = _static(leading_byte_offset, what, "leading_byte_offset"), \
            _static(stride_byte_offset, what, "stride_byte_offset")
        for nm, v in (("version", version), ("base_offset", base_offset), ("leading_dim_mode", leading_dim_mode),
                      ("k_segment_offset", k_segment_offset)):
            want = 1 if nm == "version" else 0
            if _static(v, what, nm) != want:
                raise TraceError(f"{what}: {nm}={v} is not supported by cutelab (only {nm}={want}) ({user_line(2)})")
        if lt not in _SWIZZLES:
            raise TraceError(f"{what}: layout={lt}; cutelab reads the layouts 0 (none), 2 (128B), 4 (64B) and 6 (32B) "
                             f"swizzles ({user_line(2)})")
        if lbo % 16 or sbo % 16:
            raise TraceError(f"{what}: leading_byte_offset={lbo}, stride_byte_offset={sbo}: the descriptor keeps them "
                             f">> 4, so they are multiples of 16 ({user_line(2)})")
        return cls(p, 0, lbo, sbo, lt)

    def advance_start_address(self, byte_increment: Any) -> "Tcgen05SmemDesc":
        what = "Tcgen05SmemDesc.advance_start_address"
        inc = _static(byte_increment, what, "the byte increment")
        if inc % 16:
            raise ValueError(f"{what}({inc}): the start address moves in multiples of 16 bytes")
        return Tcgen05SmemDesc(self.ptr, self.byte_offset + inc, self.lbo, self.sbo, self.layout)

    def __add__(self, k: Any) -> "Tcgen05SmemDesc":
        """desc + k: the start address (kept >> 4) moves by k * 16 bytes."""
        return self.advance_start_address(_static(k, "Tcgen05SmemDesc + k", "k") * 16)

    def __repr__(self) -> str:
        return (f"Tcgen05SmemDesc(+{self.byte_offset} B, LBO {self.lbo}, SBO {self.sbo}, layout {self.layout})")

    def operand(self, rows: int, K: int, dtype: Any, what: str) -> Any:
        """The _Operand of kernel/instr/tcgen05_mma for a K-major rows x K tile of dtype read through this
        descriptor: physical element offsets in the shared buffer, index r + rows * k."""
        from ...kernel.instr.tcgen05_mma import _Operand

        eng = self.ptr.engine
        eb_arr = eng.dtype.bytes
        bits = dtype.width
        if bits % 8:
            raise TraceError(f"{what}: {dtype} operands (sub-byte) are not supported by cutelab's tcgen05_mma")
        eb = bits // 8
        if eng.dtype.name != dtype.name and {eng.dtype.name, dtype.name} != {"f32", "tf32"}:
            raise TraceError(f"{what}: the shared array holds {eng.dtype}, the MMA reads {dtype} (cutelab reads an "
                             f"operand as the type of its array)")
        off = self.ptr.offset
        if not isinstance(off, (int, np.integer)):
            raise TraceError(f"{what}: the descriptor's array must start at a compile-time offset of shared memory")
        start = int(off) * eb_arr + self.byte_offset
        B, W = _SWIZZLES[self.layout]
        r = np.arange(rows, dtype=np.int64)[:, None]
        k = np.arange(K, dtype=np.int64)[None, :]
        kb = k * eb
        if self.layout == 0:  # 8 x 16-byte core matrices: LBO apart along K, SBO along the rows
            byte = start + (r // 8) * self.sbo + (r % 8) * 16 + (kb // 16) * self.lbo + kb % 16
        else:
            byte = start + (r // 8) * self.sbo + (r % 8) * W + kb
            byte = byte ^ ((byte >> 3) & (((1 << B) - 1) << 4))
        if (byte % eb).any():
            raise TraceError(f"{what}: the descriptor places {dtype} elements off their alignment")
        phys = (byte // eb_arr).T.reshape(1, -1)  # index r + rows * k
        fields = (_GMMA_LT[self.layout], self.lbo >> 4, self.sbo >> 4)
        return _Operand(eng.param, 0, np.array([start // eb_arr], dtype=np.int64), phys, dtype, fields)


_C_FMT = {"f16": 0, "f32": 1, "i32": 2}


class Tcgen05InstrDesc:
    """A dense tcgen05 instruction descriptor with its fields (the integer is ``int(idesc)``)."""

    def __init__(self, fields: Dict[str, Any]):
        self.fields = fields

    @classmethod
    def build(cls, sparse_id2: int = 0, sparse_flag: int = 0, saturate: int = 0, sparse_format: int = 0,
              c_dtype: Any = None, a_dtype: Any = None, b_dtype: Any = None, a_negate: int = 0, b_negate: int = 0,
              a_major: int = 0, b_major: int = 0, n_dim: int = 0, m_dim: int = 0, k_dim: int = 0,
              max_shift: int = 0) -> "Tcgen05InstrDesc":
        what = "cutlass.experimental.primitives.Tcgen05InstrDesc.build"
        for nm, v in (("sparse_flag", sparse_flag), ("saturate", saturate), ("a_negate", a_negate),
                      ("b_negate", b_negate), ("k_dim", k_dim), ("max_shift", max_shift), ("sparse_id2", sparse_id2),
                      ("sparse_format", sparse_format)):
            if _static(v, what, nm):
                raise TraceError(f"{what}: {nm}={v} is not supported by cutelab's tcgen05_mma ({user_line(2)})")
        n, m = _static(n_dim, what, "n_dim"), _static(m_dim, what, "m_dim")
        if m % 16 or n % 8 or not m or not n:
            raise ValueError(f"{what}: m_dim={m} (a multiple of 16) and n_dim={n} (a multiple of 8)")
        return cls(dict(c=c_dtype, a=a_dtype, b=b_dtype, a_major=_static(a_major, what, "a_major"),
                        b_major=_static(b_major, what, "b_major"), n=n, m=m))

    def __int__(self) -> int:
        f = self.fields
        c = _C_FMT.get(f["c"].name, 0) if f["c"] is not None else 0
        return (c << 4) | (f["a_major"] << 15) | (f["b_major"] << 16) | ((f["n"] >> 3) << 17) | ((f["m"] >> 4) << 24)

    def __repr__(self) -> str:
        return f"Tcgen05InstrDesc({self.fields})"


def _umma_op(kind: str, idesc: Tcgen05InstrDesc, a_dt: Any, b_dt: Any, what: str) -> Any:
    """cutelab's UMMA op (nvgpu.tcgen05) of a kind and instruction descriptor (K-major, CTA_1)."""
    from ... import numeric as nm
    from ...nvgpu import OperandMajorMode as Mj
    from ...nvgpu import tcgen05 as tc

    f = idesc.fields
    c = f["c"] if f["c"] is not None else nm.Float16
    if f["a_major"] or f["b_major"]:
        raise TraceError(f"{what}: MN-major operands (a_major/b_major = 1) are not supported by cutelab's "
                         f"tcgen05_mma yet; the descriptors are read K-major ({user_line(3)})")
    ok = {"f32": ("f16", "tf32", "f8f6f4"), "f16": ("f16", "f8f6f4"), "i32": ("int8", "i8")}
    if kind not in ok.get(c.name, ()):
        raise TraceError(f"{what}: a {c} accumulator with kind::{kind}; rule: kind::f16 and kind::f8f6f4 accumulate in "
                         f"f32 or f16, kind::tf32 in f32, kind::i8 in s32 ({user_line(3)})")
    M, N = f["m"], f["n"]
    if M != 128:
        raise TraceError(f"{what}: m_dim={M}; cutelab's primitive tcgen05_mma runs M = 128 (row m of D in TMEM lane m) "
                         f"({user_line(3)})")
    src, K = tc.OperandSource.SMEM, tc.CtaGroup.ONE
    if kind == "f16":
        if a_dt.name != b_dt.name:
            raise TraceError(f"{what}: kind::f16 with A {a_dt} and B {b_dt}")
        return tc.MmaF16BF16Op(a_dt, c, (M, N, 16), K, src, Mj.K, Mj.K)
    if kind == "tf32":
        return tc.MmaTF32Op((M, N, 8), K, src, Mj.K, Mj.K)
    if kind == "f8f6f4" and a_dt.name == b_dt.name and a_dt.width == 8:
        return tc.MmaFP8Op(a_dt, c, (M, N, 32), K, src, Mj.K, Mj.K)
    raise TraceError(f"{what}: kind::{kind} with A {a_dt} and B {b_dt} is not supported by cutelab's "
                     f"tcgen05_mma (f16, tf32, 8-bit f8f6f4) ({user_line(3)})")


# a dtype's a_format / b_format code in the descriptor, as CuTe DSL's Tcgen05InstrDesc.build encodes it (one code
# space for every kind), and what each code means under each kind (PTX's instruction descriptor)
_FORMAT_CODE = {"f16": 0, "bf16": 1, "f32": 2, "tf32": 2, "f8E4M3FN": 0, "f8E4M3": 0, "f8E5M2": 1, "u8": 0, "i8": 1}
_FORMAT_OF = {"f16": {0: "Float16", 1: "BFloat16", 2: "TFloat32"}, "f8f6f4": {0: "Float8E4M3FN", 1: "Float8E5M2"},
              "int8": {0: "Uint8", 1: "Int8"}, "i8": {0: "Uint8", 1: "Int8"}}


def _ab_dtypes(kind: str, idesc: Tcgen05InstrDesc, da: Tcgen05SmemDesc, db: Tcgen05SmemDesc) -> Any:
    """A's and B's element types as the hardware reads them: the descriptor's format codes (a dtype given to
    build, or 0 when none was) read under the MMA's kind; kind::f8f6f4 reads code 0 as e4m3 even where build was
    given Float16, as the GPU does."""
    from ... import numeric as nm

    if kind == "tf32":
        return nm.TFloat32, nm.TFloat32
    f = idesc.fields
    out = []
    for nm_, dt in (("a", f["a"]), ("b", f["b"])):
        code = 0 if dt is None else _FORMAT_CODE.get(dt.name)
        name = _FORMAT_OF.get(kind, {}).get(code)
        if name is None:
            raise TraceError(f"cutlass.experimental.primitives.tcgen05_mma(kind::{kind}): {nm_}_dtype={dt} (format "
                             f"code {code}) names no operand type of kind::{kind} that cutelab reads")
        out.append(getattr(nm, name))
    return tuple(out)


def tcgen05_mma(mma_kind: Any, cta_group: Any, d: Any, a: Any, b: Any, idesc: Any, enable_input_d: Any, *,
                collector_op: Any = None, b_collector_op: Any = None, a_shift: Any = None, scale_input_d: Any = None,
                write_disable_mask: Any = None, loc: Any = None, ip: Any = None) -> None:
    """``tcgen05.mma.cta_group::1.kind::<kind> [d], adesc, bdesc, idesc, enable_input_d``: issued by the
    calling threads' warps, executed at the CTA's next tcgen05_commit."""
    from ...kernel.frontend.trace import TraceValue, current
    from ...kernel.instr.tcgen05_mma import UmmaOp
    from ...kernel.instr.tcgen05_tmem import _where
    from ...nvgpu.tcgen05.tmem import tmem_dp_stride
    from .tcgen05 import _is_two_cta, _tmem_pointer

    kind = str(getattr(mma_kind, "value", mma_kind)).lower()
    what = f"cutlass.experimental.primitives.tcgen05_mma(kind::{kind})"
    if _is_two_cta(cta_group, what):
        raise TraceError(f"{what}: CTA_2 (a 2-CTA UMMA) is not supported by cutelab's primitive tcgen05_mma yet "
                         f"({user_line(2)})")
    if any(x is not None for x in (collector_op, b_collector_op, a_shift, scale_input_d, write_disable_mask)):
        raise TraceError(f"{what}: collector_op / a_shift / scale_input_d / write_disable_mask are not supported by "
                         f"cutelab ({user_line(2)})")
    if not isinstance(a, Tcgen05SmemDesc) or not isinstance(b, Tcgen05SmemDesc):
        raise TraceError(f"{what}: A and B must be Tcgen05SmemDesc descriptors built in this kernel (A from tensor "
                         f"memory is not supported here yet), got {type(a).__name__} and {type(b).__name__} "
                         f"({user_line(2)})")
    if not isinstance(idesc, Tcgen05InstrDesc):
        raise TraceError(f"{what}: the instruction descriptor must be a Tcgen05InstrDesc.build(...) of this kernel, "
                         f"got {type(idesc).__name__} ({user_line(2)})")
    a_dt, b_dt = _ab_dtypes(kind, idesc, a, b)
    op = _umma_op(kind, idesc, a_dt, b_dt, what)
    M, N, K = op.shape_mnk
    A = a.operand(M, K, op.a_dtype, f"{what}: operand A")
    B = b.operand(N, K, op.b_dtype, f"{what}: operand B")
    dp = _tmem_pointer(d, what)
    acc_dt = op.acc_dtype
    if dp.engine.dtype.width != 32 and dp.engine.dtype.width != 8:
        raise TraceError(f"{what}: d must be a TMEM Array of 32-bit (or 8-bit, byte-addressed) elements")
    # d's TMEM address in acc_dt elements: row m in lane m, column n in the n-th 32-bit column (an f16 accumulator
    # in its low half, as CuTe's tmem_frg of 16-bit values in 32-bit storage)
    from ...kernel.instr.tcgen05_tmem import _epc, _hw_address
    from ...kernel.ir.symbolic import floordiv, is_sym, mod

    hw = _hw_address(dp, what)
    ddp, epc = tmem_dp_stride(acc_dt), _epc(acc_dt)
    if epc == 1:
        base = hw
    elif is_sym(hw):
        base = floordiv(hw, 65536) * ddp + mod(hw, 65536) * epc
    else:
        base = (int(hw) >> 16) * ddp + (int(hw) & 0xFFFF) * epc
    m = np.arange(M, dtype=np.int64)[:, None]
    n = np.arange(N, dtype=np.int64)[None, :]
    offs = (m * ddp + n * epc).T.reshape(1, 1, -1)  # index m + M * n: lane m, column n
    flag = enable_input_d
    if isinstance(flag, TraceValue):
        r = flag.refs[0]
        flag = r if isinstance(r, tuple) else bool(r)
        if not isinstance(flag, (tuple, bool)):
            raise TraceError(f"{what}: enable_input_d must be a bool or a Boolean variable ({user_line(2)})")
    else:
        flag = bool(getattr(flag, "value", flag))
    t = current(what)
    t.emit(UmmaOp(op, A, B, base, offs, flag, _where(t)))


def tcgen05_commit(addr: Any, *, multicast_mask: Any = None, smem_a_read: Any = None, group: Any = None,
                   loc: Any = None, ip: Any = None) -> None:
    """``tcgen05.commit.cta_group::1.mbarrier::arrive::one``: the CTA's issued UMMAs complete, then one
    arrival on the mbarrier addr (with multicast_mask: on the same barrier in each CTA of the mask)."""
    from ...kernel.instr.tcgen05_mma import commit
    from .tcgen05 import _is_two_cta

    what = "cutlass.experimental.primitives.tcgen05_commit"
    if smem_a_read:
        raise TraceError(f"{what}: smem_a_read=True is not supported by cutelab ({user_line(2)})")
    p, peer = cute_pointer(addr, what)
    if peer is not None:
        raise TraceError(f"{what}: the mbarrier is this CTA's (give multicast_mask= to reach others) ({user_line(2)})")
    commit(p, multicast_mask, 2 if _is_two_cta(group, what) else 1)


def namespace() -> Dict[str, Any]:
    return {"Tcgen05SmemDesc": Tcgen05SmemDesc, "Tcgen05InstrDesc": Tcgen05InstrDesc, "Tcgen05MMAKind": Tcgen05MMAKind,
            "Tcgen05SmemSwizzle": Tcgen05SmemSwizzle, "tcgen05_mma": tcgen05_mma, "tcgen05_commit": tcgen05_commit}
