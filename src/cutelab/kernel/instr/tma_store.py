"""TMA stores inside traced kernels: ``cute.copy(tma_atom, smem_tile, gmem_tile)`` with an atom of
``cpasync.CopyBulkTensorTileS2GOp``, and the bulk async-groups that order them
(``cute.arch.cp_async_bulk_commit_group``, ``cp_async_bulk_wait_group(n, read=...)``).

- CPU: one thread of each warp that runs the copy (as CuTe DSL elects one) stores the box: it reads
  shared memory where TMA reads the box (the atom's placement and the memory's swizzle) and writes
  the elements inside the global tensor (TMA skips the others). The store happens when it is
  issued: a program that overwrites the shared buffer before ``cp_async_bulk_wait_group(..., read=
  True)`` says it may is wrong on the GPU but not caught here. The groups have no CPU effect. A store
  into a multicast tensor (``kernel.cpu.multicast``) writes every rank's copy.
- A ``CopyReduceBulkTensorTileS2GOp`` atom (ADD of f32, f16 or bf16) adds the box instead (``TmaReduceOp``; several
  CTAs may add to the same elements; a 16-bit sum is rounded to nearest even after each addition):
  ``cp.reduce.async.bulk.tensor.Nd.global.shared::cta.add.tile`` (the type is the tensor map's).
- CUDA: ``cp.async.bulk.tensor.Nd.global.shared::cta.bulk_group [tmap, {coords}], [smem]`` with the
  tensor map kernel parameter of the loads (``TmaLoadOp``'s), ``cp.async.bulk.commit_group``,
  ``cp.async.bulk.wait_group[.read] N``.
"""

from __future__ import annotations

from typing import Any, List

import numpy as np

from ... import dtypes
from ... import int_tuple as it
from ...errors import LaunchError, TraceError
from ...layout import Layout, evaluate_all
from ..ir.nodes import Access, Op
from ..frontend.trace import _static_offsets, current
from .tma import TmaLoadOp, _tile_coords, coord_code, coord_refs, name_tensor_map, smem_byte_swizzle, split_base, start_phase

__all__ = ["TmaStoreOp", "TmaReduceOp", "BulkGroupOp", "tma_store_copy", "cp_async_bulk_commit_group",
           "cp_async_bulk_wait_group"]


class TmaStoreOp(TmaLoadOp):
    """One TMA box store: ``shared`` at element ``sbase`` (the box start) into the global tensor
    ``param`` at box origin ``coords`` (innermost TMA dimension first). No barrier."""

    __slots__ = ()

    def __repr__(self) -> str:
        from ..ir.nodes import _ref_str

        c = ", ".join(_ref_str(x) for x in self.coords)
        return (f"tma_store {self.param.name}[box {it.tuple_str(self.desc.box)} at ({c})] <- "
                f"{self.shared.name}[{_ref_str(self.sbase)}]")

    # the launch may guard it (guards.py) when it cannot prove its shared-memory box in bounds (a box
    # start computed in registers): one thread issues it, which then skips it and records the error
    guardable = True

    def accesses(self) -> List[Access]:
        phys = self.desc.placement(self.phase)
        return [Access(self.shared, self.sbase, (int(phys.min()), int(phys.max())), False, self)]

    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
        d = self.desc
        data = buffers[self.param.index]
        act = np.arange(b.n) if mask is None else np.nonzero(mask)[0]
        if act.size == 0:
            return
        goff, valid = self.global_box(b, act, data)
        sb = np.broadcast_to(np.asarray(b.index(self.sbase), dtype=np.int64), (b.n,))[act]
        src = sb[:, None] + d.placement(self.phase)[None, :]
        if src.size and (src.min() < 0 or src.max() >= self.shared.length):
            raise LaunchError(f"{b.ir.name}{self.where}: TMA store from {self.shared.name}: elements "
                              f"{int(src.min())}..{int(src.max())} fall outside its {self.shared.length} elements")
        smem = b.shared[self.shared.index]
        vals = smem[(b.block_of[act] * self.shared.length)[:, None] + src]
        _no_clash(b, self, data, goff, valid, act)
        data[goff[valid]] = vals[valid]
        _multicast(data, goff[valid], vals[valid])

    def cuda(self, r: Any) -> None:
        from .mbarrier import smem_addr

        d = self.desc
        cs = ", ".join(f"%{i + 1}" for i in range(d.rank))
        ins = f"cp.async.bulk.tensor.{d.rank}d.global.shared::cta.bulk_group [%0, {{{cs}}}], [%{d.rank + 1}];"
        coords = ", ".join(f'"r"((int)({coord_code(r, c)}))' for c in r.index_exprs(self))
        with r.guarded(self, braces=False):
            r.emit(f'asm volatile("{ins}" :: "l"((unsigned long long)&{self.tmap_name}), {coords}, '
                   f'"r"({smem_addr(r, self.shared, self.sbase)}) : "memory");')


