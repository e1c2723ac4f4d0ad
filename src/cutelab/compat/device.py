"""The emulated GPU: its architecture (``CUTE_DSL_ARCH``, else sm_90) and its properties."""

from __future__ import annotations

import os
import re
from typing import Tuple

#: compute capability -> (name, SMs, L2 bytes, memory bytes) of the part cutelab emulates
PARTS = {
    (8, 0): ("NVIDIA A100-SXM4-80GB", 108, 40 << 20, 80 << 30),
    (8, 6): ("NVIDIA RTX A6000", 84, 6 << 20, 48 << 30),
    (8, 9): ("NVIDIA L40S", 142, 96 << 20, 48 << 30),
    (9, 0): ("NVIDIA H100 80GB HBM3", 132, 50 << 20, 80 << 30),
    (10, 0): ("NVIDIA B200", 148, 126 << 20, 180 << 30),
    (10, 3): ("NVIDIA B300", 148, 126 << 20, 270 << 30),
    (12, 0): ("NVIDIA GeForce RTX 5090", 170, 96 << 20, 32 << 30),
}


def arch() -> str:
    """The emulated architecture as CuTe DSL names it: CUTE_DSL_ARCH, else "sm_90a"."""
    return os.environ.get("CUTE_DSL_ARCH") or "sm_90a"


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


def capability() -> Tuple[int, int]:
    """(major, minor) of the emulated architecture: sm_90a -> (9, 0), sm_100a -> (10, 0).

    >>> os.environ["CUTE_DSL_ARCH"] = "sm_80"; capability(); del os.environ["CUTE_DSL_ARCH"]
    (8, 0)
    """
    m = re.fullmatch(r"sm_(\d+)(\d)[a-z]?", arch().strip())
    if m is None:
        raise ValueError(f"CUTE_DSL_ARCH={arch()!r} is not an architecture like sm_90a")
    return int(m.group(1)), int(m.group(2))


def part() -> tuple:
    cc = capability()
    if cc not in PARTS:
        raise ValueError(f"cutelab does not emulate sm_{cc[0]}{cc[1]} (CUTE_DSL_ARCH); it knows "
                         + ", ".join(f"sm_{a}{b}" for a, b in PARTS))
    return PARTS[cc]


def smem_per_block_optin() -> int:
    from ..utils.smem_allocator import get_smem_capacity_in_bytes

    return get_smem_capacity_in_bytes(arch())


def smem_per_sm() -> int:
    return smem_per_block_optin() + 1024


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
