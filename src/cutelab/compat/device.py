"""The emulated GPU as torch and the CUDA runtime see it: how many there are (one per local rank),
which indices name one, and ``torch.cuda.get_device_properties()`` of the part
(``cutelab.emulated_gpu`` describes the part: its architecture, SMs and shared memory).
"""

from __future__ import annotations

import os

from ..emulated_gpu import PARTS, arch, capability, part, smem_per_block_optin, smem_per_sm  # noqa: F401  (the part)


def count() -> int:
    """GPUs of the emulated machine: one, or one per local rank under a launcher (torchrun sets
    LOCAL_WORLD_SIZE): rank r's tensors on cuda:r live in its own host memory, as all do.

    >>> count() >= 1
    True
    """
    try:
        return max(1, int(os.environ.get("LOCAL_WORLD_SIZE", "1")))
    except ValueError:
        return 1


def index_ok(idx: int) -> bool:
    """Whether cuda:idx is a device of the emulated machine."""
    return 0 <= int(idx) < count()


class DeviceProperties:
    """torch.cuda.get_device_properties() of the emulated part."""

    def __init__(self) -> None:
        name, sms, l2, mem = part()
        self.name = name + " (cutelab CPU emulation)"
        self.major, self.minor = capability()
        self.multi_processor_count = sms
        self.total_memory = mem
        self.L2_cache_size = l2
        self.shared_memory_per_block = 48 * 1024
        self.shared_memory_per_block_optin = smem_per_block_optin()
        self.shared_memory_per_multiprocessor = smem_per_sm()
        self.max_threads_per_multi_processor = 2048
        self.max_threads_per_block = 1024
        self.regs_per_multiprocessor = 65536
        self.warp_size = 32
        self.is_integrated = False
        self.is_multi_gpu_board = False
        self.uuid = "00000000-0000-0000-0000-000000000000"
        self.clock_rate = 1980000
        self.memory_clock_rate = 2619000
        self.memory_bus_width = 5120

    def __repr__(self) -> str:
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
                f"total_memory={self.total_memory >> 20}MB, multi_processor_count={self.multi_processor_count}, "
                f"L2_cache_size={self.L2_cache_size >> 20}MB)")
