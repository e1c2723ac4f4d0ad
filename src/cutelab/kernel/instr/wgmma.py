"""SM90 warpgroup MMA (wgmma) inside traced kernels: ``cute.gemm(tiled_mma, acc, tCrA, tCrB, acc)``
with a ``warpgroup.MmaF16BF16Op`` or ``MmaF8Op`` reading A and B from shared memory (or, for 16-bit
types with ``OperandSource.RMEM``, A from each thread's register fragment), and the
``warpgroup.fence / commit_group / wait_group`` ops.

Shared-memory operands are described to the tensor cores by 64-bit *matrix descriptors*
(``make_gmma_desc``), built from the operand's smem layout as CuTe does
(include/cute/atom/mma_traits_sm90_gmma.hpp): the layout, in 16-byte units, must be one of the
canonical GMMA layouts for its major mode and swizzle; the descriptor holds the start address,
the leading and stride byte offsets (LBO, SBO, in 16-byte units) and the layout type
(0 interleaved, 1 128B, 2 64B, 3 32B swizzle).

- CPU: for each warpgroup (128 threads, all active), the op reads the A (64 x 16) and B (N x 16)
  tiles from shared memory through their layouts (and the swizzle of the memory), multiplies
  them exactly (float64) and adds the accumulators (when ``Field.ACCUMULATE`` is set), which
  it reads and writes through the accumulator's TV layout: thread t's value v is element
  tv_C(t, v) of the 64 x N tile. Results are rounded to f32 after each k16 step (k32 for fp8:
  e4m3/e5m2 x 32 products summed exactly, then rounded once; the hardware's fp8 accumulation is
  known to keep fewer bits than f32 inside a step, which is what two-level accumulation programs
  such as CUTLASS's dense_gemm_fp8_2xacc.py guard against, so the CPU is at least as accurate).
- CUDA: ``wgmma.mma_async.sync.aligned.m64nNk16.f32.{f16,bf16}.{f16,bf16}`` per atom and k16
  step (``m64nNk32.f32.{e4m3,e5m2}.{e4m3,e5m2}`` for fp8, K-major, with no transpose immediates),
  with the accumulator registers as ``"+f"`` operands (``"=f"`` in the first k step of a wgmma whose
  ACCUMULATE is statically off: the old values are not read, so they are not kept live). A in registers: four ``"r"`` operands, each two
  16-bit values of the fragment (value 2j in the low half, 2j+1 in the high half, as CuTe recasts the
  fragment to uint32), and no A descriptor or A transpose immediate; the CPU places thread t's value v
  at element tv_A(t, v) of the 64 x 16 tile (CuTe's ALayout_64x16). The descriptors: the low word of
  each operand's descriptor at its thread-dependent start (the smem array's address >> 4, the
  warpgroup's offset, LBO << 16) is computed once at the top of the kernel and broadcast from
  lane 0 (``LoweringContext.prologue``; warp-uniform, so it lives in uniform registers); each wgmma
  adds its stage / k-block offset in 16-byte units and ORs in the constant high word (SBO, layout
  type). Shared memory is below 256 KiB, so the 14-bit address field never carries.

The ACCUMULATE field is read when the kernel is traced while it is set to static values (False for
the first k-block of a tile, True after, as CuTe DSL programs do). Set to a runtime value (quack's
``gemm(..., zero_init=not O_should_accumulate)`` with a flag carried through a runtime loop), the
atom's field becomes a kernel register (``mma_field``), which that set and every later set of the
atom assign, and which the wgmma reads when it is issued: the CPU takes each warpgroup's value then
(it must be the same in the 128 threads), the CUDA passes it as the scale-d predicate of the first
k step.
The CPU model is asynchronous as the hardware is: an issued wgmma joins the open group,
``commit_group`` closes it, and ``wait_group(N)`` executes the oldest groups until N remain,
reading shared memory and the accumulators *then*. So a stage released (and overwritten by TMA)
before the wgmmas reading it were waited for gives wrong results on the CPU too, and
accumulators read before their wait hold the old values. ``fence`` has no CPU effect.
"""

from __future__ import annotations

from typing import Any, List, Optional, Tuple

import numpy as np

from ... import int_tuple as it
from ...errors import LaunchError, LayoutError, TraceError
from ...layout import Layout
from ...numeric import Boolean, Float32
from .mbarrier import smem_addr
from ..ir.symbolic import floordiv, is_sym, sym_div
from ..ir.nodes import Op
from ..frontend.engines import RmemEngine, SmemEngine
from ..frontend.trace import _static_offsets, current, tracing

__all__ = ["GmmaDescFields", "gmma_desc_fields", "make_gmma_desc", "WgmmaOp", "WarpgroupSyncOp", "kernel_gemm",
           "fence", "commit_group", "wait_group", "target_arch"]

# GMMA LayoutType by the swizzle's B (Swizzle<B,4,3> on bytes)
_LAYOUT_TYPE = {0: 0, 3: 1, 2: 2, 1: 3}
_W = {0: 1, 1: 2, 2: 4, 3: 8}  # 16-byte units per swizzle row


class GmmaDescFields(tuple):
    """(layout_type, lbo, sbo): the constant fields of a GMMA descriptor (offsets in 16-byte units)."""

    @property
    def layout_type(self) -> int:
        return self[0]

    @property
    def lbo(self) -> int:
        return self[1]

    @property
    def sbo(self) -> int:
        return self[2]


