"""The Blackwell pipelines of ``cutlass.pipeline`` whose one side is the UMMA (tcgen05.mma), as CuTe
DSL 4.8.1 has them, for one CTA (a ``cta_layout_vmnk`` of size 1):

- ``PipelineTmaUmma``: TMA producer, UMMA consumer (the mainloop). The producer's acquire waits
  until the stage is empty and arrives on its full barrier expecting ``tx_count`` bytes (the TMA
  copies complete them); the consumer's release is a ``tcgen05.commit`` to the stage's empty
  barrier: the stage is free once the UMMAs issued before it have read it.
- ``PipelineUmmaAsync``: UMMA producer, async-thread consumers (the accumulator). The producer's
  commit is a ``tcgen05.commit`` to the full barrier: the consumers see the accumulator once the
  UMMAs issued before it have written it; each consumer thread arrives on the empty barrier.
- ``PipelineAsyncUmma``: async-thread producers, UMMA consumer.

Commits and the producer's arrive are issued by one elected thread of each warp that calls them
(``cute.arch.elect_one``), as CuTe DSL does. ``sync(barrier_id)`` is ``cutlass.pipeline.sync``:
every thread of the block at the named barrier (``bar.sync id``).

Clusters of more than one CTA (2-CTA UMMAs, multicast arrivals) are refused with a clear error.
"""

from __future__ import annotations

from typing import Any

from .errors import TraceError
from .pipeline_async import PipelineAsync
from .pipeline_sm90 import PipelineState

__all__ = ["PipelineTmaUmma", "PipelineUmmaAsync", "PipelineAsyncUmma", "sync"]


def _one_cta(cls: type, cta_layout_vmnk: Any) -> None:
    from . import int_tuple as it

    if cta_layout_vmnk is not None and it.product(getattr(cta_layout_vmnk, "shape", cta_layout_vmnk)) != 1:
        raise TraceError(f"{cls.__name__}.create: a cta_layout_vmnk of more than one CTA "
                         f"({getattr(cta_layout_vmnk, 'shape', cta_layout_vmnk)}: 2-CTA UMMAs or multicast "
                         f"arrivals) is not supported by cutelab yet")


def _commit(barrier: Any) -> None:
    from .kernel.frontend import arch
    from .kernel.instr.tcgen05_mma import commit

    with arch.elect_one():
        commit(barrier)


class _UmmaPipeline(PipelineAsync):
    @classmethod
    def create(cls, *, num_stages: int, producer_group: Any, consumer_group: Any, barrier_storage: Any = None,
               cta_layout_vmnk: Any = None, defer_sync: bool = False, name: str = "", tx_count: Any = None,
               mcast_mode_mn: Any = (1, 1), enable_multicast_signaling: bool = False, **kwargs: Any) -> Any:
        _one_cta(cls, cta_layout_vmnk)
        p = super().create(num_stages=num_stages, producer_group=producer_group, consumer_group=consumer_group,
                           barrier_storage=barrier_storage, defer_sync=defer_sync, name=name, **kwargs)
        p.tx_count = tx_count
        return p


class PipelineTmaUmma(_UmmaPipeline):
    """TMA producer, UMMA consumer (see the module docstring)."""

    @classmethod
    def create(cls, *, num_stages: int, producer_group: Any, consumer_group: Any, tx_count: int,
               barrier_storage: Any = None, cta_layout_vmnk: Any = None, **kwargs: Any) -> "PipelineTmaUmma":
        if isinstance(tx_count, bool) or not isinstance(tx_count, int) or tx_count < 0:
            raise TraceError(f"PipelineTmaUmma.create: tx_count must be a static number of bytes, got {tx_count!r}")
        return super().create(num_stages=num_stages, producer_group=producer_group, consumer_group=consumer_group,
                              barrier_storage=barrier_storage, cta_layout_vmnk=cta_layout_vmnk, tx_count=tx_count,
                              **kwargs)

    def producer_acquire(self, state: PipelineState, try_acquire_token: Any = None, *, expected_tx: Any = None) -> None:
        """Wait until the stage is empty, then (one thread per warp) arrive on its full barrier
        expecting the stage's bytes."""
        from .kernel.frontend import arch

        arch.mbarrier_wait(self.empty + state.index, state.phase)
        with arch.elect_one():
            arch.mbarrier_arrive_and_expect_tx(self.full + state.index,
                                               self.tx_count if expected_tx is None else expected_tx)

    def producer_commit(self, state: PipelineState) -> None:
        """Nothing: the TMA copies complete the stage's transaction bytes."""

    def consumer_release(self, state: PipelineState) -> None:
        """``tcgen05.commit`` to the stage's empty barrier (after the UMMAs reading it)."""
        _commit(self.empty + state.index)


class PipelineUmmaAsync(_UmmaPipeline):
    """UMMA producer, async-thread consumers (see the module docstring)."""

    def producer_commit(self, state: PipelineState) -> None:
        """``tcgen05.commit`` to the stage's full barrier (after the UMMAs writing it)."""
        _commit(self.full + state.index)


class PipelineAsyncUmma(_UmmaPipeline):
    """Async-thread producers, UMMA consumer (see the module docstring)."""

    def consumer_release(self, state: PipelineState) -> None:
        """``tcgen05.commit`` to the stage's empty barrier (after the UMMAs reading it)."""
        _commit(self.empty + state.index)


def sync(barrier_id: int = 0, *, loc: Any = None, ip: Any = None) -> None:
    """``cutlass.pipeline.sync``: every thread of the block waits at named barrier barrier_id
    (``bar.sync id``; 0 is ``sync_threads``)."""
    from .kernel.frontend import arch
    from .kernel.frontend.trace import current
    from .pipeline import NamedBarrier

    if isinstance(barrier_id, bool) or not isinstance(barrier_id, int) or not 0 <= barrier_id < 16:
        raise TraceError(f"cutlass.pipeline.sync(barrier_id={barrier_id!r}): barrier_id must be a static int in [0, 15]")
    if barrier_id == 0:
        arch.sync_threads()
        return
    t = current("cutlass.pipeline.sync")
    NamedBarrier(barrier_id, t.block[0] * t.block[1] * t.block[2]).arrive_and_wait()
