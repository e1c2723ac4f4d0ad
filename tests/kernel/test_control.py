"""Kernels II: runtime loops and branches (the AST rewrite), scalar arguments, shared memory,
barriers, TensorSSA comparisons; on the CPU interpreter, and the CUDA printer's text."""

from __future__ import annotations

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
from cutelab.errors import LaunchError, TraceError
from cutelab.kernel.cuda import printer as cuda
from cutelab.kernel.launch.plan import last_launch
from cutelab.numeric import Float32, Int8, Int32, Uint8
from cutelab.runtime import from_dlpack


@cute.kernel
def row_sum(A: cute.Tensor, B: cute.Tensor, n: cutlass.Int32):
    tidx, _, _ = cute.arch.thread_idx()
    acc = A[tidx, 0] * 0
    for j in range(n):
        acc = acc + A[tidx, j]
    if tidx % 2 == 0:
        acc = acc * 2
    else:
        acc = acc - 1
    B[tidx] = acc


def _row_sum_ref(A, n):
    s = A[:, :n].sum(axis=1)
    return np.where(np.arange(len(A)) % 2 == 0, s * 2, s - 1)


def test_runtime_loop_and_branch_run_per_thread():
    A = np.arange(32, dtype=np.float32).reshape(4, 8)
    B = np.zeros(4, np.float32)
    row_sum(from_dlpack(A), from_dlpack(B), 5).launch(grid=1, block=4)
    np.testing.assert_array_equal(B, _row_sum_ref(A, 5))


def test_scalar_argument_needs_no_new_trace():
    A = np.arange(32, dtype=np.float32).reshape(4, 8)
    B = np.zeros(4, np.float32)
    row_sum(from_dlpack(A), from_dlpack(B), 3).launch(grid=1, block=4)
    ir = last_launch().ir
    for n in (0, 1, 8):
        row_sum(from_dlpack(A), from_dlpack(B), n).launch(grid=1, block=4)
        assert last_launch().ir is ir  # the same trace, a new value
        np.testing.assert_array_equal(B, _row_sum_ref(A, n))


def test_runtime_loop_prints_as_a_cuda_loop():
    A = np.zeros((4, 8), np.float32)
    row_sum(from_dlpack(A), from_dlpack(np.zeros(4, np.float32)), 2).launch(grid=1, block=4)
    src = cuda.render(last_launch().ir)
    assert "const int n)" in src
    assert "for (int i0 = 0; i0 < (int)(((int)n)); i0 += 1) {" in src
    assert "if (((((unsigned int)threadIdx.x) % 2u) == 0u)) {" in src and "} else {" in src


def test_out_of_bounds_in_a_runtime_loop_writes_nothing():
    A = np.arange(32, dtype=np.float32).reshape(4, 8)
    B = np.full(4, -7, np.float32)
    with pytest.raises(LaunchError, match="load from A: offsets .* outside the tensor's 32 elements; nothing"):
        row_sum(from_dlpack(A), from_dlpack(B), 9).launch(grid=1, block=4)
    assert (B == -7).all()


def test_gpu_guards_accesses_it_cannot_prove():
    from cutelab.kernel.analysis.bounds import check_bounds

    @cute.kernel
    def nested(A: cute.Tensor, n: cutlass.Int32):
        tidx, _, _ = cute.arch.thread_idx()
        for i in range(n):
            for j in range(n):
                A[i * 8 + j] = 1.0

    A = np.zeros(64, np.float32)
    nested(from_dlpack(A), 3).launch(grid=1, block=1)
    assert A.reshape(8, 8)[:3, :3].sum() == 9 and A.sum() == 9
    ir = last_launch().ir
    check_bounds(ir, "gpu")  # not provable (nested runtime loops): guarded in the CUDA (kernel/analysis/guards.py)
    assert list(ir.guards.values()) == [1] and "cl_fail(1u);" in cuda.render(ir)


@cute.kernel
def doubling(A: cute.Tensor, n: cutlass.Int32):
    tidx, _, _ = cute.arch.thread_idx()
    x = A[tidx]
    while x < n:
        x = x * 2
    A[tidx] = x


def test_runtime_while_loop_per_thread_trip_counts():
    A = np.array([1, 3, 5, 40, 7, 32], np.int32)
    doubling(from_dlpack(A), 32).launch(grid=1, block=6)
    assert A.tolist() == [32, 48, 40, 40, 56, 32]
    src = cuda.render(last_launch().ir)
    assert "while (true) {" in src and "break;" in src


