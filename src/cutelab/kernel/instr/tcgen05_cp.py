"""Shared memory -> tensor memory copies (``tcgen05.cp``) inside traced kernels: ``cute.copy`` with a
tiled copy of ``tcgen05.make_s2t_copy``, from ``get_s2t_smem_desc_tensor``'s descriptors to the
partitioned TMEM tensor (the scale factors of block-scaled UMMAs).

- CPU: one copy per warp that runs the cute.copy (CuTe DSL elects one thread), queued with the
  CTA's UMMAs and run in issue order at its next ``tcgen05.commit``, as the hardware orders a
  thread's tcgen05.cp before its later tcgen05.mma. ``Cp4x32x128bOp`` (``.32x128b.warpx4``):
  per atom, 32 rows of 16 bytes read from shared memory at the descriptor's address (row r at
  byte 16 r: the canonical no-swizzle K-major layout of 32 x 16 bytes, which the scale-factor
  SMEM layouts are) land in lanes r, r+32, r+64, r+96 at 4 columns from the TMEM address. A 2-CTA copy
  (``CtaGroup.TWO``), issued by the leader (even rank) of a CTA pair, does this in each CTA of the pair, from
  its own shared memory to its own tensor memory. The other tcgen05.cp shapes are refused.
- CUDA: ``tcgen05.cp.cta_group::1|2.32x128b.warpx4`` with an unswizzled K-major descriptor of the 32 x 16
  bytes, by lane 0 of each warp that runs the copy.
"""

from __future__ import annotations

from typing import Any, List

import numpy as np

from ... import int_tuple as it
from ...errors import LaunchError, TraceError
from ..ir.nodes import Access, Op
from ..ir.symbolic import is_sym

__all__ = ["S2TCopyOp", "s2t_copy", "DescS2TCopyOp"]


