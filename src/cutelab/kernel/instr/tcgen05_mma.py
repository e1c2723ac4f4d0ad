"""Blackwell UMMA (``tcgen05.mma``) inside traced kernels: ``cute.gemm(tiled_mma, tCtAcc, tCrA,
tCrB, tCtAcc)`` with a ``tcgen05.MmaF16BF16Op`` (or ``MmaTF32Op``) of ``CtaGroup.ONE`` reading A and
B from shared memory through descriptors (``make_fragment_A/B``) and accumulating into tensor
memory (``make_fragment_C``, its pointer from ``retrieve_tmem_ptr``); ``tcgen05.commit``; the
runtime fields of the atom (``tiled_mma.set(tcgen05.Field.ACCUMULATE, flag)``).

- The ACCUMULATE field is a runtime value, as in CuTe DSL (where the atom is carried through loops
  as an SSA value): inside a kernel, ``set`` assigns a kernel register (created at the kernel's
  entry with the atom's value then) and each UMMA reads it when it is issued. So the usual
  ``set(ACCUMULATE, True)`` after the first k-block inside a runtime loop makes every later UMMA,
  in every iteration, accumulate. The host's atom is not changed by the kernel.
- A may live in tensor memory (``OperandSource.TMEM``, 128 rows per CTA: the FMHA's P in P*V):
  ``make_fragment_A`` of a TMEM tensor, its pointer recast to A's type; row m in lane m, its K
  elements in consecutive columns. The UMMA reads those cells when it executes (at its commit), and
  only columns the CTA allocated. A 2-CTA UMMA (``CtaGroup.TWO``, M = 256: CUTLASS's mixed-input FMHA
  prefill) reads rows 0-127 from the leader's tensor memory and rows 128-255 from its peer's, at the
  same address, as it reads the peer's halves of B and D.
- CPU: a UMMA is issued once per warp that runs the ``cute.gemm`` (CuTe DSL elects one thread);
  it joins its CTA's list of issued UMMAs, with its operands' addresses and its ACCUMULATE flag.
  ``tcgen05.commit(mbar)`` (what ``PipelineTmaUmma.consumer_release`` and
  ``PipelineUmmaAsync.producer_commit`` issue) executes the CTA's issued UMMAs, in order, and
  then arrives once on the mbarrier: a UMMA completes at its commit, as a wgmma completes at its
  wait. Each reads its A (M x K) and B (N x K) tiles from shared memory through their layouts
  (and the memory's swizzle), multiplies exactly (float64), adds the f32 accumulators it reads
  from tensor memory (when ACCUMULATE is set) and writes them back rounded to f32, one K
  instruction step at a time. The accumulator columns must be allocated.
- CUDA: ``tcgen05.mma.cta_group::1.kind::f16`` / ``kind::tf32`` issued by lane 0 of each warp
  that runs the cute.gemm, with the shared-memory descriptors (``umma_desc``: UMMA's canonical
  layouts are GMMA's, wgmma.gmma_desc_fields checks them), the instruction descriptor
  (``umma_idesc``) and the ACCUMULATE register as its enable-input-D predicate (A in tensor memory:
  its TMEM address ``[a_tmem]`` in place of A's descriptor); and
  ``tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64``. The kernels compile
  for sm_100a (tests/blackwell); whether they run right on a B200 is untested.
"""

from __future__ import annotations

from typing import Any, List, Optional, Tuple

import numpy as np

from ... import int_tuple as it
from ...errors import LaunchError, TraceError
from ...layout import Layout
from ...numeric import Boolean
from ..ir.nodes import Access, Assign, Compute, Op, Shared
from ..ir.symbolic import is_sym, lin_form, sym_div, sym_range
from ..frontend.engines import SmemEngine
from ..frontend.trace import _static_offsets, current, tracing
from .tcgen05_tmem import _at, _epc, _where, check_columns, tmem_cells, tmem_state

__all__ = ["UmmaOp", "UmmaCommitOp", "kernel_gemm", "commit", "mma_field", "umma_desc", "umma_idesc", "umma_kind"]


# --------------------------------------------------------------------------- runtime fields

def mma_field(atom: Any, name: str, value: Any, get: bool) -> Any:
    """tiled_mma.set / get of a runtime field inside a kernel (``cutelab.tracing.hooks.mma_field``):
    for a tcgen05 atom, the field is a kernel register (see the module docstring); NotImplemented
    for other atoms or outside a kernel."""
    from ...nvgpu.tcgen05.mma import Tcgen05MmaOp
    from ..frontend.trace import TraceValue

    if not tracing() or not isinstance(getattr(atom, "_op", None), Tcgen05MmaOp):
        return NotImplemented
    t = current(f"tiled_mma.{'get' if get else 'set'}")
    reg = _field_reg(t, atom, name)
    if get:
        dst = t.new_reg(Boolean, 1)
        t.emit(Compute(dst, "mov", (((reg, 0),),)))
        return TraceValue([(dst, 0)], (), Boolean)
    if isinstance(value, TraceValue):
        ref = value.to(Boolean).refs[0] if value.dtype is not Boolean else value.refs[0]
    elif is_sym(value):  # a condition on indices (``k_tile != 0`` of a runtime loop): its value per thread
        t.check_index(value, f"tiled_mma.set({name}, ...)")
        ref = value
    else:
        ref = 1 if bool(value) else 0
    t.emit(Assign(reg, (0,), (ref,)))
    return None


