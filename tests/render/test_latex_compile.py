"""The .tex output compiles with pdflatex at the sizes of issue 23, and its labels are readable.

CuTe's form (a box node per cell) runs out of pdflatex's main memory at about 8,000 cells
("TeX capacity exceeded"): the README's own TV example, the 128x32x32 TiledMMA of cutlass PR
#1733 and the 8192 x 8192 overview all failed. Pictures past LIGHT_CELLS use a light encoding;
past what even that fits, the CLI warns before writing and says how to compile. The structural
tests run everywhere; the pdflatex ones skip without pdflatex and the standalone class
(scripts/ci_setup.sh installs them).
"""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from cutelab.cli import main
from cutelab.render import palette
from cutelab.render.latex import PDFLATEX_WORDS

BIG = {
    "tv": ["tv", "(32,8):(8,1)", "(4,8):(8,1)"],
    "mma128": ["mma", "--op", "sm80_16x8x16", "--atoms", "4x2x1", "--perm", "128x32x32"],
    "overview": ["show", "(8192,8192):(8192,1)"],
}


def _tex(tmp_path, argv, capsys=None):
    out = tmp_path / "fig.tex"
    assert main(argv + ["-o", str(out)]) == 0
    return out


def _have_pdflatex() -> bool:
    if shutil.which("pdflatex") is None or shutil.which("kpsewhich") is None:
        return False
    r = subprocess.run(["kpsewhich", "standalone.cls", "tikz.sty"], capture_output=True, text=True)
    return len(r.stdout.split()) == 2


needs_pdflatex = pytest.mark.skipif(not _have_pdflatex(), reason="no pdflatex with standalone and TikZ "
                                    "(bash scripts/ci_setup.sh installs them)")


@pytest.mark.parametrize("case", sorted(BIG))
def test_big_pictures_use_the_light_encoding(tmp_path, capsys, case):
    tex = _tex(tmp_path, BIG[case]).read_text()
    assert "light encoding" in tex and "% WARNING" not in tex
    assert "warning" not in capsys.readouterr().err
    assert tex.count("\\node") <= 700  # indices and legend only: no node per cell (8192 before)
    assert tex.count("\\fill[") >= 1


def test_labels_on_dark_fills_are_white(tmp_path):
    tex = _tex(tmp_path, ["mma", "--op", "sm80_16x8x16", "--atoms", "2x2x1"]).read_text()
    nodes = re.findall(r"\\node\[fill=\{rgb,255:red,(\d+);green,(\d+);blue,(\d+)\}(,text=white)?\] at "
                       r"\(-?\d+,-?\d+\) \{\\shortstack\{T(\d+) ", tex)
    assert len(nodes) == 32 * 16 + 32 * 16 + 16 * 16  # C (M,N), A (M,K), B (N,K) of the 32x16x16 tile
    white = set()
    for r, g, b, w, t in nodes:
        fill = f"#{int(r):02X}{int(g):02X}{int(b):02X}"
        assert bool(w) == (palette.ink(fill) == "#FFFFFF"), (t, fill)
        if w:
            white.add(int(t))
    assert {8, 9, 10, 11, 20, 28} <= white  # the threads the issue found black on dark


def test_past_what_pdflatex_holds_the_cli_warns_before_writing(tmp_path, capsys):
    out = _tex(tmp_path, ["mma", "--op", "sm80_16x8x16", "--atoms", "4x4x1", "--perm", "128x128x32"])
    err = capsys.readouterr().err
    assert err.startswith("cutelab: warning: the .tex needs about") and f"pdflatex {out}" in err
    assert out.read_text().startswith("% WARNING: ") and "extra_mem_bot=" in err


def _compile(path, env_extra=None):
    import os

    env = dict(os.environ, **(env_extra or {}))
    r = subprocess.run(["pdflatex", "-interaction=batchmode", "-halt-on-error", path.name], cwd=path.parent,
                       capture_output=True, text=True, timeout=300, env=env)
    log = path.with_suffix(".log").read_text(errors="replace")
    return r.returncode, log


@needs_pdflatex
@pytest.mark.parametrize("case", sorted(BIG))
def test_big_pictures_compile_with_pdflatex(tmp_path, case):
    rc, log = _compile(_tex(tmp_path, BIG[case]))
    assert rc == 0, log[-2000:]
    used = int(re.search(r"(\d+) words of memory out of (\d+)", log).group(1))
    assert used < PDFLATEX_WORDS


@needs_pdflatex
def test_small_pictures_compile_in_cutes_form(tmp_path):
    rc, log = _compile(_tex(tmp_path, ["mma", "--op", "sm80_16x8x16", "--atoms", "2x2x1"]))
    assert rc == 0, log[-2000:]
