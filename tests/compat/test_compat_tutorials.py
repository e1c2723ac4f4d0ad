"""CUTLASS's CuTe DSL tutorials (examples/python/CuTeDSL/dsl_tutorials), run unchanged by `cutelab run`
on the emulated CUDA device, to their own checks; and the mechanisms they needed, tested on their own.

The files in tests/compat/programs/tutorials are CUTLASS's, byte for byte, as of CUTLASS commit
7107b05535f8977f5ecb9d01ee203205b1fd9bc4:
- inline_ptx.py: vote.sync through llvm.inline_asm (with an immediate "i" operand) and through
  cute.arch.vote_{ballot,any,all,uni}_sync, each checked against the other;
- torch_fake_tensor.py: cute.compile of a tensor of torch's FakeTensorMode, then a call with real data;
- dynamic_smem_size.py: kernels launched with dynamic shared memory, cutlass.cuda.stream_sync;
- call_bypass_dlpack.py, call_from_jit.py, tvm_ffi/ampere_gemm_with_fake_tensor.py: CUTLASS's Ampere
  TensorOpGemm (programs/cute/ampere/kernel/dense_gemm/tensorop_gemm.py, where their sys.path lines
  find it) on raw pointers, a user JitArgument type, and fake tensors with sym_ints, each checked
  against torch at atol=rtol=1e-5;
- launch_completion_and_programmatic_events.py: launches with launch_completion_event /
  programmatic_event (runtime cudaEvent_t and driver CUevent wrapping torch's events), and in a CUDA
  graph. Without a GPU a launch has completed when it returns, so the events have fired; on a GPU
  cutelab refuses these attributes by name (not yet set there).
"""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from compat_helpers import SRC, ok, run

HERE = os.path.dirname(os.path.abspath(__file__))
TUTORIALS = os.path.join(HERE, "programs", "tutorials")
@pytest.mark.parametrize("name,args,expect", [
    ("inline_ptx.py", [], r"Results verified successfully!"),
    ("torch_fake_tensor.py", [], r"tensor\(raw_ptr\(0x[0-9a-f]+: f32, generic, align<4>\) o \(3,4\):\(4,1\), data="),
    ("dynamic_smem_size.py", [], r"Kernel launch smem size: \d+\nPASS"),
    ("launch_completion_and_programmatic_events.py", ["--n-blocks", "4"],
     r"runtime event fired and output verified.\n(.|\n)*runtime event fired and output verified.\n\nPASS"),
    ("launch_completion_and_programmatic_events.py", ["--n-blocks", "4", "--use-driver-api", "--trigger-at-block-start"],
     r"driver event fired and output verified.\n(.|\n)*driver event fired and output verified.\n\nPASS"),
])
def test_tutorial_runs_unchanged(tmp_path, name, args, expect):
    assert "cutelab" not in open(os.path.join(TUTORIALS, name)).read()  # CUTLASS's file, not a port
    out = ok(run(tmp_path, open(os.path.join(TUTORIALS, name)).read(), *args, timeout=600))
    assert re.search(expect, out), out[-3000:]


# CuTe DSL 4.8.1's compile-time prints for cute/tvm_ffi/fp4_x2_tensor.py (its kernel and cute.compile run under
# CUTE_DSL_ARCH=sm_90a on the CPU, the program's torch lines left out: compiling needs no tensor)
FP4_X2_DSL = [
    "[Compile INFO] Float4E2M1FN: tensor<ptr<f4E2M1FN, gmem, align<16>> o (?,?{div=2}):(?{i64 div=2},1)>",
    "[Compile INFO] Uint8: tensor<ptr<i8, gmem, align<16>> o (?,?):(?{i64},1)>",
    "[Compile INFO] Float4E2M1FN casted from Uint8: tensor<ptr<f4E2M1FN, gmem, align<16>> o "
    "(?,?{div=2}):(?{i64 div=2},1)>",
]


def test_fp4_x2_tensor_recasts_a_global_argument_and_prints_as_cute_dsl(tmp_path):
    """cute/tvm_ffi/fp4_x2_tensor.py (CUTLASS's, unchanged) recasts its Uint8 global-memory argument to
    Float4E2M1FN inside the kernel and prints the three tensors while compiling; then it calls the compiled
    function with a torch.float4_e2m1fn_x2 tensor."""
    path = os.path.join(HERE, "programs", "cute", "tvm_ffi", "fp4_x2_tensor.py")
    out = ok(run(tmp_path, open(path).read()))
    assert [line for line in out.splitlines() if line.startswith(("[Compile INFO] Float4", "[Compile INFO] Uint8"))] \
        == FP4_X2_DSL, out
    assert "[Runtime INFO] Function call completed successfully!" in out


