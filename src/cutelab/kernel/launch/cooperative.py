"""Cooperative launches (``kernel.launch(..., cooperative=True)``, CUDA's cudaLaunchCooperativeKernel):
every CTA of the grid is resident at once, so CTAs may wait for each other (a grid-wide barrier
spinning on a counter in global memory).

On the GPU the launch carries ``CU_LAUNCH_ATTRIBUTE_COOPERATIVE`` (cuda/cluster.py) and the driver
refuses a grid that does not fit; cutelab raises that as ``CudaRuntimeError`` with the runtime's
code ``cudaErrorCooperativeLaunchTooLarge`` (CuTe DSL's ``DSLCudaRuntimeError``). On the CPU,
``check_cooperative`` makes the same refusal against the emulated part (its SM count, 2048
threads, 32 CTAs and its shared memory per SM; registers are not counted, so the CPU may accept a
grid that a register-heavy kernel could not fit on the GPU), and the interpreter runs the whole
grid as one batch (cpu/interpreter.py), every CTA advancing together, so a grid barrier completes.
"""

from __future__ import annotations

from typing import Any, Tuple

from ... import emulated_gpu
from ...errors import CudaRuntimeError

__all__ = ["check_cooperative", "max_cooperative_blocks"]

COOPERATIVE_LAUNCH_TOO_LARGE = 82  # cudaError_t.cudaErrorCooperativeLaunchTooLarge


def max_cooperative_blocks(block: Tuple[int, int, int], smem: int) -> int:
    """CTAs of block threads and smem bytes of shared memory that the emulated part holds at once."""
    sms = emulated_gpu.part()[1]
    threads = block[0] * block[1] * block[2]
    warps = -(-threads // 32)
    per_sm = min(32, 2048 // (warps * 32))
    if smem:
        per_sm = min(per_sm, emulated_gpu.smem_per_sm() // (int(smem) + 1024))
    return sms * per_sm


def check_cooperative(name: str, grid: Tuple[int, int, int], block: Tuple[int, int, int], smem: int,
                      where: Any) -> None:
    """Refuse, as the runtime does, a cooperative launch whose grid cannot be resident at once (for CPU
    runs; on the GPU the driver decides)."""
    n = grid[0] * grid[1] * grid[2]
    most = max_cooperative_blocks(block, smem)
    if n > most:
        raise CudaRuntimeError(
            COOPERATIVE_LAUNCH_TOO_LARGE, "cudaErrorCooperativeLaunchTooLarge",
            f"{name}.launch(cooperative=True) at {where or '?'}: grid {grid} is {n} CTAs of {block} threads, but "
            f"at most {most} such CTAs are resident at once on the emulated device",
            "launch at most that many CTAs (a persistent kernel loops over the work)")
