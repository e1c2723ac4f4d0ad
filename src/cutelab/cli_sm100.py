"""The Blackwell pictures of the ``cutelab`` command line: ``umma``, ``tmem``, ``tma`` and ``tile-path``.

    cutelab umma --shape 128x64 -o umma.svg                       # a tcgen05 UMMA: C in TMEM, A and B in smem
    cutelab umma --shape 256x64 --cta-group 2 --a-src tmem        # a 2-CTA UMMA with A from tensor memory
    cutelab tmem --shape 128x64 --tile 128x128 --copy 16x256b --rep x2 -o tmem.svg   # which warp reads what
    cutelab tma --tensor "(256,128):(128,1)" --tile 64,64 --cta 1,0 --multicast 2 -o tma.svg
    cutelab tile-path --shape 128x32 --k 32 -o path.svg           # gmem -> TMA -> smem -> UMMA -> TMEM -> registers

cutelab.commands adds these subcommands (``add_parsers``) and asks ``figure`` for their pictures; the
options and errors follow the other atom commands (``cutelab mma``).
"""

from __future__ import annotations

import argparse
from typing import Any

from .cli_words import dtype as _dtype

__all__ = ["COMMANDS", "add_parsers", "figure", "umma_op", "tmem_copy_op"]

COMMANDS = ("umma", "tmem", "tma", "tile-path")

_AB = ["f16", "bf16", "tf32", "e4m3", "e5m2", "s8", "u8"]
_COPIES = ["32x32b", "16x64b", "16x128b", "16x256b", "16x32bx2"]
_REPS = ["x1", "x2", "x4", "x8", "x16", "x32", "x64", "x128"]


class UsageError(ValueError):
    """A bad option combination (cutelab.cli reports it as one line, exit status 2)."""


def _add_umma_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("the UMMA (cute.nvgpu.tcgen05, make_tiled_mma)")
    g.add_argument("--ab", default="f16", choices=_AB, help="A/B element type (default f16)")
    g.add_argument("--acc", default=None, choices=["f16", "f32", "s32"], help="accumulator (default f32; s32 for s8/u8)")
    g.add_argument("--shape", default="128x64", metavar="MxN", help="instruction M x N (default 128x64; K follows the type)")
    g.add_argument("--cta-group", default="1", choices=["1", "2"], help="one CTA, or the pair of a 2-CTA UMMA")
    g.add_argument("--a-src", default="smem", choices=["smem", "tmem"], help="where A is read from (default smem)")
    g.add_argument("--a-major", default="k", choices=["k", "mn"], help="A's major mode (default k)")
    g.add_argument("--b-major", default="k", choices=["k", "mn"], help="B's major mode (default k)")


def _add_copy_options(p: argparse.ArgumentParser, default: str) -> None:
    g = p.add_argument_group("the tensor-memory copy (tcgen05.Ld*/St* op, make_tmem_copy)")
    g.add_argument("--copy", default=default, choices=_COPIES, help=f"lanes x bits per repetition (default {default})")
    g.add_argument("--rep", default="x1", choices=_REPS, help="repetitions (default x1)")
    g.add_argument("--store", action="store_true", help="tcgen05.st (registers -> TMEM) instead of tcgen05.ld")
    g.add_argument("--pack", action="store_true", help="pack two 16-bit values in 32 bits (PACK_16b_IN_32b / UNPACK)")


