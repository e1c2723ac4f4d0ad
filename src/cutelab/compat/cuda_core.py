"""``cuda.core`` (and ``cuda.core.experimental``) of the emulated CUDA device: ``Device``, its
streams and events, the few calls programs make around a launch. Any other name raises
NotEmulatedError naming it.

>>> d = Device(); d.set_current(); s = d.create_stream(); s.sync(); d.compute_capability.major >= 8
True
"""

from __future__ import annotations

import collections
import itertools
import time
from typing import Any

from . import device as _device
from .where import NotEmulatedAttributeError, NotEmulatedError, user_line

__path__: list = []

ComputeCapability = collections.namedtuple("ComputeCapability", ["major", "minor"])
_HANDLES = itertools.count(0xA000)


class Event:
    def __init__(self) -> None:
        self.t = time.perf_counter()

    def sync(self) -> None:
        pass

    @property
    def is_done(self) -> bool:
        return True

    def __sub__(self, other: "Event") -> float:
        return (self.t - other.t) * 1e3


class Stream:
    def __init__(self, handle: int | None = None) -> None:
        self.handle = next(_HANDLES) if handle is None else handle

    def sync(self) -> None:
        pass

    def record(self, event: Any = None, options: Any = None) -> Event:
        return Event()

    def wait(self, event_or_stream: Any) -> None:
        pass

    def __int__(self) -> int:
        return self.handle

    def __cuda_stream__(self):
        return (0, self.handle)

    @property
    def device(self) -> "Device":
        return Device()


class _Properties:
    def __init__(self) -> None:
        p = _device.DeviceProperties()
        self.multiprocessor_count = p.multi_processor_count
        self.max_shared_memory_per_block_optin = p.shared_memory_per_block_optin
        self.max_shared_memory_per_multiprocessor = p.shared_memory_per_multiprocessor
        self.l2_cache_size = p.L2_cache_size
        self.warp_size = 32
        self.max_threads_per_block = 1024
        self.compute_capability_major, self.compute_capability_minor = p.major, p.minor


class Device:
    def __init__(self, device_id: int = 0) -> None:
        from . import device as _device

        if not _device.index_ok(int(device_id or 0)):
            raise NotEmulatedError(f"cuda.core.Device({device_id})", "the emulated CUDA device has one GPU, 0"
                                   if _device.count() == 1 else f"the emulated machine has {_device.count()} GPUs "
                                   "(LOCAL_WORLD_SIZE)", where=user_line(2))
        self.device_id = int(device_id or 0)

    def set_current(self) -> None:
        pass

    def sync(self) -> None:
        pass

    def create_stream(self, obj: Any = None, options: Any = None) -> Stream:
        return Stream()

    def create_event(self, options: Any = None) -> Event:
        return Event()

    @property
    def default_stream(self) -> Stream:
        return Stream(0)

    @property
    def compute_capability(self) -> ComputeCapability:
        return ComputeCapability(*_device.capability())

    @property
    def arch(self) -> str:
        major, minor = _device.capability()
        return f"{major}{minor}"

    @property
    def name(self) -> str:
        return _device.DeviceProperties().name

    @property
    def properties(self) -> _Properties:
        return _Properties()


def system_num_devices() -> int:
    return 1


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    raise NotEmulatedAttributeError(f"cuda.core.{name}", "cutelab emulates Device, Stream and Event of cuda.core "
                           "without a GPU", where=user_line(2))
