"""TMA copies through a tensor map a jit function built itself (``cutlass.experimental.cuda``'s
``create_tensor_map_tiled``; compat/experimental/tensor_map.py), issued by the primitives
``cp_async_bulk_tensor_shared_cta_global`` (a load into this CTA's shared memory, completing on an
mbarrier) and ``cp_async_bulk_tensor_global_shared_cta`` (a store, in a bulk group).

The box coordinates come from the program (innermost dimension first), and the map may describe the
tensor's bytes as another element type than the tensor's own (a ``Uint8`` buffer moved as ``Float16``
boxes): ``MapLoadOp`` and ``MapStoreOp`` are kernel/instr/tma.py's and tma_store.py's ops (the same
CUDA, tensor-map parameter and launch-time encoding) that move bytes on the CPU:

- load: each issuing thread copies the box's elements inside the tensor (zeros outside), placed in
  shared memory as TMA places them (row-major box, then the map's swizzle on byte addresses, shared
  arrays counted from a swizzle-period boundary as in compat/experimental/swizzle.py), then completes
  the box's bytes on the mbarrier;
- store: each issuing thread writes the box's elements that lie inside the tensor.
"""

from __future__ import annotations

from typing import Any, List, Tuple

import numpy as np

from ...errors import LaunchError, TraceError
from ..ir.nodes import Access
from .mbarrier import complete_tx
from .tma import TmaLoadOp, coord_refs, coord_values, name_tensor_map, split_base
from .cluster import TmaMulticastLoadOp, tma_multicast_op
from .tma_store import TmaStoreOp, _no_clash

__all__ = ["MapLoadOp", "MapMulticastLoadOp", "MapStoreOp", "map_load", "map_store"]


def _bytes(arr: np.ndarray, what: str) -> np.ndarray:
    if not arr.flags.c_contiguous:
        raise LaunchError(f"{what}: the memory is not one contiguous array")
    return arr.view(np.uint8)


class _MapBytes:
    """The byte-level box of a tensor-map copy (mixed into MapLoadOp and MapStoreOp)."""

    __slots__ = ()

    def box_bytes_at(self, b: Any, act: np.ndarray, nbytes: int) -> Tuple[np.ndarray, np.ndarray]:
        """(byte offset in the global memory of each box element's first byte, inside the tensor), per
        active thread and box element (innermost fastest)."""
        d = self.desc
        box = np.indices(d.box[::-1]).reshape(d.rank, -1)[::-1]
        valid = np.ones((act.size, box.shape[1]), dtype=bool)
        goff = np.zeros((act.size, box.shape[1]), dtype=np.int64)
        for k in range(d.rank):
            g = coord_values(b, self.coords[k])[act][:, None] + box[k][None, :]
            valid &= (g >= 0) & (g < d.dims[k])
            goff += g * d.strides[k]
        valid &= (goff >= 0) & (goff + d.dtype.bytes <= nbytes)
        return goff, valid

    def smem_bytes(self, b: Any, act: np.ndarray, what: str) -> np.ndarray:
        """Byte offset in the block's shared array of each box element's first byte, per active thread.
        A box start computed at run time (a pipeline stage in a register) is placed by its own phase in
        the swizzle pattern, as TMA swizzles the address."""
        sh, eb, d = self.shared, self.shared.dtype.bytes, self.desc
        sb = np.broadcast_to(np.asarray(b.index(self.sbase), dtype=np.int64), (b.n,))[act] * eb
        if self.phase is not None:
            dst = sb[:, None] + _place_bytes(d, self.phase)[None, :]
        else:
            period, unit = (1024, 128) if d.swizzle else (16, 16)
            if (sb % unit).any():
                raise LaunchError(f"{b.ir.name}{self.where}: {what} {sh.name}: a box starts at byte "
                                  f"{int(sb[np.argmax(sb % unit != 0)])}; TMA boxes start at multiples of {unit} bytes")
            dst = np.empty((act.size, int(np.prod(d.box))), dtype=np.int64)
            for ph in np.unique(sb % period):
                sel = sb % period == ph
                dst[sel] = sb[sel][:, None] + _place_bytes(d, int(ph))[None, :]
        if dst.size and (dst.min() < 0 or dst.max() + d.dtype.bytes > sh.length * eb):
            raise LaunchError(f"{b.ir.name}{self.where}: {what} {sh.name}: bytes {int(dst.min())}.."
                              f"{int(dst.max()) + d.dtype.bytes - 1} fall outside its {sh.length * eb} bytes")
        return dst

    def shared_range(self) -> Tuple[int, int]:
        d, eb = self.desc, self.shared.dtype.bytes
        phases = [self.phase] if self.phase is not None else range(0, 1024 if d.swizzle else 16, 128 if d.swizzle else 16)
        lo = min(int(_place_bytes(d, p).min()) for p in phases)
        hi = max(int(_place_bytes(d, p).max()) for p in phases) + d.dtype.bytes - 1
        return lo // eb, hi // eb