def add_parsers(sub: Any, add_output: Any) -> None:
    """Add the Blackwell subcommands to cutelab's subparsers (``add_output``: cutelab.cli's -o/--cells options)."""
    p = sub.add_parser("umma", help="a tcgen05 UMMA (Blackwell): C with its tensor-memory lanes and columns, A and B "
                                    "with where they are read from")
    _add_umma_options(p)
    add_output(p)

    p = sub.add_parser("tmem", help="tensor memory (128 lanes x 512 columns): which warp a tcgen05.ld/st gives each "
                                    "cell of a UMMA's accumulator, and one warp's instruction up close")
    _add_umma_options(p)
    p.add_argument("--tile", default=None, metavar="MxN", help="the accumulator's tile (default: the instruction's M x N)")
    _add_copy_options(p, "32x32b")
    add_output(p)

    p = sub.add_parser("tma", help="a TMA box over its global tensor: the CTAs' tiles, multicast slices, the box in "
                                   "shared memory")
    p.add_argument("--tensor", default="(128,128):(128,1)", help='the global tensor\'s layout, rank 2 (default '
                                                                 '"(128,128):(128,1)")')
    p.add_argument("--dtype", default="f16", choices=["f16", "bf16", "f32", "s8", "u8", "e4m3", "e5m2"],
                   help="element type (default f16)")
    p.add_argument("--tile", default="64,64", help="the CTA tile (cta_tiler) M,N (default 64,64)")
    p.add_argument("--cta", default="0,0", help="the tile coordinate of the CTA to colour (default 0,0)")
    p.add_argument("--multicast", type=int, default=1, help="CTAs sharing the tile through multicast (default 1)")
    p.add_argument("--smem", default="auto", help="the smem layout atom: auto (the widest swizzle for the tile, as "
                                                  "blackwell_helpers.make_smem_layout) or K_SW128, MN_INTER, ...")
    add_output(p)

    p = sub.add_parser("tile-path", help="one operand tile's path: gmem -> TMA -> swizzled smem -> UMMA descriptors "
                                         "-> TMEM accumulator -> tcgen05.ld to registers")
    _add_umma_options(p)
    p.add_argument("--k", type=int, default=None, help="the CTA tile's K (default: two instruction K-blocks)")
    p.add_argument("--operand", default="A", choices=["A", "B"], help="the operand whose tile is followed (default A)")
    p.add_argument("--global", dest="global_shape", default=None, metavar="MN,K",
                   help="the global operand's (MN,K) shape (default: twice the tile)")
    _add_copy_options(p, "32x32b")
    add_output(p)


def _mn(text: str, what: str, low: int = 1) -> tuple[int, int]:
    parts = [x.strip() for x in str(text).replace("x", ",").strip("()").split(",")]
    try:
        m, n = (int(x) for x in parts)
    except ValueError:
        raise UsageError(f"{what} must be two sizes MxN like 128x64, got {text!r}") from None
    if m < low or n < low:
        raise UsageError(f"{what} must be {'positive' if low else 'at least 0'}, got {text!r}")
    return m, n


def umma_op(args: argparse.Namespace) -> Any:
    """The tcgen05 MMA op the options name."""
    from .nvgpu import OperandMajorMode, tcgen05

    m, n = _mn(args.shape, "--shape")
    ab = args.ab
    acc = args.acc or ("s32" if ab in ("s8", "u8") else "f32")
    cg = tcgen05.CtaGroup.ONE if args.cta_group == "1" else tcgen05.CtaGroup.TWO
    src = tcgen05.OperandSource.TMEM if args.a_src == "tmem" else tcgen05.OperandSource.SMEM
    am, bm = (OperandMajorMode.MN if x == "mn" else OperandMajorMode.K for x in (args.a_major, args.b_major))
    A, C = _dtype(ab), _dtype(acc)
    if ab in ("s8", "u8"):
        if acc != "s32":
            raise UsageError("--ab s8/u8 accumulates in s32")
        return tcgen05.MmaI8Op(A, (m, n), cg, src, am, bm)
    if acc == "s32":
        raise UsageError(f"--acc s32 is for --ab s8/u8, not {ab}")
    if ab == "tf32":
        if acc != "f32":
            raise UsageError("--ab tf32 accumulates in f32")
        return tcgen05.MmaTF32Op((m, n), cg, src, am, bm)
    if ab in ("e4m3", "e5m2"):
        return tcgen05.MmaFP8Op(A, C, (m, n), cg, src, am, bm)
    return tcgen05.MmaF16BF16Op(A, C, (m, n), cg, src, am, bm)


