"""``cutlass.pipeline.PipelineAsync`` and its participants (``make_participants()``: a
``PipelineProducer`` and a ``PipelineConsumer`` that keep their own ``PipelineState`` and hand out
``ImmutableResourceHandle``\\ s), as CuTe DSL 4.8.1 has them: a ring of ``num_stages`` buffers guarded
by mbarriers in shared memory, ``num_stages`` *full* barriers (the producer group's threads arrive
when a stage is written) then ``num_stages`` *empty* ones (the consumer group's threads arrive when
it is read). Both back ends run it: the CPU interpreter runs the producer and consumer warps until
they meet at the barriers, the CUDA printer prints the mbarrier PTX (kernel/instr/mbarrier.py). The
states may advance inside runtime loops (pipeline_sm90.PipelineState keeps them in registers there).
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

from .errors import TraceError
from .pipeline_sm90 import Agent, CooperativeGroup, PipelineState, PipelineUserType, make_pipeline_state, wait_unless_done

__all__ = ["PipelineAsync", "PipelineCpAsync", "PipelineProducer", "PipelineConsumer", "ImmutableResourceHandle",
           "PipelineOrder"]


def _threads(group: CooperativeGroup, what: str) -> int:
    if not isinstance(group, CooperativeGroup):
        raise TraceError(f"PipelineAsync.create: {what} must be a CooperativeGroup, got {group!r}")
    n = group.size
    if isinstance(n, float) and n.is_integer():  # CuTe DSL takes a whole float (threads_per_warp_group / 32)
        n = int(n)
    n = n * (32 if group.agent is Agent.Warp else 1)
    if not isinstance(n, int) or n < 1:
        raise TraceError(f"PipelineAsync.create: the {what}'s size must be a positive static int, got {group.size!r}")
    return n


class PipelineAsync:
    """Async-thread producer and consumer groups over ``num_stages`` mbarrier-guarded stages."""

    def __init__(self, full: Any, empty: Any, num_stages: int, producer_count: int, consumer_count: int,
                 producer_mask: Any = None, consumer_mask: Any = None):
        from .pipeline_mbarrier import MbarrierArray, PipelineOp

        self.full, self.empty, self.num_stages = full, empty, num_stages
        self.producer_count, self.consumer_count = producer_count, consumer_count
        # CuTe DSL's internals that libraries extending the pipeline use: the full and empty barriers as
        # sync objects (initialised by create), and the masks their arrives take
        self.sync_object_full = MbarrierArray(full, num_stages, (PipelineOp.AsyncThread, CooperativeGroup(
            Agent.Thread, producer_count)), init=False)
        self.sync_object_empty = MbarrierArray(empty, num_stages, (PipelineOp.AsyncThread, CooperativeGroup(
            Agent.Thread, consumer_count)), init=False)
        self.producer_mask, self.consumer_mask = producer_mask, consumer_mask

    @classmethod
    def create(cls, *, num_stages: int, producer_group: CooperativeGroup, consumer_group: CooperativeGroup,
               barrier_storage: Any = None, producer_mask: Any = None, consumer_mask: Any = None,
               defer_sync: bool = False, name: str = "", **kwargs: Any) -> "PipelineAsync":
        """Initialise the 2 * num_stages barriers at ``barrier_storage`` (one thread of warp 0) and,
        unless defer_sync, fence and sync the block."""
        from .kernel import arch
        from .kernel.frontend.trace import current

        where = f"{cls.__name__}.create"
        if barrier_storage is None:
            raise TraceError(f"{where}: pass barrier_storage= (a pointer to 2 * num_stages Int64 words of shared "
                             f"memory, e.g. storage.mbar.data_ptr() of a cute.struct MemRange[Int64, 2 * stages])")
        if isinstance(num_stages, bool) or not isinstance(num_stages, int) or num_stages < 1:
            raise TraceError(f"{where}: num_stages must be a positive int, got {num_stages!r}")
        pc = _threads(producer_group, "producer_group")
        cc = _threads(consumer_group, "consumer_group")
        full, empty = barrier_storage, barrier_storage + num_stages
        p = cls(full, empty, num_stages, pc, cc, producer_mask, consumer_mask)
        t = current(where)
        op = t.begin_if(arch.make_warp_uniform(arch.warp_idx()) == 0)
        outer, t.cur = t.cur, op.then
        with arch.elect_one():
            for i in range(num_stages):
                arch.mbarrier_init(full + i, pc)
                arch.mbarrier_init(empty + i, cc)
        t.cur = outer
        if not defer_sync:
            arch.mbarrier_init_fence()
            arch.sync_threads()
        return p

    # ---- the producer's side
    def producer_acquire(self, state: PipelineState, try_acquire_token: Any = None, *, loc: Any = None,
                         ip: Any = None) -> None:
        """Wait until the stage is empty (its consumers released it), unless the token says it is."""
        wait_unless_done(try_acquire_token, self.empty + state.index, state.phase)

    def producer_try_acquire(self, state: PipelineState, *, loc: Any = None, ip: Any = None) -> Any:
        from .kernel import arch

        return arch.mbarrier_try_wait(self.empty + state.index, state.phase)

    def producer_commit(self, state: PipelineState, *, loc: Any = None, ip: Any = None) -> None:
        """Each producer thread arrives on the stage's full barrier (the stage is written): its own CTA's,
        or with ``producer_mask`` (CuTe DSL's destination CTA rank of an async-thread pipeline) that CTA's
        of the cluster."""
        from .kernel import arch

        arch.mbarrier_arrive(self.full + state.index, self.producer_mask)

    def producer_get_barrier(self, state: PipelineState, *, loc: Any = None, ip: Any = None) -> Any:
        return self.full + state.index

    def producer_tail(self, state: PipelineState, *, loc: Any = None, ip: Any = None) -> None:
        """Wait until the consumers released every stage (before the producer exits)."""
        from .kernel import arch

        s = state.clone()
        for _ in range(self.num_stages):
            arch.mbarrier_wait(self.empty + s.index, s.phase)
            s.advance()

    # ---- the consumer's side
    def consumer_wait(self, state: PipelineState, try_wait_token: Any = None, *, loc: Any = None,
                      ip: Any = None) -> None:
        """Wait until the stage is full (its producers committed it), unless the token says it is."""
        wait_unless_done(try_wait_token, self.full + state.index, state.phase)

    def consumer_try_wait(self, state: PipelineState, *, loc: Any = None, ip: Any = None) -> Any:
        from .kernel import arch

        return arch.mbarrier_try_wait(self.full + state.index, state.phase)

    def consumer_release(self, state: PipelineState, *, loc: Any = None, ip: Any = None) -> None:
        """Each consumer thread arrives on the stage's empty barrier (the stage may be refilled): its own
        CTA's, or with ``consumer_mask`` (a destination CTA rank, as CuTe DSL's async-thread pipeline takes
        it: quack's tile scheduler has every CTA's consumers release CTA 0's stage) that CTA's."""
        from .kernel import arch

        arch.mbarrier_arrive(self.empty + state.index, self.consumer_mask)

    def consumer_get_barrier(self, state: PipelineState, *, loc: Any = None, ip: Any = None) -> Any:
        return self.empty + state.index

    # ---- participants
    def make_producer(self) -> "PipelineProducer":
        return PipelineProducer(self, make_pipeline_state(PipelineUserType.Producer, self.num_stages))

    def make_consumer(self) -> "PipelineConsumer":
        return PipelineConsumer(self, make_pipeline_state(PipelineUserType.Consumer, self.num_stages))

    def make_participants(self) -> Tuple["PipelineProducer", "PipelineConsumer"]:
        """A producer and a consumer, each with its own state (the producer's starts at phase 1: the
        stages start empty)."""
        return self.make_producer(), self.make_consumer()


class PipelineCpAsync(PipelineAsync):
    """PipelineAsync whose producers fill the stages with cp.async (CuTe DSL's PipelineCpAsync): the
    producer commit is each thread's arrive once its cp.async copies have landed (``cp.async.mbarrier
    .arrive`` on the GPU: here the copies are waited for first, then the thread arrives). That arrive
    covers every cp.async the thread issued, committed to a group or not: copies not committed yet are
    committed first (CUTLASS's FMHA backward commits the stage without cp_async_commit_group)."""

    def producer_commit(self, state: PipelineState, *, loc: Any = None, ip: Any = None) -> None:
        from .kernel import arch
        from .kernel.frontend.trace import current

        if getattr(current("PipelineCpAsync.producer_commit"), "cp_async_uncommitted", 0):
            arch.cp_async_commit_group()
        arch.cp_async_wait_group(0)
        arch.mbarrier_arrive(self.full + state.index)


from .pipeline_participants import ImmutableResourceHandle, PipelineConsumer, PipelineProducer, _Participant  # noqa: E402,F401


class PipelineOrder:
    """``cutlass.pipeline.PipelineOrder``: ``length`` groups (consumer warpgroups taking turns, as a
    ping-pong attention kernel's do) pass a token around, ``depth`` stages deep. Group g ``wait()``\\ s on
    barrier ``index * length + g`` and ``arrive()``\\ s on the next group's, ``index * length + (g + 1) %
    length``, then moves on; group 0 starts holding the token (its phase starts at 1, the others' at 0).
    The ``depth * length`` barriers expect the producer group's threads."""

    def __init__(self, full: Any, depth: int, length: int, group_id: Any, state: PipelineState):
        self.full, self.depth, self.length, self.group_id, self.state = full, depth, length, group_id, state

    @classmethod
    def create(cls, *, depth: int, length: int, group_id: Any, producer_group: CooperativeGroup,
               barrier_storage: Any = None, defer_sync: bool = False, name: str = "") -> "PipelineOrder":
        from .kernel import arch
        from .kernel.frontend.trace import current

        where = "PipelineOrder.create"
        if barrier_storage is None:
            raise TraceError(f"{where}: pass barrier_storage= (a pointer to depth * length Int64 words of shared memory)")
        for what, v in (("depth", depth), ("length", length)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise TraceError(f"{where}: {what} must be a positive int, got {v!r}")
        n = _threads(producer_group, "producer_group")
        t = current(where)
        op = t.begin_if(arch.make_warp_uniform(arch.warp_idx()) == 0)
        outer, t.cur = t.cur, op.then
        with arch.elect_one():
            for i in range(depth * length):
                arch.mbarrier_init(barrier_storage + i, n)
        t.cur = outer
        if not defer_sync:
            arch.mbarrier_init_fence()
            arch.sync_threads()
        return cls(barrier_storage, depth, length, group_id, PipelineState(depth))

    def get_barrier_for_current_stage_idx(self, group_id: Any, state: Optional[PipelineState] = None) -> Any:
        state = self.state if state is None else state
        return state.index * self.length + group_id

    def _phase(self, state: PipelineState) -> Any:
        from .numeric import Int32

        return (Int32(self.group_id == 0) + state.phase) % 2  # group 0's phase starts at 1

    def arrive(self, state: Optional[PipelineState] = None) -> Optional[PipelineState]:
        """Pass the token to the next group, and move on a stage."""
        from .kernel import arch

        s = self.state if state is None else state
        arch.mbarrier_arrive(self.full + self.get_barrier_for_current_stage_idx((self.group_id + 1) % self.length, s))
        s.advance()
        return s if state is not None and s is not self.state else None

    def wait(self, state: Optional[PipelineState] = None) -> None:
        """Wait for this group's turn."""
        from .kernel import arch

        s = self.state if state is None else state
        arch.mbarrier_wait(self.full + self.get_barrier_for_current_stage_idx(self.group_id, s), self._phase(s))
