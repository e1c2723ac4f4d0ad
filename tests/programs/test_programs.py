"""CuTe DSL programs we did not write, run on cutelab with only their import lines changed.

Each tests/programs/<name>.py is run with its imports rewritten (harness.rewrite_imports), in a
subprocess with PYTHONPATH=src, and its normalised stdout must equal <name>.expected, which
scripts/make_program_outputs.py recorded from CuTe DSL 4.8.1. Known gaps are strict xfails whose
reason names the gap; a program that starts to pass turns its xfail into a failure, so the table
below stays true.
"""
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import harness  # noqa: E402

# Gaps shared by several programs (the report has reproducers; file and function in brackets).
GAPS = {
    "dsl_ampere_elementwise_add": ("cutelab traces a launch for its grid even when the tensors' layouts are dynamic "
                                   "(mark_layout_dynamic): with one block the block index is the constant 0, so a "
                                   "block's coordinate tile prints coord_tensor<\"(0,0)\", ...> where CuTe DSL, "
                                   "which compiles for any grid, prints \"(?{div=16},?{div=128})\" "
                                   "[kernel/launch/api.py tracing with the launch's grid]"),
}


def run_cutelab(name: str, tmp_path) -> str:
    with open(os.path.join(HERE, name + ".py")) as f:
        src = harness.rewrite_imports(f.read())
    path = tmp_path / (name + ".py")
    path.write_text(src)
    import cutelab  # the subprocess runs the same cutelab as this test (PYTHONPATH=src)

    src_dir = os.path.dirname(os.path.dirname(os.path.abspath(cutelab.__file__)))
    env = dict(os.environ, PYTHONPATH=src_dir, PYTHONHASHSEED="0")
    proc = subprocess.run([sys.executable, str(path)], cwd=str(tmp_path), env=env,
                          capture_output=True, text=True, timeout=300)
    return harness.normalise(proc.stdout, proc.returncode), proc.stderr


# Deliberate differences: cutelab prints <name>.cutelab.expected, and the test also checks that CuTe DSL's output
# (<name>.expected) still differs, so that the row goes when the two agree.
DIFFERS = {
    "own_float_scalar_value": ("issue 9 asks for host scalars that are values of their type: Float32(0.1).value is the "
                               "f32 nearest 0.1 (0.10000000149011612), Float16(65519.0) rounds to 65504.0, "
                               "Int32(7) + 1 is 8 and Float32(1.0) * 2 is 2.0; CuTe DSL 4.8.1 keeps the Python float "
                               "in .value and prints host arithmetic on scalars as '?' [numeric.py]"),
}


def _gap(name):
    return GAPS.get(name)


def _params():
    for name in harness.program_names():
        reason = _gap(name)
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        yield pytest.param(name, marks=marks, id=name)


def test_every_program_has_expected_output():
    names = harness.program_names()
    assert len(names) >= 20
    missing = [n for n in names if not os.path.exists(os.path.join(HERE, n + ".expected"))]
    assert not missing, f"no .expected for {missing}: run scripts/make_program_outputs.py"
    assert set(GAPS) <= set(names), f"GAPS names unknown programs: {set(GAPS) - set(names)}"
    assert set(DIFFERS) <= set(names) and not set(DIFFERS) & set(GAPS), "DIFFERS: unknown programs, or also in GAPS"
    # conftest.py keeps pytest from importing programs by these prefixes (they import cutlass)
    odd = [n for n in names if not n.startswith(("nb_", "own_", "dsl_"))]
    assert not odd, f"programs must be named nb_*, own_* or dsl_* (see conftest.py): {odd}"


@pytest.mark.parametrize("name", list(_params()))
def test_program_prints_as_cute_dsl(name, tmp_path):
    with open(os.path.join(HERE, name + ".expected")) as f:
        expected = f.read()
    got, err = run_cutelab(name, tmp_path)
    if name in DIFFERS:
        with open(os.path.join(HERE, name + ".cutelab.expected")) as f:
            ours = f.read()
        assert expected != ours, f"{name}: CuTe DSL's output now equals cutelab's documented one: drop the DIFFERS row"
        expected = ours
    assert got == expected, f"{name}: cutelab printed\n{got}\nexpected\n{expected}\nstderr:\n{err[-2000:]}"


def test_rewrite_imports_refuses_unknown_cutlass_imports():
    with pytest.raises(ValueError, match="no rule for the import line"):
        harness.rewrite_imports("import cutlass.cute")