def _field_reg(t: Any, atom: Any, name: str) -> Any:
    """The kernel register of runtime field `name` of the atom's state (shared by a TiledMma and its
    slices), made at the kernel's entry with the atom's value."""
    regs = t.__dict__.setdefault("mma_fields", {})
    key = (id(atom._state), name)
    got = regs.get(key)
    if got is None:
        reg = t.new_reg(Boolean, 1, mutable=True)
        t.body.ops.insert(0, Assign(reg, (0,), (1 if atom._state[name] else 0,)))
        got = regs[key] = (reg, atom._state)  # the state dict stays alive with its register
    return got[0]



# --------------------------------------------------------------------------- operands

class _Operand:
    """A shared-memory operand of one UMMA call: its array, the runtime start (``base``, elements),
    and per MMA instance along M or N the physical element offsets of its (MN, K) tile, column-major."""

    def __init__(self, shared: Shared, base: Any, starts: np.ndarray, phys: np.ndarray, dtype: Any, fields: Any,
                 why: str = ""):
        self.shared, self.base, self.starts, self.phys, self.dtype = shared, base, starts, phys, dtype
        self.fields, self.why = fields, why  # the descriptor's (layout type, LBO, SBO), or why there is none
        self.tmem = shared is None  # A read from tensor memory (_tmem_operand): base and phys are TMEM addresses
        # a runtime start inside a swizzle period (_split_inner): the logical offsets (inst, P*K) the swizzle
        # maps at run time, the period, the shared array's engine; phys/accesses cover every such start
        self.logical: Optional[np.ndarray] = None
        self.period, self.seng, self.phys_range = 0, None, None


def _tmem_operand(frag: Any, P: int, K: int, dtype: Any, what: str) -> _Operand:
    """Operand A of a UMMA with ``OperandSource.TMEM`` (``make_fragment_A`` of a TMEM tensor, sliced to one
    k-block: ((M, K), RestM)): base is its TMEM address (elements of dtype), phys per MMA instance the
    element offsets of its (M, K) tile, column-major. The UMMA reads A's row m from lane m and its K
    elements from consecutive columns, so the tile must be (M, K):(lane step, 1) with M = 128."""
    from ...nvgpu.tcgen05.tmem import tmem_dp_stride

    eng = frag.engine
    if eng.dtype.name != dtype.name:
        raise TraceError(f"{what}: operand A in tensor memory holds {eng.dtype}, the MMA reads {dtype} (recast_ptr "
                         f"the TMEM pointer to {dtype})")
    shp, std = frag.layout.shape, frag.layout.stride
    if not isinstance(shp, tuple) or len(shp) != 2:
        raise TraceError(f"{what}: operand A must be sliced to one k-block, ((M,K), MMA_M), got shape "
                         f"{it.tuple_str(shp)}: index it as tCrA[(None, None, k_block)]")
    if P != 128:
        raise TraceError(f"{what}: A in tensor memory is supported for UMMAs of 128 rows per CTA, not {P}")
    tile = Layout._raw(shp[0], std[0])
    if it.product(tile.shape) != P * K:
        raise TraceError(f"{what}: operand A's value mode {tile} is not a {P}x{K} tile")
    toff = _static_offsets(tile, what)
    dp = tmem_dp_stride(dtype)
    want = (np.arange(P)[None, :] * dp + np.arange(K)[:, None]).reshape(-1)  # m + P * k -> lane m, element k
    if not np.array_equal(np.asarray(toff, dtype=np.int64), want):
        raise TraceError(f"{what}: operand A in tensor memory must hold row m in lane m and its {K} elements in "
                         f"consecutive columns ({P},{K}):({dp},1), as make_fragment_A makes it; got {tile}")
    inst = _static_offsets(Layout._raw(shp[1], std[1]), what)
    phys = np.asarray(inst, dtype=np.int64)[:, None] + want[None, :]
    return _Operand(None, frag.offset, phys[:, 0].copy(), phys, dtype, None)


