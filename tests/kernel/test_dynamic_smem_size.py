"""cute.arch.dynamic_smem_size(): the bytes the kernel's SmemAllocators hand out (alignment padding
included), on the CPU and in the CUDA; a launch whose smem= is too small is refused, and warned
about when it is only being compiled (CuTe DSL compiles it and reports it when the kernel runs)."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
from cutelab.errors import LaunchError
from cutelab.kernel.cuda import printer as cuda
from cutelab.kernel.launch.plan import last_launch
from cutelab.runtime import from_dlpack


@cute.struct
class _S:
    values: cute.struct.MemRange[cutlass.Float32, 64]  # 256 bytes
    counter: cutlass.Int32  # 4


@cute.kernel
def sized(out: cute.Tensor):
    alloc = cutlass.utils.SmemAllocator()
    alloc.allocate(_S)  # 260 bytes, 4-aligned
    alloc.allocate(512, byte_alignment=64)  # from 320
    t = alloc.allocate_tensor(cutlass.Float16, cute.make_layout((32, 16)), 16)  # from 832: 1024 bytes
    tidx, _, _ = cute.arch.thread_idx()
    t[tidx] = cutlass.Float16(1.0)
    out[tidx] = cute.arch.dynamic_smem_size()


@cute.kernel
def none(out: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    out[tidx] = cute.arch.dynamic_smem_size()


def test_the_allocators_total_on_the_cpu_and_in_cuda(tmp_path):
    out = np.zeros(4, np.int32)
    sized(from_dlpack(out)).launch(grid=1, block=4)
    assert out.tolist() == [1856] * 4  # 260 -> 320 + 512 = 832 -> 832 + 1024
    src = cuda.render(last_launch().ir)
    assert "[0] = 1856;" in src
    nvcc = shutil.which("nvcc")
    if nvcc:
        f = tmp_path / "k.cu"
        f.write_text(src)
        r = subprocess.run([nvcc, "-arch=sm_90a", "-cubin", "-o", str(tmp_path / "k.cubin"), str(f)],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr[-2000:]
    out[:] = -1
    none(from_dlpack(out)).launch(grid=1, block=4)
    assert out.tolist() == [0] * 4


def test_too_little_smem_is_refused_at_launch_and_warned_about_when_compiled():
    out = np.zeros(4, np.int32)
    with pytest.raises(LaunchError, match="allocates .* bytes of shared memory but the launch gives it smem=16"):
        sized(from_dlpack(out)).launch(grid=1, block=4, smem=16)

    @cute.jit
    def run(o: cute.Tensor):
        sized(o).launch(grid=1, block=4, smem=16)

    with pytest.warns(UserWarning, match="smem=16; cutelab gives it the"):
        f = cute.compile(run, from_dlpack(out))
    f(from_dlpack(out))
    assert out.tolist() == [1856] * 4