@cute.kernel
def reverse_blocks(A: cute.Tensor, B: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    smem = cutlass.utils.SmemAllocator()
    s = smem.allocate_tensor(cutlass.Float32, cute.make_layout(64), 16)
    s[tidx] = A[bidx * 64 + tidx]
    cute.arch.sync_threads()
    B[bidx * 64 + tidx] = s[63 - tidx]


def test_shared_memory_and_barrier():
    A = np.arange(256, dtype=np.float32)
    B = np.zeros_like(A)
    reverse_blocks(from_dlpack(A), from_dlpack(B)).launch(grid=4, block=64)
    np.testing.assert_array_equal(B, A.reshape(4, 64)[:, ::-1].ravel())
    src = cuda.render(last_launch().ir)
    assert "__shared__ alignas(16) float smem0[64];" in src
    assert "__syncthreads();" in src
    assert "__ldg(smem0" not in src  # shared memory is never read through the read-only path


def test_divergent_barrier_is_refused():
    @cute.kernel
    def k(A: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        if tidx < 3:
            cute.arch.sync_threads()
        A[tidx] = 1.0

    A = np.zeros(8, np.float32)
    with pytest.raises(LaunchError, match="sync_threads.*only some threads"):
        k(from_dlpack(A)).launch(grid=1, block=8)
    assert (A == 0).all()


def test_python_int_changed_in_runtime_loop_becomes_a_runtime_int32():
    # CuTe DSL carries a Python int that a dynamic loop assigns as an Int32 value
    @cute.kernel
    def k(A: cute.Tensor, n: cutlass.Int32):
        count = 0
        stage = 2
        for i in range(n):
            count = count + 1
            stage = stage + 1
            if stage == 3:
                stage = 0
        A[0] = count
        A[1] = stage

    A = np.zeros(4, np.float32)
    k(from_dlpack(A), 7).launch(grid=1, block=1)
    assert A[:2].tolist() == [7.0, 0.0]  # stage: 2 -> 0,1,2,0,1,2,0


def test_value_from_inside_a_branch_cannot_escape():
    @cute.kernel
    def k(A: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        if tidx < 2:
            y = A[tidx] + 1
        A[tidx] = y

    with pytest.raises(TraceError, match="computed inside a loop or branch that has ended"):
        k(from_dlpack(np.zeros(4, np.float32))).launch(grid=1, block=4)


def test_static_loops_and_const_expr_stay_python():
    @cute.kernel
    def k(A: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        for i in cutlass.range_constexpr(3):
            if cutlass.const_expr(i == 1):
                A[tidx * 3 + i] = 5.0
            else:
                A[tidx * 3 + i] = 1.0

    A = np.zeros(6, np.float32)
    k(from_dlpack(A)).launch(grid=1, block=2)
    assert A.tolist() == [1, 5, 1] * 2
    assert not last_launch().ir.structured  # no regions: straight-line code


def test_const_expr_refuses_runtime_values():
    @cute.kernel
    def k(A: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        if cutlass.const_expr(tidx < 2):
            A[tidx] = 1.0

    with pytest.raises(TraceError, match="const_expr: the expression is a runtime value"):
        k(from_dlpack(np.zeros(4, np.float32))).launch(grid=1, block=4)


def test_cutlass_range_is_a_loop_with_unroll():
    @cute.kernel
    def k(A: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        frag = cute.make_rmem_tensor(cute.make_layout(1), cutlass.Float32)
        frag[0] = 0.0
        for i in cutlass.range(4, unroll=2):
            frag[0] = frag[0] + A[tidx * 4 + i]
        A[tidx * 4] = frag[0]

    A = np.arange(8, dtype=np.float32)
    k(from_dlpack(A)).launch(grid=1, block=2)
    assert A[0] == 0 + 1 + 2 + 3 and A[4] == 4 + 5 + 6 + 7
    src = cuda.render(last_launch().ir)
    assert "#pragma unroll 2\n" in src and "for (int i0 = 0; i0 < 4; i0 += 1) {" in src


def test_tensor_value_comparisons_and_where():
    @cute.kernel
    def k(A: cute.Tensor, B: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        v = A[tidx]
        B[tidx] = cute.where(v > 2.0, v * 10.0, -v)

    A = np.array([1, 2, 3, 4], np.float32)
    B = np.zeros(4, np.float32)
    k(from_dlpack(A), from_dlpack(B)).launch(grid=1, block=4)
    assert B.tolist() == [-1, -2, 30, 40]
    assert "? " in cuda.render(last_launch().ir)


def test_float_scalar_argument():
    @cute.kernel
    def k(A: cute.Tensor, alpha: cutlass.Float32):
        tidx, _, _ = cute.arch.thread_idx()
        A[tidx] = A[tidx] * alpha

    A = np.array([1, 2, 3], np.float32)
    k(from_dlpack(A), 0.5).launch(grid=1, block=3)
    k(from_dlpack(A), cutlass.Float32(4.0)).launch(grid=1, block=3)
    assert A.tolist() == [2, 4, 6]
    assert "const float alpha)" in cuda.render(last_launch().ir)


@pytest.mark.parametrize("make,expected", [
    (lambda: Int8(300), 44), (lambda: Int8(-129), 127), (lambda: Uint8(-1), 255),
    (lambda: Int32(2 ** 31), -2 ** 31), (lambda: Int32(7) * 3, 21), (lambda: Int8(100) + 100, -56),
    (lambda: Int32(42).to(Float32), 42.0), (lambda: Float32(0.1), float(np.float32(0.1))),
    (lambda: Float32(1.0) / 3, float(np.float32(1.0) / np.float32(3.0))),
])
def test_numeric_scalar_semantics(make, expected):
    v = make()
    assert v == expected and type(v.value) in (int, float)


def test_numeric_kinds():
    assert Int32.is_integer and not Float32.is_integer
    assert Int8.is_same_kind(Int32) and not Int8.is_same_kind(Float32)
    assert Int32(5).dtype is Int32 and Float32(2).to(Int8).dtype is Int8


@pytest.mark.gpu
def test_gpu_shared_memory_and_static_loop():
    import torch

    A = torch.arange(256, dtype=torch.float32, device="cuda")
    B = torch.zeros_like(A)
    reverse_blocks(from_dlpack(A), from_dlpack(B)).launch(grid=4, block=64)
    torch.cuda.synchronize()
    assert torch.equal(B, A.reshape(4, 64).flip(1).reshape(-1))
    assert last_launch().mode == "gpu"


@cute.kernel
def _pred_add(gA: cute.Tensor, gB: cute.Tensor, gC: cute.Tensor, cC: cute.Tensor, shape: cute.Shape,
              tv: cute.Layout):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    blk = ((None, None), bidx)
    thrA = cute.composition(gA[blk], tv)[(tidx, None)]
    thrB = cute.composition(gB[blk], tv)[(tidx, None)]
    thrC = cute.composition(gC[blk], tv)[(tidx, None)]
    thrCrd = cute.composition(cC[blk], tv)[(tidx, None)]
    frgA = cute.make_fragment_like(thrA)
    frgB = cute.make_fragment_like(thrB)
    frgC = cute.make_fragment_like(thrC)
    frgPred = cute.make_rmem_tensor(thrCrd.shape, cutlass.Boolean)
    for i in range(0, cute.size(frgPred), 1):
        frgPred[i] = cute.elem_less(thrCrd[i], shape)
    cute.copy(None, thrA, frgA, pred=frgPred)
    cute.copy(None, thrB, frgB, pred=frgPred)
    frgC.store(frgA.load() + frgB.load())
    cute.copy(None, frgC, thrC, pred=frgPred)


@pytest.mark.parametrize("M,N", [(5, 13), (4, 32), (1, 1), (9, 70)])
def test_predicated_copy_with_identity_tensor(M, N):
    A = np.arange(M * N, dtype=np.float32).reshape(M, N)
    B = np.full_like(A, 0.5)
    C = np.full_like(A, np.nan)
    thr = cute.make_layout((4, 8), stride=(8, 1))
    val = cute.make_layout((1, 4), stride=(4, 1))
    tiler, tv = cute.make_layout_tv(thr, val)
    mA, mB, mC = (from_dlpack(x) for x in (A, B, C))
    gA, gB, gC = (cute.zipped_divide(x, tiler) for x in (mA, mB, mC))
    cC = cute.zipped_divide(cute.make_identity_tensor(mC.shape), tiler)
    _pred_add(gA, gB, gC, cC, mC.shape, tv).launch(grid=cute.size(gC, mode=[1]), block=cute.size(tv, mode=[0]))
    np.testing.assert_array_equal(C, A + B)
    body = cuda.render(last_launch().ir).split("__global__")[1]
    if M % 4 == 0 and N % 32 == 0:
        assert "if (" not in body  # the predicates are proved true: no branches
    else:
        assert body.count("if (") >= 3  # predicated accesses (those not decided at trace time)


def test_elem_less_static_and_identity_coordinates():
    assert cute.elem_less((1, 2), (4, 3)) is True and cute.elem_less((4, 0), (4, 3)) is False
    t = cute.make_identity_tensor((4, 3))
    assert t[2] == (2, 0) and t[(1, 2)] == (1, 2)


def _gpu_vs_cpu(kernel_fn, arrays, *scalars, grid=1, block=32):
    """Run a kernel on the GPU and on the CPU interpreter with the same inputs; both results."""
    import torch

    cpu = [a.copy() for a in arrays]
    kernel_fn(*[from_dlpack(a) for a in cpu], *scalars).launch(grid=grid, block=block)
    gpu = [torch.from_numpy(a.copy()).cuda() for a in arrays]
    kernel_fn(*[from_dlpack(t) for t in gpu], *scalars).launch(grid=grid, block=block)
    torch.cuda.synchronize()
    assert last_launch().mode == "gpu"
    return cpu, [t.cpu().numpy() for t in gpu]


@cute.kernel
def _gpu_regions(A: cute.Tensor, B: cute.Tensor, n: cutlass.Int32, alpha: cutlass.Float32):
    tidx, _, _ = cute.arch.thread_idx()
    frag = cute.make_rmem_tensor(cute.make_layout(1), cutlass.Float32)
    frag[0] = 0.0
    for i in cutlass.range(4, unroll=2):
        frag[0] = frag[0] + A[tidx * 4 + i]
    x = frag[0] * alpha
    if tidx % 3 == 0:
        x = x + 100.0
    elif tidx % 3 == 1:
        x = -x
    k = B[tidx] * 0.0 + 1.0
    while k < n:
        k = k * 2.0
    B[tidx] = cute.where(x > 0.0, x + k, x - k)


@pytest.mark.gpu
def test_gpu_loops_branches_scalars_match_the_interpreter():
    rng = np.random.default_rng(1)
    A = rng.standard_normal(128).astype(np.float32)
    B = np.zeros(32, np.float32)
    for n, alpha in ((5, 0.5), (40, -2.0)):
        cpu, gpu = _gpu_vs_cpu(_gpu_regions, [A, B], n, alpha)
        np.testing.assert_array_equal(cpu[1], gpu[1])
    src = last_launch().source
    assert "#pragma unroll 2" in src and "while (true) {" in src and "} else {" in src


@pytest.mark.gpu
def test_gpu_predicated_copy_exact_tiles():
    import torch

    M, N = 8, 64
    A = torch.arange(M * N, dtype=torch.float32, device="cuda").reshape(M, N)
    B = torch.ones_like(A)
    C = torch.zeros_like(A)
    thr = cute.make_layout((4, 8), stride=(8, 1))
    val = cute.make_layout((1, 4), stride=(4, 1))
    tiler, tv = cute.make_layout_tv(thr, val)
    mA, mB, mC = (from_dlpack(x, assumed_align=16) for x in (A, B, C))
    gA, gB, gC = (cute.zipped_divide(x, tiler) for x in (mA, mB, mC))
    cC = cute.zipped_divide(cute.make_identity_tensor(mC.shape), tiler)
    _pred_add(gA, gB, gC, cC, mC.shape, tv).launch(grid=cute.size(gC, mode=[1]), block=cute.size(tv, mode=[0]))
    torch.cuda.synchronize()
    assert torch.equal(C, A + B)


def test_integer_floordiv_and_mod_follow_python_as_cute_dsl():
    @cute.kernel
    def k(A: cute.Tensor, Q: cute.Tensor, R: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        v = A[tidx]
        Q[tidx] = v // 3
        R[tidx] = v % 3

    A = np.array([7, -7, 6, -1], np.int32)
    Q, R = np.zeros_like(A), np.zeros_like(A)
    k(from_dlpack(A), from_dlpack(Q), from_dlpack(R)).launch(grid=1, block=4)
    assert Q.tolist() == (A // 3).tolist() and R.tolist() == (A % 3).tolist()
    assert "cl_floordiv((long long)(" in cuda.render(last_launch().ir)


def test_gpu_bounds_proof_uses_symbolic_predicates():
    from cutelab.kernel.analysis.bounds import check_bounds

    M, N = 5, 13
    A = np.zeros((M, N), np.float32)
    thr = cute.make_layout((4, 8), stride=(8, 1))
    val = cute.make_layout((1, 4), stride=(4, 1))
    tiler, tv = cute.make_layout_tv(thr, val)
    g = [cute.zipped_divide(from_dlpack(x), tiler) for x in (A, A.copy(), A.copy())]
    cC = cute.zipped_divide(cute.make_identity_tensor((M, N)), tiler)
    _pred_add(*g, cC, (M, N), tv).launch(grid=cute.size(g[2], mode=[1]), block=32)
    ir = last_launch().ir
    check_bounds(ir, "gpu")  # every access is guarded by elem_less: proved for every thread
    # without the guard the same accesses would leave the tensors: a wrong shape is refused
    with pytest.raises(LaunchError):
        _pred_add(*g, cC, (M + 3, N), tv).launch(grid=cute.size(g[2], mode=[1]), block=32)


def test_fragment_written_in_a_loop_inside_a_branch():
    @cute.kernel
    def k(A: cute.Tensor, n: cutlass.Int32):
        tidx, _, _ = cute.arch.thread_idx()
        frag = cute.make_rmem_tensor(cute.make_layout(1), cutlass.Float32)
        frag[0] = 1.0
        if tidx % 2 == 0:
            for i in range(n):
                frag[0] = frag[0] * 2.0
        A[tidx] = frag[0]

    A = np.zeros(4, np.float32)
    k(from_dlpack(A), 3).launch(grid=1, block=4)
    assert A.tolist() == [8.0, 1.0, 8.0, 1.0]


def test_print_tensor_inside_a_kernel_prints_per_thread(capsys):
    @cute.kernel
    def k(A: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        cute.print_tensor(A[(tidx, None)])

    A = np.arange(6, dtype=np.int32).reshape(2, 3)
    k(from_dlpack(A)).launch(grid=1, block=2)
    out = capsys.readouterr().out
    # CuTe DSL's print_tensor text, by every thread (tests/kernel/test_print_tensor_kernel.py has more)
    assert ": i32, generic, align<4>) o (3):(1), data=\n       [ 0, ],\n       [ 1, ],\n       [ 2, ])" in out
    assert "[ 3, ],\n       [ 4, ],\n       [ 5, ])" in out


def test_launch_smem_must_cover_the_allocations():
    A = np.arange(256, dtype=np.float32)
    B = np.zeros_like(A)
    reverse_blocks(from_dlpack(A), from_dlpack(B)).launch(grid=4, block=64, smem=256)
    with pytest.raises(LaunchError, match="allocates 256 bytes of shared memory but the launch gives it smem=128"):
        reverse_blocks(from_dlpack(A), from_dlpack(B)).launch(grid=4, block=64, smem=128)


def test_endless_while_loop_is_stopped_without_writing(monkeypatch):
    import cutelab.kernel.cpu.warps as warps

    monkeypatch.setattr(warps, "MAX_WHILE_ROUNDS", 50)
    A = np.array([1, -1, 3, 0], np.int32)  # -1 and 0 never reach 32 by doubling
    with pytest.raises(LaunchError, match="ran 50 rounds.*Nothing was written"):
        doubling(from_dlpack(A), 32).launch(grid=1, block=4)
    assert A.tolist() == [1, -1, 3, 0]


def test_math_and_reduce_in_a_kernel():
    @cute.kernel
    def k(A: cute.Tensor, B: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        v = A[(tidx, None)].load()
        B[tidx] = cute.math.sqrt(v).reduce(cute.ReductionOp.ADD, 0.0)

    A = np.array([[1.0, 4.0, 9.0], [16.0, 25.0, 36.0]], np.float32)
    B = np.zeros(2, np.float32)
    k(from_dlpack(A), from_dlpack(B)).launch(grid=1, block=2)
    assert B.tolist() == [6.0, 15.0]
    assert "sqrtf(" in cuda.render(last_launch().ir)


class _Scaler:
    def __init__(self, factor):
        self.factor = factor

    @cute.kernel
    def kernel(self, A: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        A[tidx] = A[tidx] * self.factor

    @cute.jit
    def __call__(self, A):
        self.kernel(A).launch(grid=1, block=cute.size(A))


def test_kernel_and_jit_on_methods_bind_self():
    A = np.array([1.0, 2.0, 3.0], np.float32)
    _Scaler(2.0)(A)  # the jit function converts the array; the kernel binds self
    _Scaler(10.0)(from_dlpack(A))
    assert A.tolist() == [20.0, 40.0, 60.0]


@cute.kernel
def _guarded_fill(A: cute.Tensor, n: cutlass.Int32):
    bidx, _, _ = cute.arch.block_idx()
    tidx, _, _ = cute.arch.thread_idx()
    i = bidx * 32 + tidx
    if i < n:
        A[i] = 1.0


def test_gpu_checks_scalar_dependent_accesses_at_each_launch():
    from cutelab.kernel.analysis.bounds import check_bounds, check_deferred

    A = np.zeros(40, np.float32)
    _guarded_fill(from_dlpack(A), 40).launch(grid=2, block=32)
    assert A.tolist() == [1.0] * 40
    ir = last_launch().ir
    deferred = check_bounds(ir, "gpu")
    assert len(deferred) == 1  # the store depends on n: checked per launch
    check_deferred(ir, deferred, {"arg.n": 40})
    with pytest.raises(LaunchError, match=r"store to A reaches element offsets \[0, 40\].*n = 41"):
        check_deferred(ir, deferred, {"arg.n": 41})


@pytest.mark.gpu
def test_gpu_guarded_store_with_scalar():
    import torch

    A = torch.zeros(40, device="cuda")
    _guarded_fill(from_dlpack(A), 37).launch(grid=2, block=32)
    torch.cuda.synchronize()
    assert A.sum().item() == 37
    with pytest.raises(LaunchError, match="Nothing was launched"):
        _guarded_fill(from_dlpack(A), 64).launch(grid=2, block=32)


def test_gpu_checks_runtime_loops_at_their_ends():
    from cutelab.kernel.analysis.bounds import check_bounds, check_deferred

    A = np.arange(32, dtype=np.float32).reshape(4, 8)
    row_sum(from_dlpack(A), from_dlpack(np.zeros(4, np.float32)), 8).launch(grid=1, block=4)
    ir = last_launch().ir
    deferred = check_bounds(ir, "gpu")
    assert len(deferred) == 1  # the load inside the loop over range(n)
    for n in (0, 1, 8):
        check_deferred(ir, deferred, {"arg.n": n})
    with pytest.raises(LaunchError, match=r"load from A reaches element offsets \[0, 32\].*n = 9"):
        check_deferred(ir, deferred, {"arg.n": 9})


@pytest.mark.gpu
def test_gpu_runtime_loop_bound_and_refusal():
    A = np.arange(32, dtype=np.float32).reshape(4, 8)
    B = np.zeros(4, np.float32)
    for n in (0, 3, 8):
        cpu, gpu = _gpu_vs_cpu(row_sum, [A, B], n, block=4)
        np.testing.assert_array_equal(cpu[1], gpu[1])
    import torch

    with pytest.raises(LaunchError, match="Nothing was launched"):
        row_sum(from_dlpack(torch.from_numpy(A).cuda()), from_dlpack(torch.zeros(4, device="cuda")), 9).launch(
            grid=1, block=4)


def test_an_inner_static_loop_index_is_not_carried_by_the_runtime_loop_around_it():
    # `kb` is an int before the runtime loop and the index of a static loop inside it: it stays a
    # Python int (CuTe DSL's own loop index), while `acc` is carried
    @cute.kernel
    def k(A: cute.Tensor, n: cutlass.Int32):
        acc = 0
        for kb in range(2):
            acc = acc + kb
        for i in range(n):
            for kb in range(3):
                acc = acc + kb
        A[0] = acc

    A = np.zeros(2, np.float32)
    k(from_dlpack(A), 4).launch(grid=1, block=1)
    assert A[0] == 1 + 4 * 3


def test_an_inner_static_loop_index_is_unusable_after_the_runtime_loop_around_it():
    # its value there depends on whether the runtime loop ran at all: refused, not guessed
    @cute.kernel
    def k(A: cute.Tensor, n: cutlass.Int32):
        kb = 0
        for i in range(n):
            for kb in range(3):
                A[1] = A[1] + 1.0
        A[0] = kb

    with pytest.raises(TraceError, match=r"variable 'kb' is 0 before the loop at .* no single value after it"):
        k(from_dlpack(np.zeros(2, np.float32)), 4).launch(grid=1, block=1)


def test_runtime_conditional_expression_evaluates_only_the_side_taken():
    """``acc[lane] if lane < n else 0`` with a runtime condition is a runtime branch (as CuTe DSL makes it): a
    thread past n does not load acc[lane], which would be out of bounds (CUTLASS's hopper cta_norm.py)."""
    import numpy as np

    import cutelab as cute
    from cutelab.runtime import from_dlpack

    @cute.kernel
    def k(acc: cute.Tensor, out: cute.Tensor):
        t, _, _ = cute.arch.thread_idx()
        out[t] = acc[t] * 2.0 if t < 3 else cute.Float32(-1.0)

    acc, out = np.arange(3, dtype=np.float32) + 1, np.zeros(8, np.float32)
    k(from_dlpack(acc), from_dlpack(out)).launch(grid=1, block=8)
    assert out.tolist() == [2.0, 4.0, 6.0] + [-1.0] * 5


@cute.jit
def _clamp_at_zero(n_block: cutlass.Int32):
    if n_block < 0:  # a runtime branch that sets the runtime integer to a static value (flash_attn.cute's mask)
        n_block = 0
    return n_block * 2 + min(n_block % 3, 1)  # min of a runtime value: cutlass.min, as CuTe DSL redirects it


def test_runtime_integer_set_to_a_static_value_in_a_branch_and_builtin_min():
    """CuTe DSL keeps a runtime Int32 runtime when one branch sets it to 0 (the branch yields an Int32), and
    its preprocessor makes ``min``/``max`` of runtime values cutlass.min/max; both for an index expression
    over the thread index (k below), and for a tensor value (kv)."""

    @cute.kernel
    def k(out: cute.Tensor, nb: cutlass.Int32):
        tidx, _, _ = cute.arch.thread_idx()
        out[tidx] = _clamp_at_zero(nb - tidx)

    @cute.kernel
    def kv(out: cute.Tensor, a: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        out[tidx] = _clamp_at_zero(a[tidx]) + max(3, 1)

    def ref(x):
        x = max(x, 0)
        return x * 2 + min(x % 3, 1)

    out = np.zeros(8, np.int32)
    k(from_dlpack(out), 5).launch(grid=1, block=8)
    assert out.tolist() == [ref(5 - t) for t in range(8)]
    a = np.array([-4, -1, 0, 1, 2, 3, 7, 11], np.int32)
    kv(from_dlpack(out), from_dlpack(a)).launch(grid=1, block=8)
    assert out.tolist() == [ref(int(x)) + 3 for x in a]


def test_identity_tensor_past_a_mode_and_a_register_read_past_the_fragment_in_a_branch():
    """An identity tensor at a coordinate past a mode gives CuTe's value (CuTe DSL 4.8.1, 2026-11-27:
    zipped_divide(make_identity_tensor((4, 16)), (2, 8)) prints (0, 16) (3, 16) (1, 8) (1, 9) for the
    coordinates below). A register fragment read past its end inside a runtime branch is an error only if a
    thread runs it (CuTe DSL compiles it; on the GPU its value is undefined)."""
    t = cute.zipped_divide(cute.make_identity_tensor((4, 16)), (2, 8))
    assert (t[0, 4], t[1, 5], t[17, 0], t[(1, 9), 0]) == ((0, 16), (3, 16), (1, 8), (1, 9))

    @cute.kernel
    def k(out: cute.Tensor, limit: cutlass.Int32):
        tidx, _, _ = cute.arch.thread_idx()
        frag = cute.make_rmem_tensor((2,), Float32)
        frag.fill(1.5)
        for m in cutlass.range_constexpr(4):  # reads frag[2], frag[3] only where m < limit - tidx
            if m < limit - tidx:
                out[tidx] = out[tidx] + frag[m]

    out = np.zeros(4, np.float32)
    k(from_dlpack(out), 2).launch(grid=1, block=4)
    assert out.tolist() == [3.0, 1.5, 0.0, 0.0]
    with pytest.raises(LaunchError, match=r"read: offset 2 is outside the fragment of 2 registers at .*test_control.py"):
        k(from_dlpack(out), 3).launch(grid=1, block=4)


def test_a_store_of_a_register_read_past_the_fragment_is_dropped_as_cute_dsl_compiles_it():
    """CuTe DSL 4.8.1 (sm_90a PTX, 2026-11-28) of ``for m in range_constexpr(4): if tidx < 64: g[100 + tidx + 7 * m]
    = r[m]`` with a fragment r of 2 registers has the stores of m = 0, 1 only: the read past the end is a poison
    value and LLVM erases its store. flash_attn.cute's SM90 LSE epilogue stores so; any other use still faults.
    A memory tensor indexed past a hierarchical mode is an offset by CuTe's crd2idx (the last sub-mode not
    reduced): ((2,1),4):((4,0),1) at row m is (m % 2) * 4."""

    @cute.kernel
    def k(out: cute.Tensor, limit: cutlass.Int32):
        tidx, _, _ = cute.arch.thread_idx()
        frag = cute.make_rmem_tensor((2,), Float32)
        frag[0] = 1.0
        frag[1] = 2.0
        g = cute.make_tensor(out.iterator + 16, cute.make_layout(((2, 1), 4), stride=((4, 0), 1)))
        for m in cutlass.range_constexpr(4):
            if tidx < limit:
                out[tidx * 4 + m] = frag[m]
                g[m, tidx] = m + 10.0

    out = np.full(24, -1.0, np.float32)
    k(from_dlpack(out), 2).launch(grid=1, block=4)
    assert out[:16].tolist() == [1.0, 2.0, -1.0, -1.0] * 2 + [-1.0] * 8
    assert out[16:].tolist() == [12.0, 12.0, -1.0, -1.0, 13.0, 13.0, -1.0, -1.0]
    assert "__trap" not in cuda.render(last_launch().ir)


def test_if_generate_builds_a_runtime_branch_from_callables():
    """cutlass.if_generate (CuTe DSL's scf.if builder, used by flash_attn.cute's pipelines): side effects of
    the taken body only, and results of return_types (the else passes input_args through when absent)."""
    from cutelab.kernel.frontend.control import if_generate

    @cute.kernel
    def k(out: cute.Tensor, res: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()

        def add_one():
            out[tidx] = out[tidx] + 1.0

        if_generate(tidx % 2 == 0, add_one)
        r = if_generate(tidx < 2, lambda x: x * 10, None, [tidx], [Int32])
        res[tidx] = r

    out = np.zeros(4, np.float32)
    res = np.zeros(4, np.int32)
    k(from_dlpack(out), from_dlpack(res)).launch(grid=1, block=4)
    assert out.tolist() == [1.0, 0.0, 1.0, 0.0]
    assert res.tolist() == [0, 10, 2, 3]


def test_a_thread_index_expression_bound_in_both_arms_of_a_runtime_branch():
    """y bound to different index expressions in the two arms: each thread gets its own arm's value (it got the
    else arm's value in every thread before such variables had a register)."""

    @cute.kernel
    def k(res: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        if tidx < 2:
            y = tidx * 10
        else:
            y = tidx
        res[tidx] = y

    res = np.zeros(4, np.int32)
    k(from_dlpack(res)).launch(grid=1, block=4)
    assert res.tolist() == [0, 10, 2, 3]


def test_builtin_min_max_of_a_thread_index_expression():
    """min/max of an index expression over the thread index (flash_attn.cute's sm90_col_to_r2p_idx on a causal
    mask's column limit): a runtime min/max, as CuTe DSL's redirected builtins give."""

    @cute.kernel
    def k(res: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        res[tidx] = min(tidx % 8, 2) + max(tidx, 5)

    res = np.zeros(16, np.int32)
    k(from_dlpack(res)).launch(grid=1, block=16)
    assert res.tolist() == [min(t % 8, 2) + max(t, 5) for t in range(16)]


def test_a_loop_sets_a_runtime_integer_first_and_the_next_loop_and_a_nested_helper_read_it():
    """flash_attn.cute's causal mainloop: `n_block = n_block_max - 2 - n_tile` in a runtime loop that sets it
    before reading it, then `cutlass.range(n_block)` after it (the loop's result is the last iteration's value,
    or the value before it when the loop does not run, as CuTe DSL's loop yields it; the bound is a register),
    and a helper function defined inside the kernel whose `if` reads it (CuTe DSL's preprocessor rewrites
    nested definitions too, so the `if` is a runtime branch)."""

    @cute.kernel
    def k(out: cute.Tensor, nmax: cutlass.Int32, trips: cutlass.Int32):
        tidx, _, _ = cute.arch.thread_idx()
        n_block = nmax // 2 + tidx % 3  # a runtime value per thread

        def weight():
            w = 1
            if n_block % 2 == 1:
                w = 10
            return w

        for n_tile in cutlass.range(trips - tidx % 2, unroll=1):
            n_block = nmax - 2 - n_tile
        acc = Int32(0)
        for n_tile in cutlass.range(n_block, unroll=1):
            acc = acc + weight() * (n_tile + 1)
        out[tidx] = acc * 100 + n_block

    def ref(t, nmax, trips):
        n_block = nmax // 2 + t % 3
        for n_tile in range(trips - t % 2):
            n_block = nmax - 2 - n_tile
        acc = sum((i + 1) * (10 if n_block % 2 == 1 else 1) for i in range(n_block))
        return acc * 100 + n_block

    out = np.zeros(6, np.int32)
    for nmax, trips in ((9, 3), (7, 1), (8, 0)):
        k(from_dlpack(out), nmax, trips).launch(grid=1, block=6)
        assert out.tolist() == [ref(t, nmax, trips) for t in range(6)], (nmax, trips)


def test_a_python_int_divided_by_a_tensor_value():
    """n // v and n % v with v a value of the kernel (flash_attn.cute's tile scheduler: divmod(n, divisor) of a
    FastDivmodDivisor holding a kernel value)."""
    from cutelab.compat.dsl_utils import FastDivmodDivisor

    @cute.kernel
    def k(d: cute.Tensor, out: cute.Tensor):
        v = d[0]
        q, r = divmod(17, FastDivmodDivisor(v))
        out[0] = q
        out[1] = r
        out[2] = 40 // v + 40 % v

    out = np.zeros(3, np.int32)
    k(from_dlpack(np.array([5], np.int32)), from_dlpack(out)).launch(grid=1, block=1)
    assert out.tolist() == [3, 2, 8]


@cute.kernel
def _pattern(A: cute.Tensor, O: cute.Tensor):
    """CUTLASS's sparse compressor's test: a list of runtime flags compared with list literals."""
    tidx, _, _ = cute.arch.thread_idx()
    f0 = 0
    f1 = 0
    if A[tidx, 0] != 0:
        f0 = 1
    if A[tidx, 1] != 0:
        f1 = 1
    pos = [f0, f1]
    code = 9
    if pos == [0, 0]:
        code = 0
    elif pos == [1, 0]:
        code = 1
    elif pos != [1, 1]:
        code = 2
    if f1 in [f0, 5]:
        code = code + 10
    O[tidx] = code


def test_lists_of_runtime_values_compare_item_by_item():
    A = np.array([[0, 0], [3, 0], [0, 2], [1, 1]], np.float32)
    O = np.zeros(4, np.int32)
    _pattern(from_dlpack(A), from_dlpack(O)).launch(grid=1, block=4)
    assert O.tolist() == [10, 1, 2, 19]


@cute.kernel
def elif_chain_index(g: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    if tidx == 0:
        for dm in cutlass.range_constexpr(2):
            g[dm] = g[dm] + 1
    elif tidx == 1:  # binds no dm: the branch after it has dm from its else arm only
        g[2] = g[2] + 1
    elif tidx == 2:
        for dm in cutlass.range_constexpr(2):
            g[dm + 3] = g[dm + 3] + 1
    else:
        for dm in cutlass.range_constexpr(2):
            g[dm + 5] = g[dm + 5] + 1


def test_a_static_loop_index_bound_in_some_arms_of_an_elif_chain():
    # CUTLASS's mixed-input FMHA decode (warp roles in an if/elif chain, `for dm in range_constexpr(...)` in some):
    # the innermost branch's result for dm, a register of the arm that held it, leaked out of the branch around it,
    # and the outer branch refused it ('variable dm uses a value computed inside a loop or branch that has ended')
    g = np.zeros(8, np.int32)
    elif_chain_index(from_dlpack(g)).launch(grid=1, block=4)
    np.testing.assert_array_equal(g, [1, 1, 1, 1, 1, 1, 1, 0])
