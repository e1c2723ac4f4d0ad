"""TMA reductions (``cpasync.CopyReduceBulkTensorTileS2GOp``, ADD of f32: how CUTLASS's Blackwell FMHA backward
accumulates dQ; of bf16/f16: quack's GEMMs with a fused gradient accumulation) on the CPU interpreter: every CTA
adds its shared-memory tile into the same global tile, so the result is the tensor's values plus each CTA's, a
16-bit sum rounded after each CTA's addition; a non-ADD kind is refused by name; the CUDA
(``cp.reduce.async.bulk.tensor.2d...add.tile``) compiles for sm_100a."""

from __future__ import annotations

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
import cutelab.utils.blackwell_helpers as sm100_utils
from cutelab.errors import TraceError
from cutelab.nvgpu import cpasync
from cutelab.runtime import from_dlpack

TILE = (64, 32)


@cute.kernel
def reduce_kernel(atom: cute.CopyAtom, g: cute.Tensor, smem_layout: cute.ComposedLayout):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    smem = cutlass.utils.SmemAllocator()
    s = smem.allocate_tensor(element_type=g.element_type, layout=smem_layout.outer, byte_alignment=1024,
                             swizzle=smem_layout.inner)
    for j in cutlass.range_constexpr(TILE[0] * TILE[1] // 128):  # element (m, n) of block b: 1000 * (b + 1) + m + 64 n
        i = j * 128 + tidx                                       # (16-bit types: 1 + m % 2)
        if cutlass.const_expr(g.element_type == cutlass.Float32):
            s[(i % TILE[0], i // TILE[0])] = cutlass.Float32(1000 * (bidx + 1) + i)
        else:
            s[(i % TILE[0], i // TILE[0])] = (cutlass.Float32(1 + i % 2)).to(g.element_type)
    cute.arch.fence_proxy("async.shared", space="cta")
    cute.arch.sync_threads()
    gt = cute.local_tile(g, TILE, (0, 0))
    ts, tg = cpasync.tma_partition(atom, 0, cute.make_layout(1), cute.group_modes(s, 0, 2),
                                   cute.group_modes(gt, 0, 2))
    if tidx // 32 == 0:
        cute.copy(atom, ts, tg)  # REDUCE
        cute.arch.cp_async_bulk_commit_group()
        cute.arch.cp_async_bulk_wait_group(0, read=True)
    cute.arch.sync_threads()


def _atom(op, dtype, g):
    sl = sm100_utils.make_smem_layout(cutlass.utils.LayoutEnum.ROW_MAJOR.mma_major_mode(), TILE, dtype, 1)
    sl = cute.select(sl, mode=[0, 1])
    atom, tensor = cpasync.make_tiled_tma_atom(op, g, sl, TILE)
    return atom, tensor, sl


def test_every_cta_adds_its_tile():
    x = np.arange(TILE[0] * TILE[1], dtype=np.float32).reshape(TILE) / 4
    want = x.copy()
    g = from_dlpack(x)
    atom, tensor, sl = _atom(cpasync.CopyReduceBulkTensorTileS2GOp(), cutlass.Float32, g)
    reduce_kernel(atom, tensor, sl).launch(grid=3, block=128)
    idx = np.arange(TILE[0])[:, None] + TILE[0] * np.arange(TILE[1])[None, :]  # i of element (m, n)
    for b in range(3):
        want += 1000 * (b + 1) + idx
    np.testing.assert_array_equal(x, want)


@pytest.mark.parametrize("dtype", ["bf16", "f16"])
def test_every_cta_adds_its_16_bit_tile_rounding_each_addition(dtype):
    # bf16 holds 256 and 258, not 257: 256 + 1 rounds to 256 (to even) at each CTA's addition, three times, where
    # one rounding of the f32 sum would give 259 -> 260; 256 + 2 is exact (258, then 260, 262). f16 has 11 bits:
    # 2048 + 1 rounds to 2048, 2048 + 2 = 2050
    import torch

    big = 256.0 if dtype == "bf16" else 2048.0
    tdt, cdt = {"bf16": (torch.bfloat16, cutlass.BFloat16), "f16": (torch.float16, cutlass.Float16)}[dtype]
    x = torch.full(TILE, big, dtype=tdt)
    g = from_dlpack(x)
    atom, tensor, sl = _atom(cpasync.CopyReduceBulkTensorTileS2GOp(), cdt, g)
    reduce_kernel(atom, tensor, sl).launch(grid=3, block=128)
    odd = np.arange(TILE[0]) % 2 == 1  # rows m that add 2
    want = np.where(odd[:, None], big + 6, big) * np.ones(TILE)
    np.testing.assert_array_equal(x.float().numpy(), want)


def test_only_add_is_run():
    from cutelab.compat.experimental.enums import ReductionKind

    x = np.zeros(TILE, np.float32)
    g = from_dlpack(x)
    atom, tensor, sl = _atom(cpasync.CopyReduceBulkTensorTileS2GOp(ReductionKind.MAX), cutlass.Float32, g)
    with pytest.raises(TraceError, match=r"TMA reductions \(CopyReduceBulkTensorTileS2GOp\) that ADD f32, f16 or bf16 "
                                         r"elements, not MAX of Float32"):
        reduce_kernel(atom, tensor, sl).launch(grid=1, block=128)


def test_cuda_prints_the_reduction_for_sm_100a(tmp_path):
    import shutil
    import subprocess

    from cutelab.kernel.cuda import printer
    from cutelab.kernel.launch.plan import last_launch

    x = np.zeros(TILE, np.float32)
    g = from_dlpack(x)
    atom, tensor, sl = _atom(cpasync.CopyReduceBulkTensorTileS2GOp(), cutlass.Float32, g)
    reduce_kernel(atom, tensor, sl).launch(grid=1, block=128)
    src = printer.render(last_launch().ir)
    assert "cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group" in src
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc is not installed")
    (tmp_path / "k.cu").write_text(src)
    c = subprocess.run([nvcc, "-arch=sm_100a", "-cubin", "-o", str(tmp_path / "k.cubin"), str(tmp_path / "k.cu")],
                       capture_output=True, text=True)
    assert c.returncode == 0, c.stderr[-4000:]