def test_a_global_argument_recast_in_the_kernel_is_read_and_written_through_its_address(tmp_path):
    # as CuTe DSL's recast pointer: the argument's bytes read and written as another whole-byte type (CUTLASS's MoE
    # kernels keep Int32 offsets in a byte workspace)
    p = run(tmp_path, """
        import numpy as np
        import cutlass
        import cutlass.cute as cute
        from cutlass.cute.runtime import from_dlpack

        @cute.kernel
        def k(a: cute.Tensor, out: cute.Tensor):
            h = cute.recast_tensor(a, cutlass.Uint16)
            back = cute.recast_tensor(h, cutlass.Uint8)
            print(h, back)
            out[0] = h[1]
            o8 = cute.recast_tensor(out, cutlass.Uint8)
            o8[2] = back[5]

        @cute.jit
        def f(a: cute.Tensor, out: cute.Tensor):
            k(a, out).launch(grid=(1, 1, 1), block=(1, 1, 1))

        out = np.zeros(2, np.uint16)
        f(from_dlpack(np.arange(8, dtype=np.uint8)), from_dlpack(out))
        print(out.tolist())
    """)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "tensor<ptr<i16, generic> o (4):(1)> tensor<ptr<i8, generic> o (8):(1)>" in p.stdout, p.stdout
    assert p.stdout.splitlines()[-1] == "[770, 5]", p.stdout  # bytes 2, 3 as one little-endian Uint16; byte 5


@pytest.mark.parametrize("rel,expect", [
    ("tutorials/call_bypass_dlpack.py", r"First few elements of result"),
    ("hopper/cta_norm.py --M 64 --N 256 --iterations 2", r"Results verified successfully!\n\nPASS"),
    ("utils/test_sparse_utils.py", r"cpu d == ref\ncuda d == ref"),
    ("hopper/cta_norm.py --M 64 --N 256 --iterations 2 --norm_type rms", r"Results verified successfully!\n\nPASS"),
    ("tutorials/call_from_jit.py", r"First few elements of result"),
    ("tutorials/tvm_ffi/ampere_gemm_with_fake_tensor.py",
     r"(Verification successful!(.|\n)*){2}"
     r"\[Runtime Error\]: bmm: argument 1 .*shape\[1\] = 512, but the same sym_int is 256 in argument 0's shape\[2\]"
     r"(.|\n)*shape\[2\] = 257 is not a multiple of 16(.|\n)*shape\[0\] is 4, the fake's is 2"),
])
def test_programs_run_in_place_and_pass_their_checks(rel, expect):
    """CUTLASS programs run where they are stored (with their arguments): the tutorials that call its Ampere
    TensorOpGemm (programs/cute/ampere/..., CUTLASS's file, found by the programs' own sys.path line) check
    the fp16 result against torch at atol=rtol=1e-5, which the emulated device's torch GEMM meets by rounding
    as a tensor-core GEMM does (as cuBLAS's does on the GPU); hopper/cta_norm.py (layer and RMS norm) reads
    shared memory in a conditional expression only on the side its threads take; utils/test_sparse_utils.py
    (CUTLASS's 2:4 sparse compressor, sparse_utils.py beside it) compares a list of runtime values with a
    list in its kernel's conditions and ORs a Uint32 tensor element with an Int32, then checks a sparse
    emulation GEMM against torch."""
    rel, *args = rel.split()
    path = os.path.join(HERE, "programs", rel)
    env = dict(os.environ, PYTHONPATH=SRC, PYTHONHASHSEED="0")
    env.pop("CUTE_DSL_ARCH", None)
    p = subprocess.run([sys.executable, "-m", "cutelab", "run", path, *args], cwd=os.path.dirname(path), env=env,
                       capture_output=True, text=True, timeout=900)
    out = ok(p)
    assert re.search(expect, out), out[-3000:]