def make_gmma_desc(start_byte_addr: int, fields: Tuple[int, int, int], base_offset: int = 0) -> int:
    """The 64-bit GMMA descriptor: start address >> 4 in bits [0,14), LBO in [16,30), SBO in [32,46),
    base offset in [49,52), layout type in [62,64).

    >>> hex(make_gmma_desc(0x400, (1, 1, 64)))
    '0x4000004000010040'
    """
    lt, lbo, sbo = fields
    for name, v in (("LBO", lbo), ("SBO", sbo)):
        if not 0 <= v < (1 << 14):
            raise LayoutError(f"make_gmma_desc: {name} = {v} (16-byte units) does not fit in 14 bits")
    return (((start_byte_addr >> 4) & 0x3FFF) | (lbo << 16) | (sbo << 32) | ((base_offset & 7) << 49)
            | (lt << 62))


def gmma_desc_fields(layout: Layout, dtype: Any, swizzle_bits: int, major: str, what: str = "make_gmma_desc") -> GmmaDescFields:
    """The descriptor fields of an (MN, K) operand tile of layout (in elements) in memory whose byte
    addresses are swizzled by Swizzle<swizzle_bits,4,3>; major is "K" or "MN". Refuses a layout that
    is not one of the canonical GMMA layouts (it would read the wrong elements).

    >>> from cutelab import make_layout, Float16
    >>> gmma_desc_fields(make_layout(((8, 8), 16), stride=((64, 512), 1)), Float16, 3, "K")
    (1, 1, 64)
    """
    T = 128 // dtype.width  # elements per 16-byte unit (32 of 4-bit elements, two to a byte)
    shp = layout.shape
    if not isinstance(shp, tuple) or len(shp) != 2:
        raise LayoutError(f"{what}: expected an (MN, K) tile layout, got {layout}")
    MN, K = it.product(shp[0]), it.product(shp[1])
    off = _static_offsets(layout, what).reshape(K, MN).T  # off[mn, k] in elements
    if swizzle_bits not in _W:
        raise LayoutError(f"{what}: GMMA supports Swizzle<0..3,4,3> only, got B={swizzle_bits}")
    W = _W[swizzle_bits]
    lt = _LAYOUT_TYPE[swizzle_bits]
    mn = np.arange(MN)[:, None]
    k = np.arange(K)[None, :]
    if major == "K":
        if MN % 8 or K * dtype.width != 256:
            raise LayoutError(f"{what}: a K-major GMMA tile is (8n) x 32 bytes; got {MN} x {K * dtype.width / 8:g} bytes")
        # ((8,n),(T,2)):((W*T, SBO*T),(1, LBO*T)) in elements; LBO is 1 unit (ignored) when swizzled
        sbo_e = int(off[8, 0]) if MN > 8 else 0
        lbo_e = int(off[0, T]) if swizzle_bits == 0 else T
        canon = (mn % 8) * W * T + (mn // 8) * sbo_e + (k % T) + (k // T) * lbo_e
        sbo, lbo = sbo_e // T, lbo_e // T
        ok = sbo_e % T == 0 and lbo_e % T == 0
    elif major == "MN":
        if K % 8:
            raise LayoutError(f"{what}: an MN-major GMMA tile has a multiple of 8 K rows; got {K}")
        if MN % (T * W):
            raise LayoutError(f"{what}: an MN-major tile's MN extent must be a multiple of {T * W} elements, got {MN}")
        # swizzled: ((T,W,n),(8,k)):((1,T,LBO*T),(W*T,SBO*T)); interleaved: ((T,1,n),(8,k)):((1,-,SBO*T),(T,LBO*T))
        n_e = int(off[T * W, 0]) if MN > T * W else 0
        k_e = int(off[0, 8]) if K > 8 else 0
        canon = (mn % T) + ((mn // T) % W) * T + (mn // (T * W)) * n_e + (k % 8) * W * T + (k // 8) * k_e
        if swizzle_bits == 0:
            sbo, lbo = n_e // T, k_e // T
        else:
            lbo, sbo = n_e // T, k_e // T
        ok = n_e % T == 0 and k_e % T == 0
    else:
        raise LayoutError(f"{what}: major must be 'K' or 'MN', got {major!r}")
    canon = canon - canon[0, 0] + off[0, 0]
    if not ok or not np.array_equal(canon, off):
        bad = np.argwhere(canon != off)
        at = tuple(int(x) for x in bad[0]) if len(bad) else (0, 0)
        raise LayoutError(
            f"{what}: {layout} ({dtype}, {major}-major, Swizzle<{swizzle_bits},4,3>) is not a canonical GMMA layout: "
            f"element {at} is at offset {int(off[at])}, the canonical layout puts it at {int(canon[at])}; build "
            f"the smem layout from warpgroup.make_smem_layout_atom (or sm90 make_smem_layout_a/b)")
    return GmmaDescFields((lt, lbo, sbo))


# --------------------------------------------------------------------------- ops

class WarpgroupSyncOp(Op):
    """``wgmma.fence`` / ``wgmma.commit_group`` / ``wgmma.wait_group N``: GPU ordering only."""

    __slots__ = ("kind", "n")

    def __init__(self, kind: str, n: int = 0):
        self.kind, self.n = kind, n

    def __repr__(self) -> str:
        return f"warpgroup.{self.kind}({self.n if self.kind == 'wait_group' else ''})"

    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
        st = _wg_state(b)
        if self.kind == "commit_group":
            st["groups"].append(st["pending"])
            st["pending"] = []
        elif self.kind == "wait_group":
            _wait_group(b, st, mask, self.n)

    def cuda(self, r: Any) -> None:
        if self.kind == "fence":
            _pack_register_a(r)
            r.emit('asm volatile("wgmma.fence.sync.aligned;" ::: "memory");')
        elif self.kind == "commit_group":
            r.emit('asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");')
        else:
            r.emit(f'asm volatile("wgmma.wait_group.sync.aligned {self.n};" ::: "memory");')


def _wgmma_run(r: Any) -> Optional[List[Any]]:
    """The wgmmas that follow the op being printed up to the group's ``commit_group``; None when
    something else comes first (it could write their register fragments)."""
    ops = []
    for op in r.following():
        if isinstance(op, WarpgroupSyncOp) and op.kind == "commit_group":
            return ops
        if not isinstance(op, WgmmaOp):
            return None
        ops.append(op)
    return ops


def _pack_register_a(r: Any, ops: Optional[List[Any]] = None) -> None:
    """Before a ``wgmma.fence``: the A words (two 16-bit values each) of the register-A wgmmas that
    follow it up to the group's commit, packed into 32-bit locals and pinned there by an empty
    ``asm volatile`` that reads and writes them. Packed at each wgmma instead, the packing moves
    define registers between the wgmmas of one group, and ptxas then injects a ``warpgroup.arrive``
    before each (info C7519), which waits for the wgmmas already issued. Only where the fence is
    followed by wgmmas alone up to ``commit_group`` (nothing in between can write the fragments).
    Where other statements come between the fence and the group's first wgmma (the copy that makes
    a register A fragment, traced as a value, a register array of its own), that wgmma packs the
    group's words instead (``ops``: it and the wgmmas after it, WgmmaOp.cuda), before it issues: the
    group's wgmmas still run back to back. Else each wgmma packs its own words, as before. The names
    go to the memo ``wgmma_packed_a`` for WgmmaOp.cuda, which takes (and removes) its entry."""
    if ops is None:
        ops = _wgmma_run(r)
        if ops is None:
            return
    memo = r.memo("wgmma_packed_a")
    words: List[str] = []
    for op in ops:
        if not isinstance(op.a, _RegOperand):
            continue
        an = r.reg(op.a.reg)
        if (id(op), an) in memo:  # packed already (by the fence)
            continue
        names = {}
        for mi in range(op.a.offs.shape[0]):
            for ks in range(op.a.offs.shape[1]):
                ao = op.a.offs[mi, ks]
                for j in range(len(ao) // 2):
                    w = r.fresh("cl_pa")
                    r.emit(f"unsigned {w} = (unsigned)({an}[{int(ao[2 * j])}]) | ((unsigned)({an}[{int(ao[2 * j + 1])}]) << 16);")
                    names[mi, ks, j] = w
                    words.append(w)
        memo[id(op), an] = names
    for i in range(0, len(words), 32):
        r.emit('asm volatile("" : ' + ", ".join(f'"+r"({w})' for w in words[i:i + 32]) + ");")


def _wait_group(b: Any, st: dict, mask: Any, n: int) -> None:
    """``wgmma.wait_group n`` of the threads of mask: each retires (executes its part of) all but its
    newest n committed groups. Each thread has its own queue: threads of a batch that ran a loop a
    different number of times (blocks with different K-tile counts) have committed different
    groups, and a group's part issued by threads that do not wait now stays queued for them."""
    groups = st["groups"]
    if not groups:
        return
    members = []
    for g in groups:
        m = np.zeros(b.n, dtype=bool)
        for _, gm, _ in g:
            m |= True if gm is None else gm
        members.append(m)
    waiting = np.ones(b.n, dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    newer = np.zeros(b.n, dtype=np.int64)  # per thread: its groups newer than the one looked at
    retire = [None] * len(groups)
    for k in range(len(groups) - 1, -1, -1):
        retire[k] = members[k] & waiting & (newer >= n)
        newer += members[k]
    kept = []
    for g, r in zip(groups, retire):
        rest = []
        for op, gm, bases in g:
            mine = r if gm is None else (gm & r)
            if mine.any():
                op.execute(b, None if mine.all() else mine, bases)
            left = (np.ones(b.n, dtype=bool) if gm is None else gm) & ~r
            if left.any():
                rest.append((op, left, bases))
        if rest:
            kept.append(rest)
    st["groups"] = kept


def _wg_state(b: Any) -> dict:
    """The CPU model of the wgmma pipeline of a batch of blocks: issued (``pending``) and
    committed (``groups``) wgmmas not yet executed."""
    return b.__dict__.setdefault("wgmma", {"pending": [], "groups": []})


class _Operand:
    """An smem operand of one wgmma call: per (instance, k step) the tile's start (logical element
    offset, added to ``base``) and the physical element offsets of its (MN, K) elements."""

    def __init__(self, shared: Any, base: Any, starts: np.ndarray, phys: np.ndarray, fields: Tuple[int, int, int],
                 dtype: Any):
        self.shared, self.base, self.starts, self.phys, self.fields, self.dtype = shared, base, starts, phys, fields, dtype


class _RegOperand:
    """A operand in registers (OperandSource.RMEM): thread t's value v of (m atom i, k step ks) is register
    ``reg[offs[i, ks, v]]``, element ``tv[t, v]`` (m + 64 * k) of the 64 x K tile."""

    def __init__(self, reg: Any, offs: np.ndarray, tv: np.ndarray, dtype: Any):
        self.reg, self.offs, self.tv, self.dtype = reg, offs, tv, dtype


class WgmmaOp(Op):
    """One cute.gemm of a warpgroup MMA: for every (m atom, n atom, k step) a 64 x N x 16 product
    of smem tiles A and B added to the accumulators ``acc`` (a mutable register array) at
    ``acc_offs[mi, ni, v]``."""

    __slots__ = ("op", "a", "b", "acc", "acc_offs", "accumulate", "tv_c", "where")

    def __init__(self, op: Any, a: _Operand, b: _Operand, acc: Any, acc_offs: np.ndarray, accumulate: Any,
                 tv_c: np.ndarray, where: str):
        self.op, self.a, self.b, self.acc, self.acc_offs = op, a, b, acc, acc_offs
        self.accumulate, self.tv_c, self.where = accumulate, tv_c, where

    def __repr__(self) -> str:
        m, n, k = self.op.shape_mnk
        a = self.a.reg.name if isinstance(self.a, _RegOperand) else self.a.shared.name
        return (f"wgmma m{m}n{n}k{k} x{self.acc_offs.shape[0]}x{self.acc_offs.shape[1]}x{self.b.starts.shape[1]} "
                f"{self.acc.name} {'(+)=' if isinstance(self.accumulate, tuple) else '+=' if self.accumulate else '='} {a} * {self.b.shared.name}")

    def _smem_operands(self) -> List[_Operand]:
        return [o for o in (self.a, self.b) if isinstance(o, _Operand)]

    def accesses(self) -> List[Any]:
        from ..ir.nodes import Access

        out = []
        for o in self._smem_operands():
            out.append(Access(o.shared, o.base, (int(o.phys.min()), int(o.phys.max())), False, self))
        return out

    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
        """Issue: the product is computed when a wait_group retires its group (as the hardware may
        read shared memory and write the accumulators any time until then)."""
        bases = tuple(np.broadcast_to(np.asarray(b.index(o.base), dtype=np.int64), (b.n,)).copy()
                      if isinstance(o, _Operand) else None for o in (self.a, self.b))  # fixed at issue
        if isinstance(self.accumulate, tuple):  # a runtime ACCUMULATE field: its value at issue, per thread
            flags = np.asarray(b.column(self.accumulate, Boolean, real=True)) != 0
        else:
            flags = None
        _wg_state(b)["pending"].append((self, None if mask is None else mask.copy(), bases + (flags,)))

    def execute(self, b: Any, mask: Any, bases: Tuple[Any, ...]) -> None:
        from ..cpu.context import from_real, to_real

        nt = b.nt
        if nt % 128:
            raise LaunchError(f"{b.ir.name}{self.where}: a warpgroup MMA needs blocks of a multiple of 128 threads, "
                              f"the block has {nt}")
        G = b.n // 128
        if mask is None:
            wg = np.arange(G)
        else:
            m = mask.reshape(G, 128)
            part = m.any(axis=1) & ~m.all(axis=1)
            if part.any():
                raise LaunchError(f"{b.ir.name}{self.where}: wgmma is run by only some threads of a warpgroup; "
                                  f"all 128 threads must execute it together (.sync.aligned)")
            wg = np.nonzero(m.all(axis=1))[0]
        if wg.size == 0:
            return
        rows = wg * 128  # first thread of each active warpgroup
        blk = b.block_of[rows]
        for o, base in zip((self.a, self.b), bases):  # one descriptor per warpgroup: the same start in every thread
            if base is None:
                continue  # A in registers
            per = base.reshape(G, 128)[wg]
            if (per != per[:, :1]).any():
                g = int(wg[np.argmax((per != per[:, :1]).any(axis=1))])
                t = int(np.argmax(base.reshape(G, 128)[g] != base[g * 128]))
                raise LaunchError(f"{b.ir.name}{self.where}: the wgmma's {'A' if o is self.a else 'B'} operand "
                                  f"({o.shared.name}) starts at element {int(base[g * 128])} in the warpgroup's first "
                                  f"thread but at {int(base[g * 128 + t])} in its thread {t}: a warpgroup's 128 threads "
                                  f"must give the same shared-memory tile (one descriptor per warpgroup)")

        flags = bases[2]
        if flags is None:
            acc_wg = np.full(len(wg), bool(self.accumulate))
        else:
            per = flags.reshape(G, 128)[wg]
            if (per != per[:, :1]).any():
                g = int(wg[np.argmax((per != per[:, :1]).any(axis=1))])
                raise LaunchError(f"{b.ir.name}{self.where}: the wgmma's ACCUMULATE field differs between the threads "
                                  f"of warpgroup {g} (it is one scale-d predicate per warpgroup); set it to a value "
                                  f"that is the same in the warpgroup's 128 threads")
            acc_wg = per[:, 0].copy()
        M, N, K = self.op.shape_mnk

        def tiles(o: _Operand, P: int) -> np.ndarray:
            base = bases[0 if o is self.a else 1][rows]
            mem = b.shared[o.shared.index]
            idx = (blk * o.shared.length + base)[:, None, None, None] + o.phys[None]
            if (base[:, None, None, None] + o.phys[None]).max() >= o.shared.length or base.min() + o.phys.min() < 0:
                raise LaunchError(f"{b.ir.name}{self.where}: wgmma operand reaches outside {o.shared.name}")
            vals = to_real(mem[idx], o.dtype).astype(np.float64)  # (G, inst, ksteps, P*K), (mn, k) col-major
            return vals.reshape(vals.shape[:3] + (K, P)).swapaxes(-1, -2)  # (..., P, K)

        thr = rows[:, None] + np.arange(128)[None, :]  # (G', 128)
        if isinstance(self.a, _RegOperand):  # each thread's A values, placed in the 64 x K tiles
            ra = self.a
            RMa, KSa, Va = ra.offs.shape
            A = np.zeros((len(wg), RMa, KSa, M, K), dtype=np.float64)
            am, ak = ra.tv % M, ra.tv // M  # (128, V)
            for mi in range(RMa):
                for ks in range(KSa):
                    vals = b.regs[ra.reg.id][thr[:, :, None], ra.offs[mi, ks][None, None, :]]  # (G', 128, V)
                    A[:, mi, ks, am, ak] = to_real(vals, ra.dtype)
        else:
            A = tiles(self.a, M)
        B = tiles(self.b, N)
        regs = b.regs[self.acc.id]
        RM, RN, V = self.acc_offs.shape
        pm, pn = self.tv_c % M, self.tv_c // M  # (128, V)
        C = np.zeros((len(wg), RM, RN, M, N), dtype=np.float64)
        if acc_wg.any():
            for mi in range(RM):
                for ni in range(RN):
                    vals = regs[thr[:, :, None], self.acc_offs[mi, ni][None, None, :]]  # (G', 128, V)
                    C[:, mi, ni, pm, pn] = to_real(vals, self.acc.dtype)
            C[~acc_wg] = 0.0  # the warpgroups whose ACCUMULATE is off start from zero
        for ks in range(A.shape[2]):
            C = C + np.einsum("gimk,gjnk->gijmn", A[:, :, ks], B[:, :, ks])
            C = C.astype(np.float32).astype(np.float64)  # each k step (16, or 32 for fp8) rounds to the f32 accumulator
        out = from_real(C.astype(np.float32), self.acc.dtype)
        for mi in range(RM):
            for ni in range(RN):
                regs[thr[:, :, None], self.acc_offs[mi, ni][None, None, :]] = out[:, mi, ni][:, pm, pn]

    def cuda(self, r: Any) -> None:
        M, N, K = self.op.shape_mnk
        ta = 0 if self.op.a_major_mode.name == "K" else 1
        tb = 0 if self.op.b_major_mode.name == "K" else 1
        RM, RN, V = self.acc_offs.shape
        regs = ", ".join(f"%{i}" for i in range(V))
        at, bt = _PTX_TYPE[self.op.a_dtype.name], _PTX_TYPE[self.op.b_dtype.name]
        rs = isinstance(self.a, _RegOperand)
        # the transpose immediates exist for .f16/.bf16 only (fp8 operands are K-major); A in registers has none
        trans = (f", {tb}" if rs else f", {ta}, {tb}") if at in ("f16", "bf16") else ""
        if rs:  # A: four .b32 registers, each two 16-bit values (the lower value index in the low half)
            na = self.a.offs.shape[2] // 2
            a_ops = "{" + ", ".join(f"%{V + j}" for j in range(na)) + "}"
            ins = (f"wgmma.mma_async.sync.aligned.m{M}n{N}k{K}.f32.{at}.{bt} {{{regs}}}, {a_ops}, %{V + na}, p, 1, 1"
                   f"{trans};")
            pred = V + na + 1
        else:
            ins = f"wgmma.mma_async.sync.aligned.m{M}n{N}k{K}.f32.{at}.{bt} {{{regs}}}, %{V}, %{V + 1}, p, 1, 1{trans};"
            pred = V + 2
        acc = r.reg(self.acc)
        if rs and (id(self), r.reg(self.a.reg)) not in r.memo("wgmma_packed_a"):
            run = _wgmma_run(r)  # the fence could not pack this group: its first wgmma packs it
            if run is not None:  # (one wgmma op is several instructions: its k steps, its m atoms)
                _pack_register_a(r, [self] + run)
        packed = r.memo("wgmma_packed_a").pop((id(self), r.reg(self.a.reg)), None) if rs else None
        self.cuda_prologue(r)
        first = f"(unsigned)({r.cond(self.accumulate)})" if isinstance(self.accumulate, tuple) else None
        for ks in range(self.b.starts.shape[1]):
            # later k steps add to what the first one wrote; the first takes the ACCUMULATE field
            scale = 1 if ks > 0 else first if first is not None else 1 if self.accumulate else 0
            for mi in range(RM):
                for ni in range(RN):
                    db = self._desc(r, self.b, ni, ks)
                    # a first k step that does not accumulate (ACCUMULATE statically off) only writes the
                    # accumulators: "=f", so that their old values are dead (not carried around a loop
                    # whose wgmmas start from zero each trip, which costs registers and makes ptxas
                    # serialize the wgmmas, C7512)
                    mode = "=f" if scale == 0 else "+f"
                    outs = ", ".join(f'"{mode}"({acc}[{int(o)}])' for o in self.acc_offs[mi, ni])
                    r.emit("{")
                    if packed is not None:  # packed before the fence (_pack_register_a)
                        a_in = ", ".join(f'"r"({packed[mi, ks, j]})' for j in range(self.a.offs.shape[2] // 2))
                    elif rs:
                        an = r.reg(self.a.reg)
                        ao = self.a.offs[mi, ks]
                        a_in = ", ".join(f'"r"((unsigned)({an}[{int(ao[2 * j])}]) | ((unsigned)({an}[{int(ao[2 * j + 1])}]) '
                                         f'<< 16))' for j in range(len(ao) // 2))
                    else:
                        r.emit(f"  const unsigned long long cl_da = {self._desc(r, self.a, mi, ks)};")
                        a_in = '"l"(cl_da)'
                    r.emit(f"  const unsigned long long cl_db = {db};")
                    r.emit(f'  asm volatile("{{\\n\\t.reg .pred p;\\n\\tsetp.ne.b32 p, %{pred}, 0;\\n\\t{ins}\\n\\t}}" '
                           f': {outs} : {a_in}, "l"(cl_db), "r"({scale}) : "memory");')
                    r.emit("}")

    def cuda_prologue(self, r: Any) -> None:
        """At the top of the kernel (the renderer calls this before printing the body): per operand,
        the low 32 bits of its descriptor at the operand's thread-dependent start (the smem array's
        address >> 4, plus the warpgroup's offset, plus LBO << 16), made warp-uniform with a
        shuffle from lane 0 (wgmma needs one descriptor per warpgroup) so that the compiler keeps it,
        and the descriptors derived from it, in uniform registers. Idempotent."""
        for o in self._smem_operands():
            _desc_base(r, o)

    def _desc(self, r: Any, o: _Operand, i: int, ks: int) -> str:
        start = int(o.starts[i, ks])
        hoisted = _desc_base(r, o)
        const = make_gmma_desc(0, o.fields)
        if hoisted is not None:  # uniform base + the loop-dependent part (in 16-byte units) in the low word
            name, rest = hoisted
            units = floordiv((rest + start) * o.dtype.bytes, 16) if is_sym(rest) else (int(rest) + start) * o.dtype.bytes // 16
            u = r.expr(units)[0] if is_sym(units) else f"{int(units)}u"
            return f"0x{const >> 32:08x}00000000ull | (unsigned long long)({name} + (unsigned)({u}))"
        base = o.base + start if is_sym(o.base) else int(o.base) + start
        addr = smem_addr(r, o.shared, base)
        return f"0x{const:016x}ull | (unsigned long long)(({addr} >> 4) & 0x3FFFu)"


_PTX_TYPE = {"f16": "f16", "bf16": "bf16", "f8E4M3FN": "e4m3", "f8E5M2": "e5m2"}  # wgmma's A/B type names


def _thread_var(v: Any) -> bool:
    return getattr(v, "name", "").startswith("tid.")


def _desc_base(r: Any, o: _Operand) -> Any:
    """(C name of the hoisted low descriptor word, the rest of the operand's start offset in elements)
    for an operand whose start splits into a part that depends on the thread index alone (hoisted to
    the top of the kernel) and a part that does not (printed at each wgmma); None when it does not
    split so (a term mixing thread and loop indices), or the parts are not whole 16-byte units."""
    from ..ir.symbolic import atoms, lin_form

    terms, const = lin_form(o.base)
    thread, rest = 0, const
    for a, c in terms.values():
        vs = atoms(a)
        if vs and all(_thread_var(v) for v in vs):
            thread = thread + a * c
        elif any(_thread_var(v) for v in vs):
            return None
        else:
            rest = rest + a * c
    eb = o.dtype.bytes
    if sym_div(thread * eb) % 16 or sym_div(rest * eb) % 16:
        return None
    memo = r.memo("wgmma_desc_bases")
    key = (o.shared.name, o.fields, getattr(thread, "key", thread))
    if key in memo:
        return memo[key], rest
    name = f"cl_gdesc{len(memo)}"
    lbo = make_gmma_desc(0, o.fields) & 0xFFFFFFFF  # LBO << 16 (the start address field is 0)
    if is_sym(thread):
        t = floordiv(thread * eb, 16)
        code = r.expr(t)[0]
        if r.ir.num_threads % 32 == 0:  # every lane is here: broadcast lane 0's (the warpgroup's) value
            code = f"__shfl_sync(0xffffffffu, (unsigned)({code}), 0)"
        t_code = f" + (unsigned)({code})"
    else:
        t_code = f" + {int(thread) * eb // 16}u" if thread else ""
    window = r.shared_address(o.shared)  # declared in the prologue before the line below
    r.prologue(f"const unsigned {name} = 0x{lbo:x}u + ({window} >> 4){t_code};")
    memo[key] = name
    return name, rest


# --------------------------------------------------------------------------- cute.gemm in kernels

def _operand(t: Any, name: str, op: Any, P: int, major: str, what: str) -> Tuple[_Operand, int, int]:
    """An smem operand ((P,K), Rest[, RestK]) -> _Operand, number of instances, number of k steps (K: the
    instruction's, 16 for f16/bf16, 32 for fp8)."""
    from .tma import smem_byte_swizzle, smem_phys, split_base

    eng = t.engine
    if not isinstance(eng, SmemEngine):
        raise TraceError(f"{what}: operand {name} must be in shared memory (the wgmma reads it through a "
                         f"descriptor), got a {getattr(eng, 'memspace', '?')} tensor")
    dt = op.a_dtype if name == "A" else op.b_dtype
    if eng.dtype.name != dt.name:
        raise TraceError(f"{what}: operand {name} holds {eng.dtype}, the MMA reads {dt}")
    shp = t.layout.shape
    K = op.shape_mnk[2]
    if not isinstance(shp, tuple) or len(shp) not in (2, 3) or it.product(shp[0]) != P * K:
        raise TraceError(f"{what}: operand {name} must be partitioned as ((MN,K), Rest{'M' if name == 'A' else 'N'}"
                         f"[, RestK]) with a {P}x{K} value mode, got shape {it.tuple_str(shp)}; slice the "
                         f"k-block and stage: tCrA[(None, None, k, stage)]")
    bits = smem_byte_swizzle(eng, f"{what}: operand {name}")
    period = max(1, (1 << (bits + 7)) // eng.dtype.bytes) if bits else max(1, 16 // eng.dtype.bytes)
    base, const = split_base(t.offset, period, f"{what}: operand {name}")
    rest = shp[1:]
    n_inst = it.product(rest[0])
    n_k = it.product(rest[1]) if len(rest) > 1 else 1
    starts = np.zeros((n_inst, n_k), dtype=np.int64)
    phys = np.zeros((n_inst, n_k, P * K), dtype=np.int64)
    fields = None
    for i in range(n_inst):
        for k in range(n_k):
            coord = (None, i, k) if len(rest) > 1 else (None, i)
            from ...layout import slice_and_offset

            lay, off = slice_and_offset(coord, t.layout)
            tile = _as_pk(lay, P, K, what, name)
            f = gmma_desc_fields(tile, eng.dtype, bits, major, f"{what}: operand {name}")
            if fields is not None and f != fields:
                raise TraceError(f"{what}: operand {name}'s tiles have different descriptor fields ({fields} vs {f})")
            fields = f
            start = const + int(off) + int(_static_offsets(tile, what)[0])
            if start % (16 // eng.dtype.bytes):
                raise TraceError(f"{what}: operand {name}'s tile starts at element {start}, not on a 16-byte boundary")
            starts[i, k] = start
            logical = const + int(off) + _static_offsets(tile, what)
            phys[i, k] = smem_phys(eng, logical)
    return _Operand(eng.param, base, starts, phys, fields, eng.dtype), n_inst, n_k


def _reg_operand(t: Any, a: Any, atom: Any, op: Any, what: str) -> Tuple[_RegOperand, int, int]:
    """A register operand (V, RestM[, RestK]) -> _RegOperand, number of m atoms, number of k steps."""
    eng = a.engine
    if not isinstance(eng, RmemEngine):
        raise TraceError(f"{what}: A with OperandSource.RMEM must be a register fragment (tiled_mma.make_fragment_A "
                         f"of a register tensor), got a {getattr(eng, 'memspace', type(eng).__name__)} tensor")
    if op.a_dtype.width != 16:
        raise TraceError(f"{what}: A from registers is supported for 16-bit types (f16, bf16) in kernels, got "
                         f"{op.a_dtype}")
    if eng.dtype.name != op.a_dtype.name:
        raise TraceError(f"{what}: operand A holds {eng.dtype}, the MMA reads {op.a_dtype}")
    tv = atom.tv_layout_A
    V = it.product(tv.shape[1])
    shp = a.layout.shape
    if not isinstance(shp, tuple) or len(shp) not in (2, 3) or it.product(shp[0]) != V:
        raise TraceError(f"{what}: operand A in registers must be (V={V}, RestM[, RestK]) as "
                         f"tiled_mma.make_fragment_A gives, got {it.tuple_str(shp)}; slice the k-block: tCrA[(None, None, k)]")
    n_inst = it.product(shp[1])
    n_k = it.product(shp[2]) if len(shp) > 2 else 1
    offs = _static_offsets(a.layout, what) + int(a.offset)
    offs = offs.reshape(n_k, n_inst, V).transpose(1, 0, 2)  # [m atom, k step, v]
    if eng.reg is None:
        eng.make_mutable(t)
    if eng.reg is None:
        raise TraceError(f"{what}: operand A's register fragment was made in a region that has ended")
    tv_a = tv.offsets().reshape(V, 128).T  # (thread, v) -> m + 64 * k
    return _RegOperand(eng.reg, offs, tv_a, eng.dtype), n_inst, n_k


def _as_pk(lay: Layout, P: int, K: int, what: str, name: str) -> Layout:
    """The (P, K) tile layout of a value mode (which may be nested ((P,K)) or flat (P*K))."""
    shp, std = lay.shape, lay.stride
    while isinstance(shp, tuple) and len(shp) == 1:
        shp, std = shp[0], std[0]
    if isinstance(shp, tuple) and len(shp) == 2 and it.product(shp[0]) == P and it.product(shp[1]) == K:
        return Layout._raw(shp, std)
    raise TraceError(f"{what}: operand {name}'s value mode {lay} is not a ({P},{K}) tile")


def kernel_gemm(atom: Any, d: Any, a: Any, b: Any, c: Any) -> bool:
    """cute.gemm inside a kernel for warpgroup MMAs; False for other atoms (or outside a kernel)."""
    from ...nvgpu.mma_atom import TiledMma
    from ...nvgpu.warpgroup import MmaOp as WgOp
    from ...nvgpu.warpgroup import OperandSource

    if not tracing():
        return False
    op = getattr(atom, "op", None)
    if not isinstance(op, WgOp):
        return False
    t = current("cute.gemm")
    what = f"kernel {t.name}: cute.gemm with {type(op).__name__}{t.where()}"
    if op.a_dtype.name not in _PTX_TYPE or op.b_dtype.name not in _PTX_TYPE or op.acc_dtype is not Float32:
        raise TraceError(f"{what}: kernels support f16/bf16 and fp8 (e4m3, e5m2) inputs with f32 accumulators, got "
                         f"{op.a_dtype} x {op.b_dtype} -> {op.acc_dtype}")
    if _PTX_TYPE[op.a_dtype.name] not in ("f16", "bf16") and (op.a_major_mode.name != "K" or op.b_major_mode.name != "K"):
        raise TraceError(f"{what}: fp8 operands must be K-major (wgmma has no transpose for 8-bit types), got A "
                         f"{op.a_major_mode.name}-major, B {op.b_major_mode.name}-major")
    if d is not c and not (d.engine is c.engine and d.layout == c.layout and d.offset == c.offset):
        raise TraceError(f"{what}: the accumulator must be both C and D (cute.gemm(mma, acc, a, b, acc))")
    tiled = atom if isinstance(atom, TiledMma) else None
    if tiled is not None and it.product(tiled.thr_layout_vmnk.shape[2:]) != 1:
        raise TraceError(f"{what}: tiled MMAs with more than one warpgroup along N or K are not supported")
    eng = d.engine
    if not isinstance(eng, RmemEngine):
        raise TraceError(f"{what}: the accumulator must be a register fragment (cute.make_rmem_tensor)")
    if eng.dtype.name != "f32":
        raise TraceError(f"{what}: the accumulator holds {eng.dtype}; the MMA accumulates in f32")
    M, N, K = op.shape_mnk
    if op.a_src is OperandSource.SMEM:
        A, am, ak = _operand(a, "A", op, M, op.a_major_mode.name, what)
    else:
        A, am, ak = _reg_operand(t, a, atom, op, what)
    B, bn, bk = _operand(b, "B", op, N, op.b_major_mode.name, what)
    if ak != bk:
        raise TraceError(f"{what}: A has {ak} k-blocks, B has {bk}")
    shp = d.layout.shape
    V = N // 2
    if not isinstance(shp, tuple) or it.product(shp[0]) != V or len(shp) != 3:
        raise TraceError(f"{what}: the accumulator must be (V={V}, RestM, RestN) as thr_mma.partition_C gives, "
                         f"got {it.tuple_str(shp)}")
    RM, RN = it.product(shp[1]), it.product(shp[2])
    if (RM, RN) != (am, bn):
        raise TraceError(f"{what}: the accumulator covers {RM}x{RN} atoms, A and B {am}x{bn}")
    offs = _static_offsets(d.layout, what) + int(d.offset)
    acc_offs = offs.reshape(RN, RM, V).transpose(1, 0, 2)
    if eng.reg is None:
        eng.make_mutable(t)
    if eng.reg is None:
        raise TraceError(f"{what}: the accumulator fragment was made in a region that has ended")
    from ...nvgpu.warpgroup import Field

    runtime = t.__dict__.get("mma_fields", {}).get((id(atom._state), Field.ACCUMULATE.value))
    acc_flag = (runtime[0], 0) if runtime is not None else bool(atom.get(Field.ACCUMULATE))
    tv = atom.tv_layout_C  # the atom's (a TiledMma keeps its atom's TV layouts)
    tv_c = tv.offsets().reshape(V, 128).T
    t.emit(WgmmaOp(op, A, B, eng.reg, acc_offs, acc_flag, tv_c, t.where()))
    return True


def mma_field(atom: Any, name: str, value: Any, get: bool) -> Any:
    """tiled_mma.set / get of a warpgroup MMA's runtime field inside a kernel (``cutelab.tracing.hooks.mma_field``).

    While only static values are set, NotImplemented: the field stays in the atom's state and is read
    when cute.gemm is traced. Set to a runtime value (a TraceValue, or a condition on indices), the
    field of the atom's state becomes a mutable kernel register: this set and every later one assign
    it, get reads it, and the wgmmas of the atom read it when issued. NotImplemented for other atoms
    or outside a kernel."""
    from ...nvgpu.warpgroup import MmaOp as WgOp
    from ...numeric import Boolean
    from ..frontend.trace import TraceValue
    from ..ir.nodes import Assign, Compute

    if not tracing() or not isinstance(getattr(atom, "_op", None), WgOp):
        return NotImplemented
    t = current(f"tiled_mma.{'get' if get else 'set'}")
    regs = t.__dict__.setdefault("mma_fields", {})
    key = (id(atom._state), name)
    got = regs.get(key)
    runtime = isinstance(value, TraceValue) or is_sym(value)
    if got is None and (get or not runtime):
        return NotImplemented  # static so far: the atom's state holds it
    if got is None:
        reg = t.new_reg(Boolean, 1, mutable=True)
        t.body.ops.insert(0, Assign(reg, (0,), (1 if atom._state[name] else 0,)))  # defined from the kernel's entry
        got = regs[key] = (reg, atom._state)  # the state dict stays alive with its register
    reg = got[0]
    if get:
        dst = t.new_reg(Boolean, 1)
        t.emit(Compute(dst, "mov", (((reg, 0),),)))
        return TraceValue([(dst, 0)], (), Boolean)
    if isinstance(value, TraceValue):
        ref = value.to(Boolean).refs[0] if value.dtype is not Boolean else value.refs[0]
    elif is_sym(value):
        t.check_index(value, f"tiled_mma.set({name}, ...)")
        ref = value
    else:
        ref = 1 if bool(value) else 0
    t.emit(Assign(reg, (0,), (ref,)))
    return None


class SetMaxNRegOp(Op):
    """``setmaxnreg.{inc,dec}.sync.aligned.u32 N`` (warpgroup register budget); no CPU effect."""

    __slots__ = ("kind", "n")

    def __init__(self, kind: str, n: int):
        self.kind, self.n = kind, n

    def __repr__(self) -> str:
        return f"setmaxnreg.{self.kind} {self.n}"

    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
        return None

    def cuda(self, r: Any) -> None:
        r.emit(f'asm volatile("setmaxnreg.{self.kind}.sync.aligned.u32 {self.n};" ::: "memory");')


def target_arch(ir: Any, arch: str) -> str:
    """The NVRTC target for ir on a device of arch: wgmma and setmaxnreg need the architecture-specific sm_90a.

    >>> target_arch(None, "sm_80")
    'sm_80'
    """
    from ..ir.nodes import walk

    if ir is not None and arch == "sm_90" and any(isinstance(op, (WgmmaOp, WarpgroupSyncOp, SetMaxNRegOp)) for op in walk(ir.body)):
        return "sm_90a"
    return arch


def _sync(kind: str, n: int = 0) -> None:
    current(f"cute.nvgpu.warpgroup.{kind}()").emit(WarpgroupSyncOp(kind, n))


def fence(*, loc: Any = None, ip: Any = None) -> None:
    """``wgmma.fence``: order register and smem accesses before the next wgmma (warpgroup-wide)."""
    _sync("fence")


def commit_group(*, loc: Any = None, ip: Any = None) -> None:
    """``wgmma.commit_group``: close the group of the wgmmas issued since the last commit."""
    _sync("commit_group")


def wait_group(group: int, *, loc: Any = None, ip: Any = None) -> None:
    """``wgmma.wait_group N``: wait until at most N committed groups are still running."""
    if not isinstance(group, int) or group < 0:
        raise TraceError(f"cute.nvgpu.warpgroup.wait_group({group!r}): expected a static int >= 0")
    _sync("wait_group", group)

