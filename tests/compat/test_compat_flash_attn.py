"""flash_attn.cute's own tests (flash-attn-4 4.0.0b27, Dao-AILab's flash-attention), unchanged, under
``cutelab run -m pytest`` on the CPU.

The test files are carried in tests/compat/programs/flash_attn (tests/cute/test_flash_attn.py and the
conftest.py beside it, from flash-attention's git tag fa4-v4.0.0.beta27, whose flash_attn/cute files are the
wheel's; BSD-3-Clause, its LICENSE and AUTHORS beside them), byte for byte: their git blob ids at the tag are
checked below. The README's test command installs the pinned packages (``python3 scripts/quack_tests.py
--fetch .quack``: flash-attn-4, quack-kernels 0.5.3, einops, apache-tvm-ffi into .quack/site, without
nvidia-cutlass-dsl or Triton). scripts/flash_attn_tests.py runs the cases from a copy of the carried files with
the plugin scripts/flash_attn_select.py, which builds only the named parametrized cases (the whole file
parametrizes 415,818). Here: the smallest forward (d 8) on the SM80 path and, causal and not, on the SM90 and
SM100 paths; the forward with packed GQA on the three paths (and packed MQA on SM100: two Q stages); and the SM90
and SM100 backward (scripts/flash_attn_tests.py's SM90_BACKWARD, SM100_BACKWARD; on SM100 also with softcap,
SM100_SOFTCAP). Five runs of ``cutelab run -m pytest``. A case that fails, or is not found, fails here.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPTS = os.path.join(ROOT, "scripts")
QUACK = os.environ.get("CUTELAB_QUACK_DIR", os.path.join(ROOT, ".quack"))
CARRIED = os.path.join(ROOT, "tests", "compat", "programs", "flash_attn")
FILE = "tests/cute/test_flash_attn.py"

# git blob ids at flash-attention's tag fa4-v4.0.0.beta27 (commit 0251105a2fb19d2957484b7f023cd8c115286ced)
BLOBS = {
    "tests/cute/test_flash_attn.py": "8029ca130973b358b62bccf38d853da3387ddc40",
    "tests/cute/conftest.py": "d2162255775d5804731620ffe3f45e7c3f03f703",
    "LICENSE": "5860e4b33f3d9d85fc636137c559331d51783a5b",
    "AUTHORS": "e35a781665eafa7421c30241962ef8e49588bffc",
}

SM80_FORWARD = f"{FILE}::test_flash_attn_small_head_dim[128-128-8-False-dtype0]"
# not causal, and causal (the persistent tile scheduler on SM90)
SM90_FORWARD = (SM80_FORWARD, f"{FILE}::test_flash_attn_small_head_dim[128-128-8-True-dtype0]")
# 6 query heads over 3 KV heads, d 64, causal, seqlen_q 64 > seqlen_k 32 (the test skips its backward there),
# each with pack_gqa False, True and auto
PACK_GQA = f"{FILE}::test_flash_attn_output[64-32-64-True-0-0.0-False-False-False-gqa-dtype0]"
# the SM100 (Blackwell) forward, causal and not: UMMAs issued from flash_attn.cute's inline PTX through the
# descriptors it builds, S, P and O in tensor memory
SM100_FORWARD = SM90_FORWARD
# forward, then dQ, dK, dV against the fp32 reference (preprocess, main and dQ-conversion kernels)
SM90_BACKWARD = f"{FILE}::test_flash_attn_output[3-3-64-True-0-0.0-False-False-False-mha-dtype0]"
SM100_BACKWARD = SM90_BACKWARD  # run with sm_100a: flash_bwd_sm100's UMMAs, dS through tensor memory
# SM100 only: 6 query heads over 1 KV head packed to 384 rows, so two Q stages of 128 rows, each not a whole number
# of heads: the LSE rows are stored through addresses made from ptr.toint() of a runtime (head, row) element
PACK_MQA = f"{FILE}::test_flash_attn_output[64-32-64-True-0-0.0-False-False-False-mqa-dtype0]"
# the backward's case with softcap 15: the score mod broadcasts a (1,) value to (vec_size,) (TensorSSA.broadcast_to)
SM100_SOFTCAP = f"{FILE}::test_flash_attn_output[3-3-64-True-0-15.0-False-False-False-mha-dtype0]"


def test_carried_files_are_the_tags():
    for path, blob in BLOBS.items():
        with open(os.path.join(CARRIED, path), "rb") as f:
            data = f.read()
        assert hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest() == blob, path


_PLUGIN_PROBE = textwrap.dedent('''
    import pytest

    class D:  # an id pytest makes from the argument's name and index, as for torch's dtypes
        def __init__(self, n):
            self.n = n

        def __repr__(self):
            return f"D({self.n})"

    @pytest.mark.parametrize("dtype", [D(0), D(1)])
    @pytest.mark.parametrize("mode", ["a-b", "a", "c"])
    @pytest.mark.parametrize("n", [-1, 1, 10])
    @pytest.mark.parametrize("m,k", [(1, 2), (1, 20), (3, 4)], ids=["x", "x-y", "z"])
    def test_f(m, k, n, mode, dtype):
        pass

    @pytest.mark.parametrize("s", [pytest.param(1, marks=pytest.mark.skip(reason="r")), 2])
    @pytest.mark.parametrize("t", [5, 6])
    def test_g(t, s):
        pass

    class TestC:
        @pytest.mark.parametrize("u", [7, 8])
        def test_h(self, u):
            pass
''')


def _collect(tmp_path, args, plugin):
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", "--collect-only", "-q",
           "-rA"] + (["-p", "flash_attn_select"] if plugin else []) + args
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (SCRIPTS, os.environ.get("PYTHONPATH")) if p))
    (tmp_path / "built.txt").unlink(missing_ok=True)
    res = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False)
    res.built = sum(int(n) for n in (tmp_path / "built.txt").read_text().split())
    return res, [ln for ln in res.stdout.splitlines() if "::" in ln and " " not in ln]  # the ids --collect-only -q lists


def test_select_plugin_builds_only_the_named_cases(tmp_path):
    (tmp_path / "test_probe.py").write_text(_PLUGIN_PROBE)
    (tmp_path / "conftest.py").write_text(textwrap.dedent('''
        import pytest

        def pytest_collection_finish(session):
            print("NCASES", len(session.items))
            for it in session.items:
                print("CASE", it.nodeid, sorted(it.callspec.params.items(), key=str),
                      [m.name for m in it.iter_markers()])

        @pytest.hookimpl(wrapper=True)
        def pytest_generate_tests(metafunc):
            yield
            with open("built.txt", "a") as f:  # the cases built (collection's own prints are captured)
                f.write(f"{len(metafunc._calls)}\\n")
    '''))
    ids = ["test_probe.py::test_f[x-y--1-a-b-dtype0]", "test_probe.py::test_f[x-10-a-dtype1]",
           "test_probe.py::test_g[6-1]", "test_probe.py::TestC::test_h[8]"]
    full, full_ids = _collect(tmp_path, ids, plugin=False)
    sel, sel_ids = _collect(tmp_path, ids, plugin=True)
    assert full.returncode == 0 and sel.returncode == 0, full.stdout + full.stderr + sel.stdout + sel.stderr
    assert sel_ids == full_ids == ids
    cases = lambda out: [ln for ln in out.splitlines() if ln.startswith("CASE")]
    assert cases(sel.stdout) == cases(full.stdout) and len(cases(sel.stdout)) == 4
    # the full collection builds 3*3*3*2 + 2*2 + 2 cases; the plugin the 4 named ones
    assert full.built == 60 and sel.built == 4, (full.built, sel.built)
    # a file or function named whole is not narrowed; an id that names no case is reported as not found
    whole, whole_ids = _collect(tmp_path, ["test_probe.py::test_g", "test_probe.py::TestC"], plugin=True)
    assert whole.returncode == 0 and len(whole_ids) == 6, whole.stdout
    missing, _ = _collect(tmp_path, ["test_probe.py::test_f[x-2-a-dtype0]"], plugin=True)
    assert missing.returncode != 0 and "not found" in missing.stdout + missing.stderr, missing.stdout


def _fetched() -> bool:
    return os.path.isdir(os.path.join(QUACK, "site", "flash_attn")) and os.path.isdir(os.path.join(QUACK, "site", "quack"))


@pytest.mark.skipif(not _fetched(), reason=f"flash-attn-4 4.0.0b27 and quack-kernels 0.5.3 are not fetched into "
                    f"{QUACK}: run `python3 scripts/quack_tests.py --fetch .quack` (the README's test command does)")
@pytest.mark.parametrize("arch,ids", [("sm_80", (SM80_FORWARD, PACK_GQA)), ("sm_90a", (*SM90_FORWARD, SM90_BACKWARD)),
                                      ("sm_90a", (PACK_GQA,)), ("sm_100a", (*SM100_FORWARD, PACK_GQA, PACK_MQA)),
                                      ("sm_100a", (SM100_BACKWARD, SM100_SOFTCAP))],
                         ids=["sm80_fwd_pack_gqa", "sm90_fwd_bwd", "sm90_pack_gqa", "sm100_fwd_pack_gqa", "sm100_bwd"])
def test_flash_attn_tests_pass_under_cutelab_run(arch, ids):
    res = subprocess.run([sys.executable, os.path.join(SCRIPTS, "flash_attn_tests.py"), "--dir", QUACK,
                          "--arch", arch, "--select", ",".join(ids)], capture_output=True, text=True, timeout=600,
                         check=False)
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-6000:]
    assert f"{FILE}: {len(ids)} passed, 0 failed, 0 errors" in res.stdout.splitlines(), out[-6000:]
    assert res.stdout.splitlines()[-1].startswith(f"{len(ids)} passed"), out[-6000:]