class S2TCopyOp(Op):
    """One cute.copy of tcgen05.cp atoms: atom i reads 512 bytes of shared array ``shared`` from element
    ``src_base + src_offs[i]`` and writes them to TMEM at byte address ``dst_base + dst_offs[i]``."""

    min_sm = 100

    __slots__ = ("op", "shared", "src_base", "src_offs", "dst_base", "dst_offs", "where")

    def __init__(self, op: Any, shared: Any, src_base: Any, src_offs: np.ndarray, dst_base: Any,
                 dst_offs: np.ndarray, where: str):
        self.op, self.shared, self.src_base, self.src_offs = op, shared, src_base, src_offs
        self.dst_base, self.dst_offs, self.where = dst_base, dst_offs, where

    def __repr__(self) -> str:
        return f"tcgen05.cp.32x128b.warpx4 x{self.src_offs.size} tmem <- {self.shared.name}"

    def _at(self) -> str:
        return f" (at {self.where})" if self.where else ""

    def ptx_shape(self) -> str:
        return "32x128b.warpx4"

    def written_columns(self, d0: int) -> set:
        """The 32-bit TMEM columns the copy writes, from its TMEM byte address d0 (4 columns an atom)."""
        lane_bytes = 4 * 65536
        return {((int(d0) + int(o)) % lane_bytes) // 4 + j for o in self.dst_offs.tolist() for j in range(4)}

    def accesses(self) -> List[Any]:
        lo, hi = int(self.src_offs.min()), int(self.src_offs.max()) + 511
        return [Access(self.shared, self.src_base, (lo, hi), False, self)]

    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
        act = np.ones(b.n, dtype=bool) if mask is None else mask
        lanes = act.reshape(-1, 32)
        rows = np.nonzero(lanes.any(axis=1))[0] * 32 + np.argmax(lanes[lanes.any(axis=1)], axis=1)
        if rows.size == 0:
            return
        s0 = np.broadcast_to(np.asarray(b.index(self.src_base), dtype=np.int64), (b.n,))[rows]
        d0 = np.broadcast_to(np.asarray(b.index(self.dst_base), dtype=np.int64), (b.n,))[rows]
        pend = b.common.setdefault("umma_pending", {})
        n_cta = self.op.cta_group.value
        csize = int(getattr(b, "cluster_size", 1))
        for i, r in enumerate(rows.tolist()):
            blk = int(b.block_of[r])
            if n_cta == 2 and (csize % 2 or (blk % csize) % 2):
                raise LaunchError(f"{b.ir.name}{self._at()}: block {b.block_name(blk)} issues a 2-CTA tcgen05.cp "
                                  f"(CtaGroup.TWO) in a cluster of {csize} CTA(s); rule: the leader (even rank) CTA "
                                  f"of a pair of one cluster issues a 2-CTA tcgen05 operation")
            pend.setdefault(blk, []).append((self, int(s0[i]), 0, int(d0[i]), False))

    def execute(self, b: Any, blk: int, s0: int, _b0: int, d0: int, _flag: Any) -> None:
        from .tcgen05_tmem import check_columns, tmem_state

        st = tmem_state(b)
        cells8 = st.cells.view(np.uint8).reshape(st.cells.shape[0], 128, -1)
        dp = cells8.shape[2] * 128  # one lane in bytes (65536 columns of 4 bytes)
        mem = b.shared[self.shared.index]
        L = self.shared.length
        # a 2-CTA copy (issued by the pair's leader blk): each CTA of the pair, from its own shared memory to its
        # own tensor memory at the same addresses
        for so, do, k in [(so, do, blk + c) for c in range(self.op.cta_group.value)
                          for so, do in zip(self.src_offs.tolist(), self.dst_offs.tolist())]:
            src = s0 + so + np.arange(512)
            if src.min() < 0 or src.max() >= L:
                raise LaunchError(f"{b.ir.name}{self._at()}: tcgen05.cp reads outside {self.shared.name}")
            data = np.asarray(mem[k * L + src]).view(np.uint8).reshape(32, 16)
            addr = d0 + do
            lane0, e = addr // dp, addr % dp
            if lane0 != 0 or e % 16:
                raise LaunchError(f"{b.ir.name}{self._at()}: tcgen05.cp.32x128b.warpx4 writes from TMEM lane {lane0}, "
                                  f"byte {e} of its row; it needs lane 0 and a 16-byte aligned column address")
            col = e // 4
            if col + 4 > 512:
                raise LaunchError(f"{b.ir.name}{self._at()}: tcgen05.cp writes past tensor-memory column 511")
            check_columns(b, st, np.full(4, k), np.arange(col, col + 4), "tcgen05.cp (Cp4x32x128bOp)", self._at())
            for q in range(4):
                cells8[k, 32 * q:32 * q + 32, e:e + 16] = data

    def cuda(self, r: Any) -> None:
        """``tcgen05.cp.cta_group::1.32x128b.warpx4 [taddr], sdesc`` per atom by lane 0 of each warp that runs
        the copy: taddr is lane << 16 | column of the byte address; sdesc a K-major, unswizzled descriptor of
        32 rows of 16 bytes (8-row core matrices 128 bytes apart: SBO 128 bytes)."""
        from .mbarrier import smem_addr
        from .tcgen05_mma import umma_desc

        hi = umma_desc(0, (0, 1, 8))
        lane = r.fresh("cl_lane")
        r.emit(f'unsigned {lane}; asm volatile("mov.u32 %0, %%laneid;" : "=r"({lane}));')
        with r.braces(f"if ({lane} == 0) {{", "}"):
            for so, do in zip(self.src_offs.tolist(), self.dst_offs.tolist()):
                start = self.src_base + so if is_sym(self.src_base) else int(self.src_base) + so
                d = self.dst_base + do if is_sym(self.dst_base) else int(self.dst_base) + do
                dc = r.expr(d)[0] if is_sym(d) else str(int(d))
                desc = f"(0x{hi:016x}ull | (unsigned long long)(({smem_addr(r, self.shared, start)} >> 4) & 0x3FFFu))"
                taddr = f"(((unsigned)({dc}) >> 18) << 16 | (((unsigned)({dc}) & 0x3FFFFu) >> 2))"
                r.emit(f'asm volatile("tcgen05.cp.cta_group::{self.op.cta_group.value}.32x128b.warpx4 [%0], %1;" '
                       f':: "r"({taddr}), '
                       f'"l"({desc}) : "memory");')


def s2t_copy(atom: Any, src: Any, dst: Any, kwargs: dict) -> bool:
    """cute.copy with a tiled copy of tcgen05.make_s2t_copy inside a kernel; False for other atoms."""
    from ...nvgpu.tcgen05.cp import Cp4x32x128bOp, S2TDescEngine, _S2TCopyBase
    from ...nvgpu.tcgen05.mma import CtaGroup
    from ...nvgpu.tcgen05.tmem import TmemEngine
    from ..frontend.engines import SmemEngine
    from ..frontend.trace import _static_offsets, current
    from .tcgen05_tmem import _at, _where

    op = getattr(atom, "op", None)
    if not isinstance(op, _S2TCopyBase):
        return False
    t = current("cute.copy")
    what = f"kernel {t.name}: cute.copy with {type(op).__name__}{_at(_where(t))}"
    if not isinstance(op, Cp4x32x128bOp) or op.cta_group not in (CtaGroup.ONE, CtaGroup.TWO):
        raise TraceError(f"{what}: cutelab's interpreter runs tcgen05.cp as Cp4x32x128bOp (CtaGroup.ONE or TWO) so far")
    if kwargs.get("pred") is not None:
        raise TraceError(f"{what}: a tcgen05.cp has no predicate")
    if not isinstance(getattr(src, "engine", None), S2TDescEngine):
        raise TraceError(f"{what}: the source must be tcgen05.get_s2t_smem_desc_tensor's descriptors, got {src}")
    if not isinstance(getattr(dst, "engine", None), TmemEngine):
        raise TraceError(f"{what}: the destination must be the partitioned tensor-memory tensor, got {dst}")
    smem = src.engine.smem
    seng = smem.engine
    if not isinstance(seng, SmemEngine):
        raise TraceError(f"{what}: the descriptors point to {getattr(seng, 'memspace', '?')} memory")
    et = smem.element_type
    if et.width != 8 or dst.element_type.width != 8:
        raise TraceError(f"{what}: cutelab's interpreter copies 8-bit scale factors with tcgen05.cp, got {et}")
    sw = getattr(seng, "swizzle", None)
    if sw is not None and sw.num_bits:
        raise TraceError(f"{what}: the scale factors' shared memory is swizzled ({seng.swizzle}); tcgen05.cp reads "
                         f"them without a swizzle here")
    per = 16  # elements of 8 bits per 16-byte descriptor unit
    s_shp, d_shp = src.layout.shape, dst.layout.shape
    if not isinstance(s_shp, tuple) or not isinstance(d_shp, tuple):
        raise TraceError(f"{what}: expected partitioned tensors ((ATOM_V, REST_V), ...), got {src.layout} and "
                         f"{dst.layout}")
    n_s = it.product(s_shp) // it.product(s_shp[0])
    n_d = it.product(d_shp) // it.product(d_shp[0])
    if it.product(d_shp[0]) != 2048 or n_s != n_d:
        raise TraceError(f"{what}: the descriptors {src.layout} and the TMEM partition {dst.layout} are not one "
                         f"partition of this copy (each atom writes 2048 TMEM bytes; {n_s} vs {n_d} atoms)")
    s_off = _static_offsets(src.layout, what).reshape(n_s, -1)[:, 0] * per
    d_off = _static_offsets(dst.layout, what).reshape(n_d, -1)[:, 0]
    s_base = smem.offset + src.offset * per if (is_sym(src.offset) or is_sym(smem.offset)) else \
        int(smem.offset) + int(src.offset) * per
    t.emit(S2TCopyOp(op, seng.param, s_base, s_off, dst.offset, d_off, _where(t)))
    return True


# --------------------------------------------------------------------------- descriptor-driven tcgen05.cp

def _cp_lanes(shape: str, multicast: str) -> np.ndarray:
    """(rows, copies) TMEM lane offsets each shared-memory row of a tcgen05.cp lands in (PTX's shapes): 128x256b and
    128x128b lane r; 4x256b lane 32 r; 64x128b.warpx2::02_13 lanes r and r + 64; 64x128b.warpx2::01_23 lanes
    64 (r / 32) + r % 32 and that + 32; 32x128b.warpx4 lanes r, r + 32, r + 64, r + 96."""
    if shape in ("128x256b", "128x128b"):
        return np.arange(128, dtype=np.int64)[:, None]
    if shape == "4x256b":
        return (32 * np.arange(4, dtype=np.int64))[:, None]
    r = np.arange(64 if shape == "64x128b" else 32, dtype=np.int64)[:, None]
    if multicast == "warpx2::02_13":
        return np.concatenate([r, r + 64], axis=1)
    if multicast == "warpx2::01_23":
        first = 64 * (r // 32) + r % 32
        return np.concatenate([first, first + 32], axis=1)
    return np.concatenate([r + 32 * q for q in range(4)], axis=1)  # 32x128b.warpx4


class DescS2TCopyOp(Op):
    """``tcgen05.cp.cta_group::1.<shape>[.<multicast>] [taddr], sdesc`` of a shared-memory descriptor
    (``cutlass.experimental.primitives.tcgen05_cp``): row r of the descriptor's tile (``src_phys``: element
    offsets of the shared array, index r + rows * k) is copied to each TMEM lane of ``lanes[r]`` (relative to
    the address's lane), from the address's column on. Queued with the CTA's UMMAs and run at its next
    tcgen05.commit, as the hardware completes it: a tcgen05.ld of those columns before that commit (and a wait
    on its mbarrier) is refused."""

    min_sm = 100

    __slots__ = ("shape", "multicast", "shared", "dtype", "src_phys", "fields", "dst", "lanes", "ncols", "where")

    def __init__(self, shape: str, multicast: str, shared: Any, dtype: Any, src_phys: np.ndarray, fields: Any,
                 dst: Any, where: str):
        self.shape, self.multicast, self.shared, self.dtype = shape, multicast, shared, dtype
        self.src_phys, self.fields, self.dst, self.where = src_phys, fields, dst, where
        self.lanes = _cp_lanes(shape, multicast)
        self.ncols = (256 if shape.endswith("256b") else 128) // 32

    def __repr__(self) -> str:
        return f"tcgen05.cp.{self.ptx_shape()} tmem <- {self.shared.name}"

    def ptx_shape(self) -> str:
        return self.shape + (f".{self.multicast}" if self.multicast else "")

    def _at(self) -> str:
        return f" (at {self.where})" if self.where else ""

    def accesses(self) -> List[Any]:
        return [Access(self.shared, 0, (int(self.src_phys.min()), int(self.src_phys.max())), False, self)]

    def written_columns(self, d0: int) -> set:
        """The 32-bit TMEM columns the copy writes, from the hardware address d0 (lane << 16 | column)."""
        c = int(d0) & 0xFFFF
        return set(range(c, c + self.ncols))

    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
        act = np.ones(b.n, dtype=bool) if mask is None else mask
        lanes = act.reshape(-1, 32)
        rows = np.nonzero(lanes.any(axis=1))[0] * 32 + np.argmax(lanes[lanes.any(axis=1)], axis=1)
        if rows.size == 0:
            return
        d0 = np.broadcast_to(np.asarray(b.index(self.dst), dtype=np.int64), (b.n,))[rows]
        pend = b.common.setdefault("umma_pending", {})
        for i, r in enumerate(rows.tolist()):
            pend.setdefault(int(b.block_of[r]), []).append((self, 0, 0, int(d0[i]), False))

    def execute(self, b: Any, blk: int, _s0: int, _b0: int, d0: int, _flag: Any) -> None:
        from .tcgen05_tmem import check_columns, tmem_state

        st = tmem_state(b)
        L = self.shared.length
        if self.src_phys.min() < 0 or self.src_phys.max() >= L:
            raise LaunchError(f"{b.ir.name}{self._at()}: tcgen05.cp.{self.ptx_shape()} reads outside "
                              f"{self.shared.name} through its descriptor")
        R = self.lanes.shape[0]
        vals = np.ascontiguousarray(b.shared[self.shared.index][blk * L + self.src_phys.reshape(-1)])
        words = vals.reshape(-1, R).T.copy().view(np.uint8).view(np.uint32).reshape(R, self.ncols)
        lane0, col0 = int(d0) >> 16, int(d0) & 0xFFFF
        ln = lane0 + self.lanes
        if (ln >= 128).any() or col0 + self.ncols > 512:
            raise LaunchError(f"{b.ir.name}{self._at()}: tcgen05.cp.{self.ptx_shape()} at TMEM lane {lane0}, column "
                              f"{col0} writes past tensor memory (128 lanes x 512 columns)")
        cols = np.arange(col0, col0 + self.ncols)
        check_columns(b, st, np.full(cols.shape, blk), cols, f"tcgen05.cp.{self.ptx_shape()}", self._at())
        for q in range(self.lanes.shape[1]):
            st.cells[blk, ln[:, q][:, None], cols[None, :]] = words

    def cuda(self, r: Any) -> None:
        from .mbarrier import smem_addr
        from .tcgen05_mma import umma_desc

        hi = umma_desc(0, self.fields)
        start = int(self.src_phys.reshape(-1)[0])  # the descriptor's start: row 0, k 0
        d = r.expr(self.dst)[0] if is_sym(self.dst) else str(int(self.dst))
        desc = f"(0x{hi:016x}ull | (unsigned long long)(({smem_addr(r, self.shared, start)} >> 4) & 0x3FFFu))"
        lane = r.fresh("cl_lane")
        r.emit(f'unsigned {lane}; asm volatile("mov.u32 %0, %%laneid;" : "=r"({lane}));')
        with r.braces(f"if ({lane} == 0) {{", "}"):
            r.emit(f'asm volatile("tcgen05.cp.cta_group::1.{self.ptx_shape()} [%0], %1;" :: "r"((unsigned)({d})), '
                   f'"l"({desc}) : "memory");')