def _no_clash(b: Any, op: Any, data: Any, goff: Any, valid: Any, act: Any) -> None:
    """No two CTAs of the batch may store the same element: cutelab recovers a box's coordinates
    from the tile's offset in the tensor (the TMA tensor is the global tensor), so a tile wholly
    outside the tensor (a grid rounded up to whole clusters) would alias onto another tile."""
    owners = b.common.setdefault("tma_store_owner", {})
    own = owners.get(op.param.index)
    if own is None:
        own = owners[op.param.index] = np.full(len(data), -1, dtype=np.int64)
    blk = np.broadcast_to(b.block_of[act][:, None], goff.shape)
    g, w = goff[valid], blk[valid]
    prev = own[g].copy()
    order = np.argsort(g, kind="stable")  # the same element stored by two blocks in this op
    gs, ws = g[order], w[order]
    dup = np.nonzero((gs[1:] == gs[:-1]) & (ws[1:] != ws[:-1]))[0]
    if dup.size:
        k = int(dup[0])
        prev[order[k + 1]] = ws[k]
    clash = (prev >= 0) & (prev != w)
    if clash.any():
        i = int(np.argmax(clash))
        raise LaunchError(f"{b.ir.name}{op.where}: TMA stores of blocks {b.block_name(int(prev[i]))} and "
                          f"{b.block_name(int(w[i]))} both write element {int(g[i])} of {op.param.name}. If a tile "
                          f"lies wholly outside the tensor (e.g. a grid rounded up to whole clusters), its "
                          f"coordinates alias onto another tile's: cutelab's TMA tensor is the global tensor, whose "
                          f"offsets do not keep coordinates past its extent; launch a grid of tiles inside the tensor")
    own[g] = w


