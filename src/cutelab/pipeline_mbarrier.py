"""``cutlass.pipeline``'s synchronization objects inside a pipeline, as CuTe DSL 4.8.1 has them:
``PipelineOp`` (what kind of agent arrives) and ``MbarrierArray`` (``num_stages`` mbarriers in shared
memory at ``barrier_storage``; ``wait(index, phase)``, ``arrive(index, dst)``,
``arrive_and_expect_tx(index, tx_count)``, ``get_barrier(index)``, ...).

A pipeline's ``sync_object_full`` and ``sync_object_empty`` are two of them (its full and its empty
barriers), with ``producer_mask``/``consumer_mask``: libraries that extend the pipelines reach into
these (flash_attn.cute's ``PipelineTmaAsync.producer_acquire`` waits on ``sync_object_empty`` and
arrives on ``sync_object_full``). Each method is the cute.arch mbarrier operation on
``get_barrier(index)`` (kernel/instr/mbarrier.py), so both back ends run it.

>>> PipelineOp.TmaLoad.name, PipelineOp(PipelineOp.AsyncThread.value) is PipelineOp.AsyncThread
('TmaLoad', True)
"""

from __future__ import annotations

import enum
from typing import Any, Optional

from .errors import TraceError

__all__ = ["PipelineOp", "MbarrierLayout", "MbarrierArray"]


class Agent(enum.Enum):
    """What takes part in a pipeline's synchronisation (cutlass.pipeline.Agent)."""

    Thread = enum.auto()
    Warp = enum.auto()
    ThreadBlock = enum.auto()
    ThreadBlockCluster = enum.auto()


class PipelineOp(enum.Enum):
    """The hardware feature an agent of a pipeline uses to signal a barrier."""

    AsyncThread = enum.auto()
    TCGen05Mma = enum.auto()
    TmaLoad = enum.auto()
    ClcLoad = enum.auto()
    TmaStore = enum.auto()
    Composite = enum.auto()
    AsyncLoad = enum.auto()


class MbarrierLayout(enum.Enum):
    V0 = enum.auto()  # transactional mbarriers


def _arrive_count(cg: Any) -> int:

    if cg.agent is Agent.Thread:
        return cg.size
    if cg.agent is Agent.Warp:
        return cg.size * 32
    raise TraceError(f"MbarrierArray: the arrive count of a {cg.agent} group needs the block's size; cutelab takes "
                     f"Agent.Thread and Agent.Warp groups here")


