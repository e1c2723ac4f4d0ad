"""Symmetric memory as host shared memory: one file in /dev/shm per rank and allocation, mapped
into every rank of the job, so that one rank's kernel (on the CPU interpreter) reads and writes
another rank's buffer in place.

Allocations are made in the same order on every rank (both PyTorch's ``rendezvous`` and
NVSHMEM's ``tensor`` are collective), so the n-th allocation of every rank has the same
sequence number: rank r's file is ``/dev/shm/cutelab-<job>-a<n>-r<r>``. The job's name is chosen by
rank 0 and passed to the others through the process group's store. Once every rank has mapped
every peer's file, the files are unlinked (the mappings keep the memory), as is the job's lock
file once every rank has opened it: nothing is left in /dev/shm, even when a rank dies.

:data:`SHARED` lists the address ranges mapped here; the CPU interpreter writes such memory
in place (other ranks must see the writes while the kernel runs), never on a copy.

May import: ``cutelab.compat`` (errors, the emulated device), ``cutelab.kernel.cpu.interpreter``, torch.
"""

from __future__ import annotations

import mmap
import os
import secrets
import tempfile
import threading
from typing import Any, Dict, List, Optional, Tuple

from ..where import NotEmulatedError, user_line
from ...kernel.cpu.interpreter import SHARED  # (first, end) address of every mapped segment of this process

__all__ = ["Segment", "allocate", "find", "find_multicast", "SHARED", "job_prefix", "cross_process_lock"]

_lock = threading.Lock()
_state: Dict[str, Any] = {"seq": 0, "dir": None, "segments": []}


def _store_and_group():
    import torch.distributed as dist

    if not dist.is_initialized():
        raise NotEmulatedError("symmetric memory before torch.distributed.init_process_group",
                               "cutelab's symmetric memory needs the process group (the ranks meet through its store)",
                               where=user_line(4))
    from torch.distributed import distributed_c10d as c10d

    return c10d._get_default_store(), dist


def job_prefix() -> str:
    """The path prefix of the job's files in /dev/shm (chosen by rank 0, shared through the store).
    Rank 0 also makes the job's lock file there (see cross_process_lock)."""
    if _state["dir"] is not None:
        return _state["dir"]
    store, dist = _store_and_group()
    key = "cutelab/symm-prefix"
    if dist.get_rank() == 0:
        base = "/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir()
        prefix = os.path.join(base, f"cutelab-{secrets.token_hex(6)}")
        os.close(os.open(prefix + "-lock", os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600))
        store.set(key, prefix)
    else:
        prefix = store.get(key).decode()
    _state["dir"] = prefix
    return prefix


