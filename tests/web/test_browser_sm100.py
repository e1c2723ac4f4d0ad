"""The playground's Blackwell tabs in headless Chromium: what the page draws and hovers, checked against
PTX's rules stated here (the cells of every tab's default picture are compared with the server's in
test_browser.py's every-tab test and test_site.py)."""

from __future__ import annotations

import pytest

from .test_browser import goto, grid_cells, hover

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def test_tmem_tab_draws_the_16x256b_fragment_and_hovers_warps(page, server):
    goto(page, server, "?tab=tmem&shape=128x64&tile=128x64&copy=16x256b&rep=x2")
    drawn = grid_cells(page, panel=1)
    assert (drawn["rows"], drawn["cols"]) == (16, 16)
    want = {f"{r},{c}": f"T{4 * (r % 8) + (c % 8) // 2}\nV{(c % 2) + 2 * (r // 8) + 4 * (c // 8)}"
            for r in range(16) for c in range(16)}  # four threads a lane, lanes 8-15 continue with V2, V3
    assert drawn["cells"] == want
    tip = hover(page, 8, 2, panel=1)
    assert (tip["thread"], tip["value"]) == ("1", "2")
    # the whole tensor memory: a cell of lane 70 belongs to warp 2 (warp w: lanes 32*(w%4)..+31)
    tip = hover(page, 70, 20, panel=0)
    lane = int(tip["coord"].strip("()").split(",")[0])
    assert tip["colour"] == f"warp {lane // 32}: lanes {32 * (lane // 32)}-{32 * (lane // 32) + 31}"


def test_umma_tab_labels_c_with_its_tmem_lane_and_column(page, server):
    goto(page, server, "?tab=umma&shape=64x16")
    drawn = grid_cells(page, panel=0)
    assert (drawn["rows"], drawn["cols"]) == (64, 16)
    # M = 64: rows 16i..16i+15 sit in lanes 32i..32i+15 (half of each lane quarter); f32: column n
    assert all(drawn["cells"][f"{m},{n}"] == f"L{m % 16 + 32 * (m // 16)}\nc{n}" for m in range(64) for n in range(16))
    assert hover(page, 16, 3, panel=0)["colour"] == "lanes 32-63 (warp w, w % 4 == 1)"
