"""The TiledMMA picture (render/mma.py): read back from SVG, compared with CuTe C++ print_latex, goldens.

The TV layouts come from CuTe C++ itself (tests/render/golden/cute_print_latex.json, written by
scripts/make_cute_latex_golden.py): SM80 16x8x16 and 16x8x8 atoms at several atom layouts and a
permutation, and SM90 64x8x16 wgmma with A from shared memory (SS) and from registers (RS).

Golden pictures are regenerated with ``CUTELAB_REGEN_GOLDEN=1 python -m pytest tests/render/test_mma_picture.py``
(look at them before committing).
"""

from __future__ import annotations

import os
import time

import pytest

from cutelab import render as R
from cutelab.errors import LayoutError
from cutelab.render.mma import tv_owners

from . import svgread
from .tvcheck import (
    GOLDEN, check_grid, cute_cases, latex_fills, normalized_latex, one_colour_per_thread, panel_positions,
)

CASES = cute_cases("mma")
REGEN = os.environ.get("CUTELAB_REGEN_GOLDEN") == "1"


def _fig(name):
    c = CASES[name]
    return R.mma_tv_figure(c["tile"], c["C"], c["A"], c["B"], title=name)


@pytest.mark.parametrize("name", sorted(CASES))
def test_svg_read_back(name):
    c = CASES[name]
    M, N, K = c["tile"]
    svg = R.render(_fig(name), "svg")
    gc, ga, gb = svgread.read(svg)
    fc = check_grid(gc, c["C"], M, N)
    # C: every cell is held by exactly one (t, v), with no tooltip
    assert len(gc.labels) == M * N and not gc.tips
    fa = check_grid(ga, c["A"], M, K)
    fb = check_grid(gb, c["B"], N, K, transposed=True)
    one_colour_per_thread(fc, fa, fb)
    assert len(fc) == len(set(fc)) and set(fc) <= set(range(128))
    # B above C (same columns), A left of C (same rows)
    pos = panel_positions(svg)
    (xc, yc), (xa, ya), (xb, yb) = (pos[g.title] for g in (gc, ga, gb))
    assert xb == xc and yb < yc and ya == yc and xa < xc


def test_shared_operands_are_listed():
    # 2x2x1: A is held by the two atoms along N, B by the two along M
    svg = R.render(_fig("sm80_16x8x16_f32f16_2x2x1"), "svg")
    gc, ga, gb = svgread.read(svg)
    assert ga.tips[(0, 0)] == "V0: T0,T64" and gb.tips[(0, 0)] == "V0: T0,T32"
    # SM90 SS: all 128 threads of the warpgroup read every A and B element from shared memory
    gc, ga, gb = svgread.read(R.render(_fig("sm90_64x8x16_f16_ss"), "svg"))
    assert ga.tips[(5, 3)] == f"V{5 + 64 * 3}: T0-T127"
    assert len(ga.tips) == 64 * 16


@pytest.mark.parametrize("name", sorted(CASES))
def test_latex_is_cute_print_latex(name):
    """Line for line CuTe's print_latex(TiledMMA), except comments and fill colours."""
    c = CASES[name]
    tex = R.render(_fig(name), "latex")
    assert normalized_latex(tex) == normalized_latex(c["latex"])
    ours, cute = latex_fills(tex), latex_fills(c["latex"])
    assert set(ours) == set(cute)
    assert len(set(ours.values())) == len(ours)  # one colour per thread (CuTe's repeat every 8)


def test_text_png_html():
    f = _fig("sm80_16x8x16_f32f16_atom")
    txt = R.render(f, "text")
    for head in ("C (M,N) = (16,8)", "A (M,K) = (16,16)", "B (K,N) = (16,8), transposed"):
        assert head in txt
    assert "|  T0V0 |  T0V1 |  T1V0 |" in txt
    html = R.render(f, "html")
    assert "<svg" in html and "T31V3" in html
    pytest.importorskip("PIL")
    import io

    from PIL import Image

    png = R.render(f, "png")
    im = Image.open(io.BytesIO(png)).convert("RGB")
    # the top-left C cell is T0's colour: find the C grid from the SVG geometry (same as PNG)
    svg = R.render(f, "svg")
    pos = panel_positions(svg)
    x, y = pos["C (M,N) = (16,8)"]
    import re

    cw, ch = (int(v) for v in re.search(r'data-cw="(\d+)" data-ch="(\d+)"', svg).groups())
    head = 26  # _HEAD + 8 for labelled grids
    px = im.getpixel((int(x) + head + 3, int(y) + 18 + head + 3))
    gc = svgread.read(svg)[0]
    assert "#%02X%02X%02X" % px == gc.fills[0, 0]
    assert im.size[0] > 3 * 16 * cw // 2