def tmem_copy_op(args: argparse.Namespace) -> Any:
    """The tcgen05 TMEM load or store op the options name."""
    from .nvgpu import tcgen05

    name = ("St" if args.store else "Ld") + args.copy + "Op"
    cls = getattr(tcgen05, name)
    rep = getattr(tcgen05.Repetition, args.rep)
    if args.store:
        return cls(rep, tcgen05.Unpack.UNPACK_32b_IN_16b if args.pack else tcgen05.Unpack.NONE)
    return cls(rep, tcgen05.Pack.PACK_16b_IN_32b if args.pack else tcgen05.Pack.NONE)


def _tiled_umma(args: argparse.Namespace) -> Any:
    import cutelab as cute

    return cute.make_tiled_mma(umma_op(args))


def figure(args: argparse.Namespace) -> Any:
    """The picture of one of the Blackwell subcommands."""
    from . import render as R

    if args.cmd == "umma":
        return R.umma_figure(_tiled_umma(args))
    if args.cmd == "tmem":
        mma = _tiled_umma(args)
        tile = _mn(args.tile, "--tile") if args.tile else (int(mma.get_tile_size(0)), int(mma.get_tile_size(1)))
        if mma.op.cta_group.value == 2:
            raise UsageError("tmem draws one CTA's tensor memory: use --cta-group 1 (a pair's CTAs each hold half of "
                             "the accumulator, the same way)")
        tc, acc = R.tmem_copy_for(mma, tile, tmem_copy_op(args))
        # on the terminal, only the columns the accumulator uses (all 512 would be ~850 KB of text)
        return R.tmem_figure(tc, acc, tiled_mma=mma, columns="all" if args.output else "used")
    if args.cmd == "tma":
        return _tma(args)
    if args.cmd == "tile-path":
        mma = _tiled_umma(args)
        k = args.k if args.k is not None else 2 * int(mma.op.shape_mnk[2])
        gs = _mn(args.global_shape, "--global") if args.global_shape else None
        return R.tile_path_figure(mma, k, args.operand, tmem_copy_op(args), gs)
    raise UsageError(f"unknown command {args.cmd!r}")  # pragma: no cover - argparse checks


def _tma(args: argparse.Namespace) -> Any:
    from . import render as R

    atom = tma_atom(args.tensor, args.dtype, args.tile, args.smem)
    return R.tma_figure(atom, _mn(args.cta, "--cta", low=0), args.multicast)


def tma_atom(tensor: str, dtype: str, tile: str, smem: str = "auto") -> Any:
    """make_tiled_tma_atom(CopyBulkTensorTileG2SOp(), a tensor of this layout, the smem layout, the tile)."""
    from types import SimpleNamespace

    import cutelab as cute
    from .nvgpu import OperandMajorMode, cpasync
    from .render.figure import as_layout
    from .utils import blackwell_helpers as bh

    L = as_layout(tensor)
    t = _mn(tile, "--tile")
    dt = _dtype(dtype)
    shp = L.shape if isinstance(L.shape, tuple) else (L.shape,)
    if len(shp) != 2:
        raise UsageError(f"--tensor must have rank 2, got {L}")
    strides = L.stride
    if strides[1] == 1:
        major = OperandMajorMode.K  # mode 1 contiguous: the (MN, K) tile is K-major
    elif strides[0] == 1:
        major = OperandMajorMode.MN
    else:
        raise UsageError(f"--tensor {L}: TMA needs a mode of stride 1")
    if smem == "auto":
        sl = cute.select(bh.make_smem_layout(major, t, dt, 1), mode=[0, 1])
    else:
        from .nvgpu.tcgen05 import SmemLayoutAtomKind, make_smem_layout_atom

        try:
            kind = SmemLayoutAtomKind[smem]
        except KeyError:
            raise UsageError(f"--smem must be auto or one of {', '.join(k.name for k in SmemLayoutAtomKind)}, "
                             f"got {smem!r}") from None
        order = (0, 1) if major is OperandMajorMode.K else (1, 0)
        sl = cute.tile_to_shape(make_smem_layout_atom(kind, dt), t, order)
    atom, _ = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(),
                                          SimpleNamespace(layout=L, element_type=dt), sl, t)
    return atom
