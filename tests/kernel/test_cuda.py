"""The CUDA C++ printer and NVRTC compile: vector accesses where alignment is provable."""

from __future__ import annotations

import contextlib
import io
import re
import runpy
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from cutelab.kernel.cuda.printer import render, vector_plan
from cutelab.kernel.launch.plan import capture
from cutelab.kernel.ir.symbolic import Var
from cutelab.kernel.ir.nodes import Param
from cutelab.numeric import BFloat16, Float32
from cutelab.runtime import from_dlpack

SEEDS = Path(__file__).resolve().parents[2] / "examples" / "seeds"
CASES = [("copy_inner_partition", (1, 16), 256, 2), ("copy_outer_partition", (32, 256), (8, 32), 0),
         ("copy_tv_partition", (32, 8), (4, 8), 4)]


def _trace(name, a, b, n=1024, dtype=np.float16):
    S = np.zeros((n, n), dtype)
    with contextlib.redirect_stdout(io.StringIO()):
        with capture() as ks:
            runpy.run_path(str(SEEDS / f"{name}.py"), run_name="t")["launch_copy"](
                from_dlpack(S, assumed_align=16), from_dlpack(S.copy(), assumed_align=16), a, b)
    return ks[0]


def test_vector_plan():
    p = Param(0, "S", BFloat16, 16, 1 << 20)
    t = Var("tid.x", 256)
    assert vector_plan(p, t * 16, tuple(range(16))) == [(0, 8), (8, 8)]
    assert vector_plan(p, t * 4, tuple(range(8))) == [(0, 4), (4, 4)]  # 8-byte aligned only
    assert vector_plan(p, t, tuple(range(4))) == [(0, 1), (1, 1), (2, 1), (3, 1)]
    assert vector_plan(p, t * 8, (0, 1, 2, 3, 64, 65, 66, 67)) == [(0, 4), (4, 4)]
    p4 = Param(0, "S", Float32, 4, 1 << 20)  # base pointer only 4-byte aligned
    assert vector_plan(p4, t * 4, tuple(range(4))) == [(0, 1), (1, 1), (2, 1), (3, 1)]


def test_vector_plan_uses_the_alignment_the_launch_proved():
    # declared 4-byte aligned (from_dlpack's default), but the launch saw a 16-byte aligned pointer
    t = Var("tid.x", 256)
    p4 = Param(0, "S", Float32, 4, 1 << 20)
    p4.code_align = 16
    assert vector_plan(p4, t * 4, tuple(range(4))) == [(0, 4)]
    assert vector_plan(p4, t * 4 + 2, tuple(range(4))) == [(0, 2), (2, 2)]  # the offset still counts


def test_predicated_copy_proved_true_is_one_vector_access():
    # elementwise_add's pattern: per-element predicates elem_less(coord, shape) that the tracer proves
    # true for every thread become one copy, which the printer vectorises
    import cutelab as cute

    @cute.kernel
    def k(gA: cute.Tensor, gC: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        atom = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), gA.element_type)
        tc = cute.make_tiled_copy_tv(atom, cute.make_layout((32,)), cute.make_layout((4,)))
        thr = tc.get_slice(tidx)
        tA = thr.partition_S(gA)
        tC = thr.partition_D(gC)
        cA = thr.partition_S(cute.make_identity_tensor(gA.shape))
        frg = cute.make_fragment_like(tA)
        pred = cute.make_rmem_tensor(cA.shape, cute.Boolean)
        for i in range(cute.size(pred)):
            pred[i] = cute.elem_less(cA[i], gA.shape)
        cute.copy(atom, tA, frg, pred=pred)
        cute.copy(atom, frg, tC, pred=pred)

    A = np.arange(128, dtype=np.float32)
    C = np.zeros_like(A)
    with capture() as ks:
        k(from_dlpack(A, assumed_align=16), from_dlpack(C, assumed_align=16)).launch(grid=(1, 1, 1), block=(32, 1, 1))
    src = render(ks[0], load="ldg", pair=False, retile=False, remap=False)
    body = src[src.index("__global__"):]
    assert "if (" not in body
    assert body.count("__ldg(reinterpret_cast<const uint4*>(gA") == 1  # one 16-byte load per thread
    assert body.count("*reinterpret_cast<uint4*>(gC") == 1  # and one 16-byte store


@pytest.mark.parametrize("name,a,b,n_vec", CASES)
def test_seed_sources_use_16_byte_vectors(name, a, b, n_vec):
    # the plain per-thread code: each thread's own accesses, vectorized where alignment is provable
    src = render(_trace(name, a, b), load="ldg", pair=False, retile=False, remap=False)
    assert src.count("__ldg(reinterpret_cast<const uint4*>") == n_vec
    assert src.count("*reinterpret_cast<uint4*>(D + ") == n_vec
    assert "__restrict__" in src and "const unsigned short* __restrict__ S" in src


def test_cache_operator_options():
    ir = _trace("copy_tv_partition", (32, 8), (4, 8))
    src = render(ir, load="ldcs", store="stcs")
    assert "__ldcs(reinterpret_cast<const uint4*>" in src and "__stcs(reinterpret_cast<uint4*>" in src


def _nvrtc():
    pytest.importorskip("cuda.bindings")
    try:
        from cutelab.kernel.cuda.nvrtc import nvrtc_version

        nvrtc_version()
    except Exception as e:  # NVRTC library missing
        pytest.skip(f"NVRTC not available: {e}")


