"""``torch.distributed._symmetric_memory`` without a GPU: ``empty``, ``rendezvous`` and the handle's
``get_buffer``, ``get_signal_pad``, ``buffer_ptrs``, ``signal_pad_ptrs``, ``barrier``, over the host
shared memory of :mod:`.heap` (each rank's buffer, and a signal pad after it,
mapped into every rank). Only the world group is emulated. ``multicast_ptr`` is the address of the
allocation's multicast mapping (it stands for every rank's copy: ``kernel.cpu.multicast``), and
``torch.ops.symm_mem.multimem_all_reduce_`` sums a symmetric tensor over the ranks.

May import: ``compat.distributed.heap``/``board``, ``cutelab.compat`` (errors, the emulated device), torch.
"""

from __future__ import annotations

import math
from typing import Any, Dict, List, Optional

from ..where import NotEmulatedError, user_line
from . import board as _board
from . import heap

__all__ = ["empty", "rendezvous", "SymmetricMemory", "install", "MULTICAST"]

MULTICAST = ("NVLink multicast (multimem, multicast tensors) is not supported on a GPU: it is switched off on the "
             "machines cutelab runs on (it can take a shared host's GPUs out of service); the CPU ranks emulate it")

_SIGNAL_PAD = 2048


def _signal_pad_size() -> int:
    try:
        import torch._C._distributed_c10d as c

        return int(c._SymmetricMemory.signal_pad_size)
    except Exception:  # noqa: BLE001 - a torch without symmetric memory
        return _SIGNAL_PAD


#: allocations made by empty(): id of the segment -> (segment, requested bytes)
_PENDING: Dict[int, Any] = {}


def empty(*size: Any, dtype: Any = None, device: Any = None) -> Any:
    """A tensor in this rank's part of a new symmetric allocation (peers mapped at rendezvous)."""
    import torch

    if len(size) == 1 and isinstance(size[0], (tuple, list, torch.Size)):
        size = tuple(size[0])
    dtype = dtype or torch.get_default_dtype()
    nbytes = math.prod(int(s) for s in size) * dtype.itemsize
    pad = _signal_pad_size()
    seg = heap.allocate(nbytes + pad)
    seg.payload, seg.pad, seg.connected = nbytes, pad, False
    return seg.view(seg.rank, tuple(int(s) for s in size), dtype)


def _world_group(group: Any, what: str) -> None:
    import torch.distributed as dist

    world = dist.group.WORLD
    name = group if isinstance(group, str) else getattr(group, "group_name", None)
    if group is world or name == getattr(world, "group_name", object()):
        return
    if hasattr(group, "size") and group.size() == dist.get_world_size():
        return
    raise NotEmulatedError(f"{what} on the group {name or group!r}", "cutelab's symmetric memory spans the world "
                           "group (dist.group.WORLD)", where=user_line(3))


