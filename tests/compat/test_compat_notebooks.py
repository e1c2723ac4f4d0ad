"""CUTLASS's CuTe DSL notebooks, run unchanged by `cutelab run NOTEBOOK.ipynb` (every code cell in order, as
Jupyter's "Run All"), on the emulated CUDA device; where a notebook's output does not depend on random numbers
or timings, it must equal the output NVIDIA saved in the notebook from its own run on a GPU."""
import json
import os
import re
import subprocess
import sys

import pytest

from compat_helpers import SRC, ok

NOTEBOOKS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs", "notebooks")


def _saved_stdout(path):
    """What the notebook's saved outputs printed, cell after cell (stdout streams and shown values)."""
    out = []
    for c in json.load(open(path))["cells"]:
        for o in c.get("outputs", []) if c["cell_type"] == "code" else []:
            if o.get("output_type") == "stream" and o.get("name") == "stdout":
                out.append("".join(o["text"]))
            elif o.get("output_type") == "execute_result":
                out.append("".join(o["data"].get("text/plain", "")) + "\n")
    return "".join(out)


def _run(name, tmp_path):
    env = dict(os.environ, PYTHONPATH=SRC, PYTHONHASHSEED="0")
    env.pop("CUTE_DSL_ARCH", None)
    p = subprocess.run([sys.executable, "-m", "cutelab", "run", os.path.join(NOTEBOOKS, name + ".ipynb")],
                       cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=600)
    return ok(p)


def _lines(text):
    return re.sub(r"0x[0-9a-f]+", "0x?", text).splitlines()


# notebook -> saved lines that may differ, as (regex of the saved line, why)
SAME_AS_SAVED = {
    "data_types": [],
    # CuTe DSL prints a tuple of its layouts by their object repr; cutelab prints the layouts
    "cute_layout_algebra": [(r"<cutlass\.cute\.core\._Layout object at 0x\?>", "the DSL's object repr")],
    "cuda_graphs": [(r"% speedup when using CUDA graphs", "a GPU timing")],
}


@pytest.mark.parametrize("name", sorted(SAME_AS_SAVED))
def test_notebook_prints_what_its_saved_run_printed(name, tmp_path):
    want, got = _lines(_saved_stdout(os.path.join(NOTEBOOKS, name + ".ipynb"))), _lines(_run(name, tmp_path))
    assert len(want) == len(got) and want, (len(want), len(got), got[-20:])
    for w, g in zip(want, got):
        if w != g:
            assert any(re.search(rx, w) for rx, _ in SAME_AS_SAVED[name]), f"saved: {w!r}\ncutelab: {g!r}"


@pytest.mark.parametrize("name", ["async_pipeline", "benchmark_autotune", "composed_layout", "hello_world", "print",
                                  "tensor", "tensorssa"])
def test_notebook_runs(name, tmp_path):
    """Notebooks whose output holds random numbers, addresses or timings: every cell runs, and the checks the
    notebook makes itself pass."""
    out = _run(name, tmp_path)
    assert out.strip()


def test_run_notebook_cells_in_one_namespace_with_shown_values_and_skipped_magics(tmp_path):
    cells = ["import torch\nx = 40\n%timeit x + 1\n", "!ls\nx + 2\n", "print(torch.arange(2.0, device='cuda'))\nNone\n",
             "import cutlass.cute as cute\n@cute.jit\ndef f(a: cute.Int32):\n    print(a)\nf(3)\n"]
    nb = {"cells": [{"cell_type": "markdown", "source": ["# title"]}] +
          [{"cell_type": "code", "source": c, "outputs": []} for c in cells], "metadata": {}, "nbformat": 4}
    path = tmp_path / "t.ipynb"
    path.write_text(json.dumps(nb))
    env = dict(os.environ, PYTHONPATH=SRC)
    p = subprocess.run([sys.executable, "-m", "cutelab", "run", str(path)], cwd=str(tmp_path), env=env,
                       capture_output=True, text=True, timeout=300)
    out = ok(p)
    assert out.splitlines() == ["42", "tensor([0., 1.], device='cuda:0')", "?"]
    assert "t.ipynb[cell 1] line 3: skipped IPython's '%timeit x + 1'" in p.stderr
    assert "t.ipynb[cell 2] line 1: skipped IPython's '!ls'" in p.stderr
    bad = tmp_path / "bad.ipynb"
    bad.write_text(json.dumps({"cells": [{"cell_type": "code", "source": "y = 1\n1 / 0\n"}], "metadata": {}}))
    p = subprocess.run([sys.executable, "-m", "cutelab", "run", str(bad)], cwd=str(tmp_path), env=env,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode != 0 and 'bad.ipynb[cell 1]", line 2' in p.stderr and "ZeroDivisionError" in p.stderr