class Segment:
    """One symmetric allocation: this rank's buffer and the mappings of every rank's."""

    def __init__(self, seq: int, nbytes: int, rank: int, world: int):
        self.seq, self.nbytes, self.rank, self.world = seq, nbytes, rank, world
        self.maps: List[Optional[mmap.mmap]] = [None] * world
        self.bases: List[int] = [0] * world
        self.tensors: List[Any] = [None] * world  # uint8 torch views of each rank's mapping
        self.freed = False
        self.fd = -1  # this rank's file, open for the multicast mapping
        self.mc: Optional[Tuple[int, Any, Any]] = None  # (address, uint8 tensor, mmap) of the multicast mapping

    def path(self, r: int) -> str:
        return f"{job_prefix()}-a{self.seq}-r{r}"

    def _map(self, r: int, create: bool) -> None:
        import torch

        flags = os.O_RDWR | (os.O_CREAT | os.O_EXCL if create else 0)
        fd = os.open(self.path(r), flags, 0o600)
        try:
            if create:
                os.ftruncate(fd, self.nbytes)
            mm = mmap.mmap(fd, self.nbytes)
            if create:  # this rank's own memory: a multicast object maps it once more (multicast())
                self.fd = os.dup(fd)
        finally:
            os.close(fd)
        t = torch.frombuffer(mm, dtype=torch.uint8, count=self.nbytes)
        self.maps[r], self.tensors[r], self.bases[r] = mm, t, t.data_ptr()
        SHARED.append((t.data_ptr(), t.data_ptr() + self.nbytes))

    def connect(self) -> None:
        """Map every peer's buffer (all ranks have created theirs), then unlink this rank's file."""
        _, dist = _store_and_group()
        dist.barrier()
        for r in range(self.world):
            if self.maps[r] is None:
                self._map(r, create=False)
        if "lock_fd" not in _state:  # every rank opens the job's lock file at its first connect
            _state["lock_fd"] = os.open(job_prefix() + "-lock", os.O_RDWR)
        dist.barrier()
        for path in (self.path(self.rank), job_prefix() + "-lock" if self.rank == 0 else None):
            if path is not None:  # every rank holds what it needs: nothing stays in /dev/shm
                try:
                    os.unlink(path)
                except FileNotFoundError:
                    pass

    def view(self, r: int, shape: Any, dtype: Any, storage_offset: int = 0) -> Any:
        """Rank r's buffer as a torch tensor of shape and dtype (elements from storage_offset),
        marked as on the emulated CUDA device."""
        import math

        from .. import torch_cuda

        if self.maps[r] is None:
            raise NotEmulatedError(f"rank {r}'s buffer of symmetric allocation {self.seq}",
                                   "peers are mapped at rendezvous (torch) or when the tensor is made (NVSHMEM)",
                                   where=user_line(3))
        shape = tuple(int(s) for s in (shape if isinstance(shape, (tuple, list)) else (shape,)))
        itemsize = dtype.itemsize
        need = (storage_offset + math.prod(shape)) * itemsize
        if need > self.nbytes:
            raise ValueError(f"get_buffer(rank {r}, shape {shape}, {dtype}, storage_offset {storage_offset}): "
                             f"needs {need} bytes, the symmetric buffer has {self.nbytes}")
        t = self.tensors[r][storage_offset * itemsize: need].view(dtype).view(shape)
        torch_cuda.mark_on_cuda(t)
        return t

    def multicast(self) -> Tuple[int, Any]:
        """(first address, uint8 torch tensor) of this allocation's multicast mapping, made at the first call
        (collective in NVSHMEM and in torch's symmetric memory; here every peer is mapped already): this
        rank's copy mapped once more, at an address of its own, registered (``kernel.cpu.multicast``) as
        standing for every rank's copy. Only multimem.* and TMA stores may use it."""
        import torch

        from ...kernel.cpu import multicast as mc

        if self.mc is None:
            if any(m is None for m in self.maps):
                raise NotEmulatedError(f"a multicast object of symmetric allocation {self.seq}",
                                       "every peer's buffer must be mapped first (rendezvous, or nvshmem.core.tensor)",
                                       where=user_line(3))
            mm = mmap.mmap(self.fd, self.nbytes)  # this rank's pages, at a second address
            t = torch.frombuffer(mm, dtype=torch.uint8, count=self.nbytes)
            SHARED.append((t.data_ptr(), t.data_ptr() + self.nbytes))
            mc.register(t.data_ptr(), t.data_ptr() + self.nbytes, self.bases)
            self.mc = (t.data_ptr(), t, mm)
        return self.mc[0], self.mc[1]

    def free(self) -> None:
        self.freed = True


class _FileLock:
    """A lock held by one process of the job at a time (fcntl on the job's lock file, which every
    rank opened at its first connect): the read-modify-write of an atomic on memory other ranks map
    (kernel.instr.atomics)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def __enter__(self) -> None:
        import fcntl

        fcntl.lockf(self.fd, fcntl.LOCK_EX)

    def __exit__(self, *exc: Any) -> None:
        import fcntl

        fcntl.lockf(self.fd, fcntl.LOCK_UN)


def cross_process_lock(buf: Any) -> Any:
    """kernel.instr.atomics.CROSS_PROCESS_LOCK: the job's lock for storage other ranks map."""
    import contextlib

    from ...kernel.cpu.interpreter import _shared

    if not _shared(buf) or "lock_fd" not in _state:  # no peer has mapped anything yet
        return contextlib.nullcontext()
    lk = _state.get("lock")
    if lk is None:
        lk = _state["lock"] = _FileLock(_state["lock_fd"])
    return lk


def allocate(nbytes: int) -> Segment:
    """This rank's part of a new symmetric allocation (peers are mapped by Segment.connect)."""
    import torch.distributed as dist

    _store_and_group()
    with _lock:
        seq = _state["seq"]
        _state["seq"] += 1
    seg = Segment(seq, max(int(nbytes), 1), dist.get_rank(), dist.get_world_size())
    seg._map(seg.rank, create=True)
    _state["segments"].append(seg)
    from ...kernel.instr import atomics

    atomics.CROSS_PROCESS_LOCK = cross_process_lock
    return seg


def find(t: Any) -> Optional[Tuple[Segment, int]]:
    """(segment, rank) whose mapping holds tensor t's storage, or None."""
    try:
        p = t.untyped_storage().data_ptr()
    except Exception:  # noqa: BLE001 - not a tensor with storage
        return None
    for seg in _state["segments"]:
        for r, b in enumerate(seg.bases):
            if b and b <= p < b + seg.nbytes:
                return seg, r
    return None


def find_multicast(t: Any) -> Optional[Segment]:
    """The segment whose multicast mapping holds tensor t's storage, or None."""
    try:
        p = t.untyped_storage().data_ptr()
    except Exception:  # noqa: BLE001 - not a tensor with storage
        return None
    for seg in _state["segments"]:
        if seg.mc is not None and seg.mc[0] <= p < seg.mc[0] + seg.nbytes:
            return seg
    return None
