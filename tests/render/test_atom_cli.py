"""`cutelab mma`, `cutelab copy`, `cutelab swizzle`: outputs checked against CuTe C++, one-line errors."""

from __future__ import annotations

import pytest

from cutelab import render as R
from cutelab.cli import build_parser, main

from . import svgread
from .tvcheck import check_grid, cute_cases, normalized_latex

MMA, COPY = cute_cases("mma"), cute_cases("copy")


def run(capsys, *argv):
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.mark.parametrize("argv, case", [
    (["mma", "--op", "sm80_16x8x16", "--ab", "f16", "--acc", "f32"], "sm80_16x8x16_f32f16_atom"),
    (["mma", "--op", "sm80_16x8x16", "--ab", "f16", "--acc", "f32", "--atoms", "2x2x1"], "sm80_16x8x16_f32f16_2x2x1"),
    (["mma", "--op", "sm80_16x8x16", "--atoms", "2,2,1", "--perm", "32x32x16"], "sm80_16x8x16_f32f16_2x2x1_perm_32x32x16"),
    (["mma", "--op", "sm80_16x8x8", "--acc", "f16", "--atoms", "(1,2,1):(0,1,0)"], "sm80_16x8x8_f16f16_1x2x1"),
    (["mma", "--op", "sm90_64x8x16", "--acc", "f16", "--a-src", "smem"], "sm90_64x8x16_f16_ss"),
    (["mma", "--op", "sm90_64x8x16", "--a-src", "rmem", "--a-major", "k"], "sm90_64x8x16_f32f16_rs"),
    (["copy", "--ldmatrix", "x4"], "ldsm_x4_32x1_1x8"),
    (["copy", "--ldmatrix", "x4", "--trans", "--for", "A", "--op", "sm80_16x8x16"], "ldsm_x4_trans_a"),
    (["copy", "--bits", "64", "--thr", "(4,8):(8,1)", "--val", "(1,4)"], "universal_4x8_1x4"),
])
def test_latex_is_cute(tmp_path, capsys, argv, case):
    out = tmp_path / "pic.tex"
    rc, _, err = run(capsys, *argv, "-o", str(out))
    assert rc == 0 and err == ""
    want = (MMA if argv[0] == "mma" else COPY)[case]["latex"]
    assert normalized_latex(out.read_text()) == normalized_latex(want)


@pytest.mark.parametrize("argv, case", [
    (["mma", "--op", "sm80_16x8x16", "--atoms", "2x2x1"], "sm80_16x8x16_f32f16_2x2x1"),
    (["copy", "--ldmatrix", "x4", "--trans", "--for", "A", "--op", "sm80_16x8x16"], "ldsm_x4_trans_a"),
])
def test_cute_colors_tex_is_cute_byte_for_byte(tmp_path, capsys, argv, case):
    out = tmp_path / "pic.tex"
    assert run(capsys, *argv, "--cute-colors", "-o", str(out))[0] == 0
    want = (MMA if argv[0] == "mma" else COPY)[case]["latex"]
    strip = lambda t: [ln for ln in t.split("\n") if not ln.startswith("%")]  # noqa: E731
    assert strip(out.read_text()) == strip(want)


def test_mma_svg_reads_back(tmp_path, capsys):
    out = tmp_path / "mma.svg"
    assert run(capsys, "mma", "--op", "sm80_16x8x16", "--atoms", "2x2x1", "-o", str(out))[0] == 0
    c = MMA["sm80_16x8x16_f32f16_2x2x1"]
    gc, ga, gb = svgread.read(out.read_text())
    check_grid(gc, c["C"], 32, 16)
    check_grid(ga, c["A"], 32, 16)
    check_grid(gb, c["B"], 16, 16, transposed=True)


def test_mma_color_by_warp(tmp_path, capsys):
    out = tmp_path / "mma.svg"
    argv = ["mma", "--op", "sm80_16x8x16", "--atoms", "4x4x1", "--perm", "128x128x32", "--color-by", "warp"]
    assert run(capsys, *argv, "-o", str(out))[0] == 0
    svg = out.read_text()
    assert "warp 15: T480-T511" in svg and 'class="borders"' in svg and ">T511<" not in svg  # no legend of 512 threads


def test_universal_mma(tmp_path, capsys):
    out = tmp_path / "fma.svg"
    assert run(capsys, "mma", "--op", "universal", "--atoms", "4x8x1", "-o", str(out))[0] == 0
    gc, ga, gb = svgread.read(out.read_text())
    assert all(gc.labels[(m, n)] == f"T{m + 4 * n}\nV0" for m in range(4) for n in range(8))
    assert ga.tips[(2, 0)] == "V0: " + ",".join(f"T{2 + 4 * n}" for n in range(8))  # row 2 of A: the 8 threads of row 2


