"""The TiledCopy picture (render/copy.py): read back from SVG and compared with CuTe C++ print_latex.

The TV layouts are CuTe C++'s own (tests/render/golden/cute_print_latex.json): ldmatrix x4
(SM75_U32x4_LDSM_N) over 32 threads, the transposing ldmatrix retiled for an SM80 MMA's A
(make_tiled_copy_A), and a plain 64-bit universal copy.
"""

from __future__ import annotations

import pytest

from cutelab import render as R
from cutelab.errors import LayoutError

from . import svgread
from .tvcheck import check_grid, cute_cases, latex_fills, normalized_latex, one_colour_per_thread, panel_positions

CASES = cute_cases("copy")


def _fig(name):
    c = CASES[name]
    return R.copy_tv_figure(c["tile"], c["S"], c["D"], title=name)


@pytest.mark.parametrize("name", sorted(CASES))
def test_svg_read_back(name):
    c = CASES[name]
    M, N = c["tile"]
    svg = R.render(_fig(name), "svg")
    gs, gd = svgread.read(svg)
    one_colour_per_thread(check_grid(gs, c["S"], M, N), check_grid(gd, c["D"], M, N))
    (xs, ys), (xd, yd) = (panel_positions(svg)[g.title] for g in (gs, gd))
    assert ys == yd and xs < xd  # side by side


@pytest.mark.parametrize("name", sorted(CASES))
def test_latex_is_cute_print_latex(name):
    c = CASES[name]
    tex = R.render(_fig(name), "latex")
    assert normalized_latex(tex) == normalized_latex(c["latex"])
    ours = latex_fills(tex)
    assert set(ours) == set(latex_fills(c["latex"])) and len(set(ours.values())) == len(ours)


def test_ldmatrix_source_and_destination():
    # this TiledCopy (32 threads x 8 values over (32,8)): each thread writes one row of the tile
    # (destination), and reads a 4x2 block, value v0 + 2*v1 at (v1, v0) shifted by its thread
    c = CASES["ldsm_x4_32x1_1x8"]
    f = _fig("ldsm_x4_32x1_1x8")
    gs, gd = f.grids
    assert gd.labels[0].tolist() == [f"T0\nV{v}" for v in range(8)]
    assert gd.labels[5].tolist() == [f"T5\nV{v}" for v in range(8)]
    cells = {(m, n): str(gs.labels[m, n]) for m in range(32) for n in range(8) if gs.labels[m, n].startswith("T0\n")}
    assert cells == {(v1, v0): f"T0\nV{v0 + 2 * v1}" for v0 in range(2) for v1 in range(4)}
    assert f.meta["tile"] == tuple(c["tile"])


def test_text_and_png():
    f = _fig("universal_4x8_1x4")
    txt = R.render(f, "text")
    assert "source (M,N) = (4,32)" in txt and "destination (M,N) = (4,32)" in txt
    pytest.importorskip("PIL")
    assert R.render(f, "png")[:8] == b"\x89PNG\r\n\x1a\n"


def test_tiler_forms_and_errors():
    assert R.copy_tv_figure(("(4,2):(1,4)", (2, 2)), "(8,4):(4,1)", "(8,4):(4,1)").meta["tile"] == (8, 4)
    with pytest.raises(LayoutError, match="two modes"):
        R.copy_tv_figure((8,), "(8,1):(1,0)", "(8,1):(1,0)")
    with pytest.raises(LayoutError, match="positive"):
        R.copy_tv_figure((0, 4), "(8,1):(1,0)", "(8,1):(1,0)")
    with pytest.raises(LayoutError, match=r"source layout over \(M,N\)=\(2,2\).*index 7"):
        R.copy_tv_figure((2, 2), "(8,1):(1,0)", "(4,1):(1,0)")
    with pytest.raises(LayoutError, match="expected a TiledCopy"):
        R.copy_figure(42)


# --------------------------------------------------------------------------- cutelab's own TiledCopy


def _tiled(name):
    import cutelab as cute
    from cutelab.nvgpu import CopyUniversalOp, warp

    f16 = cute.Float16
    return {
        "ldsm_x4_32x1_1x8": lambda: cute.make_tiled_copy_tv(
            cute.make_copy_atom(warp.LdMatrix8x8x16bOp(False, 4), f16), cute.make_layout((32, 1)), cute.make_layout((1, 8))),
        "ldsm_x4_trans_a": lambda: cute.make_tiled_copy_A(
            cute.make_copy_atom(warp.LdMatrix8x8x16bOp(True, 4), f16),
            cute.make_tiled_mma(warp.MmaF16BF16Op(f16, cute.Float32, (16, 8, 16)))),
        "universal_4x8_1x4": lambda: cute.make_tiled_copy_tv(
            cute.make_copy_atom(CopyUniversalOp(), f16, num_bits_per_copy=64),
            cute.make_layout((4, 8), stride=(8, 1)), cute.make_layout((1, 4))),
    }[name]()


@pytest.mark.parametrize("name", sorted(CASES))
def test_tiled_copy_is_cute(name):
    """cutelab's TiledCopy, drawn, is CuTe C++'s print_latex of the same TiledCopy."""
    f = R.copy_figure(_tiled(name))
    assert normalized_latex(R.render(f, "latex")) == normalized_latex(CASES[name]["latex"])
    assert f.title.startswith("TiledCopy ") and any(n.startswith("tiler_mn = ") for n in f.notes)


@pytest.mark.parametrize("name", sorted(CASES))
def test_cute_colors_latex_is_byte_for_byte(name):
    c = CASES[name]
    f = R.copy_figure(_tiled(name), cute_colors=True)
    strip = lambda t: [ln for ln in t.split("\n") if not ln.startswith("%")]  # noqa: E731
    assert strip(R.render(f, "latex")) == strip(c["latex"])