def test_errors():
    c = CASES["sm80_16x8x16_f32f16_atom"]
    with pytest.raises(LayoutError, match="same number of threads"):
        R.mma_tv_figure((16, 8, 16), c["C"], c["A"], "((4,4),(2,2)):((16,1),(8,64))")
    with pytest.raises(LayoutError, match=r"C layout over \(M,N\)=\(8,8\).*outside the \(8,8\) tile"):
        R.mma_tv_figure((8, 8, 16), c["C"], c["A"], c["B"])
    with pytest.raises(LayoutError, match="must have rank 2"):
        R.mma_tv_figure((16, 8, 16), "(32,4,2):(1,32,128)", c["A"], c["B"])
    with pytest.raises(LayoutError, match="three positive ints"):
        R.mma_tv_figure((16, 8), c["C"], c["A"], c["B"])
    with pytest.raises(LayoutError, match="expected a TiledMma"):
        R.mma_figure("(4,8):(8,1)")


def test_holes_and_clashes_are_noted():
    # a C layout that leaves half the tile empty, and an A layout where threads share elements
    f = R.mma_tv_figure((2, 2, 1), "(2,1):(1,0)", "(2,1):(0,0)", "(2,1):(1,0)")
    assert any("C: 2 element(s) are held by no (t,v)" in n for n in f.notes)
    assert any(n.startswith("A: each element is held by 2 (t,v)") for n in f.notes)
    o = tv_owners("(2,1):(1,0)", 2, 2)
    assert o.count.tolist() == [[1, 0], [1, 0]] and o.thr.tolist() == [[0, -1], [1, -1]]
    gc = svgread.read(R.render(f, "svg"))[0]
    assert gc.fills[0, 1] == "#FFFFFF" and (0, 1) not in gc.labels


def test_speed_sm80_2x2():
    """Drawing a 2x2 SM80 TiledMMA to SVG: the brief asks for well under 50 ms (measured, reported)."""
    c = CASES["sm80_16x8x16_f32f16_2x2x1"]
    R.render(R.mma_tv_figure(c["tile"], c["C"], c["A"], c["B"]), "svg")  # warm up imports
    best = min(_timed(lambda: R.render(R.mma_tv_figure(c["tile"], c["C"], c["A"], c["B"]), "svg")) for _ in range(5))
    assert best < 0.25, f"{best * 1e3:.1f} ms"  # generous bound: the machine is shared; typical is ~20 ms


def _timed(fn):
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


GOLDENS = {
    "mma_sm80_16x8x16_f32f16_atom.svg": ("sm80_16x8x16_f32f16_atom", "svg"),
    "mma_sm80_16x8x16_f32f16_atom.tex": ("sm80_16x8x16_f32f16_atom", "latex"),
    "mma_sm80_16x8x16_f32f16_atom.txt": ("sm80_16x8x16_f32f16_atom", "text"),
    "mma_sm80_16x8x16_f32f16_2x2x1.svg": ("sm80_16x8x16_f32f16_2x2x1", "svg"),
    "mma_sm80_16x8x16_f32f16_2x2x1.tex": ("sm80_16x8x16_f32f16_2x2x1", "latex"),
}


def golden_figure(case):
    c = CASES[case]
    title = {"sm80_16x8x16_f32f16_atom": "SM80_16x8x16_F32F16F16F32_TN",
             "sm80_16x8x16_f32f16_2x2x1": "SM80_16x8x16_F32F16F16F32_TN, atom layout (2,2,1)"}[case]
    return R.mma_tv_figure(c["tile"], c["C"], c["A"], c["B"], title=title)