def test_stmatrix_and_text(capsys):
    rc, out, err = run(capsys, "copy", "--stmatrix", "x2")
    assert rc == 0 and "source (M,N) = (32,4)" in out and "destination (M,N) = (32,4)" in out


def test_swizzle(capsys, tmp_path):
    rc, out, err = run(capsys, "swizzle", "S<3,4,3> o 0 o (8,64):(64,1)", "--elem-bits", "16")
    assert rc == 0 and out.startswith("S<3,4,3> o 0 o (8,64):(64,1), 16-bit elements, by bank")
    assert "|    0 b0 |    1 b0 |    2 b1 |" in out
    svg = tmp_path / "atom.svg"
    assert run(capsys, "swizzle", "--atom", "K_SW128", "--elem-bits", "16", "-o", str(svg))[0] == 0
    (g,) = svgread.read(svg.read_text())
    want = R.swizzle_figure("S<3,3,3> o 0 o (8,64):(64,1)").grids[0].labels
    assert all(g.labels[(r, c)] == want[r, c] for r in range(8) for c in range(64))
    rc, out, _ = run(capsys, "swizzle", "S<3,4,3> o 0 o (8,64):(64,1)", "--ptr-swizzle")
    assert rc == 0 and "(swizzle on byte addresses)" in out


@pytest.mark.parametrize("argv, msg", [
    (["mma", "--op", "sm80_16x8x17"], "expects the 'shape_mnk' Op parameter"),
    (["mma", "--op", "16x8x16"], "--op must look like sm80_16x8x16"),
    (["mma", "--op", "sm80_16x8x16", "--ab", "s8"], "has no warp MMA"),
    (["mma", "--op", "sm80_16x8x16", "--a-src", "smem"], "are for sm90 wgmma"),
    (["mma", "--op", "sm90_64x60x16"], "N-mode"),
    (["mma", "--op", "sm80_16x8x16", "--atoms", "2x2"], "--atoms must be three sizes"),
    (["mma", "--op", "sm80_16x8x4", "--acc", "f16"], "tf32 MMAs accumulate in f32"),
    (["mma", "--op", "universal", "--ab", "f16"], "takes one type"),
    (["mma", "--op", "universal", "--acc", "s32"], "MmaUniversalOp(Int32)"),
    (["copy", "--bits", "64"], "needs --thr and --val"),
    (["copy", "--ldmatrix", "x4", "--for", "A"], "--for needs the MMA"),
    (["copy", "--ldmatrix", "x4", "--for", "A", "--op", "sm80_16x8x16", "--thr", "(32,1)"], "leave out --thr/--val"),
    (["copy", "--ldmatrix", "x4", "--thr", "(16,1)"], "too few threads"),
    (["copy", "--bits", "48", "--thr", "4", "--val", "1"], "power of two"),
    (["copy", "--trans", "--bits", "16", "--thr", "4", "--val", "1"], "--trans is for"),
    (["copy", "--ldmatrix", "x4", "--op", "sm80_16x8x16"], "without --for"),
    (["swizzle"], "swizzle needs LAYOUT"),
    (["swizzle", "S<3,4> o 0 o 8:1"], "cannot parse"),
    (["swizzle", "(4,4):(4,1)", "--elem-bits", "12"], "power of two"),
    (["swizzle", "--atom", "K_SW128", "--elem-bits", "4"], "--atom needs --elem-bits"),
    (["swizzle", "(4,4):(4,1)", "--atom", "K_SW32"], "not both"),
    (["swizzle", "(4,4):(4,1)", "--ptr-swizzle"], "no swizzle"),
])
def test_bad_input_is_one_line_exit_2(capsys, argv, msg):
    rc, out, err = run(capsys, *argv)
    assert rc == 2 and out == ""
    assert err.startswith("cutelab: error: ") and err.count("\n") == 1 and msg in err


@pytest.mark.parametrize("cmd, words", [
    ("mma", ["--op", "--ab", "--acc", "--atoms", "--perm", "--a-src", "--a-major", "--b-major", "--cute-colors"]),
    ("copy", ["--ldmatrix", "--stmatrix", "--bits", "--trans", "--thr", "--val", "--for", "--elem", "--cute-colors"]),
    ("swizzle", ["--elem-bits", "--atom", "--ptr-swizzle"]),
])
def test_help_documents_options(cmd, words):
    sub = next(a for a in build_parser()._actions if a.dest == "cmd").choices[cmd]
    text = sub.format_help()
    assert all(w in text for w in words)