class TmaReduceOp(TmaStoreOp):
    """One TMA box reduction (``CopyReduceBulkTensorTileS2GOp``, ADD): the box from shared memory added to
    the global tensor's elements inside it. Several CTAs may add to the same elements (that is what it is
    for); on the CPU each issue adds at once, in issue order."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "tma_reduce_add" + super().__repr__()[len("tma_store"):]

    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
        d = self.desc
        data = buffers[self.param.index]
        act = np.arange(b.n) if mask is None else np.nonzero(mask)[0]
        if act.size == 0:
            return
        goff, valid = self.global_box(b, act, data)
        sb = np.broadcast_to(np.asarray(b.index(self.sbase), dtype=np.int64), (b.n,))[act]
        src = sb[:, None] + d.placement(self.phase)[None, :]
        if src.size and (src.min() < 0 or src.max() >= self.shared.length):
            raise LaunchError(f"{b.ir.name}{self.where}: the TMA reduction's box reads shared elements "
                              f"{int(src.min())}..{int(src.max())} outside its {self.shared.length} elements")
        smem = b.shared[self.shared.index]
        vals = smem[(b.block_of[act] * self.shared.length)[:, None] + src]
        g, v = goff[valid], vals[valid]
        dt = d.dtype
        if dt.name == "f32":
            np.add.at(data, g, v)
            return
        # f16/bf16: each addition is rounded to the element type (the reduction unit adds element by element, as
        # red.add.noftz.bf16 does), so the same element added by several CTAs is rounded after each one, in issue
        # order: the k-th addition to an element of this op is made in round k
        order = np.argsort(g, kind="stable")
        gs = g[order]
        first = np.r_[0, np.nonzero(gs[1:] != gs[:-1])[0] + 1] if gs.size else np.zeros(0, np.int64)
        rank = np.empty(gs.size, np.int64)
        rank[order] = np.arange(gs.size) - np.repeat(first, np.diff(np.r_[first, gs.size]))
        for k in range(int(rank.max()) + 1 if rank.size else 0):
            sel = rank == k
            gk = g[sel]
            data[gk] = dtypes.to_storage(dtypes.to_compute(data[gk], dt) + dtypes.to_compute(v[sel], dt), dt)

    def cuda(self, r: Any) -> None:
        from .mbarrier import smem_addr

        d = self.desc
        cs = ", ".join(f"%{i + 1}" for i in range(d.rank))
        ins = (f"cp.reduce.async.bulk.tensor.{d.rank}d.global.shared::cta.add.tile.bulk_group [%0, {{{cs}}}], "
               f"[%{d.rank + 1}];")
        coords = ", ".join(f'"r"((int)({coord_code(r, c)}))' for c in r.index_exprs(self))
        with r.guarded(self, braces=False):
            r.emit(f'asm volatile("{ins}" :: "l"((unsigned long long)&{self.tmap_name}), {coords}, '
                   f'"r"({smem_addr(r, self.shared, self.sbase)}) : "memory");')


class BulkGroupOp(Op):
    """``cp.async.bulk.commit_group`` / ``cp.async.bulk.wait_group[.read] n``: GPU ordering of the
    bulk (TMA) stores; no CPU effect (they complete when issued)."""

    __slots__ = ("kind", "n", "read")

    def __init__(self, kind: str, n: int = 0, read: bool = False):
        self.kind, self.n, self.read = kind, n, read

    def __repr__(self) -> str:
        return f"cp.async.bulk.{self.kind}{'.read' if self.read else ''} {self.n if self.kind == 'wait_group' else ''}"

    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
        return None

    def cuda(self, r: Any) -> None:
        if self.kind == "commit_group":
            r.emit('asm volatile("cp.async.bulk.commit_group;" ::: "memory");')
        else:
            r.emit(f'asm volatile("cp.async.bulk.wait_group{".read" if self.read else ""} {self.n};" ::: "memory");')


def cp_async_bulk_commit_group(*, loc: Any = None, ip: Any = None) -> None:
    """``cute.arch.cp_async_bulk_commit_group``: close the group of the bulk stores issued so far."""
    current("cute.arch.cp_async_bulk_commit_group").emit(BulkGroupOp("commit_group"))


def cp_async_bulk_wait_group(group: Any, *, read: Any = None, loc: Any = None, ip: Any = None) -> None:
    """``cute.arch.cp_async_bulk_wait_group(n, read=...)``: wait until at most n groups are pending
    (with read: until their shared-memory reads are done)."""
    if isinstance(group, bool) or not isinstance(group, int) or group < 0:
        raise TraceError(f"cute.arch.cp_async_bulk_wait_group({group!r}): expected a static int >= 0")
    current("cute.arch.cp_async_bulk_wait_group").emit(BulkGroupOp("wait_group", group, bool(read)))


def tma_store_copy(atom: Any, src: Any, dst: Any, kwargs: dict) -> bool:
    """cute.copy with a TMA store atom inside a kernel; False for other atoms."""
    from ...nvgpu.cpasync.tma import TMA_SWIZZLE_BYTES, TmaCopyAtom
    from ...nvgpu.cpasync.tma_store import CopyBulkTensorTileS2GOp, CopyReduceBulkTensorTileS2GOp
    from ..frontend.engines import GmemEngine, SmemEngine

    if not isinstance(atom, TmaCopyAtom) or not isinstance(atom.op, CopyBulkTensorTileS2GOp):
        return False
    t = current("cute.copy")
    what = f"kernel {t.name}: cute.copy with a TMA store atom{t.where()}"
    reduce = isinstance(atom.op, CopyReduceBulkTensorTileS2GOp)
    if reduce and (atom.op.kind_name != "ADD" or atom.desc.dtype.name not in ("f32", "f16", "bf16")):
        raise TraceError(f"{what}: cutelab's kernels run TMA reductions (CopyReduceBulkTensorTileS2GOp) that ADD "
                         f"f32, f16 or bf16 elements, not {atom.op.kind_name} of {atom.desc.dtype}")
    kwargs.pop("pred", None)
    kwargs.pop("cache_policy", None)
    kwargs.pop("loc", None), kwargs.pop("ip", None)  # the DSL's source location / insertion point
    desc_ptr = kwargs.pop("tma_desc_ptr", None)  # a descriptor in memory (instr/tensormap.py)
    if kwargs:
        raise TraceError(f"{what}: unknown arguments {sorted(kwargs)}")
    s, g = src.engine, dst.engine
    if not isinstance(s, SmemEngine):
        raise TraceError(f"{what}: the source must be in shared memory, got a {getattr(s, 'memspace', '?')} tensor")
    if not isinstance(g, GmemEngine) or isinstance(g, SmemEngine):
        raise TraceError(f"{what}: the destination must be a tile of the global tensor the atom was made for, got "
                         f"a {getattr(g, 'memspace', '?')} tensor")
    d = atom.desc
    if g.dtype.name != d.dtype.name or s.dtype.name != d.dtype.name:
        raise TraceError(f"{what}: the atom copies {d.dtype}, the tensors hold {s.dtype} and {g.dtype}")
    gstride = it.flatten_to_tuple(atom.gmem_layout.stride)
    want = _static_offsets(Layout._raw(tuple(atom.tile), tuple(int(x) for x in gstride[:len(atom.tile)])), "cute.copy")
    gl = dst.layout
    got = _static_offsets(gl, "cute.copy") if it.product(gl.shape) == len(want) else None
    if got is None or not np.array_equal(got, want):
        raise TraceError(f"{what}: the destination {gl} is not one tile {it.tuple_str(atom.tile)} of the tensor "
                         f"{atom.gmem_layout} the atom was made for")
    sl = src.layout
    outer = getattr(atom.smem_layout, "outer", atom.smem_layout)
    if it.product(sl.shape) != it.product(atom.tile) or not np.array_equal(
            _static_offsets(sl, "cute.copy"), np.asarray(evaluate_all(outer), dtype=np.int64).reshape(-1)):
        raise TraceError(f"{what}: the source {sl} is not the atom's smem layout {atom.smem_layout}")
    if smem_byte_swizzle(s, what) != d.swizzle:
        raise TraceError(f"{what}: the atom's smem layout {atom.smem_layout} swizzles 16-byte units of "
                         f"{TMA_SWIZZLE_BYTES[d.swizzle] or 'no'}-byte rows but the source's memory is "
                         f"{getattr(s, 'swizzle', 'not swizzled')}")
    sbase, phase = start_phase(d, src.offset, what, "source")
    coords = _tile_coords(d, atom.gmem_layout, dst.offset, what)
    g.param.written = True
    from ..frontend.threads import elect_one

    ops = []
    for origin, start in atom.boxes:  # one box, or several side by side along the innermost mode
        bc = coord_refs(t, tuple(c + origin[m] if origin[m] else c for c, m in zip(coords, d.modes)), what)
        op = (TmaReduceOp if reduce else TmaStoreOp)(d, g.param, bc, s.param, sbase + start if start else sbase,
                                                     s.param, 0, t.where())
        op.phase = phase
        name_tensor_map(t, op, g.param.index, d)
        if desc_ptr is not None:
            from .tensormap import via_desc

            op = via_desc(op, desc_ptr, what, store_cls=TmaStoreOp)
        ops.append(op)
    with elect_one():
        for op in ops:
            t.emit(op)
    return True


def _multicast(data: Any, g: Any, v: Any) -> None:
    """A TMA store into a multicast tensor (kernel.cpu.multicast) reaches every rank's copy: the others' too,
    in address order (each 16 bytes lands whole for a reader that polls its last word, as Lamport's flags do)."""
    from ..cpu import multicast

    if not multicast.GROUPS:
        return
    copies = multicast.copies(data)
    if copies is None:
        return
    order = np.argsort(g, kind="stable")
    g, v = g[order], v[order]
    for c in copies:
        if c.__array_interface__["data"][0] != data.__array_interface__["data"][0]:
            c.reshape(-1)[g] = v
