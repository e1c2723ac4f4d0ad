"""Golden files: a few small pictures, byte for byte (text, SVG, LaTeX).

A change to the drawing code that changes these pictures must be looked at and then accepted by
regenerating the files:

    CUTELAB_REGEN_GOLDEN=1 python -m pytest tests/render/test_golden.py

and committing tests/render/golden/ with the change (view the SVGs before you do).
"""

from __future__ import annotations

import os
import pathlib

import pytest

from cutelab import render as R

GOLDEN = pathlib.Path(__file__).parent / "golden"
REGEN = os.environ.get("CUTELAB_REGEN_GOLDEN") == "1"

CASES = {
    "layout_2x3_row_major.txt": lambda: R.render(R.layout_figure("(2,3):(3,1)"), "text"),
    "layout_seed_tv_as_layout.txt": lambda: R.render(R.layout_figure("((2,2),(2,3)):((2,12),(1,4))"), "text"),
    "coords_2x2x2.txt": lambda: R.render(R.coords_figure("(2,2,2):(2,1,4)"), "text"),
    "tv_seed_24.txt": lambda: R.render(R.tv_figure("((2,2),(2,3)):((2,12),(1,4))", (1, 24)), "text"),
    "explain_composition_seed.txt": lambda: R.render(R.explain("composition", "(4,4):(4,1)", "(4,2,2):(2,1,8)"), "text"),
    "layout_2x3_row_major.svg": lambda: R.render(R.layout_figure("(2,3):(3,1)"), "svg"),
    "tv_seed_4x6.svg": lambda: R.render(R.tv_figure("((2,2),(2,3)):((2,12),(1,4))", (4, 6)), "svg"),
    "explain_complement_seed.svg": lambda: R.render(R.explain("complement", "(2,3):(2,4)", 24), "svg"),
    "layout_2x3_row_major.tex": lambda: R.render(R.layout_figure("(2,3):(3,1)"), "latex"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden(name):
    got = CASES[name]()
    path = GOLDEN / name
    if REGEN:
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(got, encoding="utf-8")
        return
    assert path.exists(), f"missing golden {path}; run CUTELAB_REGEN_GOLDEN=1 python -m pytest {__file__}"
    assert got == path.read_text(encoding="utf-8"), f"{name} changed; see the module docstring to accept it"
