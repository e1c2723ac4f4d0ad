"""`import cutelab` loads the layout algebra only: numpy is imported where arrays are needed
(tensors, atoms, pictures, kernels), not before. Each check runs in a fresh interpreter."""

import os
import subprocess
import sys

import pytest

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")


def _run(code: str) -> str:
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    return p.stdout.strip()


def test_import_cutelab_leaves_numpy_out():
    out = _run("import sys, cutelab as cute\n"
               "L = cute.make_layout(((2, 2), (2, 3)), stride=((2, 12), (1, 4)))\n"
               "cute.composition(L, cute.make_layout(4, stride=2)); cute.logical_divide(L, (2, 2)); L((1, 1)); L(5)\n"
               "cute.complement(cute.Layout.parse('(2,3):(2,4)'), 24); cute.coalesce(L); cute.right_inverse(L)\n"
               "cute.make_swizzle(3, 4, 3); cute.Float32; cute.Int32.width\n"
               "print('numpy' in sys.modules)")
    assert out == "False"


def test_lazy_names_load_on_first_use():
    out = _run("import sys, cutelab as cute\n"
               "atom = cute.make_mma_atom  # the atoms import numpy: on first use\n"
               "print('numpy' in sys.modules, cute.Float32.storage, cute.copy.__wrapped__.__module__,"
               " cute.gemm.__wrapped__.__module__, cute.Int4)")
    assert out == "True float32 cutelab.nvgpu.copy_atom cutelab.nvgpu.mma_atom Int4"


def test_star_import_keeps_the_atoms():
    out = _run("from cutelab import *\nprint(make_tiled_copy_tv.__name__, make_mma_atom.__name__, range is __builtins__.range "
               "if not isinstance(__builtins__, dict) else True)")
    assert out == "make_tiled_copy_tv make_mma_atom True"


@pytest.mark.parametrize("argv", [["--help"], ["show", "--help"], ["nosuchcommand"], ["serve", "--port", "x"]])
def test_cli_argument_parsing_leaves_numpy_out(argv):
    out = _run("import sys\nfrom cutelab.cli import build_parser\n"
               f"try:\n    build_parser().parse_args({argv!r})\nexcept SystemExit:\n    pass\n"
               "print('numpy' in sys.modules)")
    assert out.splitlines()[-1] == "False"
