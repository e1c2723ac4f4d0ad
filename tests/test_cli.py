"""The cutelab command line: exit codes, the one-line error, output formats by suffix."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from cutelab.cli import main


def run(capsys, *argv):
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_show_prints_print_layout(capsys):
    rc, out, err = run(capsys, "show", "(2,3):(3,1)")
    assert rc == 0 and err == ""
    assert out.splitlines()[:3] == ["(2,3):(3,1)", "      0   1   2 ", "    +---+---+---+"]
    assert "\x1b" not in out  # not a tty


def test_color_flag(capsys):
    rc, out, _ = run(capsys, "tv", "((2,2),(2,3)):((2,12),(1,4))", "--color")
    assert rc == 0 and "\x1b[48;5;" in out


def test_coords_seed(capsys):
    rc, out, _ = run(capsys, "coords", "(2,2,2):(2,1,4)")
    assert rc == 0 and out.splitlines()[2] == "1 -> (0,1,0)"


@pytest.mark.parametrize("bad", ["((2,2),(2,3):((2,12),(1,4))", "(2,3):(1)", "(2,x):(1,2)", ""])
def test_bad_layout_is_one_line_exit_2(capsys, bad):
    rc, out, err = run(capsys, "show", bad)
    assert rc == 2 and out == ""
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("cutelab: error: ")
    assert "Traceback" not in err


def test_parse_error_says_where(capsys):
    rc, _, err = run(capsys, "show", "((2,2),(2,3):((2,12),(1,4))")
    assert rc == 2 and "position 12" in err


def test_algebra_error_is_one_line(capsys):
    rc, _, err = run(capsys, "explain", "composition", "(4,4):(4,1)", "(4,3):(1,5)")
    assert rc == 2 and len(err.splitlines()) == 1 and "composition" in err


def test_wrong_arity_is_one_line(capsys):
    rc, _, err = run(capsys, "explain", "composition", "(4,4):(4,1)")
    assert rc == 2 and len(err.splitlines()) == 1


def test_unknown_suffix(capsys, tmp_path):
    rc, _, err = run(capsys, "show", "(2,2)", "-o", str(tmp_path / "x.bmp"))
    assert rc == 2 and ".svg" in err and len(err.splitlines()) == 1


def test_unwritable_output(capsys, tmp_path):
    rc, _, err = run(capsys, "show", "(2,2)", "-o", str(tmp_path / "no" / "x.svg"))
    assert rc == 1 and err.startswith("cutelab: error: cannot write")


def test_usage_error_exit_2(capsys):
    with pytest.raises(SystemExit) as e:
        main(["explain", "no_such_op", "a"])
    assert e.value.code == 2


@pytest.mark.parametrize("suffix,check", [
    (".svg", lambda b: ET.fromstring(b.decode())),
    (".txt", lambda b: b.decode().startswith("make_layout_tv(")),
    (".tex", lambda b: "\\documentclass[convert]{standalone}" in b.decode()),
    (".html", lambda b: b.decode().startswith("<!DOCTYPE html>") and "<svg" in b.decode()),
])
def test_output_suffixes(capsys, tmp_path, suffix, check):
    p = tmp_path / f"copy_tv{suffix}"
    rc, out, err = run(capsys, "tv", "(4,8):(8,1)", "(2,4):(4,1)", "-o", str(p))
    assert rc == 0 and out == "" and err == ""
    assert check(p.read_bytes()) is not False


def test_png_output(capsys, tmp_path):
    pytest.importorskip("PIL")
    p = tmp_path / "tv.png"
    rc, _, _ = run(capsys, "show", "((2,2),(2,3)):((2,12),(1,4))", "-o", str(p))
    assert rc == 0 and p.read_bytes()[:4] == b"\x89PNG"


def test_png_without_pillow_says_how_to_install_it(capsys, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "PIL", None)  # import PIL now fails (Pillow is a dependency, but may be broken)
    rc, _, err = run(capsys, "show", "(2,2)", "-o", str(tmp_path / "x.png"))
    assert rc == 1 and "pip install pillow" in err and len(err.splitlines()) == 1


@pytest.mark.parametrize("argv", [
    ["explain", "complement", "(2,3):(2,4)", "24"],
    ["explain", "logical_divide", "(8,8)", "<2:1,4:1>"],
    ["explain", "zipped_divide", "(8,8)", "(2,4)"],
    ["explain", "logical_product", "(2,5):(5,1)", "(3,4)"],
    ["explain", "blocked_product", "(2,5):(5,1)", "(3,4)"],
    ["explain", "raked_product", "(2,5):(5,1)", "(3,4)"],
    ["partition", "tiled"],
    ["partition", "tiled", "--tensor", "16,64", "--block", "1,16", "--threads", "16"],
    ["partition", "outer", "--tensor", "16,32", "--block", "8,16", "--threads", "(4,8):(8,1)"],
    ["partition", "tv", "--tensor", "(16,16)", "--threads", "(4,2):(2,1)", "--values", "(2,4):(4,1)"],
    ["tv", "(32,8):(8,1)", "(4,8):(8,1)"],
    ["tv", "((2,2),(2,3)):((2,12),(1,4))", "--tile", "24,1"],
    ["show", "(2,2,2):(2,1,4)", "--coord"],
])
def test_commands_run(capsys, argv):
    rc, out, err = run(capsys, *argv)
    assert rc == 0 and err == "" and out


def test_partition_bad_threads(capsys):
    rc, _, err = run(capsys, "partition", "tiled", "--threads", "many")
    assert rc == 2 and len(err.splitlines()) == 1


def test_python_dash_m(tmp_path):
    r = subprocess.run([sys.executable, "-m", "cutelab", "show", "(2,(2,2)):(1,(4,2)"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.startswith("cutelab: error: ") and len(r.stderr.splitlines()) == 1
    r = subprocess.run([sys.executable, "-m", "cutelab", "coords", "(2,(2,2)):(1,(4,2))"], capture_output=True, text=True)
    assert r.returncode == 0 and "2 -> (0,(0,1))" in r.stdout


def test_tv_partition_defaults_to_the_tiles_of_make_layout_tv(capsys, tmp_path):
    out = tmp_path / "part.svg"
    code, _, err = run(capsys, "partition", "tv", "--threads", "(32,8):(8,1)", "--values", "(4,8):(8,1)", "-o", str(out))
    assert code == 0, err
    root = ET.parse(out).getroot()
    assert "128x64" in "".join(root.itertext())
