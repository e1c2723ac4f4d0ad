"""``nvshmem.core`` (nvshmem4py) without a GPU: ``init``, ``get_unique_id``, ``tensor``,
``get_peer_tensor``, ``free_tensor``, ``my_pe``/``n_pes``, ``barrier_all``, ``finalize``, over the
host shared memory of :mod:`.heap`. ``tensor`` is collective, as in NVSHMEM: it
maps every PE's buffer at once. ``get_multicast_tensor`` gives a tensor's multicast view (its
address stands for every PE's copy: ``kernel.cpu.multicast``).
PEs are the ranks of torch.distributed's world group (the program initializes it first, as
CUTLASS's examples do to broadcast the unique id).

The hook (``cutelab.compat.hook``) hands this module out as ``nvshmem.core`` and :data:`nvshmem_pkg`
as ``nvshmem`` while the CUDA device is emulated.

May import: ``compat.distributed.heap``/``board``/``symm_mem``, ``cutelab.compat``, torch, numpy.
"""

from __future__ import annotations

import enum
import math
import types
from typing import Any, Dict

import numpy as np

from ..where import NotEmulatedAttributeError, NotEmulatedError, user_line
from . import board as _board
from . import heap
from .symm_mem import MULTICAST

__all__ = ["init", "finalize", "get_unique_id", "tensor", "get_peer_tensor", "free_tensor", "get_multicast_tensor",
           "my_pe", "n_pes", "barrier_all", "Teams", "UniqueID"]

_STATE: Dict[str, Any] = {"init": False}


class Teams(enum.IntEnum):
    TEAM_INVALID = -1
    TEAM_WORLD = 0
    TEAM_SHARED = 1
    TEAM_NODE = 2
    TEAM_SAME_MYPE_NODE = 3
    TEAM_SAME_GPU = 4
    TEAM_GPU_LEADERS = 5


class UniqueID:
    """What ``get_unique_id`` returns: 128 bytes in ``_data`` (programs broadcast them)."""

    def __init__(self, empty: bool):
        self._data = np.zeros(16, dtype=np.uint64)
        if not empty:
            self._data[:] = np.frombuffer(np.random.default_rng().bytes(128), dtype=np.uint64)


def get_unique_id(empty: bool = False) -> UniqueID:
    return UniqueID(empty)


def _need_init(what: str) -> None:
    if not _STATE["init"]:
        raise NotEmulatedError(f"nvshmem.core.{what} before nvshmem.core.init", "NVSHMEM must be initialized first",
                               where=user_line(3))


def init(device: Any = None, uid: Any = None, rank: Any = None, nranks: Any = None, mpi_comm: Any = None,
         initializer_method: str = "", **kwargs: Any) -> None:
    """Join the PEs: the torch.distributed world group (rank and nranks must agree with it)."""
    import torch.distributed as dist

    if not dist.is_initialized():
        raise NotEmulatedError("nvshmem.core.init without torch.distributed", "cutelab's NVSHMEM runs over the torch."
                               "distributed process group: call dist.init_process_group first (as torchrun programs do)",
                               where=user_line(2))
    if rank is not None and int(rank) != dist.get_rank() or nranks is not None and int(nranks) != dist.get_world_size():
        raise NotEmulatedError(f"nvshmem.core.init(rank={rank}, nranks={nranks})", "the PEs are torch.distributed's "
                               f"world group (rank {dist.get_rank()} of {dist.get_world_size()})", where=user_line(2))
    _board.make_board()
    _STATE["init"] = True


def finalize() -> None:
    _STATE["init"] = False


def my_pe() -> int:
    import torch.distributed as dist

    _need_init("my_pe")
    return dist.get_rank()


def n_pes() -> int:
    import torch.distributed as dist

    _need_init("n_pes")
    return dist.get_world_size()


def barrier_all(stream: Any = None) -> None:
    import torch.distributed as dist

    _need_init("barrier_all")
    dist.barrier()


def tensor(shape: Any, dtype: Any = None, **kwargs: Any) -> Any:
    """Collective: a symmetric tensor of this PE (every PE's buffer is mapped here)."""
    import torch

    _need_init("tensor")
    shape = tuple(int(s) for s in (shape if isinstance(shape, (tuple, list, torch.Size)) else (shape,)))
    dtype = dtype or torch.float32
    seg = heap.allocate(math.prod(shape) * dtype.itemsize)
    seg.connect()
    return seg.view(seg.rank, shape, dtype)


