"""CUTLASS's CuTe DSL tutorials (examples/python/CuTeDSL/dsl_tutorials), run unchanged by `cutelab run`
on the emulated CUDA device, to their own checks; and the mechanisms they needed, tested on their own.

The files in tests/compat/programs/tutorials are CUTLASS's, byte for byte, as of CUTLASS commit
7107b05535f8977f5ecb9d01ee203205b1fd9bc4:
- inline_ptx.py: vote.sync through llvm.inline_asm (with an immediate "i" operand) and through
  cute.arch.vote_{ballot,any,all,uni}_sync, each checked against the other;
- torch_fake_tensor.py: cute.compile of a tensor of torch's FakeTensorMode, then a call with real data;
- dynamic_smem_size.py: kernels launched with dynamic shared memory, cutlass.cuda.stream_sync;
- launch_completion_and_programmatic_events.py: launches with launch_completion_event /
  programmatic_event (runtime cudaEvent_t and driver CUevent wrapping torch's events), and in a CUDA
  graph. Without a GPU a launch has completed when it returns, so the events have fired; on a GPU
  cutelab refuses these attributes by name (not yet set there).
"""
import os
import re

import numpy as np
import pytest

from compat_helpers import ok, run

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


def test_export_to_c_is_refused_by_name():
    """dsl_tutorials/export/export_to_c.py: an ahead-of-time export is a clear error, not an AttributeError."""
    import cutelab as cute
    from cutelab.errors import CompileError
    from cutelab.fake import make_fake_compact_tensor
    from cutelab.runtime import from_dlpack

    @cute.jit
    def show(t: cute.Tensor):
        cute.print_tensor(t)

    for arg in (from_dlpack(np.zeros(4, np.float32)), make_fake_compact_tensor(cute.Float32, (4,))):
        cf = cute.compile(show, arg)
        with pytest.raises(CompileError, match=r"show\.export_to_c: cutelab has no ahead-of-time export"):
            cf.export_to_c(file_path="x", file_name="y", function_prefix="z")
