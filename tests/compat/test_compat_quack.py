"""quack's own tests (quack-kernels 0.5.3, Dao-AILab), unchanged, under ``cutelab run -m pytest`` on the CPU.

The README's test command fetches the pinned quack (``python3 scripts/quack_tests.py --fetch .quack``:
the wheel without its dependencies, einops and apache-tvm-ffi into .quack/site, the sdist's test files
into .quack/tests; no nvidia-cutlass-dsl, no Triton). A few of its smallest cases run here: softmax,
cross-entropy with class weights, RMSNorm forward and backward (also over a cluster of 2 CTAs),
LayerNorm, on the SM90 paths (CUTE_DSL_ARCH=sm_90a) and the SM80 paths (sm_80), and three SM90 GEMM cases
that launch GEMMs (a run of their own, about 20 s of the test's time on this machine).
scripts/quack_tests.py runs the larger selection.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
QUACK = os.environ.get("CUTELAB_QUACK_DIR", os.path.join(ROOT, ".quack"))

SM90 = (
    "tests/test_softmax.py::test_softmax[False-1-192-input_dtype0]",
    "tests/test_cross_entropy.py::test_cross_entropy[False-True-1-192-input_dtype0]",
    "tests/test_rmsnorm.py::test_rmsnorm_forward_backward[False-1-192-input_dtype0-weight_dtype0-1e-06]",
    "tests/test_layernorm.py::test_layernorm_forward[256-1-input_dtype0-1e-05]",
    # clusters of 2 CTAs: st.async of type(val)'s suffix to the peer's shared memory, and (backward) the
    # reduction barriers at a runtime stage
    "tests/test_rmsnorm.py::test_rmsnorm_fwd_tuned_config[128-32-2-None]",
    "tests/test_rmsnorm.py::test_rmsnorm_bwd_tuned_config[128-32-2-None-None]",
)
# quack's SM90 GEMMs at their tests' sizes (M, K, N = 256, 512, 512, bf16), each launching GEMM kernels on the CPU:
# the forward under autocast; gemm_act's forward and its backward with x frozen (the dynamic persistent scheduler's
# nvvm.atomicrmw on a placeholder semaphore pointer, multicast TMA of MN-major tiles wider than the swizzle span
# over clusters of 2 CTAs); the gated GEMM's configurations without ping-pong (prmt and runtime-offset shuffles
# in its epilogue)
GEMM_SM90 = (
    "tests/test_linear.py::test_autocast[linear_func-False]",
    "tests/test_linear.py::test_linear_act_partial_grad[input_dtype0-x-gelu_tanh_approx]",
    "tests/test_linear.py::test_gemm_gated_pingpong_configs[False]",
)
SM80 = (
    "tests/test_softmax.py::test_softmax[False-1-192-input_dtype1]",
    "tests/test_rmsnorm.py::test_rmsnorm_forward_backward[False-1-192-input_dtype1-None-1e-06]",
)


def _fetched() -> bool:
    return os.path.isdir(os.path.join(QUACK, "site", "quack")) and os.path.isdir(os.path.join(QUACK, "tests"))


@pytest.mark.skipif(not _fetched(), reason=f"quack-kernels 0.5.3 is not fetched into {QUACK}: run "
                    "`python3 scripts/quack_tests.py --fetch .quack` (the README's test command does)")
@pytest.mark.parametrize("arch,ids", [("sm_90a", SM90), ("sm_90a", GEMM_SM90), ("sm_80", SM80)],
                         ids=["sm90", "sm90_gemm", "sm80"])
def test_quack_tests_pass_under_cutelab_run(tmp_path, arch, ids):
    sel = tmp_path / "ids.txt"
    sel.write_text("\n".join(ids) + "\n")
    files = sorted({i.split("::")[0][len("tests/test_"):-len(".py")] for i in ids})
    res = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "quack_tests.py"), "--dir", QUACK,
                          "--arch", arch, "--ids", str(sel), "--files", ",".join(files)],
                         capture_output=True, text=True, timeout=600)
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-6000:]
    lines = [ln for ln in res.stdout.splitlines() if ln.startswith("tests/test_")]
    passed = sum(int(ln.split(": ")[1].split(" passed")[0]) for ln in lines)
    assert passed == len(ids), out[-6000:]
    assert f"{len(ids)} passed" in res.stdout.splitlines()[-1], out[-6000:]
