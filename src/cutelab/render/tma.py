"""Pictures of TMA loads and of one tile's path through a Blackwell GEMM.

- :func:`tma_figure`: a TMA atom (``cpasync.make_tiled_tma_atom``) over its global tensor. Left,
  the tensor cut into the tiles the CTAs load (thick lines), the chosen CTA's tile coloured by the
  multicast slice each CTA of a cluster loads; right, that box in shared memory in address order,
  each cell naming the tensor element TMA writes there (the swizzle moves 16-byte chunks).
- :func:`tile_path_figure`: one operand tile of a tiled tcgen05 MMA from global memory to the
  MMA and its accumulator back out: the global tile, the same elements in shared memory as TMA
  places them (swizzled), the UMMA descriptors that read each MMA's K-block, the accumulator in
  tensor memory, and the registers ``tcgen05.ld`` gives each thread for the epilogue.

Every cell is computed from the layouts: tiles from the atom's box and the tensor's layout, smem
addresses from the TMA descriptor's placement (which ``make_tiled_tma_atom`` checked against the
smem layout) and from the MMA's ``partition_A``/``partition_B`` of its smem layout (checked equal
here), descriptors from ``make_fragment_A``/``B`` of that partition, TMEM lanes and columns from
``make_fragment_C``, registers from ``partition_D`` of the tiled TMEM copy.

Multicast slices follow CuTe's make_tma_copy_tiled: the box's elements, in the order of the
unswizzled shared-memory layout, are cut into ``multicast`` equal contiguous runs; CTA r of the
multicast loads run r and TMA writes it into every CTA of the mask.

>>> import numpy as np, cutelab as cute
>>> from cutelab.nvgpu import cpasync, warpgroup
>>> A = cute.make_tensor(np.zeros(64 * 64, np.float16), cute.make_layout((64, 64), stride=(64, 1)))
>>> sl = cute.tile_to_shape(warpgroup.make_smem_layout_atom(warpgroup.SmemLayoutAtomKind.K_SW128, cute.Float16), (32, 64), (0, 1))
>>> atom, _ = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), A, sl, (32, 64))
>>> f = tma_figure(atom, multicast=2)
>>> [g.shape for g in f.grids], f.grids[1].labels[1, :2].tolist()   # row 1 of smem: its 16-byte chunks swapped
([(64, 64), (32, 64)], ['(1,8)', '(1,9)'])
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, Sequence

import numpy as np

from .. import int_tuple as it
from ..errors import LayoutError
from ..layout import Layout
from . import palette
from .figure import CELL_LIMIT, Figure, Grid, _headers, tv_labels

__all__ = ["tma_cells", "tma_figure", "tile_path_figure", "tile_path_cells"]

_GREYS = ["#EEEEEE", "#D9D9D9"]


def _box_coords(desc: Any, ndim: int) -> np.ndarray:
    """(ndim, box elements): the tensor-mode coordinate (inside the box) of each box element, in TMA's order
    (row-major over the box, innermost dimension fastest: what ``desc.placement()`` is indexed by)."""
    n = int(np.prod(desc.box))
    lin = np.arange(n, dtype=np.int64)
    out = np.zeros((ndim, n), dtype=np.int64)
    rest = lin
    for d, mode in enumerate(desc.modes):
        out[mode] = rest % desc.box[d]
        rest = rest // desc.box[d]
    return out


def tma_cells(atom: Any, multicast: int = 1) -> dict:
    """The box of a TMA atom: for each element (box order), its tensor-mode coordinate inside the tile,
    the shared-memory element offset TMA writes it to, and its multicast slice.

    Returns coords ((rank, n)), smem ((n,) element offsets, swizzled), slice ((n,)), tile (tensor modes).
    """
    desc = atom.desc
    layout = atom.gmem_layout
    rank = len(layout.shape) if isinstance(layout.shape, tuple) else 1
    n = int(np.prod(desc.box))
    mc = int(multicast)
    if mc < 1 or n % mc:
        raise LayoutError(f"tma picture: multicast {multicast} must be a positive divisor of the box's {n} elements")
    outer = desc.box[-1]
    if outer % mc:
        raise LayoutError(f"tma picture: multicast {mc} does not divide the box's outermost dimension ({outer}, tensor "
                          f"mode {desc.modes[-1]}); CuTe cuts the box into {mc} equal runs of whole rows")
    coords = _box_coords(desc, rank)
    smem = desc.placement()
    lin = np.arange(n, dtype=np.int64)  # the unswizzled smem order of the box is its row-major order
    return {"coords": coords, "smem": smem, "slice": lin // (n // mc), "rank": rank, "n": n}


def tma_figure(atom: Any, cta_coord: Sequence[int] = (0, 0), multicast: int = 1, title: str | None = None) -> Figure:
    """A TMA atom over its global tensor (rank 2): the CTAs' tiles, one tile's multicast slices, its box in smem."""
    from ..nvgpu.cpasync.tma import TMA_SWIZZLE_BYTES, TmaCopyAtom

    if not isinstance(atom, TmaCopyAtom):
        raise LayoutError(f"tma_figure: expected a TMA atom (cpasync.make_tiled_tma_atom), got {type(atom).__name__}")
    L = atom.tensor_layout  # the tensor's own layout (the atom's gmem_layout may decode a coordinate view)
    shape = L.shape if isinstance(L.shape, tuple) else (L.shape,)
    if len(shape) != 2:
        raise LayoutError(f"tma_figure: draws a global tensor of rank 2, got {L}")
    rows, cols = shape
    if rows * cols > CELL_LIMIT:
        raise LayoutError(f"tma_figure: the tensor {L} has {rows * cols} elements; the picture draws up to {CELL_LIMIT}")
    tile = tuple(atom.tile) + (1,) * (2 - len(atom.tile))
    bm, bn = tile
    tm, tn = -(-rows // bm), -(-cols // bn)
    cm, cn = (int(x) for x in cta_coord)
    if not (0 <= cm < tm and 0 <= cn < tn):
        raise LayoutError(f"tma_figure: the CTA tile coordinate ({cm},{cn}) is outside the {tm} x {tn} tiles of {L}")
    cells = tma_cells(atom, multicast)
    mc = int(multicast)
    m = np.arange(rows)[:, None]
    n = np.arange(cols)[None, :]
    tid = (m // bm) + tm * (n // bn)
    keys = ((m // bm + n // bn) % 2).astype(np.int64) * np.ones((1, cols), dtype=np.int64)
    gm, gn = cells["coords"][0] + cm * bm, cells["coords"][1] + cn * bn
    inside = (gm < rows) & (gn < cols)  # TMA fills the out-of-bounds part of a box with zeros
    keys[gm[inside], gn[inside]] = 2 + cells["slice"][inside]
    colors = _GREYS + palette.categorical(mc)
    offs = np.asarray(L.offsets(), dtype=np.int64).reshape(cols, rows).T
    legend = [(0, "other CTAs' tiles")]
    legend += [(2 + r, f"tile ({cm},{cn})" + (f", slice {r}: loaded by CTA {r} of the multicast" if mc > 1 else ""))
               for r in range(mc)]
    g1 = Grid(f"global tensor {L}: tiles {bm}x{bn}, CTA tile ({cm},{cn})", keys, offs.astype(str), colors,
              _headers(rows), _headers(cols), groups=tid, legend=legend)
    # the box in shared memory, in address order: rows of the innermost box extent
    desc = atom.desc
    W = desc.box[0]
    n_el = cells["n"]
    R = n_el // W
    sk = np.full((R, W), -1, dtype=np.int64)
    slab = np.full((R, W), "", dtype=object)
    a = cells["smem"]
    sk[a // W, a % W] = 2 + cells["slice"]
    crd = cells["coords"]
    slab[a // W, a % W] = [f"({i},{j})" for i, j in zip(crd[0].tolist(), crd[1].tolist())]
    sw = TMA_SWIZZLE_BYTES[desc.swizzle]
    g2 = Grid(f"shared memory: the box in address order ({W} elements a row), the tile coordinate TMA writes there",
              sk, slab.astype(str), colors, [str(r * W) for r in range(R)], _headers(W), legend=[])
    notes = [str(desc), f"cuTensorMapEncodeTiled: globalDim {list(desc.dims)}, globalStrides {list(desc.strides[1:])}, "
             f"boxDim {list(desc.box)}, swizzle {sw or 'none'}{'B' if sw else ''}",
             f"{tm} x {tn} tiles of ({bm},{bn}); each CTA's TMA box is its tile (cta_tiler)",
             f"smem layout {atom.smem_layout}: TMA writes the box row-major (innermost tensor mode {desc.modes[0]} fastest)"
             + (f" and swizzles 16-byte chunks within {sw}-byte rows (Swizzle<{desc.swizzle},4,3> on byte addresses)"
                if sw else "")]
    if mc > 1:
        notes.append(f"multicast over {mc} CTAs: the box is cut into {mc} runs of {n_el // mc} elements (whole rows of "
                     f"tensor mode {desc.modes[-1]}); CTA r issues run r with .multicast::cluster and it lands in the "
                     f"shared memory of every CTA of the mask")
    if (rows % bm) or (cols % bn):
        notes.append("the last tiles reach past the tensor: TMA fills what is outside with zeros")
    return Figure(title if title is not None else f"TMA {atom.op} box {it.tuple_str(desc.box)}", [g1, g2], notes,
                  kind="tma")


# --------------------------------------------------------------------------- one tile's path

def _swizzle_bits(composed: Any) -> int:
    inner = getattr(composed, "inner", None)
    return int(getattr(inner, "num_bits", 0)) if inner is not None else 0


def tile_path_cells(tiled_mma: Any, tile_k: int, operand: str = "A", c_copy_op: Any = None,
                    global_shape: Sequence[int] | None = None) -> dict:
    """Everything :func:`tile_path_figure` draws, computed from the layouts (see the module docstring)."""
    from ..swizzle import select, slice_  # cute.select, cute.slice_ (composed layouts too)
    from ..numeric import Float32, TFloat32
    from ..nvgpu.copy_atom import make_copy_atom
    from ..runtime import AddressSpace, make_ptr
    from ..tensor import make_tensor
    from ..nvgpu import cpasync
    from ..nvgpu.tcgen05.copy import Ld32x32bOp, Repetition, make_tmem_copy
    from ..nvgpu.universal_mma import OperandMajorMode
    from ..nvgpu.tcgen05 import helpers as bh  # the operands' smem layouts (cutlass.utils.blackwell_helpers' names)
    from .tcgen05 import _coords, _tile_tensor, umma_cells

    op = tiled_mma.op
    M, N, _ = (int(tiled_mma.get_tile_size(i)) for i in range(3))
    mma_k = int(op.shape_mnk[2])
    if op.cta_group.value != 1:
        raise LayoutError("tile path picture: draws a 1-CTA UMMA (CtaGroup.ONE); a pair splits A and C between two CTAs")
    if operand not in ("A", "B"):
        raise LayoutError(f"tile path picture: operand must be 'A' or 'B', got {operand!r}")
    if operand == "A" and not op._operand_in_smem("A"):
        raise LayoutError("tile path picture: this UMMA reads A from tensor memory; draw operand B, or an A from smem")
    K = int(tile_k)
    if K < mma_k or K % mma_k:
        raise LayoutError(f"tile path picture: the K tile {K} must be a multiple of the instruction's K ({mma_k})")
    mn = M if operand == "A" else N
    dtype = op.a_dtype if operand == "A" else op.b_dtype
    major = op.a_major_mode if operand == "A" else op.b_major_mode
    # shared memory as the MMA sees it: make_smem_layout_a/b, partitioned as the kernel does
    make = bh.make_smem_layout_a if operand == "A" else bh.make_smem_layout_b
    s_layout = make(tiled_mma, (M, N, K), dtype, 1)
    outer = s_layout.outer
    sw = _swizzle_bits(s_layout)
    tile = _tile_tensor(mn, K)
    thr = tiled_mma.get_slice(0)
    part = getattr(thr, f"partition_{operand}")(tile)
    pm, pk = _coords(part, mn)
    off = np.asarray(slice_(outer, (None,) * (len(outer.shape) - 1) + (0,)).offsets(), dtype=np.int64) \
        if isinstance(outer.shape, tuple) and len(outer.shape) == 4 else np.asarray(outer.offsets(), dtype=np.int64)
    if off.size != pm.size:
        raise LayoutError(f"tile path picture: the smem layout {s_layout} holds {off.size} elements a stage, the "
                          f"partition_{operand} of the ({mn},{K}) tile {pm.size}")
    eb = dtype.width // 8
    byte = off * eb
    if sw:
        byte = byte ^ (((byte >> 7) & ((1 << sw) - 1)) << 4)
    smem_mma = np.full((mn, K), -1, dtype=np.int64)
    smem_mma[pm, pk] = byte // eb
    # the global tensor and the TMA box: the same tile, the smem offset TMA writes each element to
    gs = tuple(int(x) for x in (global_shape or (2 * mn, 2 * K)))
    if len(gs) != 2 or gs[0] < mn or gs[1] < K:
        raise LayoutError(f"tile path picture: the global {operand} must be (MN, K) at least ({mn},{K}), got {gs}")
    k_major = major is OperandMajorMode.K
    g_layout = Layout._raw(gs, (gs[1], 1) if k_major else (1, gs[0]))
    flat = bh.make_smem_layout(major, (mn, K), dtype, 1)
    tma_smem = select(flat, mode=[0, 1])
    internal = Float32 if dtype is TFloat32 else None  # TMA moves tf32 as 32-bit floats
    atom, _ = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(),
                                          SimpleNamespace(layout=g_layout, element_type=dtype), tma_smem, (mn, K),
                                          internal_type=internal)
    tc = tma_cells(atom)
    smem_tma = np.full((mn, K), -1, dtype=np.int64)
    smem_tma[tc["coords"][0], tc["coords"][1]] = tc["smem"]
    if not np.array_equal(smem_tma, smem_mma):
        bad = np.argwhere(smem_tma != smem_mma)[0]
        raise LayoutError(f"tile path picture: TMA writes element {tuple(int(x) for x in bad)} to smem offset "
                          f"{int(smem_tma[tuple(bad)])} but the MMA's smem layout {s_layout} reads it at "
                          f"{int(smem_mma[tuple(bad)])}")
    # UMMA descriptors: one per K-block, from make_fragment_X of the smem partition
    ptr = make_ptr(dtype, 0, AddressSpace.smem, assumed_align=1024)
    s_tensor = make_tensor(ptr, slice_(outer, (None,) * (len(outer.shape) - 1) + (0,))
                      if len(outer.shape) == 4 else outer)
    # the smem layout is already in the MMA's partitioned shape ((MMA), MMA_MN, MMA_K): the kernel passes it
    # to make_fragment_X as it is (tCrA = tiled_mma.make_fragment_A(sA)), and so does this
    if it.tuple_str(s_tensor.layout.shape) != it.tuple_str(part.layout.shape):
        raise LayoutError(f"tile path picture: the smem layout's shape {it.tuple_str(s_tensor.layout.shape)} is not "
                          f"partition_{operand}'s {it.tuple_str(part.layout.shape)}")
    s_part = s_tensor
    frag = getattr(tiled_mma, f"make_fragment_{operand}")(s_part)
    starts = np.asarray(frag.layout.offsets(), dtype=np.int64)  # 16-byte units, one per MMA tile of the partition
    rest = (part.layout.shape[1], part.layout.shape[2])
    kblock = pk // mma_k
    fields = _desc_fields(s_part, dtype, sw, "K" if k_major else "MN")
    # the accumulator and the copy out of tensor memory
    c = umma_cells(tiled_mma, "C")
    acc = tiled_mma.make_fragment_C(tiled_mma.partition_shape_C((M, N)))
    cop = c_copy_op if c_copy_op is not None else Ld32x32bOp(Repetition.x1)
    t2r = make_tmem_copy(make_copy_atom(cop, acc.element_type), acc)
    cpart = thr.partition_C(_tile_tensor(M, N))  # (m, n) of each accumulator element, as the kernel's tCcAcc
    reg_t = np.full((M, N), -1, dtype=np.int64)
    reg_v = np.full((M, N), -1, dtype=np.int64)
    for t in range(128):
        d = t2r.get_slice(t).partition_D(cpart)
        cm, cn = _coords(d, M)
        reg_t[cm, cn] = t
        reg_v[cm, cn] = np.arange(cm.size)
    return {"M": M, "N": N, "K": K, "mn": mn, "mma_k": mma_k, "dtype": dtype, "major": major, "operand": operand,
            "global": g_layout, "atom": atom, "smem": smem_mma, "smem_layout": s_layout, "kblock_of": kblock,
            "pm": pm, "pk": pk, "desc_starts": starts, "desc_rest": rest, "desc_fields": fields, "c": c, "acc": acc,
            "t2r": t2r, "reg_t": reg_t, "reg_v": reg_v, "swizzle": sw}


def _desc_fields(s_part: Any, dtype: Any, sw: int, major: str) -> tuple | str:
    """(SM100 layout type, LBO, SBO) of one MMA's smem tile (mode 0 of the MMA-shaped smem tensor), read off
    its offsets as CuTe's make_umma_desc reads the canonical layouts (in 16-byte units T elements wide):

    K-major: ((8,n),2):((W,SBO),LBO), LBO 1 when swizzled; MN-major swizzled: ((W,n),(8,k)):((1,LBO),(W,SBO)),
    interleaved: ((1,n),(8,k)):((-,SBO),(1,LBO)); W the swizzle's 16-byte units a row (1, 2, 4, 8).
    Returns a message instead where the tile is not canonical (no descriptor could read it).
    """
    lay = s_part.layout
    mode0 = Layout._raw(lay.shape[0], lay.stride[0])
    shp = mode0.shape
    MN, K = it.product(shp[0]), it.product(shp[1])
    off = np.asarray(mode0.offsets(), dtype=np.int64).reshape(K, MN).T
    off = off - off[0, 0]
    T = 128 // dtype.width  # elements per 16-byte unit
    W = 1 << sw
    mn = np.arange(MN)[:, None]
    k = np.arange(K)[None, :]
    if major == "K":
        sbo = int(off[8, 0]) // T if MN > 8 else 0
        lbo = int(off[0, T]) // T if (sw == 0 and K > T) else 1
        canon = ((mn % 8) * W + (mn // 8) * sbo + (k // T) * lbo) * T + k % T
    else:
        u, e = mn // T, mn % T
        if sw:
            lbo = int(off[T * W, 0]) // T if MN > T * W else 0
            sbo = int(off[0, 8]) // T if K > 8 else 0
            canon = ((u % W) + (u // W) * lbo + (k % 8) * W + (k // 8) * sbo) * T + e
        else:
            sbo = int(off[T, 0]) // T if MN > T else 0
            lbo = int(off[0, 8]) // T if K > 8 else 0
            canon = (u * sbo + (k % 8) + (k // 8) * lbo) * T + e
    if not np.array_equal(canon, off):
        return f"{mode0} is not a canonical {major}-major UMMA layout"
    return (_LAYOUT_TYPE[sw], lbo, sbo)


#: SM100 UMMA descriptor layout types (bits 61-63) by the swizzle's B of Swizzle<B,4,3>
_LAYOUT_TYPE = {0: 0, 1: 6, 2: 4, 3: 2}
_SW_NAME = {0: "SWIZZLE_NONE (interleaved)", 1: "SWIZZLE_32B", 2: "SWIZZLE_64B", 3: "SWIZZLE_128B"}


def tile_path_figure(tiled_mma: Any, tile_k: int, operand: str = "A", c_copy_op: Any = None,
                     global_shape: Sequence[int] | None = None, title: str | None = None) -> Figure:
    """One operand tile's path: global memory -> TMA -> swizzled shared memory -> UMMA descriptors -> the
    accumulator in tensor memory -> tcgen05.ld to registers, for the epilogue."""
    d = tile_path_cells(tiled_mma, tile_k, operand, c_copy_op, global_shape)
    mn, K, M, N, X = d["mn"], d["K"], d["M"], d["N"], operand
    nk = K // d["mma_k"]
    colors = _GREYS + palette.categorical(nk)
    kleg = [(2 + k, f"K-block {k} (k {k * d['mma_k']}-{(k + 1) * d['mma_k'] - 1}): UMMA {k}") for k in range(nk)]
    # 1. the global tensor, the tile coloured by K-block
    G = d["global"]
    gr, gc = G.shape
    gkeys = np.zeros((gr, gc), dtype=np.int64)
    kk = np.arange(K)[None, :] // d["mma_k"] * np.ones((mn, 1), dtype=np.int64)
    gkeys[:mn, :K] = 2 + kk
    goffs = np.asarray(G.offsets(), dtype=np.int64).reshape(gc, gr).T
    tiles = (np.arange(gr)[:, None] // mn) + 1000 * (np.arange(gc)[None, :] // K)
    mnname = "M" if X == "A" else "N"
    g1 = Grid(f"1. global {X} {G}: the CTA's ({mn},{K}) tile", gkeys, goffs.astype(str), colors, _headers(gr),
              _headers(gc), groups=tiles, legend=[(0, "other tiles")] + kleg)
    # 2. shared memory in address order, each cell the (mn, k) stored there
    sm = d["smem"]
    W = d["atom"].desc.box[0]
    R = mn * K // W
    skeys = np.full((R, W), -1, dtype=np.int64)
    slab = np.full((R, W), "", dtype=object)
    mm, kq = np.nonzero(sm >= 0)
    a = sm[mm, kq]
    skeys[a // W, a % W] = 2 + kq // d["mma_k"]
    slab[a // W, a % W] = [f"({i},{j})" for i, j in zip(mm.tolist(), kq.tolist())]
    g2 = Grid(f"2. TMA -> shared memory ({_SW_NAME[d['swizzle']]}), address order: the ({mnname},K) element at each "
              f"offset", skeys, slab.astype(str), colors, [str(r * W) for r in range(R)], _headers(W), legend=[])
    # 3. the UMMA descriptors: one per K-block
    starts = d["desc_starts"]
    f = d["desc_fields"]
    fields = (f"layout type {f[0]}, LBO {f[1]}, SBO {f[2]} (16-byte units)" if isinstance(f, tuple) else f)
    dl = np.array([[f"K-block {k}: start +{int(s)} (x16 B)"] for k, s in enumerate(starts.tolist()[:nk])], dtype=str)
    g3 = Grid(f"3. UMMA descriptors (make_fragment_{X}): {_SW_NAME[d['swizzle']]}, {fields}",
              (2 + np.arange(dl.shape[0]))[:, None], dl, colors, [str(k) for k in range(dl.shape[0])], ["descriptor"],
              style="table")
    # 4. the accumulator in tensor memory: lanes x columns, each cell the C (m, n) it holds
    c = d["c"]
    lanes = sorted(set(c["lane"][c["lane"] >= 0].tolist()))
    ncol = int(c["col"].max()) + 1
    tk = np.full((128, ncol), -1, dtype=np.int64)
    tl = np.full((128, ncol), "", dtype=object)
    mC, nC = np.nonzero(c["lane"] >= 0)
    ln, cl = c["lane"][mC, nC], c["col"][mC, nC]
    tk[ln, cl] = 2 + ln // 32
    tl[ln, cl] = [f"({i},{j})" for i, j in zip(mC.tolist(), nC.tolist())]
    wcol = _GREYS + palette.categorical(4)
    g4 = Grid(f"4. tensor memory: the accumulator C ({M},{N}), lanes x 32-bit columns, the (m,n) held", tk,
              tl.astype(str), wcol, _headers(128), _headers(ncol),
              legend=[(2 + q, f"lanes {32 * q}-{32 * q + 31}: warp w, w % 4 == {q}") for q in range(4)])
    # 5. registers after tcgen05.ld: each C element's thread and value
    rt, rv = d["reg_t"], d["reg_v"]
    g5 = Grid(f"5. {type(d['t2r'].op).__name__[:-2]} -> registers for the epilogue: C ({M},{N}), T#V#",
              np.where(rt < 0, -1, 2 + rt // 32), tv_labels(rt, rv), wcol, _headers(M), _headers(N), legend=[])
    notes = [f"UMMA {tiled_mma.op!r}; CTA tile (M,N,K) = ({M},{N},{K}), {nk} UMMA K-blocks of {d['mma_k']}",
             f"TMA: {d['atom'].desc}",
             f"smem layout (make_smem_layout_{X.lower()}): {d['smem_layout']}; TMA's placement of every element equals "
             f"the MMA partition's offset in it (checked)",
             f"descriptor tensor make_fragment_{X}(partition_{X}(sX)) has start offsets {starts.tolist()} (16-byte units)",
             f"accumulator make_fragment_C = {d['acc']}",
             f"tcgen05.ld: make_tmem_copy({d['t2r'].op!r}, acc): warp w reads lanes 32*(w%4)..+31; each thread then "
             f"holds the C elements labelled with its T# (V#: its register index) and stores them in the epilogue",
             f"lanes used by the accumulator: {lanes[0]}-{lanes[-1]}" if lanes else "no lanes"]
    return Figure(title if title is not None else f"the path of one {X} tile: gmem -> TMA -> smem -> UMMA -> TMEM -> "
                  f"registers", [g1, g2, g3, g4, g5], notes, kind="tile_path")
