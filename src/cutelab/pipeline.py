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

import numpy as np

__all__ = ["NamedBarrier"]


def _op_class() -> Any:
    """The kernel IR op of a named barrier, ``bar.sync id, n`` (wait) or ``bar.arrive id, n``: a
    trace.Op subclass made at first use (this module imports without the kernel machinery)."""
    global _OpClass
    if _OpClass is None:
        from .errors import LaunchError
        from .kernel.ir.nodes import Op

        class NamedBarrierIR(Op):
            __slots__ = ("barrier_id", "num_threads", "wait", "where")

            def __init__(self, barrier_id: int, num_threads: int, wait: bool, where: str):
                self.barrier_id, self.num_threads, self.wait, self.where = barrier_id, num_threads, wait, where

            def __repr__(self) -> str:
                return f"bar.{'sync' if self.wait else 'arrive'} {self.barrier_id}, {self.num_threads}"

            def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
                # all threads run each op together, so the barrier orders nothing; check that the
                # threads reaching it are the number it expects, in every block that reaches it
                act = np.ones(b.n, dtype=bool) if mask is None else mask
                per_block = act.reshape(b.nblk, b.nt).sum(axis=1)
                bad = (per_block != 0) & (per_block != self.num_threads) if self.wait else per_block > self.num_threads
                if bad.any() and self.wait:
                    raise LaunchError(
                        f"{b.ir.name}: NamedBarrier({self.barrier_id}, {self.num_threads}).arrive_and_wait() at "
                        f"{self.where} is reached by {int(per_block[bad][0])} threads of a block, not "
                        f"{self.num_threads}; on the GPU the block would hang or the barrier would not order "
                        f"what the program expects"
                    )

            def cuda(self, r: Any) -> None:
                ins = "sync" if self.wait else "arrive"
                r.emit(f'asm volatile("bar.{ins} {self.barrier_id}, {self.num_threads};\\n" ::: "memory");')

        _OpClass = NamedBarrierIR
    return _OpClass


_OpClass = None


@dataclass(frozen=True)
class NamedBarrier:
    """A named hardware barrier of the thread block (``cutlass.pipeline.NamedBarrier``)."""

    barrier_id: int
    num_threads: int

    def __post_init__(self) -> None:
        bid, n = self.barrier_id, self.num_threads
        for name, v in (("barrier_id", bid), ("num_threads", n)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise TypeError(f"NamedBarrier(barrier_id={bid!r}, num_threads={n!r}): {name} must be a static int "
                                f"in cutelab, got {type(v).__name__}")
        if not 0 <= bid < 16:
            raise ValueError(f"NamedBarrier(barrier_id={bid}, num_threads={n}): barrier_id must be in [0, 15]")
        if n < 32 or n % 32:
            raise ValueError(f"NamedBarrier(barrier_id={bid}, num_threads={n}): num_threads must be a positive "
                             f"multiple of the warp size (32)")
        if bid == 0:
            warnings.warn("NamedBarrier ID 0 is used by sync_threads, avoid using.")

    def _emit(self, wait: bool, what: str) -> None:
        from .kernel.frontend.trace import current, user_line

        t = current(f"NamedBarrier.{what}")
        nt = t.block[0] * t.block[1] * t.block[2]
        if self.num_threads > nt:
            from .errors import TraceError

            raise TraceError(f"kernel {t.name}: NamedBarrier({self.barrier_id}, {self.num_threads}).{what}() at "
                             f"{user_line()}: the block has only {nt} threads")
        t.emit(_op_class()(int(self.barrier_id), int(self.num_threads), wait, user_line()))

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
                             PipelineProducer)

__all__ += ["ImmutableResourceHandle", "PipelineAsync", "PipelineConsumer", "PipelineCpAsync", "PipelineProducer"]

# SM100: the pipelines whose one side is the UMMA (tcgen05.mma), in pipeline_sm100.py
from .pipeline_sm100 import PipelineAsyncUmma, PipelineTmaUmma, PipelineUmmaAsync, sync  # noqa: E402

__all__ += ["PipelineAsyncUmma", "PipelineTmaUmma", "PipelineUmmaAsync", "sync"]

# TMA-store epilogue stages, in pipeline_tma_store.py
from .pipeline_tma_store import PipelineTmaStore  # noqa: E402

__all__ += ["PipelineTmaStore"]

# CuTe DSL 4.8.1 pipeline names cutelab does not provide yet: they import (libraries subclass them or
# name them in annotations), and using one raises TraceError naming it and the user's line (errors.not_yet)
_NOT_YET = ("PipelineOp", "MbarrierLayout", "SyncObject", "MbarrierArray", "TmaStoreFence", "PerStagePipelineState",
            "PipelineEmpty", "PipelineOrder", "PipelineClcFetchAsync", "PipelineTmaMultiConsumersAsync",
            "alloc_reserved_mbarrier", "compute_k_tile", "agent_sync", "arrive", "arrive_unaligned", "wait",
            "wait_unaligned", "arrive_and_wait")


def __getattr__(name: str) -> Any:
    if name in _NOT_YET:
        from .errors import not_yet

        cls = globals()[name] = not_yet(f"cutlass.pipeline.{name}")
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
