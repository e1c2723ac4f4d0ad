"""``cutlass.pipeline``: synchronization objects of CuTe DSL kernels.

``NamedBarrier(barrier_id, num_threads)``: one of the 16 hardware barriers of a thread block
(PTX ``bar.sync id, n`` / ``bar.arrive id, n``); ``arrive_and_wait()`` blocks until
``num_threads`` threads of the block have arrived. Barrier 0 is the one ``sync_threads()`` uses.

(The Hopper pipeline classes, mbarrier based, belong in this module too.)

>>> NamedBarrier(barrier_id=1, num_threads=256)
NamedBarrier(barrier_id=1, num_threads=256)
>>> NamedBarrier(barrier_id=16, num_threads=32)
Traceback (most recent call last):
...
ValueError: NamedBarrier(barrier_id=16, num_threads=32): barrier_id must be in [0, 15]
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

__all__ = ["NamedBarrier"]


@dataclass(frozen=True)
class NamedBarrier:
    """A named hardware barrier of the thread block (``cutlass.pipeline.NamedBarrier``)."""

    barrier_id: int
    num_threads: int

    def __post_init__(self) -> None:
        from .kernel.instr.named_barrier import check

        check(self.barrier_id, self.num_threads)

    def _emit(self, wait: bool, what: str) -> None:
        from .kernel.instr.named_barrier import named_barrier

        named_barrier(self.barrier_id, self.num_threads, wait, what)

    def arrive_and_wait(self, *, loc: Any = None, ip: Any = None) -> None:
        """Arrive and wait until num_threads threads of the block have arrived (``bar.sync``)."""
        self._emit(True, "arrive_and_wait")

    def sync(self, *, loc: Any = None, ip: Any = None) -> None:
        """Same as arrive_and_wait."""
        self._emit(True, "sync")

    def wait(self, *, loc: Any = None, ip: Any = None) -> None:
        """A named barrier has no standalone wait: arrives and waits, as CuTe DSL does (with its warning)."""
        warnings.warn("NamedBarrier wait also arrives on the barrier. Routing call to NamedBarrier.arrive_and_wait().")
        self._emit(True, "wait")

    def wait_unaligned(self, *, loc: Any = None, ip: Any = None) -> None:
        self._emit(True, "wait_unaligned")

    def arrive(self, *, loc: Any = None, ip: Any = None) -> None:
        """Arrive without waiting (``bar.arrive``): for producer threads of a producer/consumer pair."""
        self._emit(False, "arrive")

    arrive_unaligned = arrive

    def arrive_and_drop(self, *, loc: Any = None, ip: Any = None) -> None:
        raise NotImplementedError("Error: Not supported.")

    def get_barrier(self, *, loc: Any = None, ip: Any = None) -> int:
        return self.barrier_id

    def max(self) -> int:
        return 4095


# SM90 (issue 10): the TMA producer / async consumer pipeline over mbarriers, in pipeline_sm90.py
from .pipeline_sm90 import (Agent, CooperativeGroup, PipelineState, PipelineTmaAsync,  # noqa: E402
                            PipelineUserType, make_pipeline_state, pipeline_init_arrive, pipeline_init_wait)

__all__ += ["Agent", "CooperativeGroup", "PipelineState", "PipelineTmaAsync", "PipelineUserType",
            "make_pipeline_state", "pipeline_init_arrive", "pipeline_init_wait"]

# async-thread producers and consumers with participants (make_participants), in pipeline_async.py
from .pipeline_async import (ImmutableResourceHandle, PipelineAsync, PipelineConsumer, PipelineCpAsync,  # noqa: E402
                             PipelineOrder, PipelineProducer)

__all__ += ["ImmutableResourceHandle", "PipelineAsync", "PipelineConsumer", "PipelineCpAsync", "PipelineOrder",
            "PipelineProducer"]

# SM100: the pipelines whose one side is the UMMA (tcgen05.mma), in pipeline_sm100.py
from .pipeline_sm100 import (PipelineAsyncUmma, PipelineTmaMultiConsumersAsync, PipelineTmaUmma,  # noqa: E402
                             PipelineUmmaAsync, sync)

__all__ += ["PipelineAsyncUmma", "PipelineTmaMultiConsumersAsync", "PipelineTmaUmma", "PipelineUmmaAsync", "sync"]

# the pipelines' sync objects (sync_object_full/_empty) and the kinds of agents, in pipeline_mbarrier.py
from .pipeline_mbarrier import MbarrierArray, MbarrierLayout, PipelineOp  # noqa: E402

__all__ += ["MbarrierArray", "MbarrierLayout", "PipelineOp"]

# TMA-store epilogue stages, in pipeline_tma_store.py
from .pipeline_tma_store import PipelineTmaStore  # noqa: E402

__all__ += ["PipelineTmaStore"]

# SM100: the CLC (cluster launch control) scheduler's pipeline, in pipeline_clc.py
from .pipeline_clc import PipelineClcFetchAsync  # noqa: E402

__all__ += ["PipelineClcFetchAsync"]
# CuTe DSL 4.8.1 pipeline names cutelab does not provide yet: they import (libraries subclass them or
# name them in annotations), and using one raises errors.NotInCutelab (a TraceError) naming it and the user's line (errors.not_yet)
_NOT_YET = ("SyncObject", "TmaStoreFence", "PerStagePipelineState",
            "PipelineEmpty", "PipelineOrder", "PipelineClcFetchAsync",
            "alloc_reserved_mbarrier", "compute_k_tile", "agent_sync")


# CuTe DSL's free functions on named barriers (cutlass.pipeline.arrive_and_wait(barrier_id=..., num_threads=...)):
# the id may be computed in the kernel (warp_group_idx: each warp group its own barrier; kernel/arch.py)
def arrive_and_wait(barrier_id: Any, num_threads: int, *, loc: Any = None, ip: Any = None) -> None:
    """``bar.sync barrier_id, num_threads``."""
    from .kernel.arch import barrier

    barrier(barrier_id=barrier_id, number_of_threads=num_threads)


def wait(barrier_id: Any, num_threads: int, *, loc: Any = None, ip: Any = None) -> None:
    """``bar.sync`` as well: a named barrier has no wait that does not arrive."""
    arrive_and_wait(barrier_id, num_threads)


wait_unaligned = wait


def arrive(barrier_id: Any, num_threads: int, *, loc: Any = None, ip: Any = None) -> None:
    """``bar.arrive barrier_id, num_threads``: arrive without waiting."""
    from .kernel.arch import barrier_arrive

    barrier_arrive(barrier_id=barrier_id, number_of_threads=num_threads)


arrive_unaligned = arrive
__all__ += ["arrive_and_wait", "wait", "wait_unaligned", "arrive", "arrive_unaligned"]


def __getattr__(name: str) -> Any:
    if name in _NOT_YET:
        from .errors import not_yet

        cls = globals()[name] = not_yet(f"cutlass.pipeline.{name}")
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
