"""Block-scaled UMMA arithmetic (``tcgen05.mma.kind::mxf8f6f4`` / ``mxf4`` / ``mxf4nvf4`` with
``.block_scale``) for the CPU interpreter: the operand formats' values, the scale factors' values,
where a UMMA reads its scale factors in tensor memory, and the scaled product.

Formats (OCP Microscaling, PTX ISA "block scaling"): A and B elements are e4m3 / e5m2 (8 bits,
cutelab.fp8), e2m3 / e3m2 (6 bits, no infinities or NaNs) or e2m1 (4 bits: 0, 0.5, 1, 1.5, 2, 3, 4, 6
and their negatives), stored one element per storage byte (the low bits). Kernels run the 8-bit and
the 4-bit (MmaMXF4Op, MmaMXF4NVF4Op) operands on the CPU: shared memory holds an e2m1 element per
byte there, read through the operand's layout as the UMMA's other operands are; the CUDA printer
prints the 8-bit kind (mxf8f6f4) and the packed 4-bit ones (mxf4, mxf4nvf4), whose shared memory it
holds two elements to a byte. 6-bit operands are refused. A 2-CTA UMMA (CtaGroup.TWO), issued by the pair's
leader, computes each CTA's rows of D from its own rows of A, the pair's B, and the scale factors in that
CTA's own tensor memory (its rows of A's, all N rows of B's). Scale factors are ue8m0
(the power of two 2^(bits - 127); 0xff is NaN) or, for ``mxf4nvf4`` with 16-element blocks, ue4m3
(e4m3 bits with the sign bit clear).

The product: ``D[m, n] (+)= sum_k A[m, k] * SFA[m, k // V] * B[n, k] * SFB[n, k // V]`` with V the
scale-factor vector size (32 for mx, 16 for nvf4), computed exactly in float64 over one instruction's
K (32 or 64) and added to the f32 accumulator, rounded to f32 once per instruction.

Scale factors in tensor memory (CuTe's tmem_sf_frg, the layout ``make_tmem_layout_sfa/sfb`` give and
``tcgen05.cp.32x128b.warpx4`` writes): row r of A (or B) reads its K/V scale factors of one UMMA from
lane r % 32 of each lane quarter, column ``col + r // 32``, bytes ``byte .. byte + K/V - 1`` of it,
where (lane 0, col, byte) is the address the atom's SFA/SFB field points to. The four lane quarters
hold copies; the interpreter reads them all and refuses a UMMA whose copies differ (the hardware
reads one of them, which this model does not pin down).

>>> import numpy as np
>>> from cutelab.numeric import Float4E2M1FN, Float8E8M0FNU
>>> values(np.arange(8, dtype=np.uint8), Float4E2M1FN).tolist()
[0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]
>>> values(np.array([127, 128, 120], dtype=np.uint8), Float8E8M0FNU).tolist()
[1.0, 2.0, 0.0078125]
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from ...errors import LaunchError, TraceError
from ..ir.symbolic import is_sym

__all__ = ["values", "scale_values", "scaled_mma", "read_scale_factors", "mma_field", "sf_field", "kernel_gemm",
           "kernel_gemm_blockscaled", "umma_idesc_block_scaled", "umma_kind_block_scaled"]

# mlir name -> (exponent bits, mantissa bits, bias) of the finite-only small float formats
_SMALL = {"f4E2M1FN": (2, 1, 1), "f6E2M3FN": (2, 3, 1), "f6E3M2FN": (3, 2, 3)}


@lru_cache(maxsize=None)
def _table(name: str) -> np.ndarray:
    """Every value of a finite-only ExMy format (no infinities, no NaNs), indexed by its bits."""
    e_bits, m_bits, bias = _SMALL[name]
    n = 1 << (1 + e_bits + m_bits)
    out = np.zeros(n, dtype=np.float64)
    for b in range(n):
        s = -1.0 if b >> (e_bits + m_bits) else 1.0
        e = (b >> m_bits) & ((1 << e_bits) - 1)
        m = b & ((1 << m_bits) - 1)
        out[b] = s * (m / (1 << m_bits)) * 2.0 ** (1 - bias) if e == 0 else \
            s * (1 + m / (1 << m_bits)) * 2.0 ** (e - bias)
    return out


def values(bits: Any, dtype: Any) -> np.ndarray:
    """The float64 values of A/B operand elements of dtype given as their bits (one element per byte)."""
    from ... import fp8

    b = np.asarray(bits)
    name = dtype.name
    if name in _SMALL:
        w = dtype.width
        if (b.astype(np.int64) >> w).any():
            raise ValueError(f"{dtype}: element bits above its {w} bits are set")
        return _table(name)[b.astype(np.int64)]
    if name in ("f8E4M3FN", "f8E5M2"):
        return fp8.to_f32(b.astype(np.uint8), dtype).astype(np.float64)
    if name == "f8E8M0FNU":
        return scale_values(b, dtype)
    raise ValueError(f"block-scaled UMMA operands are e4m3, e5m2, e2m3, e3m2 or e2m1, not {dtype}")


def scale_values(bits: Any, dtype: Any) -> np.ndarray:
    """The float64 values of scale factors: ue8m0 (2^(b-127), 0xff NaN) or ue4m3 (Float8E4M3FN bits,
    sign bit clear)."""
    from ... import fp8

    b = np.asarray(bits).astype(np.int64)
    if dtype.name == "f8E8M0FNU":
        out = np.ldexp(1.0, b - 127)
        return np.where(b == 0xFF, np.nan, out)
    if dtype.name == "f8E4M3FN":
        if (b & 0x80).any():
            raise ValueError("ue4m3 scale factors are unsigned: a scale factor has its sign bit set")
        return fp8.to_f32(b.astype(np.uint8), dtype).astype(np.float64)
    raise ValueError(f"block-scale factors are Float8E8M0FNU (ue8m0) or Float8E4M3FN (ue4m3), not {dtype}")


def scaled_mma(a: np.ndarray, b: np.ndarray, sfa: np.ndarray, sfb: np.ndarray, vec: int) -> np.ndarray:
    """sum_k a[m,k] sfa[m,k//vec] b[n,k] sfb[n,k//vec] for values a (M,K), b (N,K) and scale values
    sfa (M,K/vec), sfb (N,K/vec): an (M,N) float64 array.

    >>> a, b = np.ones((2, 32)), np.ones((3, 32))
    >>> float(scaled_mma(a, b, np.array([[1.0, 2.0]] * 2), np.array([[4.0, 1.0]] * 3), 16)[0, 0])
    96.0
    """
    K = a.shape[1]
    if K % vec or sfa.shape[1] != K // vec or sfb.shape[1] != K // vec:
        raise ValueError(f"scaled_mma: K = {K} with {sfa.shape[1]}/{sfb.shape[1]} scale factors of blocks of {vec}")
    sa = np.repeat(sfa, vec, axis=1)
    sb = np.repeat(sfb, vec, axis=1)
    return (a * sa) @ (b * sb).T


def read_scale_factors(cells8: np.ndarray, blk: int, addr: int, dp: int, rows: int, nsf: int, what: str) -> np.ndarray:
    """The scale-factor bits (rows, nsf) one UMMA reads from a CTA's tensor memory: cells8 the TMEM
    as bytes (blocks, 128 lanes, 2048), addr the field's TMEM address in bytes (lane * dp + byte)."""
    lane0, e = addr // dp, addr % dp
    col, byte = e // 4, e % 4
    if lane0 != 0:
        raise LaunchError(f"{what}: the scale-factor address is at lane {lane0}; a block-scaled UMMA's scale factors "
                          f"start at lane 0 (each row r at lane r % 32 of every lane quarter)")
    if byte + nsf > 4:
        raise LaunchError(f"{what}: {nsf} scale factors per row from byte {byte} of a 32-bit column cross into the "
                          f"next column; the UMMA's scale-factor id selects bytes within one column")
    r = np.arange(rows)
    cols = col + r // 32
    if cols.max() >= cells8.shape[2] // 4:
        raise LaunchError(f"{what}: the scale factors reach past tensor-memory column 511")
    copies = []
    for q in range(4):
        lanes = r % 32 + 32 * q
        copies.append(cells8[blk, lanes[:, None], 4 * cols[:, None] + byte + np.arange(nsf)[None, :]])
    for q in range(1, 4):
        if not np.array_equal(copies[0], copies[q]):
            bad = int(np.argmax((copies[0] != copies[q]).any(axis=1)))
            raise LaunchError(f"{what}: the scale factors of row {bad} differ between lane quarter 0 and {q} (lanes "
                              f"{bad % 32} and {bad % 32 + 32 * q}); the block-scaled UMMA model reads them with the "
                              f"four quarters holding copies, as tcgen05.cp.32x128b.warpx4 (Cp4x32x128bOp) writes them")
    return copies[0]


# --------------------------------------------------------------------------- inside kernels

def _where_at(t: Any) -> str:
    from .tcgen05_tmem import _at, _where

    return _at(_where(t))


def sf_field(atom: Any, name: str, value: Any, get: bool) -> Any:
    """tiled_mma.set(Field.SFA / SFB, ptr) inside a kernel: a kernel register (Int32, made at the
    kernel's entry with -1, "unset") takes the scale factors' TMEM address (in bytes of the 8-bit
    scale-factor type) where the set runs; each UMMA reads it when it is issued."""
    from ...nvgpu.tcgen05.tmem import TmemEngine
    from ..frontend.trace import current
    from ..ir.nodes import Assign

    t = current(f"tiled_mma.{'get' if get else 'set'}({name})")
    if get:
        raise TraceError(f"kernel {t.name}: tiled_mma.get({name}) is not supported inside a kernel{_where_at(t)}")
    eng = getattr(value, "engine", None)
    if not isinstance(eng, TmemEngine) or eng.dtype.width != 8:
        raise TraceError(f"kernel {t.name}: tiled_mma.set({name}, ...): expected a tensor-memory pointer of 8-bit "
                         f"scale factors (tCtSF[...].iterator of make_tmem_layout_sfa/sfb), got {value!r}"
                         f"{_where_at(t)}")
    reg = sf_reg(t, atom, name)
    t.emit(Assign(reg, (0,), (getattr(value, "offset", 0),)))
    return None


def sf_reg(t: Any, atom: Any, name: str) -> Any:
    """The kernel register of the SFA / SFB field of the atom's state (shared by a TiledMma and its slices)."""
    from ...numeric import Int32
    from ..ir.nodes import Assign

    regs = t.__dict__.setdefault("mma_fields", {})
    key = (id(atom._state), name)
    got = regs.get(key)
    if got is None:
        reg = t.new_reg(Int32, 1, mutable=True)
        t.body.ops.insert(0, Assign(reg, (0,), (-1,)))
        got = regs[key] = (reg, atom._state)
    return got[0]


def _op_class() -> type:
    """The op of a block-scaled UMMA (a UmmaOp, made on first use: tcgen05_mma imports this module's
    callers): its scale factors' TMEM addresses are read from the SFA / SFB registers when it is
    issued, and it runs at the CTA's next tcgen05.commit."""
    from .tcgen05_mma import UmmaOp

    class _BlockScaledUmma(UmmaOp):
        __slots__ = ("sfa", "sfb")

        def __repr__(self) -> str:
            return "block-scaled " + super().__repr__()

        def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
            from ...numeric import Int32

            sa = np.asarray(b.column(self.sfa, Int32, real=True)).astype(np.int64)
            sb = np.asarray(b.column(self.sfb, Int32, real=True)).astype(np.int64)
            pend = b.common.setdefault("umma_pending", {})
            before = {k: len(v) for k, v in pend.items()}
            super().interpret(b, mask, buffers)
            # the entries this issue added get the scale-factor addresses of their issuing thread
            act = np.ones(b.n, dtype=bool) if mask is None else mask
            lanes = act.reshape(-1, 32)
            rows = np.nonzero(lanes.any(axis=1))[0] * 32 + np.argmax(lanes[lanes.any(axis=1)], axis=1)
            by_blk: dict = {}
            for r in rows.tolist():
                by_blk.setdefault(int(b.block_of[r]), []).append(r)
            for blk, rs in by_blk.items():
                lst = pend[blk]
                new = lst[before.get(blk, 0):]
                for j, (e, r) in enumerate(zip(new, rs)):
                    if int(sa[r]) < 0 or int(sb[r]) < 0:
                        raise LaunchError(f"{b.ir.name}{self._at()}: a block-scaled UMMA ({type(self.op).__name__}) is "
                                          f"issued before tiled_mma.set(tcgen05.Field.SFA / SFB, ...) gave it the "
                                          f"scale factors' tensor-memory addresses")
                    op, a0, b0, acc0, flag = e
                    new[j] = (op, a0, b0, acc0, (flag, int(sa[r]), int(sb[r])))
                lst[before.get(blk, 0):] = new

        def _at(self) -> str:
            return f" (at {self.where})" if self.where else ""

        def execute(self, b: Any, blk: int, a0: int, b0: int, acc0: int, accumulate: Any) -> None:
            from ...nvgpu.tcgen05.tmem import tmem_dp_stride
            from ...numeric import Float32
            from ..cpu.context import from_real, to_real
            from .tcgen05_tmem import check_columns, tmem_cells, tmem_state

            flag, sfa0, sfb0 = accumulate
            op = self.op
            M, N, K = op.shape_mnk
            V = op.sf_vec_size
            nsf = K // V
            what = f"{b.ir.name}{self._at()}: {type(op).__name__}"
            st = tmem_state(b)
            # a 2-CTA UMMA (issued by the pair's leader blk): CTA c of the pair holds rows c * Mc.. of A and D,
            # rows c * Nc.. of B, and in its own tensor memory its rows' scale factors of A and all N rows' of B
            n_cta = op.cta_group.value
            blocks = [blk + c for c in range(n_cta)]
            Mc, Nc = M // n_cta, N // n_cta

            def tile(o: Any, start: int, P: int, k: int) -> np.ndarray:
                idx = start + o.phys
                if idx.min() < 0 or idx.max() >= o.shared.length:
                    raise LaunchError(f"{what}: a UMMA operand reaches outside {o.shared.name}")
                v = values(b.shared[o.shared.index][k * o.shared.length + idx], o.dtype)
                return v.reshape(v.shape[0], K, P).swapaxes(1, 2)  # (inst, P, K)

            A = [tile(self.a, a0, Mc, k) for k in blocks]
            B = np.concatenate([tile(self.b, b0, Nc, k) for k in blocks], axis=1)  # (inst, N, K)
            cells8 = st.cells.view(np.uint8).reshape(st.cells.shape[0], 128, -1)
            dp8 = tmem_dp_stride(op.sf_dtype)
            dt = Float32
            dp = tmem_dp_stride(dt)
            addr = acc0 + self.acc_offs
            lane, e = addr // dp, addr % dp
            if (addr < 0).any() or (lane >= 128).any():
                raise LaunchError(f"{what}: the accumulator reaches outside tensor memory")
            RM, RN = self.acc_offs.shape[:2]
            if RM != 1 or RN != 1:
                raise LaunchError(f"{what}: one scale-factor address pair serves one MMA instance; this cute.gemm "
                                  f"covers {RM}x{RN}: slice the operands to one MMA per cute.gemm")
            cells = tmem_cells(st, dt)
            ln, ee = lane[0, 0], e[0, 0]
            for c, k in enumerate(blocks):
                for a, rows in ((sfa0, Mc), (sfb0, N)):  # row r's scale factors are in column col + r // 32
                    ea = a % dp8
                    cols = np.arange(ea // 4, ea // 4 + -(-rows // 32))
                    check_columns(b, st, np.full(cols.shape, k), cols, f"{type(op).__name__} (its scale factors)",
                                  self._at())
                sfa = scale_values(read_scale_factors(cells8, k, sfa0, dp8, Mc, nsf, what), op.sf_dtype)
                sfb = scale_values(read_scale_factors(cells8, k, sfb0, dp8, N, nsf, what), op.sf_dtype)
                check_columns(b, st, np.full(e.shape, k), e, f"a UMMA ({type(op).__name__})", self._at())
                C = to_real(cells[k, ln, ee], dt).astype(np.float64).reshape(N, Mc).T if flag else np.zeros((Mc, N))
                C = (C + scaled_mma(A[c][0], B[0], sfa, sfb, V)).astype(np.float32)
                cells[k, ln, ee] = from_real(C.T.reshape(-1), dt)

        def cuda(self, r: Any) -> None:
            """``tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale [d], adesc, bdesc, idesc, [sfa], [sfb], p``
            (``kind::mxf4.block_scale.scale_vec::2X`` / ``kind::mxf4nvf4.block_scale.scale_vec::4X`` for packed
            e2m1 operands) by lane 0 of each warp that runs the cute.gemm: the SFA/SFB registers hold the scale
            factors' addresses in bytes (lane * 2^18 + column * 4 + byte); the instruction takes lane << 16 |
            column and the byte as the scale-factor id in the instruction descriptor (bits 29-30 for A, 4-5 for
            B)."""
            kind = umma_kind_block_scaled(self.op)
            if kind is None:
                raise TraceError(f"kernel {r.ir.name}{self._at()}: the CUDA printer emits block-scaled UMMAs of "
                                 f"8-bit operands (kind::mxf8f6f4) and of packed e2m1 operands (MmaMXF4Op, "
                                 f"MmaMXF4NVF4Op: kind::mxf4, kind::mxf4nvf4) only, not {type(self.op).__name__} of "
                                 f"{self.op.a_dtype} x {self.op.b_dtype}")
            for o, nm in ((self.a, "A"), (self.b, "B")):
                if o.fields is None:
                    raise TraceError(f"kernel {r.ir.name}{self._at()}: operand {nm} of the UMMA is not in a canonical "
                                     f"UMMA shared-memory layout, so it has no descriptor: {o.why}")
            idesc = umma_idesc_block_scaled(self.op)
            acc = r.cond(self.accumulate) if isinstance(self.accumulate, tuple) else ("1" if self.accumulate else "0")
            sfa, sfb = r.value(self.sfa, self.sfa[0].dtype), r.value(self.sfb, self.sfb[0].dtype)
            lane = r.fresh("cl_lane")
            r.emit(f'unsigned {lane}; asm volatile("mov.u32 %0, %%laneid;" : "=r"({lane}));')
            with r.braces(f"if ({lane} == 0) {{", "}"):
                da, db = self._desc(r, self.a, 0), self._desc(r, self.b, 0)
                d0 = self.acc_base + int(self.acc_offs[0, 0, 0]) if is_sym(self.acc_base) else \
                    int(self.acc_base) + int(self.acc_offs[0, 0, 0])
                dc = r.expr(d0)[0] if is_sym(d0) else str(int(d0))
                hw = "(((unsigned)({0}) >> 18) << 16 | (((unsigned)({0}) & 0x3FFFFu) >> 2))"
                ids = f"(0x{idesc:08x}u | (((unsigned)({sfa}) & 3u) << 29) | (((unsigned)({sfb}) & 3u) << 4))"
                r.emit(f'asm volatile("{{\\n\\t.reg .pred p;\\n\\tsetp.ne.b32 p, %4, 0;\\n\\t'
                       f'tcgen05.mma.cta_group::{self.op.cta_group.value}.{kind} [%0], %1, %2, %3, [%5], [%6], p;'
                       f'\\n\\t}}" :: "r"((unsigned)({dc})), "l"({da}), "l"({db}), "r"({ids}), '
                       f'"r"((unsigned)({acc})), "r"({hw.format(sfa)}), "r"({hw.format(sfb)}) : "memory");')

    return _BlockScaledUmma


_CLS: list = []


def umma_kind_block_scaled(op: Any) -> Any:
    """The kind and block-scale qualifiers of a block-scaled UMMA's PTX, or None where the CUDA printer has none:
    8-bit operands ``kind::mxf8f6f4.block_scale``; packed e2m1 with a scale factor per 32 elements
    (MmaMXF4Op) ``kind::mxf4.block_scale.scale_vec::2X``, per 16 (MmaMXF4NVF4Op)
    ``kind::mxf4nvf4.block_scale.scale_vec::4X``."""
    from ...nvgpu.tcgen05.mma import MmaMXF4NVF4Op, MmaMXF4Op

    if isinstance(op, (MmaMXF4Op, MmaMXF4NVF4Op)):
        vec = {32: "2X", 16: "4X"}.get(op.sf_vec_size)
        kind = "mxf4" if isinstance(op, MmaMXF4Op) else "mxf4nvf4"
        return f"kind::{kind}.block_scale.scale_vec::{vec}" if vec else None
    if op.a_dtype.width == 8 and op.b_dtype.width == 8:
        return "kind::mxf8f6f4.block_scale"
    return None


def umma_idesc_block_scaled(op: Any) -> int:
    """The 32-bit instruction descriptor of a block-scaled UMMA (CUTLASS's UMMA::InstrDescriptorBlockScaled)
    without its scale-factor ids: A and B formats in [7,10) and [10,13) (e4m3 0, e5m2 1, e2m3 3, e3m2 4,
    e2m1 5), A and B major in bits 15 and 16, N >> 3 in [17,23), the scale format in bit 23 (ue4m3 0,
    ue8m0 1), M >> 4 in [24,29). For kind::mxf4 / mxf4nvf4 (MmaMXF4Op, MmaMXF4NVF4Op) e2m1 is 1 and bit 31
    (K) is 0: K = 64.

    >>> from cutelab import Float8E4M3FN
    >>> from cutelab.nvgpu import tcgen05, OperandMajorMode as Mj
    >>> hex(umma_idesc_block_scaled(tcgen05.MmaMXF8Op(Float8E4M3FN, (128, 128, 32), tcgen05.CtaGroup.ONE,
    ...                                               tcgen05.OperandSource.SMEM, Mj.K, Mj.K)))
    '0x8a00000'
    >>> hex(umma_idesc_block_scaled(tcgen05.MmaMXF4NVF4Op(Float8E4M3FN, (128, 256, 64), tcgen05.CtaGroup.ONE,
    ...                                                   tcgen05.OperandSource.SMEM)))
    '0x8400480'
    """
    from ...nvgpu.tcgen05.mma import MmaMXF4NVF4Op, MmaMXF4Op
    from .tcgen05_mma import _FORMATS

    # kind::mxf4 / mxf4nvf4 (packed e2m1): CUTLASS's MXF4Format, E2M1 = 1
    fmt = {"f4E2M1FN": 1} if isinstance(op, (MmaMXF4Op, MmaMXF4NVF4Op)) else _FORMATS["f8f6f4"]
    M, N, _ = op.shape_mnk
    mn = lambda m: 1 if m.name == "MN" else 0  # noqa: E731
    sf = 1 if op.sf_dtype.name == "f8E8M0FNU" else 0
    return ((fmt[op.a_dtype.name] << 7) | (fmt[op.b_dtype.name] << 10) | (mn(op.a_major_mode) << 15)
            | (mn(op.b_major_mode) << 16) | ((N >> 3) << 17) | (sf << 23) | ((M >> 4) << 24))


def mma_field(atom: Any, name: str, value: Any, get: bool) -> Any:
    """tiled_mma.set / get of a tcgen05 atom's scale-factor field (sf_a, sf_b) inside a kernel
    (``cutelab.tracing.hooks.mma_field``, which asks here before tcgen05_mma.mma_field): sf_field;
    NotImplemented for other fields or atoms, or outside a kernel."""
    from ...nvgpu.tcgen05.mma import Tcgen05MmaOp
    from ..frontend.trace import tracing

    if name not in ("sf_a", "sf_b") or not tracing() or not isinstance(getattr(atom, "_op", None), Tcgen05MmaOp):
        return NotImplemented
    return sf_field(atom, name, value, get)


def kernel_gemm(atom: Any, d: Any, a: Any, b: Any, c: Any) -> bool:
    """cute.gemm inside a kernel for block-scaled UMMAs (instr/gemm.py asks here before
    tcgen05_mma.kernel_gemm); False for other atoms (or outside a kernel)."""
    from ...nvgpu.tcgen05.mma import BlockScaledMmaOp
    from ..frontend.trace import current, tracing
    from .tcgen05_mma import _check_acc
    from .tcgen05_tmem import _at, _where

    if not tracing():
        return False
    op = getattr(atom, "op", None)
    if not isinstance(op, BlockScaledMmaOp):
        return False
    t = current("cute.gemm")
    what = f"kernel {t.name}: cute.gemm with {type(op).__name__}{_at(_where(t))}"
    _check_acc(atom, op, d, c, what)
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        _gemm_with_scale_factors(t, atom, op, d, a, b, what)
        return True
    kernel_gemm_blockscaled(t, atom, op, d, a, b, what)
    return True


def _gemm_with_scale_factors(t: Any, atom: Any, op: Any, d: Any, a: Any, b: Any, what: str) -> None:
    """``cute.gemm(tiled_mma, d, [A, SFA], [B, SFB], c)`` (CuTe DSL 4.8.1's block-scaled form, the scale factors as
    auxiliary operands): per k-block k of A and B (their last mode when they have 3), the UMMA with the scale
    factors of that k-block (SFA / SFB indexed by k in their last mode), as tiled_mma.set(Field.SFA / SFB,
    sf[..., k].iterator) before a one-k-block cute.gemm does; the k-blocks after the first accumulate."""
    from ... import int_tuple as it

    if not (isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == 2 and len(b) == 2):
        raise TraceError(f"{what}: a block-scaled UMMA takes [A, SFA] and [B, SFB] (or A and B with the SFA / SFB "
                         f"fields set), got {len(a) if isinstance(a, (list, tuple)) else 1} and "
                         f"{len(b) if isinstance(b, (list, tuple)) else 1} operands")
    (A, SFA), (B, SFB) = a, b
    rank = lambda x: len(x.layout.shape) if isinstance(x.layout.shape, tuple) else 1  # noqa: E731
    if rank(A) != 3:
        for name, sf in (("sf_a", SFA), ("sf_b", SFB)):
            sf_field(atom, name, sf.iterator, False)
        kernel_gemm_blockscaled(t, atom, op, d, A, B, what)
        return
    kb = it.product(A.layout.shape[2])
    if rank(B) != 3 or it.product(B.layout.shape[2]) != kb:
        raise TraceError(f"{what}: A has {kb} k-blocks and B {B.layout.shape}")
    for k in range(kb):
        for name, sf in (("sf_a", SFA), ("sf_b", SFB)):
            r = rank(sf)
            if it.product(sf.layout.shape[-1] if r > 1 else sf.layout.shape) != kb:
                raise TraceError(f"{what}: {name[-1].upper()}'s scale factors {sf.layout} have no k-block mode of "
                                 f"{kb} (the last) to go with A's and B's k-blocks")
            sf_field(atom, name, sf[(None,) * (r - 1) + (k,)].iterator, False)
        kernel_gemm_blockscaled(t, atom, op, d, A[(None, None, k)], B[(None, None, k)], what,
                                accumulate=None if k == 0 else 1)


def kernel_gemm_blockscaled(t: Any, atom: Any, op: Any, d: Any, a: Any, b: Any, what: str,
                            accumulate: Any = None) -> None:
    """cute.gemm of a block-scaled UMMA inside a kernel, after kernel_gemm's checks (accumulate: None, the
    ACCUMULATE field; 1, add to the accumulator)."""
    from ... import int_tuple as it
    from ...nvgpu.tcgen05.mma import CtaGroup, Field, OperandSource
    from ..frontend.trace import _static_offsets
    from .tcgen05_mma import _field_reg, _operand

    if op.a_src is not OperandSource.SMEM:
        raise TraceError(f"{what}: A from tensor memory (OperandSource.TMEM) is not supported by cutelab's kernels yet")
    for dt, nm in ((op.a_dtype, "A"), (op.b_dtype, "B")):
        if dt.width not in (4, 8):
            raise TraceError(f"{what}: operand {nm} is {dt} ({dt.width} bits); cutelab's interpreter holds 8-bit "
                             f"(e4m3, e5m2) and 4-bit (e2m1) block-scaled operands in shared memory, not 6-bit "
                             f"ones yet")
    M, N, K = op.shape_mnk
    n_cta = 2 if op.cta_group is CtaGroup.TWO else 1  # a 2-CTA UMMA: each CTA holds half of A, B and D
    A = _operand(a, "A", M // n_cta, K, op.a_dtype, what)
    B = _operand(b, "B", N // n_cta, K, op.b_dtype, what)
    shp = d.layout.shape
    if not isinstance(shp, tuple) or len(shp) != 3 or it.product(shp[0]) != M // n_cta * N:
        raise TraceError(f"{what}: the accumulator must be ((M,N), MMA_M, MMA_N) as make_fragment_C gives, got "
                         f"{it.tuple_str(shp)}")
    RM, RN = it.product(shp[1]), it.product(shp[2])
    offs = _static_offsets(d.layout, what).reshape(RN, RM, M // n_cta * N).transpose(1, 0, 2)
    acc = (_field_reg(t, atom, Field.ACCUMULATE.value), 0) if accumulate is None else accumulate
    if not _CLS:
        _CLS.append(_op_class())
    u = _CLS[0](op, A, B, d.offset, offs, acc, _where_of(t))
    u.sfa = (sf_reg(t, atom, Field.SFA.value), 0)
    u.sfb = (sf_reg(t, atom, Field.SFB.value), 0)
    t.emit(u)


def _where_of(t: Any) -> str:
    from .tcgen05_tmem import _where

    return _where(t)