class MbarrierArray:
    """``num_stages`` mbarriers at ``barrier_storage`` (a pointer to Int64 words of shared memory),
    signalled by ``agent`` = (PipelineOp, CooperativeGroup). Made with ``init=True`` (as CuTe DSL's
    constructor does), one thread of warp 0 initialises each barrier with the group's arrive count;
    a pipeline's own sync objects wrap barriers its ``create`` initialised (``init=False``)."""

    def __init__(self, barrier_storage: Any, num_stages: int, agent: Any, tx_count: int = 0,
                 mbarrier_layout: MbarrierLayout = MbarrierLayout.V0, name: str = "", *, init: bool = True,
                 arrive_count: Optional[int] = None, loc: Any = None, ip: Any = None):
        if isinstance(num_stages, bool) or not isinstance(num_stages, int) or num_stages <= 0:
            raise ValueError("Error: Mbarrier stage count must be greater than 0.")
        self.barrier_storage = self.mbarrier_base = barrier_storage
        self.num_stages, self.tx_count, self.mbarrier_layout, self.name = num_stages, tx_count, mbarrier_layout, name
        self.op_type, self.cg = agent
        self.arrive_count = _arrive_count(self.cg) if arrive_count is None else arrive_count
        if self.arrive_count <= 0:
            raise ValueError("Error: Mbarrier arrive count must be greater than 0.")
        if self.op_type is PipelineOp.TmaLoad and self.tx_count < 0:
            raise ValueError("Error: Mbarrier tx count must not be less than 0 for TMA ops.")
        if init:
            self.mbarrier_init()

    def recast_to_new_op_type(self, new_op_type: PipelineOp) -> "MbarrierArray":
        """The same barriers (not initialised again), signalled as new_op_type."""
        new = object.__new__(MbarrierArray)
        new.__dict__.update(self.__dict__)
        new.op_type = new_op_type
        return new

    def mbarrier_init(self, *, loc: Any = None, ip: Any = None) -> None:
        from .kernel import arch
        from .kernel.frontend.trace import current

        t = current("MbarrierArray.mbarrier_init")
        op = t.begin_if(arch.make_warp_uniform(arch.warp_idx()) == 0)
        outer, t.cur = t.cur, op.then
        try:
            with arch.elect_one():
                for i in range(self.num_stages):
                    arch.mbarrier_init(self.get_barrier(i), self.arrive_count)
        finally:
            t.cur = outer

    def get_barrier(self, index: Any, *, loc: Any = None, ip: Any = None) -> Any:
        return self.mbarrier_base + index

    def max(self) -> int:
        return (1 << 20) - 1  # a transactional barrier's largest arrive count

    # ---- arrive
    def arrive(self, index: Any, dst: Any = None, cta_group: Any = None, *, loc: Any = None, ip: Any = None) -> None:
        """The arrive of this array's PipelineOp: an async thread's arrive (on CTA ``dst`` of the
        cluster when given), a TMA load's arrive with the expected bytes, a cp.async arrive."""
        op = self.op_type
        if op is PipelineOp.AsyncThread:
            self.arrive_mbarrier(index, dst)
        elif op is PipelineOp.TmaLoad:
            self.arrive_and_expect_tx(index, self.tx_count)
        elif op is PipelineOp.ClcLoad:
            self.arrive_and_expect_tx_with_dst(index, self.tx_count, dst)
        elif op is PipelineOp.AsyncLoad:
            self.arrive_cp_async_mbarrier(index)
        elif op is PipelineOp.TCGen05Mma:
            from .kernel import arch
            from .nvgpu import tcgen05

            if cta_group is None:
                raise TraceError("MbarrierArray.arrive: a TCGen05Mma arrive needs cta_group")
            with arch.elect_one():
                if dst is None:
                    tcgen05.commit(self.get_barrier(index))
                else:
                    tcgen05.commit(self.get_barrier(index), dst, cta_group)
        else:
            raise TraceError(f"MbarrierArray.arrive: not supported for PipelineOp.{op.name}")

    def arrive_mbarrier(self, index: Any, dst_rank: Any = None, *, loc: Any = None, ip: Any = None) -> None:
        from .kernel import arch

        if dst_rank is None:
            arch.mbarrier_arrive(self.get_barrier(index))
        else:
            arch.mbarrier_arrive(self.get_barrier(index), dst_rank)

    def arrive_cp_async_mbarrier(self, index: Any, *, loc: Any = None, ip: Any = None) -> None:
        """The thread arrives once its cp.async copies have landed (``cp.async.mbarrier.arrive.noinc``):
        here its copies are waited for, then it arrives (as pipeline_async.PipelineCpAsync commits)."""
        from .kernel import arch

        arch.cp_async_wait_group(0)
        arch.mbarrier_arrive(self.get_barrier(index))

    def arrive_and_expect_tx(self, index: Any, tx_count: Any, *, loc: Any = None, ip: Any = None) -> None:
        """One elected thread arrives and expects tx_count bytes of transactions (TMA loads)."""
        from .kernel import arch

        with arch.elect_one():
            arch.mbarrier_arrive_and_expect_tx(self.get_barrier(index), tx_count)

    def arrive_and_expect_tx_with_dst(self, index: Any, tx_count: Any, dst: Any = None, *, loc: Any = None,
                                      ip: Any = None) -> None:
        from .kernel import arch

        arch.mbarrier_arrive_and_expect_tx(self.get_barrier(index), tx_count, dst)

    # ---- wait
    def wait(self, index: Any, phase: Any, *, loc: Any = None, ip: Any = None) -> None:
        from .kernel import arch

        arch.mbarrier_wait(self.get_barrier(index), phase)

    def try_wait(self, index: Any, phase: Any, *, loc: Any = None, ip: Any = None) -> Any:
        from .kernel import arch

        return arch.mbarrier_try_wait(self.get_barrier(index), phase)

    def test_wait(self, index: Any, phase: Any, *, loc: Any = None, ip: Any = None) -> Any:
        """Whether the phase has completed, without waiting (``mbarrier.test_wait``); the same truth
        value as try_wait, which cutelab has (try_wait may only suspend the thread a while first)."""
        from .kernel import arch

        return arch.mbarrier_try_wait(self.get_barrier(index), phase)

    def arrive_and_wait(self, index: Any, phase: Any, dst: Any = None, cta_group: Any = None, *, loc: Any = None,
                        ip: Any = None) -> None:
        self.arrive(index, dst, cta_group)
        self.wait(index, phase)

    def arrive_and_drop(self, *, loc: Any = None, ip: Any = None) -> None:
        raise NotImplementedError("Error: Not yet supported.")

    def __repr__(self) -> str:
        return (f"MbarrierArray({self.num_stages} stages, {self.op_type.name}, arrive count {self.arrive_count}"
                f"{f', tx_count {self.tx_count}' if self.tx_count else ''})")
