"""`cutelab analyze`: the explanation on stdout, the picture with -o, one-line errors with exit 2."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from cutelab.cli import main


def run(capsys, *argv):
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_tv_over_swizzled_layout(capsys):
    rc, out, err = run(capsys, "analyze", "--tv", "(32,8):(1,64)", "--layout", "S<2,3,3> o 0 o (64,64):(64,1)",
                       "--dtype", "f16", "--space", "shared")
    assert rc == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == "(32,8):(1,64) over S<2,3,3> o 0 o (64,64):(64,1), 16-bit elements, 128-bit vectors"
    assert lines[1] == "1 instruction(s) of 128-bit ld.shared: 8 wavefronts (ideal 4), 4 bank conflicts"
    assert "2 lanes hit bank 0 at 2 different addresses: 2 wavefronts, 1 of them conflicts" in lines[2]
    assert "  l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum = 4" in lines


def test_ldmatrix_picture(capsys, tmp_path):
    path = tmp_path / "banks.svg"
    rc, out, err = run(capsys, "analyze", "--layout", "(64,64):(64,1)", "--ldmatrix", "x4", "-o", str(path))
    assert rc == 0 and err == ""
    assert "16 instruction(s) of ldmatrix: 512 wavefronts (ideal 64), 448 bank conflicts" in out
    root = ET.fromstring(path.read_text())
    assert root.tag.endswith("svg")
    assert "matrix 0 (lanes 0-7): 8 wavefronts, 7 conflicts" in path.read_text()


def test_global_sectors_picture_as_text(capsys, tmp_path):
    path = tmp_path / "sectors.txt"
    rc, out, _ = run(capsys, "analyze", "--tv", "(32,16):(16,1)", "--layout", "(1,512):(8192,1)", "--dtype", "bf16",
                     "--space", "global", "-o", str(path))
    assert rc == 0 and "50% coalescing efficiency" in out
    text = path.read_text()
    assert "32-byte sectors of 128-byte lines" in text and "L31" in text


@pytest.mark.parametrize("argv,match", [
    (["--layout", "(64,64):(64,1)"], "needs --tv"),
    (["--layout", "(64,64):(64,1)", "--ldmatrix", "x4", "--tv", "(32,8):(1,64)"], "takes no --tv"),
    (["--tv", "(32,8):(1,64)", "--layout", "(64,64):(64,1)", "--trans"], "--trans is an ldmatrix option"),
    (["--tv", "(32,8):(1,64)", "--layout", "(8,8):(8,1)"], "outside the tensor layout"),
    (["--tv", "(32,8):(1,64)", "--layout", "(64,64):(64,1)", "--dtype", "f7"], "element type 'f7' is unknown"),
    (["--tv", "(32,8):(1,64)", "--layout", "(64,64):(64,1)", "--instruction", "5"], "out of range"),
    (["--tv", "(32,8):(1,64)", "--layout", "S<3,3> o 0 o (64,64):(64,1)"], "cannot parse"),
])
def test_errors_are_one_line_exit_2(capsys, argv, match):
    rc, out, err = run(capsys, "analyze", *argv)
    assert rc == 2 and out == ""
    assert err.startswith("cutelab: error: ") and match in err and err.count("\n") == 1