class SymmetricMemory:
    """What ``rendezvous`` returns: every rank's buffer and signal pad, mapped here."""

    def __init__(self, seg: heap.Segment):
        self._seg = seg
        self.rank, self.world_size = seg.rank, seg.world
        self.buffer_size = seg.payload
        self.signal_pad_size = seg.pad
        self.buffer_ptrs = [b for b in seg.bases]
        self.signal_pad_ptrs = [b + seg.payload for b in seg.bases]
        self.buffer_ptrs_dev = self.signal_pad_ptrs_dev = 0

    @property
    def multicast_ptr(self) -> int:
        """The address of the buffer's multicast mapping (the signal pad after it too), made at the first read."""
        return self._seg.multicast()[0]

    def get_buffer(self, rank: int, sizes: Any, dtype: Any, storage_offset: int = 0) -> Any:
        import math as _m

        n = _m.prod(int(s) for s in (sizes if isinstance(sizes, (tuple, list)) else (sizes,)))
        if (storage_offset + n) * dtype.itemsize > self.buffer_size:
            raise ValueError(f"get_buffer(rank {rank}, {tuple(sizes)}, {dtype}, storage_offset={storage_offset}): "
                             f"the symmetric buffer has {self.buffer_size} bytes")
        return self._seg.view(rank, sizes, dtype, storage_offset)

    def get_signal_pad(self, rank: int, sizes: Any = None, dtype: Any = None, storage_offset: int = 0) -> Any:
        import torch

        dtype = dtype or torch.uint32
        if sizes is None:
            sizes = (self.signal_pad_size // dtype.itemsize - storage_offset,)
        t = self._seg.tensors[rank][self.buffer_size:].view(dtype)[storage_offset:]
        t = t[: math.prod(int(s) for s in (sizes if isinstance(sizes, (tuple, list)) else (sizes,)))].view(sizes)
        from .. import torch_cuda

        torch_cuda.mark_on_cuda(t)
        return t

    def barrier(self, channel: int = 0, timeout_ms: int = 0) -> None:
        import torch.distributed as dist

        dist.barrier()

    def has_multicast_support(self) -> bool:
        return True

    def __repr__(self) -> str:
        return f"<cutelab SymmetricMemory rank {self.rank}/{self.world_size}, {self.buffer_size} bytes>"


def rendezvous(tensor: Any, group: Any = None) -> SymmetricMemory:
    """Collective: map every rank's buffer of tensor's allocation (made by :func:`empty`)."""
    import torch.distributed as dist

    _world_group(group if group is not None else dist.group.WORLD, "symm_mem.rendezvous")
    found = heap.find(tensor)
    if found is None or not hasattr(found[0], "payload"):
        raise NotEmulatedError("symm_mem.rendezvous of a tensor not made by symm_mem.empty",
                               "rendezvous takes the tensor symm_mem.empty returned (or a view of it)",
                               where=user_line(2))
    seg = found[0]
    _board.make_board()  # collective too: the first rendezvous makes the board of waits
    if not seg.connected:
        seg.connect()
        seg.connected = True
        seg.handle = SymmetricMemory(seg)
    return seg.handle


def is_nvshmem_available() -> bool:
    return False


def get_signal_pad_size() -> int:
    return _signal_pad_size()


def enable_symm_mem_for_group(group_name: Any) -> None:
    return None


def is_symm_mem_enabled_for_group(group_name: Any) -> bool:
    return True


def set_backend(name: str) -> None:
    return None


def get_backend(device: Any = None) -> str:
    return "cutelab-host-shm"


EMULATED = {"empty": empty, "rendezvous": rendezvous, "is_nvshmem_available": is_nvshmem_available,
            "get_signal_pad_size": get_signal_pad_size, "enable_symm_mem_for_group": enable_symm_mem_for_group,
            "is_symm_mem_enabled_for_group": is_symm_mem_enabled_for_group, "set_backend": set_backend,
            "get_backend": get_backend}

_SAVED: Dict[str, Any] = {}


def _has_multicast_support(device_type: Any = None, device_idx: Any = None) -> bool:
    """``torch._C._distributed_c10d._SymmetricMemory.has_multicast_support``: True (the CPU ranks emulate
    multicast)."""
    return True


def multimem_all_reduce_(tensor: Any, reduce_op: str, group_name: Any) -> Any:
    """``torch.ops.symm_mem.multimem_all_reduce_``: tensor (symmetric, after rendezvous) becomes the sum of
    every rank's tensor, in place; collective."""
    import torch.distributed as dist

    if str(reduce_op) != "sum":
        raise NotEmulatedError(f"symm_mem.multimem_all_reduce_(reduce_op={reduce_op!r})", "the reduction is 'sum'",
                               where=user_line(2))
    _world_group(group_name, "symm_mem.multimem_all_reduce_")
    found = heap.find(tensor)
    if found is None or not getattr(found[0], "connected", False):
        raise NotEmulatedError("symm_mem.multimem_all_reduce_ of a tensor that is not symmetric memory",
                               "the tensor comes from symm_mem.empty and has been through rendezvous",
                               where=user_line(2))
    dist.all_reduce(tensor)
    return tensor


def install() -> None:
    """Put the emulation in torch.distributed._symmetric_memory (programs import that module)."""
    if _SAVED:
        return
    import torch.distributed._symmetric_memory as sm

    for n, v in EMULATED.items():
        _SAVED[n] = getattr(sm, n, None)
        setattr(sm, n, v)
    try:
        from torch._C._distributed_c10d import _SymmetricMemory

        _SAVED["_has_multicast_support"] = _SymmetricMemory.__dict__["has_multicast_support"]
        _SymmetricMemory.has_multicast_support = staticmethod(_has_multicast_support)
    except (ImportError, KeyError, AttributeError, TypeError):  # a torch without symmetric memory
        pass
    try:  # the CPU kernel of symm_mem's op (the emulated device's tensors are CPU tensors)
        import torch

        lib = torch.library.Library("symm_mem", "IMPL")
        lib.impl("multimem_all_reduce_", multimem_all_reduce_, "CPU")
        _SAVED["_lib"] = lib
    except Exception:  # noqa: BLE001 - a torch without the op
        pass


def uninstall() -> None:
    if not _SAVED:
        return
    import torch.distributed._symmetric_memory as sm

    hms = _SAVED.pop("_has_multicast_support", None)
    if hms is not None:
        from torch._C._distributed_c10d import _SymmetricMemory

        _SymmetricMemory.has_multicast_support = hms
    _SAVED.pop("_lib", None)  # (the library's registrations end with it)
    for n, v in _SAVED.items():
        setattr(sm, n, v)
    _SAVED.clear()