def test_emulated_half_gemm_rounds_as_the_interpreters_mma():
    """torch's fp16/bf16 matmul / bmm / @ / einsum on emulated-"cuda" tensors: float32 accumulation over
    16-wide K steps, each exact dot added with one rounding; equal to a kernel's mma.sync result."""
    torch = pytest.importorskip("torch")
    from cutelab.compat.torch_cuda import _einsum_contraction, _tensor_core_einsum, _tensor_core_matmul

    g = torch.Generator().manual_seed(0)
    for dt in (torch.float16, torch.bfloat16):
        a = torch.randn(3, 40, 37, generator=g).to(dt)  # K = 37: a partial last step
        b = torch.randn(3, 37, 24, generator=g).to(dt)
        want = np.zeros((3, 40, 24), np.float32)
        a64, b64 = a.double().numpy(), b.double().numpy()
        for k0 in range(0, 37, 16):
            want = (want.astype(np.float64) + a64[..., k0:k0 + 16] @ b64[..., k0:k0 + 16, :]).astype(np.float32)
        got = _tensor_core_matmul(a, b)
        assert got.dtype == dt and torch.equal(got, torch.from_numpy(want).to(dt))
        ein = _einsum_contraction(("lmk,lkn->lmn", a, b))
        assert ein is not None and torch.equal(_tensor_core_einsum(*ein), got)
        assert torch.equal(_tensor_core_einsum(*_einsum_contraction(("lnk,lmk->mnl", b.transpose(1, 2), a))),
                           got.permute(1, 2, 0))
    assert _einsum_contraction(("ij,jk,kl->il", a, b, b)) is None  # not one GEMM: torch's own einsum


def test_vote_sync_over_members_of_each_warp():
    """cute.arch.vote_*_sync (inline vote.sync): per warp, over the lanes the member mask names."""
    import cutelab as cute
    from cutelab.compat.dsl_names import ARCH_EXTRAS
    from cutelab.runtime import from_dlpack

    ballot, any_, all_, uni = (ARCH_EXTRAS[f"vote_{k}_sync"] for k in ("ballot", "any", "all", "uni"))

    @cute.kernel
    def k(P: cute.Tensor, B: cute.Tensor, Y: cute.Tensor, A: cute.Tensor, U: cute.Tensor, mask: cute.Uint32):
        t, _, _ = cute.arch.thread_idx()
        p = P[t] != 0
        B[t] = ballot(p, mask)
        Y[t] = cute.Int32(any_(p, mask))
        A[t] = cute.Int32(all_(p, mask))
        U[t] = cute.Int32(uni(p, mask))

    rng = np.random.default_rng(0)
    P = (rng.random(64) < 0.5).astype(np.int32)
    P[32:] = 1  # the second warp: all true
    mask = 0x0000FF0F
    outs = [np.zeros(64, np.int32) for _ in range(4)]
    k(from_dlpack(P), *map(from_dlpack, outs), mask).launch(grid=1, block=64)
    lanes = [l for l in range(32) if mask >> l & 1]
    for w in range(2):
        p = P[32 * w:32 * w + 32]
        want_ballot = sum(int(p[l]) << l for l in lanes)
        sel = p[lanes]
        assert np.all(outs[0][32 * w:32 * w + 32].view(np.uint32) == want_ballot)
        assert np.all(outs[1][32 * w:32 * w + 32] == int(sel.any()))
        assert np.all(outs[2][32 * w:32 * w + 32] == int(sel.all()))
        assert np.all(outs[3][32 * w:32 * w + 32] == int(sel.all() or not sel.any()))


def test_immediate_constraint_needs_a_constant():
    import cutelab as cute
    from cutelab.errors import TraceError
    from cutelab.kernel.instr.inline_asm import inline_asm
    from cutelab.numeric import Int32
    from cutelab.runtime import from_dlpack

    @cute.kernel
    def k(X: cute.Tensor):
        t, _, _ = cute.arch.thread_idx()
        X[t] = inline_asm(Int32, [X[t], 5], "add.s32 $0, $1, $2;", "=r,r,i", "here")  # an immediate: fine
        X[t] = inline_asm(Int32, [X[t], X[t]], "add.s32 $0, $1, $2;", "=r,r,i", "there")  # not a constant

    X = np.arange(4, dtype=np.int32)
    with pytest.raises(TraceError, match=r"immediate constraint 'i', so it must be a constant"):
        k(from_dlpack(X)).launch(grid=1, block=4)


