"""``cutlass.pipeline.PipelineTmaStore``: the stages of an epilogue whose producer threads write a
shared-memory buffer that a TMA store sends to global memory, as CuTe DSL 4.8.1 has it. There are
no barriers: ``producer_commit`` closes the bulk async-group of the stores issued
(``cp.async.bulk.commit_group``), ``producer_acquire`` waits until at most ``num_stages - 1`` groups
still read shared memory (``cp.async.bulk.wait_group.read``), so the next buffer may be written,
and ``producer_tail`` waits for all of them (kernel/instr/tma_store.py).
"""

from __future__ import annotations

from typing import Any

from .errors import TraceError

__all__ = ["PipelineTmaStore"]


class PipelineTmaStore:
    """TMA-store stages of an epilogue (see the module docstring)."""

    def __init__(self, num_stages: int):
        self.num_stages = num_stages

    @staticmethod
    def create(*, num_stages: int, producer_group: Any = None, **kwargs: Any) -> "PipelineTmaStore":
        if isinstance(num_stages, bool) or not isinstance(num_stages, int) or num_stages < 1:
            raise TraceError(f"PipelineTmaStore.create: num_stages must be a positive int, got {num_stages!r}")
        return PipelineTmaStore(num_stages)

    def producer_acquire(self, *args: Any, **kwargs: Any) -> None:
        """Wait until a buffer is free: at most num_stages - 1 store groups still read shared memory."""
        from .kernel.instr.tma_store import cp_async_bulk_wait_group

        cp_async_bulk_wait_group(self.num_stages - 1, read=True)

    def producer_commit(self, *args: Any, **kwargs: Any) -> None:
        """Close the group of the TMA stores issued since the last commit."""
        from .kernel.instr.tma_store import cp_async_bulk_commit_group

        cp_async_bulk_commit_group()

    def producer_tail(self, *args: Any, **kwargs: Any) -> None:
        """Wait until every store group has read its shared memory."""
        from .kernel.instr.tma_store import cp_async_bulk_wait_group

        cp_async_bulk_wait_group(0, read=True)

    def consumer_wait(self, *args: Any, **kwargs: Any) -> None:
        raise TraceError("PipelineTmaStore has no consumer: the TMA unit reads the buffers")

    consumer_release = consumer_wait
