"""Text pictures: CuTe's print_layout format, ANSI colours, the seed's index -> coordinate tables."""

from __future__ import annotations

import re

import cutelab as cute
from cutelab import render as R
from cutelab.render import text


def test_print_layout_format():
    # cutlass print_layout: width = digits(cosize) + 2, header row, +---+ separators
    assert text.render(R.layout_figure("(2,3):(3,1)")) == (
        "(2,3):(3,1)\n"
        "      0   1   2 \n"
        "    +---+---+---+\n"
        " 0  | 0 | 1 | 2 |\n"
        "    +---+---+---+\n"
        " 1  | 3 | 4 | 5 |\n"
        "    +---+---+---+\n"
    )


def test_pads_to_digits_of_cosize():
    out = text.render(R.layout_figure("(2,5):(1,2)"))  # cosize 10: two digits
    assert " 0  |  0 |  2 |  4 |  6 |  8 |" in out


def test_colour_output_has_ansi_and_legend():
    out = text.render(R.tv_figure("((2,2),(2,3)):((2,12),(1,4))", (1, 24)), color=True)
    assert "\x1b[48;5;" in out and "legend:" in out
    plain = re.sub(r"\x1b\[[0-9;]*m", "", out)
    assert "T0V0" in plain and "T3V5" in plain
    assert "\x1b" not in text.render(R.tv_figure("((2,2),(2,3)):((2,12),(1,4))", (1, 24)))


SEED_TABLES = {
    "(2,2,2):(2,1,4)": ["(0,0,0)", "(0,1,0)", "(1,0,0)", "(1,1,0)", "(0,0,1)", "(0,1,1)", "(1,0,1)", "(1,1,1)"],
    "((2,2),2):((2,4),1)": ["((0,0),0)", "((0,0),1)", "((1,0),0)", "((1,0),1)",
                            "((0,1),0)", "((0,1),1)", "((1,1),0)", "((1,1),1)"],
    "(2,(2,2)):(2,(1,4))": ["(0,(0,0))", "(0,(1,0))", "(1,(0,0))", "(1,(1,0))",
                            "(0,(0,1))", "(0,(1,1))", "(1,(0,1))", "(1,(1,1))"],
    "(2,(2,2)):(1,(4,2))": ["(0,(0,0))", "(1,(0,0))", "(0,(0,1))", "(1,(0,1))",
                            "(0,(1,0))", "(1,(1,0))", "(0,(1,1))", "(1,(1,1))"],
}


def test_seed_coordinate_tables():
    for layout, coords in SEED_TABLES.items():
        out = text.render(R.coords_figure(layout))
        assert out == layout + "\n" + "".join(f"{i} -> {c}\n" for i, c in enumerate(coords))


def test_coords_table_marks_holes():
    fig = R.coords_figure("(2,2):(1,4)")  # offsets 0 1 4 5: 2 and 3 are not reached
    assert fig.notes[2] == "2 -> -"
    assert fig.notes[1] == "1 -> (1,0)"


def test_big_text_still_every_cell():
    L = cute.make_layout((16, 16), stride=(16, 1))
    out = text.render(R.layout_figure(L))
    assert out.count("|") == 16 * 17
