"""``cutlass.pipeline.PipelineClcFetchAsync``: the pipeline of a CLC (cluster launch control) dynamic
persistent scheduler, as CuTe DSL 4.8.1 has it.

The producer is the scheduler warp of the cluster's first CTA. Its ``producer_acquire`` waits
until the stage is empty. Then lane r of the warp, for each CTA rank r of the cluster, arrives on
CTA r's full barrier and expects the 16 bytes of the answer there. The query
(``ClcDynamicPersistentTileScheduler.advance_to_next_work``, ``cute.arch.issue_clc_query``) lands
its answer in every CTA of the cluster and completes those bytes. The consumers are warps of
every CTA. They wait on their own CTA's full barrier, read the answer, and release the stage:
each consumer thread arrives on the empty barrier of the cluster's first CTA, whose arrival count
is every consumer thread of the cluster.

The barriers are ``num_stages`` full ones (arrival count: the producer group's threads), then
``num_stages`` empty ones (the consumer group's), initialised as ``PipelineAsync`` does.
"""

from __future__ import annotations

from typing import Any

from .errors import TraceError
from .pipeline_async import PipelineAsync
from .pipeline_sm90 import PipelineState

__all__ = ["PipelineClcFetchAsync"]


def _in_branch(cond: Any, fn: Any, what: str) -> None:
    from .kernel.frontend.trace import current

    t = current(what)
    op = t.begin_if(cond)
    outer, t.cur = t.cur, op.then
    try:
        fn()
    finally:
        t.cur = outer


class PipelineClcFetchAsync(PipelineAsync):
    """CLC answers from the first CTA's scheduler warp to the consumer warps of every CTA of the
    cluster (see the module docstring)."""

    @classmethod
    def create(cls, *, num_stages: int, producer_group: Any, consumer_group: Any, tx_count: int,
               barrier_storage: Any = None, producer_mask: Any = None, consumer_mask: Any = None,
               cta_layout_vmnk: Any = None, defer_sync: bool = False, name: str = "",
               **kwargs: Any) -> "PipelineClcFetchAsync":
        from . import int_tuple as it
        from .dynamic import value_of
        from .kernel import arch

        where = "PipelineClcFetchAsync.create"
        if isinstance(tx_count, bool) or not isinstance(tx_count, int) or tx_count < 0:
            raise TraceError(f"{where}: tx_count must be a static number of bytes, got {tx_count!r}")
        shape = None if cta_layout_vmnk is None else value_of(getattr(cta_layout_vmnk, "shape", cta_layout_vmnk))
        size = 1 if shape is None else it.product(shape)
        if not isinstance(size, int):
            raise TraceError(f"{where}: the cluster shape (cta_layout_vmnk) needs to be static, got {cta_layout_vmnk}")
        if size > 32:
            raise TraceError(f"{where}: a cluster of {size} CTAs: one lane of the scheduler warp signals each CTA, "
                             f"so at most 32")
        p = super().create(num_stages=num_stages, producer_group=producer_group, consumer_group=consumer_group,
                           barrier_storage=barrier_storage, defer_sync=True, name=name, **kwargs)
        p.tx_count, p.cluster = tx_count, size
        if not defer_sync:
            arch.mbarrier_init_fence()
            if size == 1:
                arch.sync_threads()
            else:
                arch.cluster_arrive_relaxed()
                arch.cluster_wait()
        return p

    def producer_acquire(self, state: PipelineState, try_acquire_token: Any = None) -> None:
        """Wait until the stage is empty; then lane r (r below the cluster's size) arrives on CTA r's
        full barrier expecting the answer's bytes."""
        from .kernel import arch

        if try_acquire_token is None:
            arch.mbarrier_wait(self.empty + state.index, state.phase)
        else:
            _in_branch(try_acquire_token == 0, lambda: arch.mbarrier_wait(self.empty + state.index, state.phase),
                       "PipelineClcFetchAsync.producer_acquire")
        lane = arch.thread_idx()[0] % 32

        def arrive() -> None:
            if self.cluster == 1:
                arch.mbarrier_arrive_and_expect_tx(self.full + state.index, self.tx_count)
            else:
                arch.mbarrier_arrive_and_expect_tx(self.full + state.index, self.tx_count, lane)

        _in_branch(lane < self.cluster, arrive, "PipelineClcFetchAsync.producer_acquire")

    def producer_commit(self, state: PipelineState) -> None:
        """Nothing: the CLC query completes the stage's bytes."""

    def consumer_wait(self, state: PipelineState, try_wait_token: Any = None) -> None:
        """Wait on this CTA's full barrier (the answer has landed here)."""
        from .kernel import arch

        if try_wait_token is None:
            arch.mbarrier_wait(self.full + state.index, state.phase)
        else:
            _in_branch(try_wait_token == 0, lambda: arch.mbarrier_wait(self.full + state.index, state.phase),
                       "PipelineClcFetchAsync.consumer_wait")

    def consumer_release(self, state: PipelineState) -> None:
        """Each consumer thread arrives on the stage's empty barrier of the cluster's first CTA."""
        from .kernel import arch

        if self.cluster == 1:
            arch.mbarrier_arrive(self.empty + state.index)
        else:
            arch.mbarrier_arrive(self.empty + state.index, 0)