def test_torch_fake_tensor_compiles_and_the_call_runs_on_real_data():
    """from_dlpack of a FakeTensorMode tensor is a fake tensor (cute.runtime.make_fake_tensor): no storage read."""
    torch = pytest.importorskip("torch")
    from torch._subclasses.fake_tensor import FakeTensorMode

    import cutelab as cute
    from cutelab.fake import FakeTensor
    from cutelab.runtime import from_dlpack

    @cute.kernel
    def k(X: cute.Tensor):
        t, _, _ = cute.arch.thread_idx()
        X[t] = X[t] * 2

    @cute.jit
    def f(X: cute.Tensor):
        k(X).launch(grid=1, block=8)

    with FakeTensorMode():
        fake = torch.zeros((8,), dtype=torch.float32)
        ft = from_dlpack(fake)
        assert isinstance(ft, FakeTensor)
        cf = cute.compile(f, ft)
    x = torch.arange(8, dtype=torch.float32)
    cf(from_dlpack(x))
    assert torch.equal(x, torch.arange(8, dtype=torch.float32) * 2)


def test_pointer_forwards_the_jit_argument_protocols():
    """A user type that wraps a cute.Pointer forwards the DSL's protocols to it (dsl_tutorials/call_from_jit.py)."""
    from cutelab import Float16
    from cutelab.runtime import make_ptr

    a = np.zeros(16, np.float16)
    p = make_ptr(Float16, a.ctypes.data, assumed_align=16)
    assert p.value_type is Float16 and p.dtype is Float16
    vals = p.__extract_mlir_values__()
    assert p.__new_from_mlir_values__(vals) is p


def test_export_to_c_of_a_local_function_is_refused_by_name():
    """An ahead-of-time export (tests/compat/test_compat_aot.py) rebuilds the function from its module by name
    when loaded: one defined inside another function is a clear error, for compiled and fake-compiled alike."""
    import cutelab as cute
    from cutelab.errors import CompileError
    from cutelab.fake import make_fake_compact_tensor
    from cutelab.runtime import from_dlpack

    @cute.jit
    def show(t: cute.Tensor):
        cute.print_tensor(t)

    for arg in (from_dlpack(np.zeros(4, np.float32)), make_fake_compact_tensor(cute.Float32, (4,))):
        cf = cute.compile(show, arg)
        with pytest.raises(CompileError, match=r"show\.export_to_c: test_export_to_c_of_a_local_function_is_refused_"
                                               r"by_name\.<locals>\.show is not defined at the top of its module"):
            cf.export_to_c(file_path="x", file_name="y", function_prefix="z")


def test_tune_skips_configurations_that_fail_and_names_them_when_none_runs():
    from cutelab.compat.dsl_testing import CantImplementError, autotune_jit, tune
    from cutelab.testing import JitArguments

    ran = []

    def build(x, bits=1):
        if bits == 3:
            raise CantImplementError("bits=3 does not fit")
        return lambda: ran.append((x, bits))

    best = tune(build, params_dict={"bits": [3, 1, 2]}, kernel_arguments=JitArguments(7), warmup_iterations=0,
                iterations=1)
    assert best in ({"bits": 1}, {"bits": 2}) and {b for _, b in ran} == {1, 2} and {x for x, _ in ran} == {7}
    with pytest.raises(ValueError, match=r"no configuration ran; \{'bits': 3\}: CantImplementError: bits=3"):
        tune(build, params_dict={"bits": [3]}, kernel_arguments=JitArguments(7))

    seen = []

    @autotune_jit(params_dict={"b": [1, 2]}, update_on_change=["m"], warmup_iterations=0, iterations=1)
    def f(m, b=0):
        seen.append((m, b))

    f(4)  # tunes: both values of b run
    first = len(seen)
    assert {b for _, b in seen} == {1, 2}
    f(4)  # the same m: the kept best, one call
    assert len(seen) == first + 1
    f(5)  # m, given positionally, changed: tuned again (both values of b with m=5)
    assert {b for m, b in seen if m == 5} == {1, 2}


def test_autotune_tutorial_runs_unchanged(tmp_path):
    """ampere/tutorial/elementwise_add_autotune.py: cutlass.testing.tune and autotune_jit at a small size."""
    out = ok(run(tmp_path, open(os.path.join(TUTORIALS, "elementwise_add_autotune.py")).read(), "--M", "128", "--N",
                 "128", "--iterations", "1", "--warmup_iterations", "0", timeout=900))
    assert out.count("Results verified successfully!") == 2 and out.rstrip().endswith("PASS"), out[-3000:]
