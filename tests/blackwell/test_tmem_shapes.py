"""tcgen05.ld / tcgen05.st of every shape (32x32b, 16x64b, 16x128b, 16x256b, 16x32bx2), on 32- and 16-bit
elements: PTX's register fragments (kernel/instr/tcgen05_ldst.py) against CuTe's TV layouts of the atoms
(nvgpu/tcgen05/copy.py, checked against CuTe DSL), a store of one shape read back by a load of another on the CPU
interpreter, and the CUDA printed for them (compiled for sm_100a where nvcc is installed)."""

from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
from cutelab.kernel.instr.tcgen05_ldst import SHAPES, fragment
from cutelab.layout import Layout
from cutelab.nvgpu import tcgen05
from cutelab.nvgpu.tcgen05.copy import DP_B, _bits
from cutelab.runtime import from_dlpack


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("rep", [1, 2, 8])
@pytest.mark.parametrize("packed", [False, True])
def test_ptx_fragments_are_cutes_tv_layouts(shape, rep, packed):
    """Thread t's register r (its low and high 16 bits) lands where CuTe's atom puts those bits."""
    val, _, reg = _bits(shape, rep, packed)
    ref = np.asarray(Layout.offsets(reg)).reshape(-1, 32).T  # (thread, bit of its registers) -> reference bit
    tmem = np.asarray(Layout.offsets(val))  # reference bit -> TMEM bit address (lane * DP_B + bit)
    lane, col = fragment(shape, rep)
    assert lane.shape == (32, rep * SHAPES[shape][2])
    for t in range(32):
        for j in range(lane.shape[1]):
            for h in (0, 1):
                got = divmod(int(tmem[ref[t, 32 * j + 16 * h]]), DP_B)
                want = (lane[t, j], (2 * col[t, j] + h) * 32) if packed else (lane[t, j], col[t, j] * 32 + 16 * h)
                assert got == want, (t, j, h)


@cute.kernel
def _through(X: cute.Tensor, Y: cute.Tensor, dt: cutlass.Constexpr, st_op: cutlass.Constexpr,
             ld_op: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    smem = cutlass.utils.SmemAllocator()
    holder = smem.allocate_tensor(cutlass.Int32, cute.make_layout(1), 4)
    if warp == 0:
        cute.arch.alloc_tmem(32, holder.iterator)
    cute.arch.sync_threads()
    ptr = cute.arch.retrieve_tmem_ptr(dt, 16, holder.iterator)
    tT = cute.make_tensor(ptr, cute.make_layout((128, 32), stride=(65536 * (32 // dt.width), 1)))
    st = tcgen05.make_tmem_copy(cute.make_copy_atom(st_op, dt), tT)
    ld = tcgen05.make_tmem_copy(cute.make_copy_atom(ld_op, dt), tT)
    ts = st.get_slice(tidx)
    r = cute.make_rmem_tensor(ts.partition_S(X).shape, dt)
    r.store(ts.partition_S(X).load())
    cute.copy(st, r, ts.partition_D(tT))
    cute.arch.fence_view_async_tmem_store()
    tl = ld.get_slice(tidx)
    out = cute.make_rmem_tensor(tl.partition_D(Y).shape, dt)
    cute.copy(ld, tl.partition_S(tT), out)
    cute.arch.fence_view_async_tmem_load()
    tl.partition_D(Y).store(out.load())
    cute.arch.sync_threads()
    if warp == 0:
        cute.arch.dealloc_tmem(ptr, 32)


R = tcgen05.Repetition
PAIRS = [(tcgen05.St32x32bOp(R.x8), tcgen05.Ld16x256bOp(R.x2)),
         (tcgen05.St16x128bOp(R.x4), tcgen05.Ld16x64bOp(R.x4)),
         (tcgen05.St16x32bx2Op(R.x4), tcgen05.Ld16x128bOp(R.x2)),
         (tcgen05.St16x256bOp(R.x1), tcgen05.Ld16x32bx2Op(R.x8)),
         (tcgen05.St16x64bOp(R.x2), tcgen05.Ld32x32bOp(R.x4))]


@pytest.mark.parametrize("dt", [cutlass.Float32, cutlass.Float16], ids=str)
def test_a_store_of_one_shape_reads_back_through_another_and_prints(dt, tmp_path):
    from cutelab.kernel.cuda import printer
    from cutelab.kernel.launch.plan import last_launch

    srcs = []
    for st_op, ld_op in PAIRS:
        X = (np.arange(128 * 32).reshape(128, 32) % 1000).astype(np.float32 if dt is cutlass.Float32 else np.float16)
        Y = np.zeros_like(X)
        _through(from_dlpack(X), from_dlpack(Y), dt, st_op, ld_op).launch(grid=1, block=128)
        np.testing.assert_array_equal(Y, X)
        src = printer.render(last_launch().ir)
        for op in (st_op, ld_op):
            d = "ld" if "Ld" in type(op).__name__ else "st"
            assert f"tcgen05.{d}.sync.aligned.{op._SHAPE}.x{op.repeat.value}.b32" in src, (op, src)
        srcs.append(src)
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc is not installed")
    for i, src in enumerate(srcs[:2] if dt is cutlass.Float32 else srcs[2:]):  # a few, to keep CI fast
        (tmp_path / f"k{i}.cu").write_text(src)
        c = subprocess.run([nvcc, "-arch=sm_100a", "-cubin", "-o", str(tmp_path / f"k{i}.cubin"),
                            str(tmp_path / f"k{i}.cu")], capture_output=True, text=True)
        assert c.returncode == 0, c.stderr[-4000:]
        assert re.search(r"tcgen05\.ld\.sync\.aligned\.16x", src) or re.search(r"tcgen05\.st\.sync\.aligned\.16x", src)
