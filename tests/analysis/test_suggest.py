"""suggest_swizzle: the search finds the known swizzles, says 'none found' when none helps, and the CLI prints it.

Every claim about a candidate is checked here by replaying the access through the swizzled
layout with the analysis directly (not through the search's own bookkeeping).
"""

from __future__ import annotations

import pytest

from cutelab import analysis as A
from cutelab.analysis.suggest import MAX_SWIZZLE_BITS, suggest_swizzle, swizzle_candidates
from cutelab.cli import main
from cutelab.errors import LayoutError
from cutelab.swizzle import make_composed_layout


def _conflicts_ldsm(layout, num=4, trans=False):
    return A.analyze(A.ldmatrix_trace(layout, "f16", num, trans)).totals()


def test_fp16_128B_k_major_ldmatrix_tile_gets_swizzle_333():
    # 64 halves = 128 bytes per row, rows K-major: CuTe's SM80 GEMMs use Swizzle<3,3,3> on it
    s = suggest_swizzle("(64,64):(64,1)", "f16", ldmatrix=4)
    assert s.found
    assert str(s.best.swizzle) == "S<3,3,3>"
    assert s.best.byte_swizzle(16) == "S<3,4,3>"  # the same swizzle on byte addresses (smem atoms)
    before = _conflicts_ldsm("(64,64):(64,1)")
    after = _conflicts_ldsm("S<3,3,3> o 0 o (64,64):(64,1)")
    assert s.before_totals["conflicts"] == before["conflicts"] == 448
    assert s.best.totals == after and after["conflicts"] == 0 and after["wavefronts"] == after["ideal_wavefronts"]
    # every candidate listed really needs fewer wavefronts than no swizzle, best first
    waves = [c.totals["wavefronts"] for c in s.candidates]
    assert waves == sorted(waves) and max(waves) < before["wavefronts"]
    for c in s.candidates[:5]:
        assert _conflicts_ldsm(c.layout) == c.totals


def test_ldmatrix_trans_of_an_mn_major_tile_and_the_8_row_8x64_atom():
    s = suggest_swizzle("(64,64):(1,64)", "f16", ldmatrix=4, trans=True)
    assert str(s.best.swizzle) == "S<3,3,3>" and s.best.totals["conflicts"] == 0
    s = suggest_swizzle("(8,64):(64,1)", "f16", ldmatrix=1)  # CuTe's 8x64 K-major atom, one 8x8 matrix at a time
    assert str(s.best.swizzle) == "S<3,3,3>" and s.best.totals["conflicts"] == 0


def test_tv_access_f32_column_is_fixed_by_a_5_bit_swizzle():
    s = suggest_swizzle("(32,32):(32,1)", "f32", tv="(32,1):(1,1)")  # thread t reads row t, column 0
    assert s.before_totals["conflicts"] == 31
    best = s.best
    assert best.totals["conflicts"] == 0
    again = A.analyze_tv("(32,1):(1,1)", best.layout, "f32", "shared").totals()
    assert again == best.totals


def test_tiled_copy_source_side_is_searched():
    import cutelab as cute
    from cutelab.nvgpu import warp

    mma = cute.make_tiled_mma(warp.MmaF16BF16Op(cute.Float16, cute.Float32, (16, 8, 16)), (2, 2, 1))
    tc = cute.make_tiled_copy_A(cute.make_copy_atom(warp.LdMatrix8x8x16bOp(False, 4), cute.Float16), mma)
    s = suggest_swizzle("(32,64):(64,1)", tiled_copy=tc)  # 32x64 A tile, K-major: the copy reads its first 32x16
    before = A.analyze(A.copy_trace(tc, "(32,64):(64,1)")).totals()
    assert s.before_totals == before and before["conflicts"] > 0
    assert s.best.totals["conflicts"] == 0
    assert A.analyze(A.copy_trace(tc, s.best.layout)).totals() == s.best.totals


