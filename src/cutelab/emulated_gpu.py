"""The GPU that cutelab's CPU path emulates: its architecture (``CUTE_DSL_ARCH``, else sm_90a), the
part of that architecture (name, SMs, L2 and memory bytes) and its shared memory per block and per
SM.

The kernel's launch checks (a cooperative grid must fit the part's SMs: ``kernel.launch.cooperative``)
and the compatibility layer's device queries (``torch.cuda.get_device_properties``, the CUDA
runtime's attributes: ``compat.device``) read it. It imports nothing of cutelab.

>>> import os; os.environ["CUTE_DSL_ARCH"] = "sm_80"
>>> capability(), part()[:2], smem_per_block_optin()
((8, 0), ('NVIDIA A100-SXM4-80GB', 108), 166912)
>>> del os.environ["CUTE_DSL_ARCH"]
"""

from __future__ import annotations

import os
import re
from typing import Any, Optional, Tuple

__all__ = ["PARTS", "SMEM_CAPACITY_KIB", "arch", "capability", "part", "smem_capacity", "smem_per_block_optin",
           "smem_per_sm"]

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

#: shared memory a block may use (opt-in maximum, less the 1 KiB the system reserves), by architecture
SMEM_CAPACITY_KIB = {80: 164, 86: 100, 87: 164, 89: 100, 90: 228, 100: 228, 101: 228, 103: 228, 107: 328,
                     110: 228, 120: 100, 121: 100}


def arch() -> str:
    """The emulated architecture as CuTe DSL names it: CUTE_DSL_ARCH, else "sm_90a"."""
    return os.environ.get("CUTE_DSL_ARCH") or "sm_90a"


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
    """(name, SMs, L2 bytes, memory bytes) of the emulated part (PARTS)."""
    cc = capability()
    if cc not in PARTS:
        raise ValueError(f"cutelab does not emulate sm_{cc[0]}{cc[1]} (CUTE_DSL_ARCH); it knows "
                         + ", ".join(f"sm_{a}{b}" for a, b in PARTS))
    return PARTS[cc]


def smem_capacity(compute_capability: Any) -> Optional[int]:
    """Bytes of shared memory one block can use on an architecture ("sm_80", "sm_90a", 90, ...), or
    None for one not in SMEM_CAPACITY_KIB."""
    m = re.fullmatch(r"(?:sm_)?(\d+)[a-z]?", str(compute_capability).strip())
    if m is None or int(m.group(1)) not in SMEM_CAPACITY_KIB:
        return None
    return (SMEM_CAPACITY_KIB[int(m.group(1))] - 1) * 1024


def smem_per_block_optin() -> int:
    """Bytes of shared memory one block of the emulated part can use."""
    got = smem_capacity(arch())
    if got is None:
        raise ValueError(f"get_smem_capacity_in_bytes({arch()!r}): unknown architecture; known: "
                         + ", ".join(f"sm_{k}" for k in sorted(SMEM_CAPACITY_KIB)))
    return got


def smem_per_sm() -> int:
    """Bytes of shared memory per SM of the emulated part (a block's opt-in maximum and the 1 KiB reserved)."""
    return smem_per_block_optin() + 1024
