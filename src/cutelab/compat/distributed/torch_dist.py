"""torch.distributed without a GPU: a process group asked for NCCL runs on gloo.

``init_process_group(backend="nccl")`` and ``"cpu:gloo,cuda:nccl"`` become gloo (the emulated CUDA
tensors live in host memory, which gloo moves); ``device_id`` (a CUDA device) is dropped;
``new_group`` maps its backend the same way. ``destroy_process_group`` marks the rank as exited
on the board of waits (:mod:`.board`).

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


def uninstall() -> None:
    if not _SAVED:
        return
    import torch.distributed as dist

    for k, v in _SAVED.items():
        setattr(dist, k, v)
    _SAVED.clear()
