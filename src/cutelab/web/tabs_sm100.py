"""The playground's Blackwell tabs: a tcgen05 UMMA, tensor memory and its copies, a TMA box, one tile's path.

Like the MMA and copy tabs, each builds its picture through the command line's own code
(``cutelab umma``, ``tmem``, ``tma``, ``tile-path``; cutelab.cli_sm100): the fields are the
commands' options. Imported by tabs.py, which registers them after the other atom tabs.

>>> from cutelab.web.tabs import compute
>>> compute("tmem", {"copy": "16x256b", "rep": "x2", "tile": "128x128"}).grids[1].shape
(16, 16)
"""

from __future__ import annotations

from ..errors import LayoutError
from ..render.figure import Figure
from .tabs import Field, _cli_figure, _layout, tab

__all__: list[str] = []

_AB = ("f16", "bf16", "tf32", "e4m3", "e5m2", "s8", "u8")
_ACC = ("", "f32", "f16", "s32")
_COPIES = ("32x32b", "16x64b", "16x128b", "16x256b", "16x32bx2")
_REPS = ("x1", "x2", "x4", "x8", "x16", "x32", "x64", "x128")


def _umma_fields(shape: str = "128x64") -> tuple[Field, ...]:
    return (
        Field("ab", "A/B type", "f16", choices=_AB),
        Field("acc", "accumulator", "", choices=_ACC),
        Field("shape", "instruction MxN", shape, "M: 64 or 128 (one CTA), 128 or 256 (a pair); N up to 256"),
        Field("cta_group", "CTAs", "1", choices=("1", "2")),
        Field("a_src", "A from", "smem", choices=("smem", "tmem")),
        Field("a_major", "A major", "k", choices=("k", "mn")),
        Field("b_major", "B major", "k", choices=("k", "mn")),
    )


def _copy_fields() -> tuple[Field, ...]:
    return (
        Field("copy", "TMEM copy", "32x32b", choices=_COPIES),
        Field("rep", "repetition", "x1", choices=_REPS),
        Field("store", "tcgen05.st (not ld)", "no", choices=("no", "yes")),
        Field("pack", "pack 16-bit pairs", "no", choices=("no", "yes")),
    )


def _opts(v: dict[str, str]) -> dict:
    out = dict(v)
    for k in ("store", "pack"):
        if k in out:
            out[k] = out[k] == "yes"
    return out


def _mn_limit(text: str, what: str, limit: int = 256) -> None:
    """A tile M x N the playground draws: each side at most ``limit`` (the command line's own checks say the rest)."""
    try:
        parts = [int(x) for x in str(text).replace("x", ",").strip("()").split(",")]
    except ValueError:
        return
    if any(p > limit for p in parts):
        err = LayoutError(f"{what} {text}: the playground draws tiles of up to {limit} a side")
        err.field = what  # type: ignore[attr-defined]
        raise err


@tab("umma", "tcgen05 UMMA", *_umma_fields(), group="blackwell",
     presets=(("128x64 f16, A and B from smem", {}),
              ("64x64: half the lanes of each quarter", {"shape": "64x64"}),
              ("128x64, A from tensor memory", {"a_src": "tmem"}),
              ("2-CTA 256x64 (a CTA pair)", {"shape": "256x64", "cta_group": "2"}),
              ("tf32 128x32", {"ab": "tf32", "shape": "128x32"})))
def _umma_tab(v: dict[str, str]) -> Figure:
    """A tcgen05 UMMA (one thread issues it for its CTA or CTA pair): C with the tensor-memory lane and column of each element, A and B with where they are read from."""
    _mn_limit(v["shape"], "shape")
    return _cli_figure("umma", _opts(v))


@tab("tmem", "tensor memory", *_umma_fields(),
     Field("tile", "accumulator tile MxN", "128x128", "the UMMA's accumulator (make_fragment_C); blank: one MMA",
           optional=True),
     *_copy_fields(), group="blackwell",
     presets=(("32x32b x1 over a 128x128 accumulator", {}),
              ("16x256b x2", {"copy": "16x256b", "rep": "x2"}),
              ("16x64b x4, 64-row UMMA (two tiles interleaved)", {"shape": "64x64", "copy": "16x64b", "rep": "x4"}),
              ("16x128b x4", {"copy": "16x128b", "rep": "x4"}),
              ("32x32b x32 store", {"rep": "x32", "store": "yes"}),
              ("16x32bx2 x2", {"copy": "16x32bx2", "rep": "x2"})))
