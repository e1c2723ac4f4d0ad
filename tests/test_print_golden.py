"""What jit functions and kernels print, against CuTe DSL 4.8.1 (tests/golden/print_kernel.json, made by
scripts/make_golden_print.py): register tensors' alignment, swizzled shared-memory tensors (composed
layouts, and their slices as CuTe's slice_and_offset decays them), composition over dynamic modes.

All cases run as one program in one subprocess (PYTHONPATH=src), with the DSL program's imports
rewritten as tests/programs does; each case's output follows a marker line.
"""
import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "programs"))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "scripts"))
import harness  # noqa: E402
import make_golden_print as gen  # noqa: E402  (the program texts; it imports no DSL at module level)

with open(os.path.join(HERE, "golden", "print_kernel.json")) as f:
    GOLDEN = json.load(f)["cases"]

_MARK = "@@case "
# Cases cutelab does not match yet (name -> why); they run and are compared, as strict xfails.
GAPS = {}


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    parts = [harness.rewrite_imports(gen.HEAD)]
    for i, c in enumerate(GOLDEN):
        body = gen.program(i, c["kind"], c["body"], c["values"])[len(gen.HEAD):]
        parts.append(f"print({_MARK + c['name']!r}, flush=True)\n" + harness.rewrite_imports(body))
    path = tmp_path_factory.mktemp("print") / "cases.py"
    path.write_text("\n".join(parts))
    import cutelab

    src_dir = os.path.dirname(os.path.dirname(os.path.abspath(cutelab.__file__)))
    env = dict(os.environ, PYTHONPATH=src_dir, PYTHONHASHSEED="0")
    p = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, env=env, timeout=600)
    got, name = {}, None
    for line in p.stdout.splitlines(keepends=True):
        if line.startswith(_MARK):
            name = line[len(_MARK):].strip()
            got[name] = ""
        elif name is not None:
            got[name] += line
    return got, p


def test_golden_is_complete():
    assert len(GOLDEN) >= 8
    assert all("failed" not in c for c in GOLDEN), [c["name"] for c in GOLDEN if "failed" in c]
    assert set(GAPS) <= {c["name"] for c in GOLDEN}


@pytest.mark.parametrize("case", [pytest.param(c, id=c["name"], marks=[pytest.mark.xfail(strict=True, reason=GAPS[c["name"]])]
                                               if c["name"] in GAPS else []) for c in GOLDEN])
def test_prints_as_cute_dsl(case, outputs):
    got, p = outputs
    assert case["name"] in got, f"the program stopped before case {case['name']}:\n{p.stderr[-3000:]}"
    assert got[case["name"]] == case["output"]