@pytest.mark.parametrize("fname", sorted(GOLDENS))
def test_golden(fname):
    case, fmt = GOLDENS[fname]
    got = R.render(golden_figure(case), fmt)
    path = GOLDEN / fname
    if REGEN:
        path.write_text(got, encoding="utf-8")
        return
    assert path.exists(), f"missing golden {path}; run CUTELAB_REGEN_GOLDEN=1 python -m pytest {__file__}"
    assert got == path.read_text(encoding="utf-8"), f"{fname} changed; regenerate and look at it to accept"


# --------------------------------------------------------------------------- cutelab's own TiledMma


def _tiled(name):
    import cutelab as cute
    from cutelab.nvgpu import OperandMajorMode, warp, warpgroup

    K, SMEM, RMEM = OperandMajorMode.K, warpgroup.OperandSource.SMEM, warpgroup.OperandSource.RMEM
    f16, f32 = cute.Float16, cute.Float32
    op = warp.MmaF16BF16Op(f16, f32, (16, 8, 16))
    return {
        "sm80_16x8x16_f32f16_atom": lambda: cute.make_tiled_mma(op),
        "sm80_16x8x16_f32f16_2x2x1": lambda: cute.make_tiled_mma(op, (2, 2, 1)),
        "sm80_16x8x16_f32f16_2x2x1_perm_32x32x16": lambda: cute.make_tiled_mma(op, (2, 2, 1), (32, 32, 16)),
        "sm80_16x8x8_f16f16_1x2x1": lambda: cute.make_tiled_mma(warp.MmaF16BF16Op(f16, f16, (16, 8, 8)), (1, 2, 1)),
        "sm90_64x8x16_f16_ss": lambda: cute.make_tiled_mma(warpgroup.MmaF16BF16Op(f16, f16, (64, 8, 16), SMEM, K, K)),
        "sm90_64x8x16_f32f16_rs": lambda: cute.make_tiled_mma(warpgroup.MmaF16BF16Op(f16, f32, (64, 8, 16), RMEM, K, K)),
    }[name]()


@pytest.mark.parametrize("name", sorted(CASES))
def test_tiled_mma_is_cute(name):
    """cutelab's make_tiled_mma, drawn, is CuTe C++'s print_latex of the same TiledMMA."""
    f = R.mma_figure(_tiled(name))
    assert normalized_latex(R.render(f, "latex")) == normalized_latex(CASES[name]["latex"])
    assert any(n.startswith("thr_layout_vmnk = ") for n in f.notes)


@pytest.mark.parametrize("case", ["sm80_16x8x16_f32f16_atom", "sm80_16x8x16_f32f16_2x2x1"])
def test_tiled_mma_matches_golden_cells(case):
    a, b = R.mma_figure(_tiled(case)), golden_figure(case)
    for ga, gb in zip(a.grids, b.grids):
        assert (ga.keys == gb.keys).all() and (ga.labels == gb.labels).all() and (ga.tips == gb.tips).all()


def test_atom_is_drawn_as_one_atom_tiled_mma():
    import cutelab as cute
    from cutelab.nvgpu import warp

    atom = cute.make_mma_atom(warp.MmaF16BF16Op(cute.Float16, cute.Float32, (16, 8, 16)))
    f = R.mma_figure(atom)
    assert normalized_latex(R.render(f, "latex")) == normalized_latex(CASES["sm80_16x8x16_f32f16_atom"]["latex"])


def test_too_big_to_label_is_coloured_only():
    # C of 128x128 = 16384 cells > LABEL_LIMIT: no labels anywhere (the panels share one cell size)
    f = R.mma_tv_figure((128, 128, 1), "(128,128):(1,128)", "(128,1):(1,0)", "(128,128):(0,1)")
    assert all(g.labels is None for g in f.grids)
    assert any("cells are coloured by thread, not labelled" in n for n in f.notes)
    gc, ga, gb = svgread.read(R.render(f, "svg"))
    assert not gc.labels and gc.fills[5, 7] == gc.fills[5, 0] != gc.fills[6, 0]  # row m is thread m
    assert ga.fills[5, 0] == gc.fills[5, 0] and len(set(gb.fills.ravel())) == 1  # B: first holder T0 everywhere
    tex = R.render(f, "latex")  # LaTeX still labels every cell, as CuTe does, in the light encoding
    assert "\\fill[fill={rgb" in tex and "{\\cutelabL{T127}\\cutelabL{V127}}" in tex
    assert R.render(f, "text").startswith("TiledMMA tile (M,N,K) = (128,128,1)")