def _place_bytes(d: Any, phase: int) -> np.ndarray:
    """Byte offset of each box element's first byte (TmaDescriptor.placement counts elements; the
    tensor-map ops move whole bytes, of 8-bit or wider elements)."""
    return d.placement(phase) * d.dtype.bytes


class MapLoadOp(_MapBytes, TmaLoadOp):
    """A tensor-map box load into shared memory, completing on an mbarrier (byte-level on the CPU)."""

    __slots__ = ()

    def accesses(self) -> List[Access]:
        return [Access(self.shared, self.sbase, self.shared_range(), True, self),
                Access(self.bar_shared, self.bar_base, (0,), False, self)]

    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
        d = self.desc
        act = np.arange(b.n) if mask is None else np.nonzero(mask)[0]
        if act.size == 0:
            return
        what = f"{b.ir.name}{self.where}: TMA load"
        data = _bytes(buffers[self.param.index], what)
        goff, valid = self.box_bytes_at(b, act, data.size)
        lanes = np.arange(d.dtype.bytes)
        src = np.where(valid, goff, 0)[:, :, None] + lanes
        vals = np.where(valid[:, :, None], data[src], np.uint8(0))
        dst = self.smem_bytes(b, act, "TMA load into")[:, :, None] + lanes
        smem = _bytes(b.shared[self.shared.index], what)
        nb = self.shared.length * self.shared.dtype.bytes
        bar = np.broadcast_to(np.asarray(b.index(self.bar_base), dtype=np.int64), (b.n,))[act]
        for sel, blk in self.dest_blocks(b, mask, act):  # the issuing CTA, or each CTA of a multicast
            smem[(blk[sel] * nb)[:, None, None] + dst[sel]] = vals[sel]
            complete_tx(b, self.bar_shared, self.barrier_blocks(b, blk[sel]), bar[sel], d.box_bytes)


class MapMulticastLoadOp(MapLoadOp, TmaMulticastLoadOp):
    """A tensor-map box load with ``.multicast::cluster``: the box lands in every CTA of the mask, at the
    same shared offset, and completes its bytes on each one's barrier (kernel/instr/cluster.py's op, whose
    CUDA it prints)."""

    __slots__ = ()


class MapStoreOp(_MapBytes, TmaStoreOp):
    """A tensor-map box store from shared memory (byte-level on the CPU); orders with bulk groups."""

    __slots__ = ()

    def accesses(self) -> List[Access]:
        return [Access(self.shared, self.sbase, self.shared_range(), False, self)]

    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
        d = self.desc
        act = np.arange(b.n) if mask is None else np.nonzero(mask)[0]
        if act.size == 0:
            return
        what = f"{b.ir.name}{self.where}: TMA store"
        data = _bytes(buffers[self.param.index], what)
        goff, valid = self.box_bytes_at(b, act, data.size)
        lanes = np.arange(d.dtype.bytes)
        src = self.smem_bytes(b, act, "TMA store from")[:, :, None] + lanes
        smem = _bytes(b.shared[self.shared.index], what)
        nb = self.shared.length * self.shared.dtype.bytes
        vals = smem[(b.block_of[act] * nb)[:, None, None] + src]
        _no_clash(b, self, data, goff, valid, act)
        data[(goff[:, :, None] + lanes)[valid]] = vals[valid]


