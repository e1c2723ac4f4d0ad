"""CUTLASS's JAX programs (examples/python/CuTeDSL/dsl_tutorials/jax and tvm_ffi/jit_and_use_in_jax.py), run
unchanged by `cutelab run` on the emulated CUDA device (jax on the CPU) to their own checks, and the mechanisms
they needed: ``cutlass.jax.cutlass_call`` as an XLA custom call whose handler runs the launcher on cutelab's
interpreter (under jax.jit, shard_map over several CPU devices, custom_partitioning, jax.export with symbolic
shapes), the emulated ``nvidia-smi`` and the ``nvidia-cutlass-dsl`` metadata the notebook asks for.

The files in tests/compat/programs/jax (and tutorials/tvm_ffi/jit_and_use_in_jax.py) are CUTLASS's, byte for byte, as of CUTLASS commit
7107b05535f8977f5ecb9d01ee203205b1fd9bc4 (BLOBS: their git blob ids there). The notebook cute_dsl_jax.ipynb
passes in a targeted run (`cutelab run cute_dsl_jax.ipynb`, 7.5 minutes: its timing cell runs a 512^3 naive GEMM
21 times); CI runs cute_dsl_jax_kernels.py, which checks the same kernels, and the notebook's device queries.
"""
import hashlib
import importlib.util
import os
import re

import pytest

from compat_helpers import ok, run

_JAX = importlib.util.find_spec("jax")
pytestmark = pytest.mark.skipif(_JAX is None, reason="JAX is not installed (pip install jax): cutlass.jax's tests "
                                                     "need it")

JAX_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs", "jax")
BLOBS = {
    "cute_dsl_jax.ipynb": "70ef40b7590d3ae1a36bf8d2d063eaa0876c85bb",
    "cute_dsl_jax_kernels.py": "708936871396bc7b6994cf9c7938595deabc5f2a",
    "cutlass_call_basic.py": "e0232e27eb3ff26c27042149020aa5d3358c6ae6",
    "cutlass_call_export.py": "f0a494f2e47f78ff8ae1b78e794f135d2cde10d0",
    "cutlass_call_sharding.py": "5f92cc55a99783a45c06732cd6a412ea6d9689ca",
    "elementwise_apply_example.py": "1b4e96ca9985ecea8410041b726bf3350e89c1c0",
    "../tutorials/tvm_ffi/jit_and_use_in_jax.py": "e0ae994e0653776a0fb1a253cb502485eb7e2b46",
}
# where jax lives, when a plain interpreter would not find it (a --target install)
_SITE = os.path.dirname(os.path.dirname(os.path.abspath(_JAX.origin))) if _JAX else ""
EXTRA = [] if os.path.basename(_SITE) in ("site-packages", "dist-packages", "") else [_SITE]


def _run(tmp_path, name, *args, env=None):
    return ok(run(tmp_path, open(os.path.join(JAX_DIR, name)).read(), *args, extra_path=[JAX_DIR, *EXTRA],
                  env=env, timeout=600))


def test_carried_files_are_cutlass():
    for name, blob in BLOBS.items():
        with open(os.path.join(JAX_DIR, name), "rb") as f:
            data = f.read()
        assert hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest() == blob, name


def test_kernels_pass_their_checks(tmp_path):
    out = _run(tmp_path, "cute_dsl_jax_kernels.py")
    for k in ("vector_add", "saxpy", "relu", "fused_bias_relu", "gemm", "elementwise_add"):
        assert re.search(rf"^{k}:\s+PASSED$", out, re.M), out
    assert "All kernels passed." in out


def test_basic_call_forms(tmp_path):
    """Dynamic layouts by default, static ones on request, TensorSpec modes, aliased outputs left out of the
    kernel's arguments; the kernel's printf shows the values and layouts it got."""
    out = _run(tmp_path, "cutlass_call_basic.py")
    # dynamic by default (the trace-time print), as CuTe DSL's: each extent known divisible by its concrete
    # value, each stride by the extents inside it, the innermost stride a static 1
    assert "A layout:  (?{div=512},?{div=32},?{div=64}):(?{i64 div=2048},?{i64 div=64},1)" in out
    assert "A layout: (512,32,64):(2048,64,1)" in out  # the kernel's printf
    # static mode-permuted A; dynamic B seen as (3,1,2,0); output D as (0,1,3,2)
    assert "A layout:  (32,512,64):(64,2048,1)" in out
    assert "B layout:  (?{div=128},?{div=256},?{div=64},?):(1,?{i64 div=8192},?{i64 div=128},?{i64 div=2097152})" \
        in out
    assert "B layout: (128,256,64,1):(1,8192,128,2097152)" in out
    assert "D layout: (1,256,128,64):(2097152,8192,1,128)" in out
    for x, y in ((0, 1), (1, 2), (3, 4), (5, 6), (7, 8)):
        assert f"X is:  {x}\nY is:  {y}" in out  # keyword arguments are compile-time values
        assert f"X is: {x}\nY is: {y}" in out
    aliased = out.split("run_cutlass_kernel_aliased_outputs")[1]
    assert "C layout" not in aliased and "B layout: (1,256,64,128)" in aliased


