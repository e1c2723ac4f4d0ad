"""The Blackwell pictures (render/tcgen05.py, render/tma.py) read back from their SVG and checked cell by
cell against rules stated here independently of the drawing code: the tensor-memory data-path layouts
of the UMMA accumulator (PTX ISA, "Matrix fragments for tcgen05.mma"), the warp <-> lane-quarter rule of
tcgen05.ld/st, PTX's thread/register layouts of the 32x32b and 16x256b shapes, TMA's row-major box with
its 16-byte swizzle, and CuTe's multicast split. The CTAs of the operand cells are checked against the
TV layouts by evaluating them (tvcheck.holders)."""

from __future__ import annotations

import numpy as np
import pytest

import cutelab as cute
from cutelab import render as R
from cutelab.cli import main
from cutelab.errors import LayoutError, TensorError
from cutelab.nvgpu import OperandMajorMode, cpasync, tcgen05, warpgroup

from . import svgread
from .tvcheck import holders

K, MN = OperandMajorMode.K, OperandMajorMode.MN


def _mma(m, n, cg=1, a_src="smem", ab=cute.Float16, acc=cute.Float32):
    op = tcgen05.MmaF16BF16Op(ab, acc, (m, n), tcgen05.CtaGroup.ONE if cg == 1 else tcgen05.CtaGroup.TWO,
                              tcgen05.OperandSource.SMEM if a_src == "smem" else tcgen05.OperandSource.TMEM, K, K)
    return cute.make_tiled_mma(op)


def _label_grid(g: svgread.ReadGrid) -> np.ndarray:
    out = np.full((g.rows, g.cols), "", dtype=object)
    for (r, c), s in g.labels.items():
        out[r, c] = s
    return out


