"""The command line on the inputs a new user tries first: one line, exit 2, never a traceback or a hang."""

from __future__ import annotations

import time

import pytest

import cutelab
from cutelab.cli import main


def run(capsys, *argv):
    t0 = time.perf_counter()
    rc = main(list(argv))
    out, err = capsys.readouterr()
    assert time.perf_counter() - t0 < 5.0, f"{argv} took too long"
    return rc, out, err


def _one_line_exit_2(rc, out, err, *words):
    assert rc == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("cutelab: error: ")
    assert "Traceback" not in err and "please report" not in err  # a real message, not the safety net
    for w in words:
        assert w in err, err


@pytest.mark.parametrize("argv,words", [
    (["explain", "logical_divide", "8:1", "3:1"], ["does not divide"]),
    (["show", "(" * 600 + "2" + ")" * 600], ["nesting deeper"]),
    (["partition", "tiled", "--threads", "0"], ["positive"]),
    (["partition", "tiled", "--threads", "-4"], ["positive"]),
    (["partition", "tiled", "--tensor", "100000,100000"], ["more than the"]),
    (["partition", "outer", "--tensor", "100000,100000"], ["more than the"]),
    (["partition", "tv", "--tensor", "100000,100000"], ["more than the"]),
    (["partition", "tiled", "--tensor", "0,4"], ["positive"]),
    (["explain", "composition", "(4,4):(4,1)", "(1048576):(1)"], ["more than the"]),
    (["explain", "complement", "4:2", "1000000000"], ["more than the"]),
    (["tv", "4:1", "--tile", "0,4"], ["positive"]),
    (["show", "(8,(2,8,1)):(8,(5,4611686018427387904,5))"], ["64 bits"]),
    (["tv", "(2,2):(1,3)", "(2,2):(2,1)"], ["bijection"]),
])
def test_bad_input_is_one_line_exit_2(capsys, argv, words):
    _one_line_exit_2(*run(capsys, *argv), *words)


def test_version(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    assert capsys.readouterr().out.strip() == f"cutelab {cutelab.__version__}"


def test_empty_layout_draws_one_cell(capsys):
    rc, out, err = run(capsys, "show", "()")
    assert rc == 0 and err == ""
    assert "| 0 |" in out


@pytest.mark.parametrize("argv", [["show", "1048576"], ["show", "(65536,65536)"], ["coords", "(65536,65536)"],
                                  ["show", "(8192,8192):(8192,1)", "--coord"]])
def test_big_layouts_finish_quickly(capsys, argv):
    rc, out, err = run(capsys, *argv)
    assert rc == 0 and err == ""
    assert len(out) < 5_000_000


def test_tv_of_one_layout_uses_its_tile(capsys, tmp_path):
    tv = "((8,32),(8,4)):((1024,4),(128,1))"  # the tour's make_layout_tv((32,8):(8,1), (4,8):(8,1))
    path = tmp_path / "tv.svg"
    rc, out, err = run(capsys, "tv", tv, "-o", str(path))
    assert rc == 0 and err == ""
    s = path.read_text()
    assert 'data-rows="128" data-cols="64"' in s


def test_terminal_overview_is_short_and_files_keep_the_big_one(capsys, tmp_path):
    rc, out, _ = run(capsys, "show", "(65536,65536)")
    assert rc == 0 and len(out.splitlines()) < 400 and "every 2048th row" in out
    rc, out, _ = run(capsys, "show", "(33,2)")  # small grids print whole
    assert rc == 0 and "overview" not in out
    path = tmp_path / "big.svg"
    rc, _, _ = run(capsys, "show", "(65536,65536)", "-o", str(path))
    assert rc == 0 and 'data-rows="256" data-cols="256"' in path.read_text()


# issue 23: inputs that reached the "please report it" safety net, and argparse's two-line errors
@pytest.mark.parametrize("argv,words", [
    (["tv", "()"], ["has no modes"]),
    (["partition", "outer", "--threads", "()"], ["must have rank 2"]),
    (["swizzle", "1000000000:1", "--elem-bits", "-16"], ["elem_bits must be a power of two"]),
])
def test_edge_inputs_say_what_is_wrong(capsys, argv, words):
    _one_line_exit_2(*run(capsys, *argv), *words)


@pytest.mark.parametrize("argv", [["tv"], ["bogus"], ["swizzle", "8:1", "--elem-bits", "q"]])
def test_argparse_errors_are_one_line(capsys, argv):
    with pytest.raises(SystemExit) as e:
        main(argv)
    out, err = capsys.readouterr()
    assert e.value.code == 2 and out == "" and err.count("\n") == 1 and ": error: " in err, err
    assert "usage:" not in err


@pytest.mark.parametrize("argv", [["tv", "(4096,1)"], ["mma", "--op", "sm80_16x8x16", "--atoms", "16x8x1"],
                                  ["explain", "complement", "1:1", "4096"]])
def test_pictures_of_thousands_of_colours_finish(argv):
    # each looped forever in palette.categorical (more than ~3,400 colours)
    t0 = time.perf_counter()
    assert main(argv) == 0
    assert time.perf_counter() - t0 < 60