def _tmem_tab(v: dict[str, str]) -> Figure:
    """Tensor memory, 128 lanes x 512 columns: which warp a tcgen05.ld/st (make_tmem_copy) gives each cell of the accumulator (warp w: lanes 32*(w%4)..+31), and one warp's instruction cell by cell."""
    if v["tile"]:
        _mn_limit(v["tile"], "accumulator tile MxN", 512)
    return _cli_figure("tmem", _opts(v))


@tab("tma", "TMA box",
     Field("tensor", "global tensor", "(128,128):(128,1)", "rank 2, one mode of stride 1"),
     Field("dtype", "element", "f16", choices=("f16", "bf16", "f32", "s8", "u8", "e4m3", "e5m2")),
     Field("tile", "CTA tile M,N", "64,64", "the TMA box (cta_tiler)"),
     Field("cta", "CTA tile coordinate", "0,0"),
     Field("multicast", "multicast CTAs", "1", "the CTAs that share the tile; each loads one slice"),
     Field("smem", "smem atom", "auto", choices=("auto", "K_INTER", "K_SW32", "K_SW64", "K_SW128", "MN_INTER",
                                                  "MN_SW32", "MN_SW64", "MN_SW128")),
     group="blackwell",
     presets=(("64x64 box of a 128x128 K-major tensor", {}),
              ("multicast to 2 CTAs, tile (1,0)", {"multicast": "2", "cta": "1,0"}),
              ("multicast to 4 CTAs", {"multicast": "4"}),
              ("MN-major tensor", {"tensor": "(128,128):(1,128)"}),
              ("32-byte swizzle: 64x16 box", {"tile": "64,16", "smem": "K_SW32"}),
              ("f32 128B rows: 32x32 box", {"dtype": "f32", "tile": "32,32"})))
def _tma_tab(v: dict[str, str]) -> Figure:
    """A TMA box (make_tiled_tma_atom) over its global tensor: the tiles the CTAs load, one tile's multicast slices, and where TMA writes the box in shared memory (swizzled)."""
    _layout(v["tensor"], "global tensor")
    opts = dict(v)
    try:
        opts["multicast"] = int(v["multicast"])
    except ValueError:
        err = LayoutError(f"multicast CTAs must be a number, got {v['multicast']!r}")
        err.field = "multicast"  # type: ignore[attr-defined]
        raise err from None
    return _cli_figure("tma", opts)


@tab("tile_path", "a tile's path", *_umma_fields("128x32"),
     Field("k", "CTA tile K", "32", "a multiple of the instruction's K"),
     Field("operand", "follow operand", "A", choices=("A", "B")),
     Field("global_shape", "global MN,K", "", "blank: twice the tile", optional=True),
     *_copy_fields(), group="blackwell",
     presets=(("A of a 128x32 UMMA, K 32", {}),
              ("B, MN-major", {"operand": "B", "b_major": "mn"}),
              ("A with 128-byte swizzle (K 64)", {"k": "64", "shape": "128x16"}),
              ("64-row UMMA, 16x256b load", {"shape": "64x32", "copy": "16x256b"})))
def _tile_path_tab(v: dict[str, str]) -> Figure:
    """One tile's path: global memory -> TMA -> swizzled shared memory -> UMMA descriptors (one per K-block) -> the accumulator in tensor memory -> tcgen05.ld to each thread's registers for the epilogue."""
    _mn_limit(v["shape"], "shape")
    opts = _opts(v)
    try:
        opts["k"] = int(v["k"])
    except ValueError:
        err = LayoutError(f"CTA tile K must be a number, got {v['k']!r}")
        err.field = "k"  # type: ignore[attr-defined]
        raise err from None
    if opts["k"] > 256:
        err = LayoutError(f"CTA tile K {opts['k']}: the playground draws up to 256")
        err.field = "k"  # type: ignore[attr-defined]
        raise err
    return _cli_figure("tile-path", opts)
