"""``cute.prefetch(tma_atom, gmem_tile)`` inside a kernel: TMA's L2 prefetch of the tile a TMA load
would copy (PTX ``cp.async.bulk.prefetch.tensor.Nd.L2.global.tile``), as CuTe DSL 4.8.1 has it.

The source is what ``cute.copy`` with the same atom takes as its source: one tile (mode 0) of the
global tensor from ``make_tiled_tma_atom`` (after ``tma_partition``); for a scale-factor atom
(``TmaRunsAtom``) a view of the tile's elements, broadcast modes filtered out or not. The prefetch reads nothing a
program sees, so the CPU interpreter only checks it and goes on. The CUDA printer prints one
prefetch per box of the tile, through the load's tensor map. Prefetch atoms of other kinds, and
gather4 prefetches (a list of tensors), are refused.

May import: what ``kernel.instr`` may (see its ``__init__``).
"""

from __future__ import annotations

from typing import Any, List

from ...errors import TraceError
from ..ir.nodes import Access
from ..frontend.trace import current
from .tma import TmaLoadOp, atom_param, _check_gmem_tile, _tile_coords, coord_code, coord_refs, name_tensor_map

__all__ = ["TmaPrefetchOp", "prefetch"]


class TmaPrefetchOp(TmaLoadOp):
    """One TMA box prefetch into L2: global tensor ``param`` at box origin ``coords`` (innermost
    TMA dimension first). No shared memory, no barrier; nothing to do on the CPU."""

    __slots__ = ()

    def __repr__(self) -> str:
        from ... import int_tuple as it
        from ..ir.nodes import _ref_str

        c = ", ".join(_ref_str(x) for x in self.coords)
        return f"tma_prefetch {self.param.name}[box {it.tuple_str(self.desc.box)} at ({c})]"

    def accesses(self) -> List[Access]:
        return []

    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
        """A cache hint: no effect on what the program computes."""

    def cuda(self, r: Any) -> None:
        d = self.desc
        cs = ", ".join(f"%{i + 1}" for i in range(d.rank))
        ins = f"cp.async.bulk.prefetch.tensor.{d.rank}d.L2.global.tile [%0, {{{cs}}}];"
        coords = ", ".join(f'"r"((int)({coord_code(r, c)}))' for c in r.index_exprs(self))
        r.emit(f'asm volatile("{ins}" :: "l"((unsigned long long)&{self.tmap_name}), {coords} : "memory");')


def _check_runs_source(atom: Any, gl: Any, what: str) -> None:
    """The source of a prefetch with a TmaRunsAtom (a block-scaled GEMM's scale-factor tile): the
    global elements it views, broadcast modes filtered out or not, are those the atom's loads copy."""
    import numpy as np

    from ... import int_tuple as it
    from ..frontend.trace import _static_offsets

    got = np.unique(_static_offsets(gl, "cute.prefetch"))
    if not np.array_equal(got, np.unique(atom.g_of_s)):
        raise TraceError(f"{what}: the source {gl} is not one tile {it.tuple_str(atom.tile)} of the tensor "
                         f"{atom.gmem_layout} the atom was made for")


def prefetch(atom: Any, src: Any, *, loc: Any = None, ip: Any = None) -> None:
    """Prefetch into L2 the tile ``src`` that ``cute.copy(atom, src, ...)`` would load (one elected
    thread of each warp that reaches it issues it, as the copy)."""
    from ...nvgpu.cpasync.tma import CopyBulkTensorTileG2SOp, TmaCopyAtom, TmaRunsAtom
    from ..frontend.threads import elect_one
    from ..frontend.engines import GmemEngine, SmemEngine

    t = current("cute.prefetch")
    what = f"kernel {t.name}: cute.prefetch{t.where()}"
    if isinstance(src, (list, tuple)):
        raise TraceError(f"{what}: prefetches of several tensors (gather4) are not supported by cutelab")
    if not isinstance(atom, TmaCopyAtom) or not isinstance(atom.op, CopyBulkTensorTileG2SOp):
        raise TraceError(f"{what}: only TMA load atoms (make_tiled_tma_atom with a CopyBulkTensorTileG2SOp or "
                         f"...MulticastOp) prefetch, got {type(getattr(atom, 'op', atom)).__name__}")
    g = getattr(src, "engine", None)
    if not isinstance(g, GmemEngine) or isinstance(g, SmemEngine):
        raise TraceError(f"{what}: the source must be a tile of the global tensor from make_tiled_tma_atom, got "
                         f"a {getattr(g, 'memspace', '?')} tensor")
    d = atom.desc
    from .tma import same_tma_elements

    if not same_tma_elements(d.dtype, g.dtype):
        raise TraceError(f"{what}: the atom copies {d.dtype}, the tensor holds {g.dtype}")
    if isinstance(atom, TmaRunsAtom):
        _check_runs_source(atom, src.layout, what)
    else:
        _check_gmem_tile(atom, src.layout, what, "source")
    coords = _tile_coords(d, atom.gmem_layout, src.offset, what)
    gp = atom_param(t, atom, g)
    gp.read = True
    ops = []
    for origin, _ in atom.boxes:
        bc = coord_refs(t, tuple(c + origin[m] if origin[m] else c for c, m in zip(coords, d.modes)), what)
        op = TmaPrefetchOp(d, gp, bc, None, 0, None, 0, t.where())
        name_tensor_map(t, op, gp.index, d)
        ops.append(op)
    with elect_one():
        for op in ops:
            t.emit(op)