def _operand(frag: Any, name: str, P: int, K: int, dtype: Any, what: str) -> _Operand:
    """An operand fragment of descriptors (make_fragment_A/B, sliced to one k-block: (1, RestMN))."""
    from ...nvgpu.tcgen05.tmem import SmemDescEngine
    from .tma import smem_byte_swizzle, smem_phys, split_base

    eng = frag.engine
    if not isinstance(eng, SmemDescEngine):
        raise TraceError(f"{what}: operand {name} must be the tiled MMA's make_fragment_{name} of a shared-memory "
                         f"partition (UMMA reads it through descriptors), got {frag}")
    sm = eng.smem
    seng = sm.engine
    if not isinstance(seng, SmemEngine):
        raise TraceError(f"{what}: operand {name}'s descriptors point to {getattr(seng, 'memspace', '?')} memory")
    if seng.dtype.name != dtype.name and {seng.dtype.name, dtype.name} != {"f32", "tf32"}:  # tf32 UMMAs read f32 words
        raise TraceError(f"{what}: operand {name} holds {seng.dtype}, the MMA reads {dtype}")
    shp = frag.layout.shape
    if not isinstance(shp, tuple) or len(shp) != 2:
        raise TraceError(f"{what}: operand {name} must be sliced to one k-block and stage, (1, MMA_{'M' if name == 'A' else 'N'}), "
                         f"got shape {it.tuple_str(shp)}: index it as tCr{name}[(None, None, k_block, stage)]")
    n_inst = it.product(shp[1])
    per_desc = 128 // seng.dtype.width  # a descriptor step of 16 bytes, in elements
    lshape, lstride = sm.layout.shape, sm.layout.stride
    tile = Layout._raw(lshape[0], lstride[0])
    if it.product(tile.shape) != P * K:
        raise TraceError(f"{what}: operand {name}'s value mode {tile} is not a {P}x{K} tile")
    toff = _static_offsets(tile, what)
    bits = smem_byte_swizzle(seng, f"{what}: operand {name}")
    period = max(1, (1 << (bits + 7)) // seng.dtype.bytes) if bits else max(1, 16 // seng.dtype.bytes)
    start = sm.offset + frag.offset * per_desc if is_sym(frag.offset) or is_sym(sm.offset) else \
        int(sm.offset) + int(frag.offset) * per_desc
    inner = None
    if is_sym(start) and sym_div(start - lin_form(start)[1]) % period:
        start, inner = _split_inner(start, period, f"{what}: operand {name}")
    base, const = split_base(start, period, f"{what}: operand {name}")
    inst = _static_offsets(frag.layout, what)  # (1, RestMN): descriptor steps per instance
    phys = np.zeros((n_inst, P * K), dtype=np.int64)
    starts = np.zeros(n_inst, dtype=np.int64)
    for i in range(n_inst):
        logical = const + int(inst[i]) * per_desc + toff
        starts[i] = int(logical[0])
        phys[i] = smem_phys(seng, logical)
    # the descriptor's fields (the CUDA printer's; the CPU reads through the layout): UMMA's canonical
    # shared-memory layouts are GMMA's
    fields, why = None, ""
    try:
        from .wgmma import gmma_desc_fields

        k_major = P == 1 or int(np.asarray(toff).reshape(K, P)[0, 1]) != 1  # (m+1, k) is not the next element
        fields = gmma_desc_fields(tile, seng.dtype, bits, "K" if k_major else "MN", f"{what}: operand {name}")
    except Exception as e:  # noqa: BLE001 - kept for the CUDA printer's error
        why = str(e)
    if inner is None:
        return _Operand(seng.param, base, starts, phys, seng.dtype, fields, why)
    logical = const + np.asarray(inst, dtype=np.int64).reshape(-1, 1) * per_desc + np.asarray(toff, dtype=np.int64)
    lo, hi = sym_range(inner)
    rs = np.arange(lo, hi + 1, max(1, sym_div(inner)), dtype=np.int64)
    span = np.stack([smem_phys(seng, logical + r) - r for r in rs])  # every physical offset, from base + inner
    o = _Operand(seng.param, base + inner, starts, smem_phys(seng, logical), seng.dtype, fields, why)
    o.phys_range = (int(span.min()), int(span.max()))
    o.logical, o.period, o.seng = logical, period, seng
    return o


def _split_inner(start: Any, period: int, what: str) -> Tuple[Any, Any]:
    """start = outer + inner: inner the terms of the runtime part whose coefficients are no multiple of the swizzle
    period (a k-block index of a runtime loop inside a swizzle atom: CuTe's descriptor start moves by its unswizzled
    offset and the hardware swizzles the address), proven in [0, period); outer the rest."""
    terms, const = lin_form(start)
    outer, inner = const, 0
    for atom, c in terms.values():
        if c % period:
            inner = inner + atom * c
        else:
            outer = outer + atom * c
    lo, hi = sym_range(inner)
    if lo < 0 or hi >= period:
        raise TraceError(f"{what}: the offset's runtime part ({inner.expr_str()}) ranges over [{lo}, {hi}], not inside "
                         f"one swizzle period ({period} elements), so the swizzled addresses cannot be computed; index "
                         f"whole swizzle atoms (e.g. a pipeline stage) at runtime")
    return outer, inner


# --------------------------------------------------------------------------- ops

class UmmaOp(Op):
    """One cute.gemm of a UMMA: for every (m instance, n instance) an M x N x K product of smem
    tiles A and B added to (or written into) the f32 accumulator in tensor memory at
    ``acc_base + acc_offs[mi, ni, m + M * n]``."""

    min_sm = 100  # tcgen05: sm_100a

    __slots__ = ("op", "a", "b", "acc_base", "acc_offs", "accumulate", "where")

    def __init__(self, op: Any, a: _Operand, b: _Operand, acc_base: Any, acc_offs: np.ndarray, accumulate: Any,
                 where: str):
        self.op, self.a, self.b, self.acc_base, self.acc_offs = op, a, b, acc_base, acc_offs
        self.accumulate, self.where = accumulate, where

    def __repr__(self) -> str:
        m, n, k = self.op.shape_mnk
        a = "tmem" if self.a.tmem else self.a.shared.name
        return (f"tcgen05.mma m{m}n{n}k{k} x{self.acc_offs.shape[0]}x{self.acc_offs.shape[1]} tmem "
                f"(+)= {a} * {self.b.shared.name}")

    def accesses(self) -> List[Any]:
        return [Access(o.shared, o.base, o.phys_range or (int(o.phys.min()), int(o.phys.max())), False,
                       self) for o in (self.a, self.b) if not o.tmem]

    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
        """Issue: one UMMA per warp that runs it, executed at the CTA's next tcgen05.commit."""
        act = np.ones(b.n, dtype=bool) if mask is None else mask
        lanes = act.reshape(-1, 32) if b.n % 32 == 0 else None
        if lanes is None:
            raise LaunchError(f"{b.ir.name}{_at(self.where)}: a UMMA needs blocks of whole warps")
        rows = np.nonzero(lanes.any(axis=1))[0] * 32 + np.argmax(lanes[lanes.any(axis=1)], axis=1)
        if rows.size == 0:
            return
        vals = {}
        for k, e in (("a", self.a.base), ("b", self.b.base), ("acc", self.acc_base)):
            vals[k] = np.broadcast_to(np.asarray(b.index(e), dtype=np.int64), (b.n,))[rows].copy()
        acc = self.accumulate
        if isinstance(acc, tuple):
            flag = np.asarray(b.column(acc, Boolean, real=True))[rows] != 0
        else:
            flag = np.full(rows.size, bool(acc))
        pend = b.common.setdefault("umma_pending", {})
        n_cta = self.op.cta_group.value
        csize = int(getattr(b, "cluster_size", 1))
        for i, r in enumerate(rows.tolist()):
            blk = int(b.block_of[r])
            if n_cta == 2 and csize % 2:
                raise LaunchError(f"{b.ir.name}{_at(self.where)}: block {b.block_name(blk)} issues a 2-CTA UMMA "
                                  f"(CtaGroup.TWO), but its cluster has {csize} CTA{'s' if csize > 1 else ''}: a 2-CTA "
                                  f"UMMA runs on a pair of CTAs of one cluster; launch with clusters of an even size "
                                  f"(cluster=(2, 1, 1), ...)")
            if n_cta == 2 and (blk % csize) % 2:
                raise LaunchError(f"{b.ir.name}{_at(self.where)}: block {b.block_name(blk)} issues a 2-CTA UMMA "
                                  f"(CtaGroup.TWO) but is not the leader (even rank) of a CTA pair of its cluster "
                                  f"(cluster size {csize}); rule: the leader CTA of the pair issues a 2-CTA UMMA")
            pend.setdefault(blk, []).append((self, int(vals["a"][i]), int(vals["b"][i]), int(vals["acc"][i]),
                                             bool(flag[i])))

    def execute(self, b: Any, blk: int, a0: int, b0: int, acc0: int, accumulate: bool) -> None:
        """Run the UMMA issued by block blk (of the batch): for a 2-CTA UMMA blk is the pair's leader and
        blk + 1 its peer, which holds the second half of A's rows, of B's rows and of D's rows, at the
        same shared-memory and tensor-memory addresses."""
        from ...nvgpu.tcgen05.tmem import tmem_dp_stride
        from ..cpu.context import from_real, to_real

        M, N, K = self.op.shape_mnk
        n_cta = self.op.cta_group.value
        blocks = [blk + c for c in range(n_cta)]
        Mc = M // n_cta  # rows of D (and of A) per CTA
        st = tmem_state(b)

        def tile(o: _Operand, start: int, P: int, k: int) -> np.ndarray:
            if o.tmem:
                return tmem_tile(o, start, P, k)
            if o.logical is not None:  # a runtime start inside a swizzle period: swizzle its logical offsets now
                from .tma import smem_phys

                q, r = divmod(start, o.period)
                idx = q * o.period + smem_phys(o.seng, o.logical + r)
            else:
                idx = start + o.phys  # (inst, P*K)
            if idx.min() < 0 or idx.max() >= o.shared.length:
                raise LaunchError(f"{b.ir.name}{_at(self.where)}: a UMMA operand reaches outside {o.shared.name}")
            v = to_real(b.shared[o.shared.index][k * o.shared.length + idx], o.dtype).astype(np.float64)
            return v.reshape(v.shape[0], K, P).swapaxes(1, 2)  # (inst, P, K)

        def tmem_tile(o: _Operand, start: int, P: int, k: int) -> np.ndarray:
            """A's tiles read from block k's tensor memory (allocated columns only)."""
            odp = tmem_dp_stride(o.dtype)
            addr = start + o.phys  # (inst, P*K)
            ln, el = addr // odp, addr % odp
            if (addr < 0).any() or (ln >= 128).any():
                raise LaunchError(f"{b.ir.name}{_at(self.where)}: the UMMA's operand A reaches outside tensor memory")
            check_columns(b, st, np.full(el.shape, k), el // _epc(o.dtype), "a UMMA reading A (tcgen05.mma)",
                          _at(self.where))
            v = to_real(tmem_cells(st, o.dtype)[k, ln, el], o.dtype).astype(np.float64)
            return v.reshape(v.shape[0], K, P).swapaxes(1, 2)  # (inst, P, K)

        A = np.concatenate([tile(self.a, a0, Mc, k) for k in blocks], axis=1)  # (inst, M, K)
        B = np.concatenate([tile(self.b, b0, N // n_cta, k) for k in blocks], axis=1)  # (inst, N, K)
        dt = self.op.acc_dtype  # f32, or s32 for kind::i8
        integer = dt.kind == "int"
        dp = tmem_dp_stride(dt)
        addr = acc0 + self.acc_offs  # (RM, RN, Mc*N)
        lane, e = addr // dp, addr % dp
        if (addr < 0).any() or (lane >= 128).any():
            raise LaunchError(f"{b.ir.name}{_at(self.where)}: the UMMA's accumulator reaches outside tensor memory")
        for k in blocks:
            check_columns(b, st, np.full(e.shape, k), e // _epc(dt), "a UMMA (tcgen05.mma)", _at(self.where))
        cells = tmem_cells(st, dt)
        RM, RN = self.acc_offs.shape[:2]
        for mi in range(RM):
            for ni in range(RN):
                ln, ee = lane[mi, ni], e[mi, ni]
                if integer:  # s8/u8 products summed exactly (|sum| < 2^53), wrapped to 32 bits as the hardware's s32
                    C = np.concatenate([cells[k, ln, ee].astype(np.int64).reshape(N, Mc).T for k in blocks], axis=0) \
                        if accumulate else np.zeros((M, N), dtype=np.int64)
                    C = C + np.rint(A[mi] @ B[ni].T).astype(np.int64)
                    C = ((C + (1 << 31)) % (1 << 32) - (1 << 31)).astype(np.int32)
                    for c, k in enumerate(blocks):
                        cells[k, ln, ee] = C[c * Mc:(c + 1) * Mc].T.reshape(-1)
                    continue
                if accumulate:
                    C = np.concatenate([to_real(cells[k, ln, ee], dt).astype(np.float64).reshape(N, Mc).T
                                        for k in blocks], axis=0)
                else:
                    C = np.zeros((M, N))
                C = (C + A[mi] @ B[ni].T).astype(np.float16 if dt.width == 16 else np.float32)  # D's precision
                for c, k in enumerate(blocks):
                    cells[k, ln, ee] = from_real(C[c * Mc:(c + 1) * Mc].T.reshape(-1), dt)

    def cuda(self, r: Any) -> None:

        M, N, K = self.op.shape_mnk
        group = self.op.cta_group.value  # 2: issued by the pair's leader, reading and writing both CTAs
        kind = umma_kind(self.op)
        for o, nm in ((self.a, "A"), (self.b, "B")):
            if o.fields is None and not o.tmem:
                raise TraceError(f"kernel {r.ir.name}{_at(self.where)}: operand {nm} of the UMMA is not in a canonical "
                                 f"UMMA shared-memory layout, so it has no descriptor: {o.why}")
        idesc = umma_idesc(self.op)
        acc = r.cond(self.accumulate) if isinstance(self.accumulate, tuple) else ("1" if self.accumulate else "0")
        lane = r.fresh("cl_lane")
        r.emit(f'unsigned {lane}; asm volatile("mov.u32 %0, %%laneid;" : "=r"({lane}));')
        with r.braces(f"if ({lane} == 0) {{", "}"):  # one thread of the warp issues the UMMA
            RM, RN = self.acc_offs.shape[:2]
            for mi in range(RM):
                for ni in range(RN):
                    da = self._tmem_addr(r, self.a, mi) if self.a.tmem else self._desc(r, self.a, mi)
                    db = self._desc(r, self.b, ni)
                    d0 = self.acc_base + int(self.acc_offs[mi, ni, 0]) if is_sym(self.acc_base) else \
                        int(self.acc_base) + int(self.acc_offs[mi, ni, 0])
                    epc = _epc(self.op.acc_dtype)  # an f16 accumulator: two element addresses to a column
                    dc = (r.expr(d0)[0] if epc == 1 else f"({r.expr(d0)[0]}) / {epc}") if is_sym(d0) else \
                        str(int(d0) // epc)
                    a_op, a_c = ("[%1]", "r") if self.a.tmem else ("%1", "l")  # A: a TMEM address or a descriptor
                    r.emit(f'asm volatile("{{\\n\\t.reg .pred p;\\n\\tsetp.ne.b32 p, %4, 0;\\n\\t'
                           f'tcgen05.mma.cta_group::{group}.kind::{kind} [%0], {a_op}, %2, %3, p;\\n\\t}}" :: '
                           f'"r"((unsigned)({dc})), "{a_c}"({da}), "l"({db}), "r"(0x{idesc:08x}u), '
                           f'"r"((unsigned)({acc})) : "memory");')

    @staticmethod
    def _tmem_addr(r: Any, o: _Operand, i: int) -> str:
        """The TMEM address (lane << 16 | 32-bit column) of instance i of an A operand in tensor memory: its
        element offset divided by the elements per column."""
        start = o.base + int(o.starts[i]) if is_sym(o.base) else int(o.base) + int(o.starts[i])
        e = r.expr(start)[0] if is_sym(start) else str(int(start))
        return f"(unsigned)(({e}) / {_epc(o.dtype)})"

    @staticmethod
    def _desc(r: Any, o: _Operand, i: int) -> str:
        from .mbarrier import smem_addr

        start = o.base + int(o.starts[i]) if is_sym(o.base) else int(o.base) + int(o.starts[i])
        hi = umma_desc(0, o.fields)
        return f"(0x{hi:016x}ull | (unsigned long long)(({smem_addr(r, o.shared, start)} >> 4) & 0x3FFFu))"


# GMMA layout type (0 interleaved, 1 128B, 2 64B, 3 32B swizzle) -> UMMA's (0 none, 2 128B, 4 64B, 6 32B)
_UMMA_LAYOUT = {0: 0, 1: 2, 2: 4, 3: 6}


def umma_desc(start_byte_addr: int, fields: Tuple[int, int, int]) -> int:
    """The 64-bit SM100 shared-memory descriptor: start address >> 4 in bits [0,14), LBO in
    [16,30), SBO in [32,46), version 1 in [46,48), base offset 0, layout type in [61,64); fields
    (GMMA layout type, LBO, SBO) in 16-byte units, as wgmma.gmma_desc_fields gives them.

    >>> hex(umma_desc(0x400, (1, 1, 64)))
    '0x4000404000010040'
    """
    lt, lbo, sbo = fields
    return (((start_byte_addr >> 4) & 0x3FFF) | (lbo << 16) | (sbo << 32) | (1 << 46) | (_UMMA_LAYOUT[lt] << 61))


def umma_idesc(op: Any) -> int:
    """The 32-bit instruction descriptor of a dense UMMA (CUTLASS's UMMA::InstrDescriptor): D format in
    [4,6) (f16 0, f32 1, s32 2), A and B formats in [7,10) and [10,13) (kind::f16: f16 0, bf16 1; tf32 2;
    kind::f8f6f4: e4m3 0, e5m2 1, e2m3 3, e3m2 4, e2m1 5; kind::i8: u8 0, s8 1), A and B major in bits 15
    and 16 (MN-major: 1), N >> 3 in [17,23), M >> 4 in [24,29).

    >>> from cutelab import Float16, Float32
    >>> from cutelab.nvgpu import tcgen05, OperandMajorMode as Mj
    >>> hex(umma_idesc(tcgen05.MmaF16BF16Op(Float16, Float32, (128, 256, 16), tcgen05.CtaGroup.ONE,
    ...                                     tcgen05.OperandSource.SMEM, Mj.K, Mj.K)))
    '0x8400010'
    """
    kind = umma_kind(op)
    fmt = _FORMATS[kind]
    M, N, _ = op.shape_mnk
    a, b = fmt[op.a_dtype.name], fmt[op.b_dtype.name]
    c = {"f16": 0, "f32": 1, "i32": 2}[op.acc_dtype.name]
    mn = lambda m: 1 if m.name == "MN" else 0  # noqa: E731
    return ((c << 4) | (a << 7) | (b << 10) | (mn(op.a_major_mode) << 15) | (mn(op.b_major_mode) << 16)
            | ((N >> 3) << 17) | ((M >> 4) << 24))


# the A/B format codes of each UMMA kind (CUTLASS's UMMA::F16F32Format, MXF8F6F4Format, S8Format)
_FORMATS = {"f16": {"f16": 0, "bf16": 1}, "tf32": {"tf32": 2},
            "f8f6f4": {"f8E4M3FN": 0, "f8E5M2": 1, "f6E2M3FN": 3, "f6E3M2FN": 4, "f4E2M1FN": 5},
            "i8": {"u8": 0, "i8": 1}}


def umma_kind(op: Any) -> str:
    """The ``.kind`` of a dense UMMA op: f16 (f16/bf16), tf32, f8f6f4 (MmaFP8Op, MmaF8F6F4Op) or i8."""
    from ...nvgpu.tcgen05.mma import MmaF8F6F4Op, MmaFP8Op, MmaI8Op, MmaTF32Op

    if isinstance(op, MmaTF32Op):
        return "tf32"
    if isinstance(op, (MmaFP8Op, MmaF8F6F4Op)):
        return "f8f6f4"
    if isinstance(op, MmaI8Op):
        return "i8"
    return "f16"


class UmmaCommitOp(Op):
    """``tcgen05.commit.cta_group::N.mbarrier::arrive::one.shared::cluster[.multicast::cluster].b64
    [mbar][, mask]``: the CTA's issued UMMAs complete, then each executing thread arrives once on the
    mbarrier (of its own CTA, or at the same offset in every CTA of the cluster whose rank is a bit of
    ``mask``)."""

    min_sm = 100  # tcgen05: sm_100a

    __slots__ = ("shared", "base", "mask", "self_rank", "n_cta", "where")

    def __init__(self, shared: Shared, base: Any, where: str, mask: Any = None, self_rank: Any = 0, n_cta: int = 1):
        self.shared, self.base, self.where = shared, base, where
        self.mask, self.self_rank, self.n_cta = mask, self_rank, n_cta

    def __repr__(self) -> str:
        from ..ir.nodes import _ref_str

        m = "" if self.mask is None else f" multicast {_ref_str(self.mask)}"
        return f"tcgen05.commit.cta_group::{self.n_cta} {self.shared.name}[{_ref_str(self.base)}]{m}"

    def accesses(self) -> List[Access]:
        return [Access(self.shared, self.base, (0,), False, self)]

    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
        from .mbarrier import _arrive, _need_init, _state, _targets

        act = np.arange(b.n) if mask is None else np.nonzero(mask)[0]
        if act.size == 0:
            return
        pend = b.common.setdefault("umma_pending", {})
        for blk in np.unique(b.block_of[act]).tolist():
            for op, a0, b0, acc0, flag in pend.pop(blk, []):
                op.execute(b, blk, a0, b0, acc0, flag)
        what = "tcgen05.commit"
        blks, slot = _targets(b, mask, self.shared, self.base, what)
        st = _state(b, self.shared)
        if self.mask is None:
            _need_init(st, blks, slot, b, self.shared, what)
            _arrive(b, st, blks, slot, self.shared, what, _at(self.where))
            return
        size = int(getattr(b, "cluster_size", 1))
        m = np.broadcast_to(np.asarray(b.index(self.mask), dtype=np.int64), (b.n,))[act]
        if ((m <= 0) | ((m >> size) != 0)).any():
            i = int(np.argmax((m <= 0) | ((m >> size) != 0)))
            raise LaunchError(f"{b.ir.name}{_at(self.where)}: {what} of block {b.block_name(int(b.block_of[act[i]]))} "
                              f"has the multicast mask {int(m[i]):#x}, naming CTAs outside its cluster of {size}")
        me = np.broadcast_to(np.asarray(b.index(self.self_rank), dtype=np.int64), (b.n,))[act]
        base = b.block_of[act] - me
        for r in range(size):
            sel = ((m >> r) & 1) == 1
            if sel.any():
                tb, ts = base[sel] + r, slot[sel]
                _need_init(st, tb, ts, b, self.shared, what)
                _arrive(b, st, tb, ts, self.shared, what, _at(self.where))

    def cuda(self, r: Any) -> None:
        from .mbarrier import smem_addr

        ins = f"tcgen05.commit.cta_group::{self.n_cta}.mbarrier::arrive::one.shared::cluster"
        addr = smem_addr(r, self.shared, self.base)
        if self.mask is None:
            r.emit(f'asm volatile("{ins}.b64 [%0];" :: "r"({addr}) : "memory");')
            return
        m = r.expr(self.mask)[0] if is_sym(self.mask) else str(int(self.mask))
        r.emit(f'asm volatile("{ins}.multicast::cluster.b64 [%0], %1;" :: "r"({addr}), '
               f'"h"((unsigned short)({m})) : "memory");')


def commit(mbar_ptr: Any, mask: Any = None, cta_group: Any = None, *, loc: Any = None, ip: Any = None) -> None:
    """``cute.nvgpu.tcgen05.commit``: the UMMAs this CTA issued complete, then arrive on mbar_ptr (in
    this CTA, or with a mask in every CTA of the cluster whose rank is a bit of it)."""
    from .cluster import _rank_expr
    from .mbarrier import mbar_ref

    t = current("tcgen05.commit")
    n_cta = getattr(cta_group, "value", cta_group) or 1
    if n_cta not in (1, 2):
        raise TraceError(f"kernel {t.name}: tcgen05.commit: cta_group must be CtaGroup.ONE or TWO, got "
                         f"{cta_group!r}{_at(_where(t))}")
    sh, base = mbar_ref(mbar_ptr, "tcgen05.commit")
    if mask is not None:
        from ..frontend.trace import TraceValue

        if isinstance(mask, TraceValue):
            mask = mask.as_index()
        if not (isinstance(mask, int) or is_sym(mask)):
            raise TraceError(f"kernel {t.name}: tcgen05.commit: the multicast mask must be an integer (static or an "
                             f"index expression), got {type(mask).__name__}{_at(_where(t))}")
        if is_sym(mask):
            t.check_index(mask, "tcgen05.commit")
    t.emit(UmmaCommitOp(sh, base, _where(t), mask, _rank_expr(t) if mask is not None else 0, n_cta))


# --------------------------------------------------------------------------- cute.gemm

def _check_acc(atom: Any, op: Any, d: Any, c: Any, what: str) -> None:
    """The checks every UMMA's cute.gemm makes: an f32 accumulator in TMEM, both C and D; no negation."""
    from ...nvgpu.tcgen05.mma import Field
    from ...nvgpu.tcgen05.tmem import TmemEngine

    if op.acc_dtype.name not in ("f32", "i32", "f16"):
        raise TraceError(f"{what}: kernels support f32 and f16 accumulators (s32 for kind::i8), got {op.acc_dtype}")
    for f in (Field.NEGATE_A, Field.NEGATE_B):
        if atom._state.get(f.value):
            raise TraceError(f"{what}: {f} is not supported by cutelab's kernels")
    # offsets of two reads of a runtime stage index (mamba2_ssd's tCtAcc[..., state.index] twice) are different
    # registers of one value, not comparable at trace time: the UMMA accumulates into D alone (its instruction has
    # no C operand), so C is only checked where its offset is known to differ
    same_off = d.offset == c.offset if not (is_sym(d.offset) or is_sym(c.offset)) else True
    if d is not c and not (d.engine is c.engine and d.layout == c.layout and same_off):
        raise TraceError(f"{what}: the accumulator must be both C and D (cute.gemm(mma, acc, a, b, acc))")
    if not isinstance(getattr(d, "engine", None), TmemEngine):
        raise TraceError(f"{what}: the accumulator must be in tensor memory (make_fragment_C, with its pointer "
                         f"from TmemAllocator.retrieve_ptr), got {getattr(d, 'memspace', d)}")
    if d.element_type.name != op.acc_dtype.name:
        raise TraceError(f"{what}: the accumulator holds {d.element_type}; the MMA accumulates in {op.acc_dtype}")


def kernel_gemm(atom: Any, d: Any, a: Any, b: Any, c: Any) -> bool:
    """cute.gemm inside a kernel for tcgen05 MMAs; False for other atoms (or outside a kernel)."""
    from ...nvgpu.tcgen05.mma import (BlockScaledMmaOp, CtaGroup, Field, MmaF8F6F4Op, MmaF16BF16Op, MmaFP8Op,
                                      MmaI8Op, MmaTF32Op, OperandSource, Tcgen05MmaOp)

    if not tracing():
        return False
    op = getattr(atom, "op", None)
    if not isinstance(op, Tcgen05MmaOp):
        return False
    t = current("cute.gemm")
    what = f"kernel {t.name}: cute.gemm with {type(op).__name__}{_at(_where(t))}"
    if isinstance(op, BlockScaledMmaOp):  # instr/gemm.py gives these to tcgen05_blockscaled.kernel_gemm first
        raise TraceError(f"{what}: a block-scaled UMMA reached the plain UMMA's gemm (kernel/instr/gemm.py "
                         f"dispatches it to tcgen05_blockscaled.kernel_gemm)")
    if not isinstance(op, (MmaF16BF16Op, MmaTF32Op, MmaFP8Op, MmaF8F6F4Op, MmaI8Op)):
        raise TraceError(f"{what}: kernels support the f16/bf16, tf32, f8f6f4 (8-bit operands) and i8 UMMAs and "
                         f"the block-scaled ones with 8-bit operands so far")
    for dt, nm in ((op.a_dtype, "A"), (op.b_dtype, "B")):
        if dt.width < 8:
            raise TraceError(f"{what}: operand {nm} is {dt} ({dt.width} bits); cutelab's kernels hold 8-, 16- and "
                             f"32-bit UMMA operands in shared memory, not 4- or 6-bit ones yet")
    n_cta = 2 if op.cta_group is CtaGroup.TWO else 1
    _check_acc(atom, op, d, c, what)
    M, N, K = op.shape_mnk
    ra, rb = (len(x.layout.shape) if isinstance(x.layout.shape, tuple) else 1 for x in (a, b))
    if ra == 3 and rb == 3:  # (MMA, MMA_M, MMA_K) x (MMA, MMA_N, MMA_K): one UMMA per k-block; after the
        # first (which takes the ACCUMULATE field) each adds to the accumulator, as CuTe DSL's do
        kb = it.product(a.layout.shape[2])
        if kb != it.product(b.layout.shape[2]):
            raise TraceError(f"{what}: A has {kb} k-blocks and B {it.product(b.layout.shape[2])}")
        acc0: Any = (_field_reg(t, atom, Field.ACCUMULATE.value), 0)
        for k in range(kb):
            _umma(t, op, d, a[(None, None, k)], b[(None, None, k)], acc0 if k == 0 else 1, n_cta, what)
        return True
    _umma(t, op, d, a, b, (_field_reg(t, atom, Field.ACCUMULATE.value), 0), n_cta, what)
    return True


def _umma(t: Any, op: Any, d: Any, a: Any, b: Any, acc: Any, n_cta: int, what: str) -> None:
    """One UMMA call per MMA of the accumulator over one k-block of A and B."""
    from ...nvgpu.tcgen05.tmem import TmemEngine

    M, N, K = op.shape_mnk
    if isinstance(getattr(a, "engine", None), TmemEngine):  # OperandSource.TMEM
        if op._operand_in_smem("A"):
            raise TraceError(f"{what}: operand A is a tensor-memory tensor but the MMA reads A from shared memory "
                             f"(make the op with OperandSource.TMEM)")
        A = _tmem_operand(a, M // n_cta, K, op.a_dtype, what)
    else:  # a 2-CTA UMMA: each CTA holds half of A, B and D
        A = _operand(a, "A", M // n_cta, K, op.a_dtype, what)
    B = _operand(b, "B", N // n_cta, K, op.b_dtype, what)
    shp = d.layout.shape
    if not isinstance(shp, tuple) or len(shp) != 3 or it.product(shp[0]) != M // n_cta * N:
        raise TraceError(f"{what}: the accumulator must be ((M,N), MMA_M, MMA_N) as make_fragment_C gives, got "
                         f"{it.tuple_str(shp)}")
    RM, RN = it.product(shp[1]), it.product(shp[2])
    if (RM, RN) != (A.phys.shape[0], B.phys.shape[0]):
        raise TraceError(f"{what}: the accumulator covers {RM}x{RN} MMAs, A and B {A.phys.shape[0]}x{B.phys.shape[0]}")
    offs = _static_offsets(d.layout, what).reshape(RN, RM, M // n_cta * N).transpose(1, 0, 2)
    # acc: the field's register (later sets reach this UMMA in later iterations), or 1 past the first k-block
    t.emit(UmmaOp(op, A, B, d.offset, offs, acc, _where(t)))