def _operands(tmap: Any, smem: Any, coords: Any, what: str) -> Tuple[Any, Any, Any, Any, int]:
    """(trace, global param, shared pointer, coordinate refs, box start's byte phase) of a copy."""
    from ..frontend.engines import GmemEngine, SmemEngine
    from ..frontend.trace import current

    t = current(what)
    g = tmap.tensor.engine
    if not isinstance(g, GmemEngine) or isinstance(g, SmemEngine) or getattr(g, "param", None) is None:
        raise TraceError(f"{what}{t.where()}: the tensor map must be a kernel argument (cutlass.GridConstant"
                         f"[cuda.TensorMap]) built by the jit function that launches the kernel")
    d = tmap.desc
    if not isinstance(coords, (tuple, list)) or len(coords) != d.rank:
        raise TraceError(f"{what}{t.where()}: the tensor map has {d.rank} dimensions, got coordinates {coords!r}")
    s = smem.engine
    if not isinstance(s, SmemEngine) or getattr(s, "swizzle", None) is not None and s.swizzle.num_bits:
        raise TraceError(f"{what}{t.where()}: the shared side must be this CTA's unswizzled shared memory (a "
                         f"cutlass.Array of space smem), got a {getattr(s, 'memspace', '?')} pointer")
    eb = s.dtype.bytes
    period, unit = (1024, 128) if d.swizzle else (16, 16)
    if period % eb:
        raise TraceError(f"{what}{t.where()}: shared elements of {eb} bytes do not divide {period}-byte boxes")
    try:
        _, const = split_base(smem.offset, period // eb, what)
        phase = const * eb
    except TraceError:  # a start computed at run time: placed by its phase when the copy runs (smem_bytes)
        phase = None
    if phase is not None and phase % unit:
        raise TraceError(f"{what}{t.where()}: the shared box starts at byte {phase} of a {period}-byte pattern; a TMA "
                         f"box must start at a multiple of {unit} bytes")
    return t, g.param, s.param, coord_refs(t, tuple(coords), what), phase


def map_load(tmap: Any, smem: Any, coords: Any, bar: Any, what: str, mcast: Any = None, pair: bool = False) -> None:
    """A load of the box at ``coords`` into shared memory at cutelab pointer ``smem``, completing on the
    mbarrier at cutelab pointer ``bar``; emitted for every thread that reaches it. ``mcast``: the
    multicast mask (the CTAs of the cluster that receive it); ``pair``: the 2-CTA form (CTAGroup.CTA_2,
    SM100), whose bytes complete at the leader of each receiving CTA's pair (kernel/instr/tcgen05_2cta.py)."""
    from .mbarrier import mbar_ref
    from .tcgen05_2cta import pair_load

    t, gp, sp, crefs, phase = _operands(tmap, smem, coords, what)
    bsh, bbase = mbar_ref(bar, what)
    gp.read = True
    sp.written = True
    if mcast is None:
        op = MapLoadOp(tmap.desc, gp, crefs, sp, smem.offset, bsh, bbase, t.where())
    else:
        m = tma_multicast_op(tmap.desc, gp, crefs, sp, smem.offset, bsh, bbase, mcast, what)
        op = MapMulticastLoadOp(tmap.desc, gp, crefs, sp, smem.offset, bsh, bbase, m.mask, m.self_rank, t.where())
    if pair:
        op = pair_load(op, what)
    op.phase = phase
    name_tensor_map(t, op, gp.index, tmap.desc)
    t.emit(op)


def map_store(tmap: Any, smem: Any, coords: Any, what: str) -> None:
    """A store of shared memory at cutelab pointer ``smem`` into the box at ``coords``."""
    t, gp, sp, crefs, phase = _operands(tmap, smem, coords, what)
    gp.written = True
    sp.read = True
    op = MapStoreOp(tmap.desc, gp, crefs, sp, smem.offset, sp, 0, t.where())
    op.phase = phase
    name_tensor_map(t, op, gp.index, tmap.desc)
    t.emit(op)