def _acc_lane(m: int, rows: int) -> int:
    """The TMEM lane of accumulator row m of a 1-CTA UMMA (PTX: M=128 uses lane m; M=64 uses lanes 0-15 of each
    of the four lane quarters)."""
    return m if rows == 128 else (m % 16) + 32 * (m // 16)


def _acc_cell(m: int, n: int, rows: int, cg: int, N: int) -> tuple[int, int]:
    """(lane, 32-bit column) of f32 accumulator element (m, n) of one CTA's ``rows`` rows: as _acc_lane, except
    that a CTA of a 2-CTA M=128 UMMA (64 rows) keeps the second half of N in lanes 64-127 (PTX's M=128
    cta_group::2 data path; CuTe's tmem_frg_2sm)."""
    if cg == 2 and rows == 64:
        return m + 64 * (n // (N // 2)), n % (N // 2)
    return _acc_lane(m, rows), n


@pytest.mark.parametrize("m,n,cg,a_src", [(64, 16, 1, "smem"), (128, 16, 1, "tmem"), (128, 32, 2, "smem"),
                                          (256, 16, 2, "tmem")])
def test_umma_cells_follow_the_tmem_datapath_and_the_tv_layouts(m, n, cg, a_src):
    mma = _mma(m, n, cg, a_src)
    fig = R.umma_figure(mma)
    gc, ga, gb = svgread.read(R.render(fig, "svg"))
    assert (gc.rows, gc.cols, ga.rows, ga.cols, gb.rows, gb.cols) == (m, n, m, 16, 16, n)
    lab_c, lab_a, lab_b = _label_grid(gc), _label_grid(ga), _label_grid(gb)
    per_cta = m // cg
    # C: CTA from evaluating the TV layout; lane and column from PTX's data-path layout (f32: one column each)
    cta_of = {mn: {t for t, _ in tv} for mn, tv in holders(mma.tv_layout_C_tiled, m).items()}
    for mm in range(m):
        for nn in range(n):
            assert cta_of[(mm, nn)] == {mm // per_cta}
            lane, col = _acc_cell(mm % per_cta, nn, per_cta, cg, n)
            assert lab_c[mm, nn] == f"L{lane}\nc{col}", (mm, nn)
    # keys: the colour of a C cell says its CTA and lane quarter (the warp that may read it)
    quarter = np.array([[_acc_cell(mm % per_cta, nn, per_cta, cg, n)[0] // 32 for nn in range(n)] for mm in range(m)])
    cta = np.arange(m)[:, None] // per_cta
    assert np.array_equal(gc.keys, cta * 4 + quarter)
    # A: from smem (one CTA each, half the rows in a pair) or TMEM (lane m, two f16 a 32-bit column)
    a_cta = {mn: {t for t, _ in tv} for mn, tv in holders(mma.tv_layout_A_tiled, m).items()}
    for mm in range(m):
        for k in range(16):
            assert a_cta[(mm, k)] == {mm // per_cta}
            if a_src == "tmem":
                assert lab_a[mm, k] == f"L{mm % per_cta}\nc{k // 2}"
            else:
                assert lab_a[mm, k] == ("smem" if cg == 1 else f"smem\nCTA{mm // per_cta}")
    # B (drawn K x N): each CTA of a pair holds N/2 columns of B in its shared memory
    b_cta = {mn: {t for t, _ in tv} for mn, tv in holders(mma.tv_layout_B_tiled, n).items()}
    for nn in range(n):
        for k in range(16):
            assert b_cta[(nn, k)] == {nn // (n // cg)}
            assert lab_b[k, nn] == ("smem" if cg == 1 else f"smem\nCTA{nn // (n // cg)}")


def test_umma_picture_refuses_other_mmas_and_is_what_jupyter_shows():
    with pytest.raises(LayoutError, match="tcgen05"):
        R.umma_figure(cute.make_tiled_mma(cute.nvgpu.warp.MmaF16BF16Op(cute.Float16, cute.Float32, (16, 8, 16))))
    mma = _mma(64, 8)
    svg = mma._repr_svg_()
    assert svg == R.render(R.umma_figure(mma), "svg")
    assert "tensor memory" in cute.make_mma_atom(mma.op)._repr_html_()


def _tmem(m, n_tile, copy, rep, store=False, mma_n=None):
    mma = _mma(m, mma_n or min(n_tile, 256))
    cls = getattr(tcgen05, ("St" if store else "Ld") + copy + "Op")
    return R.tmem_copy_for(mma, (m, n_tile), cls(getattr(tcgen05.Repetition, rep))), mma


@pytest.mark.parametrize("m,n,copy,rep,store", [(128, 128, "32x32b", "x8", False), (128, 64, "16x256b", "x2", False),
                                                (64, 128, "16x64b", "x4", True), (128, 64, "16x128b", "x4", False),
                                                (128, 32, "16x32bx2", "x2", True)])
def test_tmem_warps_touch_only_their_lane_quarter(m, n, copy, rep, store):
    (tc, acc), _ = _tmem(m, n, copy, rep, store, mma_n=64 if m == 64 else None)
    fig = R.tmem_figure(tc, acc)
    g1 = svgread.read(R.render(fig, "svg"))[0]
    assert (g1.rows, g1.cols) == (128, 512)
    # the accumulator's cells: every lane the UMMA writes (PTX data path), columns 0..n-1 (f32: one each)
    lanes = sorted({_acc_lane(mm, m) for mm in range(m)})
    if m == 64:  # two 64-row tiles interleave: the second takes lanes 16-31 of each quarter
        lanes = list(range(128))
        cols = n // 2
    else:
        cols = n
    want = np.full((128, 512), -1, dtype=np.int64)
    for ln in lanes:
        want[ln, :cols] = ln // 32  # warp w may touch only lanes 32*(w%4) .. 32*(w%4)+31
    assert np.array_equal(np.where(g1.keys == -99, -1, g1.keys), want)
    cells = R.tcgen05.tmem_cells(tc, acc)
    for w, ls in cells["lanes"].items():
        assert set(ls) <= set(range(32 * (w % 4), 32 * (w % 4) + 32)), w
    assert sorted(cells["lanes"]) == [0, 1, 2, 3]


def test_tmem_instruction_panels_follow_ptx_fragments():
    (tc, acc), _ = _tmem(128, 128, "32x32b", "x4")
    g2 = svgread.read(R.render(R.tmem_figure(tc, acc), "svg"))[1]
    assert (g2.rows, g2.cols) == (32, 4)
    for ln in range(32):  # 32x32b: thread t holds lane t, register v holds column v
        for c in range(4):
            assert g2.labels[(ln, c)] == f"T{ln}\nV{c}"
    (tc, acc), _ = _tmem(128, 64, "16x256b", "x2")
    g2 = svgread.read(R.render(R.tmem_figure(tc, acc), "svg"))[1]
    assert (g2.rows, g2.cols) == (16, 16)
    for r in range(16):  # 16x256b: four threads a lane, two registers each; lanes 8-15 continue with V2, V3
        for c in range(16):
            t, v = 4 * (r % 8) + (c % 8) // 2, (c % 2) + 2 * (r // 8) + 4 * (c // 8)
            assert g2.labels[(r, c)] == f"T{t}\nV{v}", (r, c)


def test_tmem_picture_errors():
    mma = _mma(128, 64)
    with pytest.raises(TensorError, match="smaller repetition"):
        R.tmem_copy_for(mma, (128, 64), tcgen05.Ld32x32bOp(tcgen05.Repetition.x128))
    with pytest.raises(LayoutError, match="TMEM load or store"):
        R.tmem_figure(mma, mma.make_fragment_C(mma.partition_shape_C((128, 64))))


def _tma_atom(rows, cols, tile, kind=warpgroup.SmemLayoutAtomKind.K_SW128):
    A = cute.make_tensor(np.zeros(rows * cols, np.float16), cute.make_layout((rows, cols), stride=(cols, 1)))
    sl = cute.tile_to_shape(warpgroup.make_smem_layout_atom(kind, cute.Float16), tile, (0, 1))
    return cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), A, sl, tile)[0]


@pytest.mark.parametrize("mc,cta", [(1, (0, 0)), (2, (1, 1)), (4, (1, 0))])
def test_tma_box_tiles_slices_and_swizzle(mc, cta):
    atom = _tma_atom(64, 128, (32, 64))
    g1, g2 = svgread.read(R.render(R.tma_figure(atom, cta, mc), "svg"))
    assert (g1.rows, g1.cols, g2.rows, g2.cols) == (64, 128, 32, 64)
    lab1 = _label_grid(g1)
    for m in range(64):
        for n in range(128):
            assert lab1[m, n] == str(m * 128 + n)  # the global offset of a row-major tensor
            tile = (m // 32, n // 64)
            if tile == cta:  # CuTe's split: the box's rows cut into mc equal runs, CTA r loads run r
                assert g1.keys[m, n] == 2 + (m % 32) // (32 // mc)
            else:
                assert g1.keys[m, n] == (tile[0] + tile[1]) % 2
    lab2 = _label_grid(g2)
    for m in range(32):  # 128-byte swizzle: row m's 16-byte chunk j lands at chunk j ^ (m % 8)
        for k in range(64):
            a = m * 64 + ((k // 8) ^ (m % 8)) * 8 + k % 8
            assert lab2[a // 64, a % 64] == f"({m},{k})"
            assert g2.keys[a // 64, a % 64] == 2 + m // (32 // mc)


def test_tma_picture_errors():
    atom = _tma_atom(64, 64, (32, 64))
    with pytest.raises(LayoutError, match="outside"):
        R.tma_figure(atom, (2, 0))
    with pytest.raises(LayoutError, match="multicast 3"):
        R.tma_figure(atom, (0, 0), 3)
    with pytest.raises(LayoutError, match="TMA atom"):
        R.tma_figure(_mma(64, 8))


def test_tile_path_follows_one_tile():
    mma = _mma(128, 16)
    fig = R.tile_path_figure(mma, 32)
    g1, g2, g3, g4, g5 = svgread.read(R.render(fig, "svg"))
    # 1: the global A (256, 64) row-major, the tile (0,0) coloured by its UMMA K-block
    assert (g1.rows, g1.cols) == (256, 64)
    for m in (0, 5, 127, 128, 255):
        for k in range(64):
            inside = m < 128 and k < 32
            assert g1.keys[m, k] == (2 + k // 16 if inside else 0)
    # 2: shared memory, 64-byte swizzle (32 f16 a row): chunk j of row m at chunk j ^ ((m // 2) % 4)
    lab2 = _label_grid(g2)
    assert (g2.rows, g2.cols) == (128, 32)
    for m in range(128):
        for k in range(32):
            byte = m * 64 + k * 2
            byte ^= ((byte >> 7) & 3) << 4
            a = byte // 2
            assert lab2[a // 32, a % 32] == f"({m},{k})"
            assert g2.keys[a // 32, a % 32] == 2 + k // 16
    # 3: one descriptor a K-block, 32 bytes (2 units) apart; SW64 K-major: LBO 1, SBO 8 rows * 64 B = 32 units
    lab3 = _label_grid(g3)
    assert [lab3[k, 0] for k in range(2)] == ["K-block 0: start +0 (x16 B)", "K-block 1: start +2 (x16 B)"]
    assert "layout type 4, LBO 1, SBO 32" in g3.title
    # 4: the accumulator: C (m, n) at lane m, column n; 5: tcgen05.ld 32x32b gives it to thread m, register n
    lab4, lab5 = _label_grid(g4), _label_grid(g5)
    for m in range(128):
        for n in range(16):
            assert lab4[m, n] == f"({m},{n})"
            assert lab5[m, n] == f"T{m}\nV{n}"
            assert g5.keys[m, n] == 2 + m // 32


def test_tile_path_errors():
    with pytest.raises(LayoutError, match="multiple of the instruction's K"):
        R.tile_path_figure(_mma(128, 16), 24)
    with pytest.raises(LayoutError, match="1-CTA"):
        R.tile_path_figure(_mma(256, 32, 2), 32)


@pytest.mark.parametrize("argv", [["umma", "--shape", "64x16"], ["tmem", "--copy", "16x256b", "--rep", "x2"],
                                  ["tma", "--tensor", "(128,64):(64,1)", "--multicast", "2"],
                                  ["tile-path", "--shape", "128x16", "--k", "32"]])
def test_cli_writes_the_pictures(argv, tmp_path, capsys):
    out = tmp_path / "pic.svg"
    assert main(argv + ["-o", str(out)]) == 0
    assert out.read_text().startswith("<svg")


@pytest.mark.parametrize("argv,msg", [(["umma", "--shape", "100x64"], "M-mode to be 64 or 128"),
                                      (["tmem", "--rep", "x128"], "smaller repetition"),
                                      (["tma", "--cta", "9,0"], "outside"),
                                      (["tile-path", "--k", "24"], "multiple of the instruction's K"),
                                      (["umma", "--ab", "s8", "--acc", "f32"], "s32")])
def test_cli_errors_are_one_line(argv, msg, tmp_path, capsys):
    assert main(argv + ["-o", str(tmp_path / "x.svg")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("cutelab: error: ") and msg in err and err.count("\n") == 1
