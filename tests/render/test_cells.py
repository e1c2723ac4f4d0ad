"""show_cells and `--cells`: what labelled cells show (value, index, coordinate) in the static outputs."""

from __future__ import annotations

import numpy as np
import pytest

from cutelab import int_tuple as it
from cutelab import render as R
from cutelab.cli import main
from cutelab.layout import Layout


def test_index_and_coordinate_of_a_hierarchical_layout():
    L = Layout.parse("((2,2),(2,3)):((2,12),(1,4))")
    idx = R.show_cells(R.layout_figure(L), "index").grids[0].labels
    assert idx.tolist() == [[str(r + 4 * c) for c in range(6)] for r in range(4)]
    crd = R.show_cells(R.layout_figure(L), "coord").grids[0].labels
    for r in range(4):
        for c in range(6):
            assert crd[r, c] == "(" + it.tuple_str(it.idx2crd(r, (2, 2))) + "," + it.tuple_str(it.idx2crd(c, (2, 3))) + ")"
    # value: unchanged
    assert R.show_cells(R.layout_figure(L), "value").grids[0].labels[3, 5] == str(L(3 + 4 * 5))


def test_tv_index_and_mma_panels_without_an_index_keep_their_values():
    f = R.show_cells(R.tv_figure("((2,2),(2,3)):((2,12),(1,4))", (4, 6)), "index")
    assert f.grids[0].labels[2, 3] == str(2 + 4 * 3)
    import cutelab as cute

    mma = cute.make_tiled_mma(cute.nvgpu.warp.MmaF16BF16Op(cute.Float16, cute.Float32, (16, 8, 16)))
    before = [g.labels.copy() for g in R.mma_figure(mma).grids]
    after = [g.labels for g in R.show_cells(R.mma_figure(mma), "index").grids]
    assert all(np.array_equal(a, b) for a, b in zip(after, before))
    coords = R.show_cells(R.mma_figure(mma), "coord").grids[0].labels
    assert coords[3, 5] == "(3,5)"


def test_bad_choice_is_refused():
    with pytest.raises(ValueError, match="show must be one of"):
        R.show_cells(R.layout_figure("(2,2):(1,2)"), "offset")


def test_cli_cells_option(tmp_path, capsys):
    assert main(["show", "(2,3):(3,1)", "--cells", "index", "--no-color"]) == 0
    out = capsys.readouterr().out
    assert "| 0 | 2 | 4 |" in out and "| 1 | 3 | 5 |" in out
    p = tmp_path / "x.html"
    assert main(["show", "(2,3):(3,1)", "--cells", "coord", "-o", str(p)]) == 0
    html = p.read_text()
    assert 'data-show="coord"' in html and ">5<" in html  # the file keeps the values; its toggle opens on coord
    with pytest.raises(SystemExit) as e:
        main(["show", "(2,3):(3,1)", "--cells", "bogus"])
    assert e.value.code == 2 and "invalid choice: 'bogus'" in capsys.readouterr().err