@pytest.mark.parametrize("name", sorted(CASES))
def test_cute_colors_latex_is_byte_for_byte(name):
    """With CuTe's colours the LaTeX is CuTe's print_latex output exactly, comment lines aside."""
    c = CASES[name]
    f = R.mma_tv_figure(c["tile"], c["C"], c["A"], c["B"], cute_colors=True)
    strip = lambda t: [ln for ln in t.split("\n") if not ln.startswith("%")]  # noqa: E731
    assert strip(R.render(f, "latex")) == strip(c["latex"])


# --------------------------------------------------------------------------- big TiledMMAs: colour by warp, atom, thread mod 8

def _sm80(atoms, perm=None):
    import cutelab as cute

    return cute.make_tiled_mma(cute.nvgpu.warp.MmaF16BF16Op(cute.Float16, cute.Float32, (16, 8, 16)), atoms, perm)


@pytest.mark.parametrize("color, per, n", [("warp", 32, 16), ("atom", 32, 16), ("mod8", None, 8)])
def test_colour_by_warp_atom_or_thread_mod_8(color, per, n):
    import numpy as np

    f = R.mma_figure(_sm80((4, 4, 1), (128, 128, 32)), color=color)
    assert [g.shape for g in f.grids] == [(128, 128), (128, 32), (32, 128)]
    thr = f.meta["labels"][0]  # 16384 cells: too many to label in SVG, kept for LaTeX
    thr = np.vectorize(lambda s: int(s.split("\n")[0][1:]))(thr)
    C = f.grids[0]
    assert np.array_equal(C.keys, thr % 8 if per is None else thr // per)
    assert len(C.colors) == n and len(C.legend) == n  # 16 warps, not 512 cycling thread colours
    assert np.array_equal(C.groups, thr // 32)  # thick lines between the 16 atoms
    assert any("coloured by" in x for x in f.notes)
    svg = R.render(f, "svg")
    assert 'class="borders"' in svg and svg.count('class="cells"') <= 3 * 16


def test_colour_by_thread_is_unchanged():
    f, g = R.mma_figure(_sm80((2, 2, 1))), R.mma_figure(_sm80((2, 2, 1)), color="thread")
    assert R.render(f, "svg") == R.render(g, "svg") and f.grids[0].groups is None
    with pytest.raises(LayoutError, match="color must be one of"):
        R.mma_figure(_sm80((2, 2, 1)), color="rainbow")


def test_wgmma_smem_operands_say_they_are_read_through_a_descriptor():
    import cutelab as cute
    import numpy as np
    from cutelab.nvgpu import OperandMajorMode as OM
    from cutelab.nvgpu import warpgroup

    op = warpgroup.MmaF16BF16Op(cute.Float16, cute.Float32, (64, 64, 16), warpgroup.OperandSource.SMEM, OM.K, OM.K)
    f = R.mma_figure(cute.make_tiled_mma(op, (2, 1, 1)), color="atom")
    C, A, B = f.grids
    for g in (A, B):
        assert g.title.endswith("read through a descriptor by the whole warpgroup")
        assert set(np.unique(g.labels)) == {"smem"}  # not 1024 "T0" cells
    assert np.array_equal(A.keys[:, 0], np.repeat([0, 1], 64))  # the rows each warpgroup reads
    assert str(B.tips[0, 0]) == "2 warpgroups (the first: 0), each through its descriptor"
    assert C.subgroups is not None and np.unique(C.subgroups).size == 8  # warp lines inside the 128-thread atoms
    assert any("through a matrix descriptor" in n for n in f.notes)
    assert "T0" in f.meta["labels"][1][0, 0]  # the LaTeX still writes CuTe's T#V#
    rs = warpgroup.MmaF16BF16Op(cute.Float16, cute.Float32, (64, 64, 16), warpgroup.OperandSource.RMEM, OM.K, OM.K)
    f = R.mma_figure(cute.make_tiled_mma(rs))
    assert "descriptor" not in f.grids[1].title and "descriptor" in f.grids[2].title  # A in registers, B in smem
