"""CuTe DSL programs we did not write, run by `cutelab run` exactly as their authors import them.

Two sets:
- tests/programs/nb_*.py and dsl_*.py: cells of CUTLASS's CuTe DSL notebooks and CUTLASS examples,
  stored with their original `import cutlass` lines (tests/programs/harness.py rewrites the imports
  for its own test; here nothing is rewritten). Their output must equal CuTe DSL 4.8.1's
  (<name>.expected). CI runs a selection (PROGRAMS); CUTELAB_COMPAT_ALL=1 runs every one.
- examples/dsl/*.py: CUTLASS's Ampere examples, kept in the repository with cutelab imports; their
  imports are turned back into CUTLASS's (`to_cutlass_imports`) and the program runs to its own check
  against torch. Their device lines stay as examples/dsl has them: with `cutelab run` torch reports a
  CUDA device, so those lines take the branch the original takes (tensors on "cuda").
"""
import os
import re
import subprocess
import sys

import pytest

from compat_helpers import SRC

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROGRAMS_DIR = os.path.join(ROOT, "tests", "programs")
sys.path.insert(0, PROGRAMS_DIR)
import harness  # noqa: E402

PROGRAMS = ["dsl_ampere_elementwise_apply", "dsl_smem_allocator", "nb_eltwise_tv", "nb_print_tensor_in_kernel",
            "nb_async_pipeline_staged", "nb_ssa_reduction", "nb_tensor_from_ptr", "nb_dtypes_conversion"]
# the gap test_programs.py records for this program (a one-block grid folds the block index into a print)
GAPS = {"dsl_ampere_elementwise_add"}


def _all():
    return [n for n in harness.program_names() if n.startswith(("nb_", "dsl_"))]


def _cutelab_run(path, *args, cwd, timeout=600):
    env = dict(os.environ, PYTHONPATH=SRC, PYTHONHASHSEED="0")
    env.pop("CUTE_DSL_ARCH", None)
    return subprocess.run([sys.executable, "-m", "cutelab", "run", str(path), *args], cwd=str(cwd), env=env,
                          capture_output=True, text=True, timeout=timeout)


def _selected():
    names = _all() if os.environ.get("CUTELAB_COMPAT_ALL") == "1" else PROGRAMS
    for n in names:
        marks = [pytest.mark.xfail(strict=True, reason="see tests/programs/test_programs.py GAPS")] if n in GAPS else []
        yield pytest.param(n, marks=marks, id=n)


def test_selection_is_known():
    assert set(PROGRAMS) <= set(_all())
    for n in PROGRAMS:
        with open(os.path.join(PROGRAMS_DIR, n + ".py")) as f:
            assert re.search(r"^\s*(import|from) cutlass\b", f.read(), re.M), f"{n} does not import cutlass"


@pytest.mark.parametrize("name", list(_selected()))
def test_program_unchanged_prints_as_cute_dsl(name, tmp_path):
    with open(os.path.join(PROGRAMS_DIR, name + ".expected")) as f:
        expected = f.read()
    p = _cutelab_run(os.path.join(PROGRAMS_DIR, name + ".py"), cwd=tmp_path)
    got = harness.normalise(p.stdout, p.returncode)
    assert got == expected, f"{name}: cutelab run printed\n{got}\nexpected\n{expected}\nstderr:\n{p.stderr[-2000:]}"


_BACK = [  # examples/dsl's import lines -> CUTLASS's
    (re.compile(r"^(\s*)import cutelab as cutlass\s*$"), r"\1import cutlass"),
    (re.compile(r"^(\s*)import cutelab as cute\s*$"), r"\1import cutlass.cute as cute"),
    (re.compile(r"^(\s*)(?:from cutelab(?:\.kernel)? import (?:driver as )?cuda|import cutelab\.kernel\.driver as cuda)\b.*$"),
     r"\1import cuda.bindings.driver as cuda"),
    (re.compile(r"^(\s*)import cutelab\.(testing|runtime|nvgpu[\w.]*) as (\w+)\s*$"), r"\1import cutlass.cute.\2 as \3"),
    (re.compile(r"^(\s*)from cutelab\.(runtime|nvgpu[\w.]*) import (.*)$"), r"\1from cutlass.cute.\2 import \3"),
    (re.compile(r"^(\s*)from cutelab import testing\s*$"), r"\1import cutlass.cute.testing as testing"),
    (re.compile(r"^(\s*)import cutelab\.([\w.]+) as (\w+)\s*$"), r"\1import cutlass.\2 as \3"),
    (re.compile(r"^(\s*)from cutelab\.([\w.]+) import (.*)$"), r"\1from cutlass.\2 import \3"),
]


def to_cutlass_imports(source):
    """examples/dsl's source with CUTLASS's import lines back (any other cutelab import is an error).

    >>> print(to_cutlass_imports("import cutelab as cute\\nfrom cutelab import cuda\\nimport cutelab.utils as utils"))
    import cutlass.cute as cute
    import cuda.bindings.driver as cuda
    import cutlass.utils as utils
    """
    out = []
    for line in source.split("\n"):
        for pat, rep in _BACK:
            if pat.match(line):
                line = pat.sub(rep, line)
                break
        else:
            if re.match(r"^\s*(import|from)\s+cutelab\b", line):
                raise ValueError(f"to_cutlass_imports: no rule for {line!r}")
        out.append(line)
    return "\n".join(out)


EXAMPLES = {
    "elementwise_add": ["--M", "33", "--N", "70"],
    "elementwise_apply": ["--M", "64", "--N", "256", "--op", "leaky_relu"],
    "sgemm": ["--mnk", "64,64,16", "--warmup_iterations", "0", "--iterations", "1"],
    "flash_attention_v2": ["--batch_size", "1", "--seqlen_q", "64", "--seqlen_k", "128", "--num_head", "1",
                           "--head_dim", "64", "--m_block_size", "64", "--n_block_size", "64", "--iterations", "1",
                           "--warmup_iterations", "0", "--is_causal"],
}


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_cutlass_example_runs_to_its_own_check(name, tmp_path):
    with open(os.path.join(ROOT, "examples", "dsl", name + ".py")) as f:
        src = to_cutlass_imports(f.read())
    assert "cutelab" not in "\n".join(l for l in src.split("\n") if re.match(r"\s*(import|from) ", l))
    prog = tmp_path / (name + ".py")
    prog.write_text(src)
    p = _cutelab_run(prog, *EXAMPLES[name], cwd=tmp_path)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    assert "PASS" in p.stdout or "verified" in p.stdout.lower(), p.stdout[-2000:]