def get_peer_tensor(t: Any, pe: int) -> Any:
    """PE pe's tensor at the same place of the same symmetric allocation, mapped here."""
    found = heap.find(t)
    if found is None:
        raise NotEmulatedError("nvshmem.core.get_peer_tensor of a tensor not made by nvshmem.core.tensor",
                               "peer tensors exist for symmetric tensors", where=user_line(2))
    seg, r = found
    if not 0 <= int(pe) < seg.world:
        raise ValueError(f"nvshmem.core.get_peer_tensor: PE {pe} is not one of the {seg.world} PEs")
    off = t.data_ptr() - seg.bases[r]
    if off % t.element_size():
        raise ValueError("nvshmem.core.get_peer_tensor: the tensor does not start at a whole element")
    base = seg.view(int(pe), (seg.nbytes // t.element_size(),), t.dtype)
    peer = base.as_strided(t.shape, t.stride(), off // t.element_size())
    from .. import torch_cuda

    torch_cuda.mark_on_cuda(peer)
    return peer


def free_tensor(t: Any) -> None:
    found = heap.find(t) or heap.find_multicast(t)
    if found is None:
        raise NotEmulatedError("nvshmem.core.free_tensor of a tensor not made by nvshmem.core", "free_tensor frees "
                               "symmetric tensors", where=user_line(2))


def get_multicast_tensor(team: Any, t: Any) -> Any:
    """The multicast view of symmetric tensor t over the PEs of team (TEAM_NODE or TEAM_WORLD: every PE,
    one node): a tensor of t's shape and strides at an address that stands for t's place in every PE's
    buffer (``heap.Segment.multicast``). Kernels use it with multimem.ld_reduce/st/red and TMA stores."""
    _need_init("get_multicast_tensor")
    tv = int(getattr(team, "value", team)) if not isinstance(team, str) else -2
    if tv not in (Teams.TEAM_WORLD, Teams.TEAM_NODE, Teams.TEAM_SHARED):
        raise NotEmulatedError(f"nvshmem.core.get_multicast_tensor(team={team!r})", "cutelab's PEs are one node: "
                               "the teams TEAM_WORLD, TEAM_NODE and TEAM_SHARED (all of them) have multicast objects",
                               where=user_line(2))
    found = heap.find(t)
    if found is None:
        raise NotEmulatedError("nvshmem.core.get_multicast_tensor of a tensor not made by nvshmem.core.tensor",
                               "multicast objects exist for symmetric tensors", where=user_line(2))
    seg, r = found
    if r != seg.rank:
        raise ValueError(f"nvshmem.core.get_multicast_tensor: the tensor is PE {r}'s buffer (from get_peer_tensor); "
                         f"pass this PE's own tensor")
    off = t.data_ptr() - seg.bases[r]
    if off % t.element_size():
        raise ValueError("nvshmem.core.get_multicast_tensor: the tensor does not start at a whole element")
    _, raw = seg.multicast()
    base = raw[: seg.nbytes - seg.nbytes % t.element_size()].view(t.dtype)
    mc = base.as_strided(t.shape, t.stride(), off // t.element_size())
    from .. import torch_cuda

    torch_cuda.mark_on_cuda(mc)
    return mc


#: nvshmem.core's functions that make multicast objects: refused on a GPU too (hook.py patches the real module)
MULTICAST_FUNCTIONS = ("get_multicast_tensor", "get_multicast_buffer")


def refuse_multicast_on_gpu(module: Any) -> None:
    """Replace the real nvshmem.core's multicast functions (after it is imported under ``cutelab
    run`` on a GPU) by ones that raise NotSupportedError naming the caller's line: NVLink multicast
    is switched off on the machines cutelab runs on, where NVSHMEM's own attempt ends in an opaque
    'Failed to retrieve multicast buffer' (and must never reach cuMulticastCreate)."""
    from ..where import NotSupportedError

    def refuser(name: str) -> Any:
        def refused(*args: Any, **kwargs: Any) -> Any:
            raise NotSupportedError(f"nvshmem.core.{name}", MULTICAST, where=user_line(2))

        refused.__name__ = name
        return refused

    for name in MULTICAST_FUNCTIONS:
        if hasattr(module, name):
            setattr(module, name, refuser(name))


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    raise NotEmulatedAttributeError(f"nvshmem.core.{name}", "cutelab emulates init, finalize, get_unique_id, tensor, "
                                    "get_peer_tensor, get_multicast_tensor, free_tensor, my_pe, n_pes and barrier_all "
                                    "of nvshmem.core "
                                    "(host shared memory between ranks)", where=user_line(2))


def _package(name: str, **attrs: Any) -> types.ModuleType:
    m = types.ModuleType(name, f"cutelab's emulation of {name}")
    m.__path__ = []  # a package
    for k, v in attrs.items():
        setattr(m, k, v)
    return m


def _load_nvidia_dynamic_lib(libname: str) -> Any:
    """cuda.pathfinder.load_nvidia_dynamic_lib: the emulated device loads no library."""
    return types.SimpleNamespace(abs_path=None, was_already_loaded_from_elsewhere=False, libname=libname,
                                 _handle_uint=0)


def _refuse_pathfinder(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    raise NotEmulatedAttributeError(f"cuda.pathfinder.{name}", "cutelab emulates load_nvidia_dynamic_lib of "
                                    "cuda.pathfinder (the emulated device loads no library)", where=user_line(2))


import sys as _sys  # noqa: E402

nvshmem_pkg = _package("nvshmem", core=_sys.modules[__name__])
pathfinder = _package("cuda.pathfinder", load_nvidia_dynamic_lib=_load_nvidia_dynamic_lib)
pathfinder.__getattr__ = _refuse_pathfinder
