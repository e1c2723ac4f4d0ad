"""torch.distributed without a GPU: a process group asked for NCCL runs on gloo.

``init_process_group(backend="nccl")`` and ``"cpu:gloo,cuda:nccl"`` become gloo (the emulated CUDA
tensors live in host memory, which gloo moves); ``device_id`` (a CUDA device) is dropped;
``new_group`` maps its backend the same way. ``destroy_process_group`` marks the rank as exited
on the board of waits (:mod:`.board`), and a blocking collective of the world group (``barrier``,
``all_reduce``, ...) marks it as in a collective while it runs.

May import: ``compat.distributed.board``, torch.
"""

from __future__ import annotations

import functools
from typing import Any, Dict

__all__ = ["gloo_backend", "install", "uninstall"]

_SAVED: Dict[str, Any] = {}


def gloo_backend(backend: Any) -> Any:
    """The backend string with every nccl (or the default, None) replaced by gloo.

    >>> gloo_backend("nccl"), gloo_backend("cpu:gloo,cuda:nccl"), gloo_backend(None)
    ('gloo', 'cpu:gloo,cuda:gloo', 'gloo')
    """
    if backend is None:
        return "gloo"
    b = str(backend)
    if ":" in b:
        return ",".join(f"{dev}:{'gloo' if be.strip().lower() == 'nccl' else be}"
                        for dev, be in (part.split(":", 1) for part in b.split(",")))
    return "gloo" if b.lower() in ("nccl", "cuda", "undefined") else backend


def install() -> None:
    if _SAVED:
        return
    import torch.distributed as dist

    init, new_group, destroy = dist.init_process_group, dist.new_group, dist.destroy_process_group

    @functools.wraps(init)
    def init_process_group(backend: Any = None, *args: Any, **kwargs: Any) -> Any:
        kwargs.pop("device_id", None)
        return init(gloo_backend(backend), *args, **kwargs)

    @functools.wraps(new_group)
    def new_group_(*args: Any, **kwargs: Any) -> Any:
        if "backend" in kwargs:
            kwargs["backend"] = gloo_backend(kwargs["backend"])
        kwargs.pop("device_id", None)
        return new_group(*args, **kwargs)

    @functools.wraps(destroy)
    def destroy_process_group(*args: Any, **kwargs: Any) -> Any:
        from . import board

        if not args and not kwargs.get("group"):
            board.mark_exited()
        return destroy(*args, **kwargs)

    _SAVED.update(init_process_group=init, new_group=new_group, destroy_process_group=destroy)
    dist.init_process_group, dist.new_group, dist.destroy_process_group = init_process_group, new_group_, destroy_process_group
    for name in COLLECTIVES:
        fn = getattr(dist, name, None)
        if fn is not None:
            _SAVED[name] = fn
            setattr(dist, name, _collective(name, fn))


#: blocking collectives: while a rank is in one of the world group, the board counts it as stalled
COLLECTIVES = ("barrier", "all_reduce", "broadcast", "all_gather", "all_gather_into_tensor", "reduce_scatter_tensor",
               "reduce", "gather", "scatter", "all_to_all", "all_gather_object", "broadcast_object_list",
               "monitored_barrier")


def _collective(name: str, fn: Any) -> Any:
    @functools.wraps(fn)
    def collective(*args: Any, **kwargs: Any) -> Any:
        import torch.distributed as dist

        from . import board
        from ..where import user_line

        group = kwargs.get("group")
        marked = False
        if not kwargs.get("async_op") and (group is None or group is dist.group.WORLD):
            marked = board.mark_collective(f"torch.distributed.{name} at {user_line(2) or '?'}")
        try:
            return fn(*args, **kwargs)
        finally:
            if marked:
                board.mark_running()

    return collective


def uninstall() -> None:
    if not _SAVED:
        return
    import torch.distributed as dist

    for k, v in _SAVED.items():
        setattr(dist, k, v)
    _SAVED.clear()