def test_none_found_is_said_honestly():
    # thread t reads element 48t of a (32,48) row-major f32 tile: a 2-way conflict that no S<B,M,S>
    # inside the tile's 1536 elements removes
    L, tv = "(32,48):(48,1)", "(32,1):(48,1)"
    s = suggest_swizzle(L, "f32", tv=tv)
    base = A.analyze_tv(tv, L, "f32", "shared").totals()
    assert base["conflicts"] > 0
    assert not s.found and s.best is None
    # the check, independently: no candidate within the footprint needs fewer wavefronts
    cos = 31 * 48 + 47 + 1
    import numpy as np
    from cutelab.layout import Layout

    offs = Layout.parse(L).offsets()
    for sw in swizzle_candidates(cos):
        if int(np.max(sw(offs))) >= cos:
            continue
        t = A.analyze_tv(tv, make_composed_layout(sw, 0, Layout.parse(L)), "f32", "shared").totals()
        assert t["wavefronts"] >= base["wavefronts"], sw
    text = "\n".join(s.summary())
    assert "none found" in text
    assert "none found" in s.figure().title


def test_no_conflicts_needs_no_swizzle():
    s = suggest_swizzle("S<1,3,3> o 0 o (16,16):(16,1)", "f16", ldmatrix=4)  # its swizzle is dropped first
    assert s.before_totals == _conflicts_ldsm("(16,16):(16,1)") and s.before_totals["conflicts"] == 4
    s = suggest_swizzle("(32,32):(32,1)", "f32", tv="(32,1):(32,1)")  # a row: conflict-free
    assert s.before_totals["conflicts"] == 0 and not s.found
    assert "no swizzle is needed" in "\n".join(s.summary())


def test_candidates_stay_in_the_footprint_and_are_valid_swizzles():
    cands = swizzle_candidates(4096)
    assert all(c.num_bits <= MAX_SWIZZLE_BITS and c.num_shift >= c.num_bits for c in cands)
    assert all(c.num_bits + c.num_base + c.num_shift <= 12 for c in cands)
    assert any(str(c) == "S<3,3,3>" for c in cands)


@pytest.mark.parametrize("kw, msg", [
    ({}, "exactly one access"),
    ({"tv": "(32,1):(1,1)", "ldmatrix": 4}, "exactly one access"),
    ({"ldmatrix": 3}, "ldmatrix must be 1, 2 or 4"),
])
def test_bad_requests_are_refused(kw, msg):
    with pytest.raises(LayoutError, match=msg):
        suggest_swizzle("(64,64):(64,1)", "f16", **kw)


def test_cli_prints_the_answer_and_draws_before_and_after(tmp_path, capsys):
    out = tmp_path / "s.svg"
    assert main(["suggest-swizzle", "--layout", "(64,64):(64,1)", "--ldmatrix", "x4", "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "S<3,3,3> (on byte addresses S<3,4,3>): 64 wavefronts, 0 conflicts" in text
    svg = out.read_text()
    assert "before: matrix 0" in svg and "after S&lt;3,3,3&gt;: matrix 0" in svg
    assert main(["suggest-swizzle", "--layout", "(64,64):(64,1)"]) == 2
    assert "needs one access" in capsys.readouterr().err


def test_cli_for_an_mma_operand_is_the_tiled_copy_search(capsys):
    import cutelab as cute
    from cutelab.nvgpu import warp

    assert main(["suggest-swizzle", "--layout", "(32,64):(64,1)", "--for", "A", "--ldmatrix", "x4",
                 "--mma", "sm80_16x8x16", "--atoms", "2x2x1"]) == 0
    text = capsys.readouterr().out
    mma = cute.make_tiled_mma(warp.MmaF16BF16Op(cute.Float16, cute.Float32, (16, 8, 16)), (2, 2, 1))
    tc = cute.make_tiled_copy_A(cute.make_copy_atom(warp.LdMatrix8x8x16bOp(False, 4), cute.Float16), mma)
    s = suggest_swizzle("(32,64):(64,1)", tiled_copy=tc)
    assert f"{s.best.swizzle} (on byte addresses S<3,4,3>): {s.best.totals['wavefronts']} wavefronts, 0 conflicts" in text
    assert f"{s.before_totals['conflicts']} bank conflicts" in text
    assert main(["suggest-swizzle", "--layout", "(32,64):(64,1)", "--for", "A", "--mma", "sm80_16x8x16"]) == 2
    assert main(["suggest-swizzle", "--layout", "(64,64):(64,1)", "--ldmatrix", "x4", "--mma", "sm80_16x8x16"]) == 2
