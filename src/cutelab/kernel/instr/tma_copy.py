"""``cute.copy`` with a TMA atom inside a kernel: picks the form of the copy from the atom (a
store, kernel/instr/tma_store.py; a load, kernel/instr/tma.py's ``TmaLoadOp``; its multicast form,
kernel/instr/cluster.py; its 2-CTA form, kernel/instr/tcgen05_2cta.py), checks the tiles and
emits one op per box. kernel/instr/copy.py dispatches TMA atoms here."""

from __future__ import annotations

from typing import Any

from ...errors import TraceError
from ..frontend.engines import SmemEngine
from ..frontend.trace import current
from .cluster import tma_multicast_op
from .mbarrier import mbar_ref
from .tcgen05_2cta import pair_load
from .tma import (TmaLoadOp, atom_param, same_tma_elements, _check_gmem_tile, _check_smem_tile, _tile_coords, coord_refs, name_tensor_map,
                  start_phase)
from .tma_store import tma_store_copy  # TMA stores (CopyBulkTensorTileS2GOp atoms)

__all__ = ["tma_copy"]


def _check_runs(atom: Any, gl: Any, sl: Any, s: Any, what: str) -> None:
    """A copy of a TmaRunsAtom: the global and shared views (broadcast modes filtered out or not) pair
    each shared element of the tile with the global element the atom puts there, and cover the tile."""
    import numpy as np

    from ... import int_tuple as it
    from ..frontend.trace import _static_offsets

    go, so = _static_offsets(gl, "cute.copy"), _static_offsets(sl, "cute.copy")
    ns = atom.g_of_s.size
    if len(go) != len(so) or (len(so) and (so.min() < 0 or so.max() >= ns)) \
            or not np.array_equal(atom.g_of_s[so], go) or len(np.unique(so)) != ns:
        raise TraceError(f"{what}: the source {gl} and destination {sl} are not one tile of the atom's tensor "
                         f"{atom.gmem_layout} and its smem layout {atom.smem_layout} (tile {it.tuple_str(atom.tile)})")
    if getattr(s, "swizzle", None) is not None and s.swizzle.num_bits:
        raise TraceError(f"{what}: the destination's memory is swizzled ({s.swizzle}); the atom's smem layout is not")


def tma_copy(atom: Any, src: Any, dst: Any, kwargs: dict) -> bool:
    """cute.copy with a TMA atom inside a kernel; returns False for other atoms."""
    from ...nvgpu.cpasync.tma import TmaCopyAtom, TmaRunsAtom
    from ..frontend.engines import GmemEngine

    if not isinstance(atom, TmaCopyAtom):
        return False
    if tma_store_copy(atom, src, dst, kwargs):
        return True
    t = current("cute.copy")
    what = f"kernel {t.name}: cute.copy with a TMA atom{t.where()}"
    bar = kwargs.pop("tma_bar_ptr", None)
    mcast = kwargs.pop("mcast_mask", None)
    desc_ptr = kwargs.pop("tma_desc_ptr", None)  # a descriptor in memory (instr/tensormap.py)
    kwargs.pop("pred", None)
    kwargs.pop("cache_policy", None)
    kwargs.pop("loc", None), kwargs.pop("ip", None)  # the DSL's source location / insertion point
    if kwargs:
        raise TraceError(f"{what}: unknown arguments {sorted(kwargs)}")
    from ...nvgpu.cpasync.tma import CopyBulkTensorTileG2SMulticastOp

    multicast = isinstance(atom.op, CopyBulkTensorTileG2SMulticastOp)
    # a CopyBulkTensorTileG2SOp copy ignores mcast_mask, as CuTe DSL's does (kernels pass one for both kinds)
    if multicast and mcast is None:
        raise TraceError(f"{what}: a CopyBulkTensorTileG2SMulticastOp copy needs mcast_mask= (the ranks of the "
                         f"cluster's CTAs that receive the tile)")
    if bar is None:
        raise TraceError(f"{what}: a TMA load completes on an mbarrier: pass tma_bar_ptr=")
    g, s = src.engine, dst.engine
    if not isinstance(g, GmemEngine) or isinstance(g, SmemEngine):
        raise TraceError(f"{what}: the source must be a tile of the global tensor from make_tiled_tma_atom, got "
                         f"a {getattr(g, 'memspace', '?')} tensor")
    if not isinstance(s, SmemEngine):
        raise TraceError(f"{what}: the destination must be in shared memory, got a {getattr(s, 'memspace', '?')} tensor")
    d = atom.desc
    if not same_tma_elements(getattr(d, "unpacked_from", None) or d.dtype, g.dtype) or \
            not same_tma_elements(d.dtype, s.dtype):
        raise TraceError(f"{what}: the atom copies {d.dtype}, the tensors hold {g.dtype} and {s.dtype}")
    if isinstance(atom, TmaRunsAtom):
        _check_runs(atom, src.layout, dst.layout, s, what)
    else:
        _check_gmem_tile(atom, src.layout, what, "source")
        _check_smem_tile(atom, dst.layout, s, what)
    sbase, phase = start_phase(d, dst.offset, what, "destination")
    coords = _tile_coords(d, atom.gmem_layout, src.offset, what)
    bsh, bbase = mbar_ref(bar, "cute.copy(tma_bar_ptr=...)")
    s.param.written = True
    gp = atom_param(t, atom, g, desc_ptr)
    gp.read = True
    from ..frontend.threads import elect_one

    ops = []
    for origin, start in atom.boxes:  # one box, or several side by side along the innermost mode
        bc = coord_refs(t, tuple(c + origin[m] if origin[m] else c for c, m in zip(coords, d.modes)), what)
        sb = sbase + start if start else sbase
        if multicast:
            op = tma_multicast_op(d, gp, bc, s.param, sb, bsh, bbase, mcast, what)
        else:
            op = TmaLoadOp(d, gp, bc, s.param, sb, bsh, bbase, t.where())
        op.phase = phase
        if getattr(getattr(atom.op, "cta_group", None), "value", 1) == 2:  # a 2-CTA load (tcgen05.CtaGroup.TWO)
            op = pair_load(op, what)
        name_tensor_map(t, op, gp.index, d)
        if desc_ptr is not None:
            from .tensormap import via_desc

            op = via_desc(op, desc_ptr, what)
        ops.append(op)
    with elect_one():  # as in CuTe DSL, one thread of each warp that reaches the copy issues it
        for op in ops:
            t.emit(op)
    return True
