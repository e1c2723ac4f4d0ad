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