@pytest.mark.parametrize("name,a,b,n_vec", CASES)
def test_nvrtc_compiles_seed_kernels_to_vector_sass(name, a, b, n_vec, tmp_path, monkeypatch):
    _nvrtc()
    from cutelab.kernel.cuda.nvrtc import clear_memory_cache, compile_cuda

    monkeypatch.setenv("CUTELAB_CACHE_DIR", str(tmp_path))
    clear_memory_cache()
    ir = _trace(name, a, b)
    src = render(ir, load="ldg", pair=False, retile=False)
    r1 = compile_cuda(src, ir.name, "sm_90")
    clear_memory_cache()
    r2 = compile_cuda(src, ir.name, "sm_90")
    assert not r1.cached and r2.cached and r1.cubin == r2.cubin
    assert len(list(tmp_path.glob("*.cubin"))) == 1
    exe = shutil.which("cuobjdump")
    if exe:
        (tmp_path / "k.cubin").write_bytes(r1.cubin)
        sass = subprocess.run([exe, "-sass", str(tmp_path / "k.cubin")], capture_output=True, text=True).stdout
        assert len(re.findall(r"LDG\.E[.\w]*\.128", sass)) == n_vec and sass.count("STG.E.128") == n_vec
        assert "LDL" not in sass and "STL" not in sass


def test_compile_error_shows_log_and_source():
    _nvrtc()
    from cutelab.errors import CompileError
    from cutelab.kernel.cuda.nvrtc import compile_cuda

    with pytest.raises(CompileError, match="(?s)could not compile kernel bad.*source"):
        compile_cuda('extern "C" __global__ void bad() { undefined_thing(); }', "bad", "sm_90", use_cache=False)


@pytest.mark.parametrize("name,a,b,n_vec", CASES)
def test_block_schedule_is_a_permutation_in_memory_order(name, a, b, n_vec):
    from cutelab.kernel.cuda.printer import CudaRenderer, block_schedule
    from cutelab.kernel.ir.symbolic import evaluate
    from cutelab.kernel.ir.nodes import Load

    ir = _trace(name, a, b)
    G = ir.grid[0]
    sched = block_schedule(ir, coarsen=2, remap=True)
    assert sched["grid"] == (G // 2, 1, 1)
    L = np.arange(G)
    bid = sched["logical_to_bid"](L)
    assert sorted(bid.tolist()) == list(range(G))  # every logical block runs exactly once
    base = next(s.base for s in ir.stmts if isinstance(s, Load))
    from cutelab.kernel.ir.nodes import dim_values

    # the launch's dimensions (blockDim, gridDim: ir.nodes.DimVar) at their values, as the interpreter reads them
    off = evaluate(base, {"bid.x": bid, "tid.x": np.zeros(G, np.int64), **dim_values(ir.grid, ir.block)})
    assert np.all(np.diff(off) > 0)  # consecutive blocks touch increasing addresses
    src = CudaRenderer(ir, coarsen=2, remap=True, retile=False).render()
    assert src.count("const unsigned int cl_bid") == 2 and "r0_1" in src


@pytest.mark.parametrize("name,a,b,n_vec", [("copy_inner_partition", (1, 16), 256, 2),
                                           ("copy_outer_partition", (32, 256), (8, 32), 4),
                                           ("copy_tv_partition", (32, 8), (4, 8), 4)])
def test_default_code_moves_16_bytes_per_lane_and_instruction(name, a, b, n_vec, tmp_path):
    """cutelab's defaults: lane pairs share 32-byte runs, and a pure copy is retiled per warp, so
    even the outer partition's 2-byte accesses become 16-byte ones."""
    _nvrtc()
    from cutelab.kernel.cuda.nvrtc import compile_cuda

    ir = _trace(name, a, b)
    src = render(ir, retile=True)
    r = compile_cuda(src, ir.name, "sm_90", use_cache=False)
    exe = shutil.which("cuobjdump")
    if not exe:
        pytest.skip("cuobjdump not on PATH")
    (tmp_path / "k.cubin").write_bytes(r.cubin)
    sass = subprocess.run([exe, "-sass", str(tmp_path / "k.cubin")], capture_output=True, text=True).stdout
    assert len(re.findall(r"LDG\.E[.\w]*\.128", sass)) == n_vec
    assert len(re.findall(r"STG\.E[.\w]*\.128", sass)) == n_vec
    assert not re.search(r"LDG\.E[.\w]*\.U16|STG\.E\.U16|LDL|STL", sass)


def test_retile_only_for_pure_copies():
    from cutelab.kernel.cuda.printer import CudaRenderer

    ir = _trace("copy_outer_partition", (32, 256), (8, 32))
    r = CudaRenderer(ir, retile=True)
    r.render()
    assert len(r.retiled) == 2  # the load and its store
    # a kernel with arithmetic between load and store is not a pure copy
    import cutelab as cute

    @cute.kernel
    def k(S: cute.Tensor, D: cute.Tensor):
        t, _, _ = cute.arch.thread_idx()
        D[(None, t)].store(S[(None, t)].load() * 2)

    S = np.zeros(32 * 64, np.float32)
    with capture() as ks:
        k(cute.zipped_divide(from_dlpack(S, assumed_align=16), (8,)),
          cute.zipped_divide(from_dlpack(S.copy(), assumed_align=16), (8,))).launch(grid=(1, 1, 1), block=(32, 1, 1))
    r2 = CudaRenderer(ks[0], retile=True)
    r2.render()
    assert r2.retiled == {}