def test_export_concrete_and_symbolic(tmp_path):
    out = _run(tmp_path, "cutlass_call_export.py", "--M", "64", "--N", "32")
    assert out.count(": OK") == 7 and out.rstrip().endswith("PASS"), out


def test_sharding_over_two_cpu_devices(tmp_path):
    out = _run(tmp_path, "cutlass_call_sharding.py", env={"XLA_FLAGS": "--xla_force_host_platform_device_count=2"})
    assert "only 1 GPU" not in out and out.rstrip().endswith("PASS"), out
    # each device's shard is a (32,16,64) block, for shard_map and for custom_partitioning
    assert out.count("a: (32,16,64):(1024,64,1)") == 4, out


@pytest.mark.parametrize("op", ["add", "leaky_relu"])
def test_elementwise_apply(tmp_path, op):
    out = _run(tmp_path, "elementwise_apply_example.py", "--M", "128", "--N", "512", "--op", op)
    assert "Results verified successfully!" in out and out.rstrip().endswith("PASS"), out


def test_tvm_ffi_function_as_a_jax_target(tmp_path):
    """tvm_ffi/jit_and_use_in_jax.py: a function compiled with --enable-tvm-ffi, registered through jax_tvm_ffi
    (cutelab's stand-in while the device is emulated) for the "gpu", called with jax.ffi.ffi_call."""
    out = _run(tmp_path, "../tutorials/tvm_ffi/jit_and_use_in_jax.py")
    assert out.endswith("result of b_jax after add_one_cute\n[ 1.  2.  3.  4.  5.  6.  7.  8.  9. 10.]\n"), out


MECHANISMS = r"""
import jax, jax.numpy as jnp, numpy as np
import cutlass, cutlass.cute as cute, cutlass.jax as cjax
import cuda.bindings.driver as cuda

@cute.kernel
def scale(a: cute.Tensor, c: cute.Tensor):
    t, _, _ = cute.arch.thread_idx()
    for j in range(cute.size(a, mode=[1])):
        c[t, j] = a[t, j] * 2.0 + c[t, j]

@cute.jit
def launch(stream: cuda.CUstream, a: cute.Tensor, c: cute.Tensor):
    print("a:", a.layout)
    scale(a, c).launch(grid=[1, 1, 1], block=[cute.size(a, mode=[0]), 1, 1], stream=stream)

a = jnp.arange(24, dtype=jnp.float32).reshape(8, 3)
c0 = jnp.ones((8, 3), jnp.float32)
# column-major physical layout for both (XLA lays the buffers out so), c aliased to the output
col = cjax.TensorSpec(layout=(0, 1), static=True)
f = jax.jit(lambda a, c: cjax.cutlass_call(
    lambda stream, a, c: launch(stream, a, c), output_shape_dtype=c, input_spec=(col, col), output_spec=col,
    input_output_aliases={1: 0})(a, c))
r = f(a, c0)
assert np.array_equal(np.asarray(r), 2 * np.asarray(a) + 1), r
try:
    cjax.cutlass_call(launch, output_shape_dtype=a, ffi_call_target="mine")
except Exception as e:
    print("refused:", e)
try:
    jax.jit(cjax.cutlass_call(launch, output_shape_dtype=a, input_spec=cjax.TensorSpec(mode=(0, 0))))(a)
except ValueError as e:
    print("bad mode:", e)
def fails(stream, a, c):
    raise ValueError("the launcher's own error")
try:
    np.asarray(jax.jit(cjax.cutlass_call(fails, output_shape_dtype=a))(a))
except Exception as e:
    print("raised:", type(e).__name__, e)
print("OK")
"""


def test_cutlass_call_layouts_aliases_and_errors(tmp_path):
    out = ok(run(tmp_path, MECHANISMS, extra_path=EXTRA, timeout=300))
    assert "a: (8,3):(1,8)" in out, out  # the column-major layout the spec asked for, static
    assert re.search(r"refused: .*ffi_call_target='mine'", out), out
    assert re.search(r"bad mode: cutlass_call: input 0 has mode \(0, 0\), which is not a permutation", out), out
    # an error in the launcher reaches the caller of the jitted function, with its text
    assert re.search(r"raised: .*cutlass_call failed: ValueError: the launcher's own error", out), out
    assert out.rstrip().endswith("OK")


def test_notebook_device_queries(tmp_path):
    """The notebook's version and compute-capability cells: nvidia-smi answers for the emulated part and
    importlib.metadata for nvidia-cutlass-dsl; a query it cannot answer exits 2 saying what it answers."""
    out = ok(run(tmp_path, """
        import subprocess
        from importlib.metadata import version
        import cutlass
        print(version("nvidia-cutlass-dsl"))
        print(subprocess.check_output(["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"], text=True))
        p = subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm", "--format=csv"], capture_output=True, text=True)
        print(p.returncode, p.stderr)
    """, env={"CUTE_DSL_ARCH": "sm_100a"}))
    assert out.startswith("4.8.1+cutelab\n10.0\n"), out
    assert "2 nvidia-smi (cutelab's emulated CUDA device): cannot answer" in out and "clocks.sm" in out
