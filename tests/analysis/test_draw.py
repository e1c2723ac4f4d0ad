"""Pictures of one instruction: the bank map (shared) and the sectors (global), in every back end."""

from __future__ import annotations

import numpy as np
import pytest

from cutelab import render as R
from cutelab.analysis import AccessTrace, analyze, analyze_tv
from cutelab.analysis.draw import access_figure, bank_figure, sector_figure
from cutelab.errors import LayoutError

LANES = np.arange(32)


def test_bank_map_rows_are_wavefronts_and_conflicts_are_marked():
    r = analyze_tv("(32,8):(1,64)", "S<1,3,3> o 0 o (64,64):(64,1)", "f16", "shared")
    f = bank_figure(r)
    assert len(f.grids) == 4  # four quarter-warp phases
    g = f.grids[0]
    assert g.shape == (4, 32) and g.title == "phase 0 (lanes 0-7): 4 wavefronts, 3 conflicts"
    # every (bank, wavefront) cell holds one word; row 0 is key 0, rows below are conflicts (key 1)
    assert set(g.keys[0][g.keys[0] >= 0].tolist()) == {0} and set(g.keys[1:][g.keys[1:] >= 0].tolist()) == {1}
    assert str(g.labels[1, 0]) == "L2\n@256"
    # the cells of a phase are exactly the words its lanes touch
    assert int((g.keys >= 0).sum()) == 8 * 4
    assert f.notes[0] == r.explain(0)


def test_bank_map_broadcast_label():
    r = analyze(AccessTrace(np.zeros((1, 32), int), 4, "shared"))
    g = bank_figure(r).grids[0]
    assert g.shape == (1, 32) and str(g.labels[0, 0]) == "L0..31\n@0"


def test_lane_labels():
    from cutelab.analysis.draw import _lanes_label
    assert [_lanes_label(x) for x in ([3], [4, 5], [0, 1, 2, 3], [1, 5, 9])] == ["L3", "L4,5", "L0..3", "L1+2"]


def test_sector_map():
    r = analyze(AccessTrace(LANES[None, :] * 8, 4, "global"))  # every other word: 8 sectors, half used
    f = sector_figure(r)
    g = f.grids[0]
    assert g.shape == (2, 32)
    assert (g.keys[:, 0::2] == 0).all() and (g.keys[:, 1::2] == 1).all()
    assert str(g.labels[0, 2]) == "L1" and str(g.labels[0, 1]) == "-"
    assert (np.diff(g.groups[0]) != 0).sum() == 3  # borders between the 4 sectors of a line
    assert "50% efficiency" in f.notes[0]


@pytest.mark.parametrize("fmt", ["text", "svg", "latex", "html"])
def test_every_back_end_draws_them(fmt):
    rs = analyze_tv("(32,8):(1,64)", "(64,64):(64,1)", "f16", "shared")
    rg = analyze_tv("(32,16):(16,1)", "(1,512):(8192,1)", "bf16", "global")
    for f in (access_figure(rs), access_figure(rg)):
        out = R.render(f, fmt)
        assert isinstance(out, str) and "warp 0, instruction 0" in out


def test_errors():
    rg = analyze(AccessTrace(LANES[None, :] * 4, 4, "global"))
    with pytest.raises(LayoutError, match="sector_figure"):
        bank_figure(rg)
    with pytest.raises(LayoutError, match=r"instruction 3 out of range \[0, 1\)"):
        sector_figure(rg, 3)
    with pytest.raises(LayoutError, match="expected an AccessReport"):
        access_figure("not a report")
