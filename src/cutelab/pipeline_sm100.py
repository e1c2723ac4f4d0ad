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
- ``PipelineTmaMultiConsumersAsync``: TMA producer, UMMA and async-thread consumers of each stage (one CTA).

Commits and the producer's arrive are issued by one elected thread of each warp that calls them
(``cute.arch.elect_one``), as CuTe DSL does. ``sync(barrier_id)`` is ``cutlass.pipeline.sync``:
every thread of the block at the named barrier (``bar.sync id``).

In a cluster (``cta_layout_vmnk`` of more than one CTA), as CuTe DSL: a 2-CTA pipeline's leader CTA
(even rank) alone expects the pair's bytes and issues the UMMAs; its commits arrive, by multicast
mask, at the barriers of every CTA whose data it read (``PipelineTmaUmma``) or whose accumulator it
wrote (``PipelineUmmaAsync``), and the consumers of ``PipelineUmmaAsync`` release the stage at the
leader's barrier; the producers of a 2-CTA ``PipelineAsyncUmma`` arrive at the leader's full barrier and its
commits arrive at both CTAs' empty barriers. ``PipelineTmaUmma.create(
enable_multicast_signaling=True)`` takes the consumer group as the releasing warps and counts one
arrive per warp per multicast partner on each empty barrier, as CuTe DSL does.

CuTe DSL's internals, which libraries extending these pipelines use, are there too: ``is_leader_cta``,
``cta_group``, ``producer_mask``/``consumer_mask`` and the sync objects ``sync_object_full``/``_empty``
(MbarrierArrays of the signallers' PipelineOp: a TMA load's, with ``tx_count``, a tcgen05 commit's, an
async thread's); the methods take CuTe DSL's ``loc=``/``ip=``.
"""

from __future__ import annotations

from typing import Any

from .errors import TraceError
from .pipeline_async import PipelineAsync
from .pipeline_sm90 import PipelineState

__all__ = ["PipelineTmaUmma", "PipelineUmmaAsync", "PipelineAsyncUmma", "PipelineTmaMultiConsumersAsync", "sync"]


def _cluster_size(cta_layout_vmnk: Any) -> int:
    from . import int_tuple as it

    return 1 if cta_layout_vmnk is None else it.product(getattr(cta_layout_vmnk, "shape", cta_layout_vmnk))


def _v_size(cta_layout_vmnk: Any) -> int:
    from . import int_tuple as it

    shp = getattr(cta_layout_vmnk, "shape", None)
    return it.product(shp[0]) if isinstance(shp, tuple) else 1


def _my_coord(cta_layout_vmnk: Any) -> Any:
    """This CTA's (v, m, n, l) coordinate in the cluster (index expressions)."""
    from .kernel import arch

    rank = arch.make_warp_uniform(arch.block_idx_in_cluster())
    return cta_layout_vmnk.get_flat_coord(rank)


def _mask_of(cta_layout_vmnk: Any, coords: Any) -> Any:
    """The mask (an index expression) of the cluster ranks of the distinct coordinates coords."""
    from . import int_tuple as it
    from .dynamic import value_of
    from .nvgpu.cpasync.mcast_mask import pow2

    shape, stride = value_of(cta_layout_vmnk.shape), value_of(cta_layout_vmnk.stride)
    size = it.product(shape)
    m: Any = 0
    for c in coords:
        m = m + pow2(it.crd2idx(tuple(c), shape, stride), size)
    return m


def _commit(barrier: Any, mask: Any = None, cta_group: Any = None) -> None:
    from .kernel import arch
    from .kernel.instr.tcgen05_mma import commit

    with arch.elect_one():
        commit(barrier, mask, cta_group)


class _UmmaPipeline(PipelineAsync):
    """The UMMA pipelines' common part: the barriers, and for a cluster (cta_layout_vmnk of more than
    one CTA: CTA pairs of 2-CTA UMMAs, multicast loads) the CTA's coordinate in it."""

    @classmethod
    def create(cls, *, num_stages: int, producer_group: Any, consumer_group: Any, barrier_storage: Any = None,
               cta_layout_vmnk: Any = None, defer_sync: bool = False, name: str = "", tx_count: Any = None,
               mcast_mode_mn: Any = (1, 1), enable_multicast_signaling: bool = False, **kwargs: Any) -> Any:
        from .kernel import arch

        if enable_multicast_signaling:
            raise TraceError(f"{cls.__name__}.create(enable_multicast_signaling=True) is not supported by cutelab yet")
        size, v = _cluster_size(cta_layout_vmnk), _v_size(cta_layout_vmnk)
        if v not in (1, 2):
            raise TraceError(f"{cls.__name__}.create: the V mode of cta_layout_vmnk ({v} CTAs) must be 1 or 2")
        p = super().create(num_stages=num_stages, producer_group=producer_group, consumer_group=consumer_group,
                           barrier_storage=barrier_storage, defer_sync=True, name=name, **kwargs)
        p.tx_count, p.vmnk, p.cluster, p.v = tx_count, cta_layout_vmnk, size, v
        p.mcast_mode_mn = tuple(mcast_mode_mn)
        from .nvgpu.tcgen05.mma import CtaGroup

        p.cta_group = CtaGroup.TWO if v == 2 else CtaGroup.ONE
        p.coord = _my_coord(cta_layout_vmnk) if size > 1 else None
        p.is_leader_cta = p._is_leader()
        p._sync_objects()
        if not defer_sync:
            arch.mbarrier_init_fence()
            if size == 1:
                arch.sync_threads()
            else:  # every CTA's barriers are initialised before a peer arrives on them
                arch.cluster_arrive_relaxed()
                arch.cluster_wait()
        return p

    # the PipelineOp of the full and of the empty barriers' signallers, as CuTe DSL's create makes its sync objects
    _FULL_OP, _EMPTY_OP = "AsyncThread", "AsyncThread"

    def _sync_objects(self) -> None:
        """CuTe DSL's internals that libraries extending these pipelines use (flash_attn.cute's
        ``PipelineTmaUmma.producer_acquire`` waits on ``sync_object_empty`` and, if ``is_leader_cta``,
        arrives on ``sync_object_full`` expecting its ``tx_count``): the barriers ``create`` initialised
        as MbarrierArrays of the signallers' PipelineOp (a TMA load's with the stage's bytes, a tcgen05
        commit's, an async thread's)."""
        from .pipeline_mbarrier import MbarrierArray, PipelineOp
        from .pipeline_sm90 import Agent, CooperativeGroup

        def sync_object(base: Any, op: str, count: int) -> Any:
            tx = self.tx_count if op == "TmaLoad" else 0
            return MbarrierArray(base, self.num_stages, (PipelineOp[op], CooperativeGroup(Agent.Thread, count)), tx,
                                 init=False)

        self.sync_object_full = sync_object(self.full, self._FULL_OP, self.producer_count)
        self.sync_object_empty = sync_object(self.empty, self._EMPTY_OP, self.consumer_count)

    def _is_leader(self) -> Any:
        """Whether this CTA is the leader (v == 0) of its pair (always, without pairs)."""
        from .kernel import arch

        if self.v == 1:
            return True
        bidx = arch.block_idx()[0]
        return bidx % self.v == 0


def _in_branch(cond: Any, fn: Any, what: str) -> None:
    from .kernel.frontend.trace import current

    if cond is True:
        fn()
        return
    t = current(what)
    op = t.begin_if(cond)
    outer, t.cur = t.cur, op.then
    try:
        fn()
    finally:
        t.cur = outer


def _signaling_group(consumer_group: Any, cta_layout_vmnk: Any, mcast_mode_mn: Any) -> Any:
    """``enable_multicast_signaling``'s consumer group, as CuTe DSL computes it: the program names the
    warps that release a stage (each warp's commit arrives once on every CTA its loads multicast to),
    and each empty barrier counts one arrive per such warp per multicast partner (the CTAs sharing
    this CTA's row, for A, and column, for B, in the cluster)."""
    from . import int_tuple as it
    from .pipeline_async import _threads
    from .pipeline_sm90 import Agent, CooperativeGroup

    where = "PipelineTmaUmma.create(enable_multicast_signaling=True)"
    threads = _threads(consumer_group, "consumer_group")
    if threads % 32:
        raise TraceError(f"{where}: the consumer group ({consumer_group}, {threads} threads) must be whole warps")
    shape = it.flatten_to_tuple(cta_layout_vmnk.shape) if cta_layout_vmnk is not None else (1, 1, 1, 1)
    if len(shape) != 4 or not all(isinstance(x, int) for x in shape):
        raise TraceError(f"{where}: cta_layout_vmnk must be a static layout of 4 modes (V, M, N, L), got "
                         f"{cta_layout_vmnk}")
    m_mode, n_mode = (bool(x) for x in mcast_mode_mn)
    partners = (shape[2] if m_mode else 0) + (shape[1] if n_mode else 0) - (1 if m_mode and n_mode else 0)
    if partners < 1:
        raise TraceError(f"{where}: mcast_mode_mn={tuple(mcast_mode_mn)} multicasts in neither mode")
    return CooperativeGroup(Agent.Thread, partners * (threads // 32))


class PipelineTmaUmma(_UmmaPipeline):
    """TMA producer, UMMA consumer (see the module docstring)."""

    _FULL_OP, _EMPTY_OP = "TmaLoad", "TCGen05Mma"

    @classmethod
    def create(cls, *, num_stages: int, producer_group: Any, consumer_group: Any, tx_count: int,
               barrier_storage: Any = None, cta_layout_vmnk: Any = None, **kwargs: Any) -> "PipelineTmaUmma":
        if isinstance(tx_count, bool) or not isinstance(tx_count, int) or tx_count < 0:
            raise TraceError(f"PipelineTmaUmma.create: tx_count must be a static number of bytes, got {tx_count!r}")
        if kwargs.pop("enable_multicast_signaling", False):
            consumer_group = _signaling_group(consumer_group, cta_layout_vmnk, kwargs.get("mcast_mode_mn", (1, 1)))
        p = super().create(num_stages=num_stages, producer_group=producer_group, consumer_group=consumer_group,
                           barrier_storage=barrier_storage, cta_layout_vmnk=cta_layout_vmnk, tx_count=tx_count,
                           **kwargs)
        if p.cluster > 1:  # CuTe DSL's producer_mask and consumer_mask: the multicast arrival mask
            p.producer_mask = p.consumer_mask = p._release_mask()
        return p

    def _release_mask(self) -> Any:
        """The CTAs whose producers wait for this CTA's UMMAs to release a stage: those its loads and
        its peer's loads multicast to (CuTe DSL's _compute_mcast_arrival_mask); None without a cluster."""
        if self.cluster == 1:
            return None
        from .dynamic import value_of

        shape = value_of(self.vmnk.shape)
        v0, m0, n0, l0 = self.coord
        ext = [x if isinstance(x, int) else 1 for x in shape]
        add, sub = [], []
        for v in range(self.v):  # both CTAs of a pair: the peer's loads multicast too
            if self.mcast_mode_mn[0]:  # A is multicast along N
                add += [(v, m0, n, l0) for n in range(ext[2])]
            if self.mcast_mode_mn[1]:  # B is multicast along M
                add += [(v, m, n0, l0) for m in range(ext[1])]
            if self.mcast_mode_mn[0] and self.mcast_mode_mn[1]:
                sub.append((v, m0, n0, l0))  # counted by both
        return _mask_of(self.vmnk, add) - (_mask_of(self.vmnk, sub) if sub else 0)

    def producer_acquire(self, state: PipelineState, try_acquire_token: Any = None, *, expected_tx: Any = None,
                         loc: Any = None, ip: Any = None) -> None:
        """Wait until the stage is empty, then (in the pair's leader, one thread per warp) arrive on its
        full barrier expecting the stage's bytes (a pair's: both CTAs' loads complete there)."""
        from .kernel import arch

        arch.mbarrier_wait(self.empty + state.index, state.phase)

        def arrive() -> None:
            with arch.elect_one():
                arch.mbarrier_arrive_and_expect_tx(self.full + state.index,
                                                   self.tx_count if expected_tx is None else expected_tx)

        _in_branch(self._is_leader(), arrive, "PipelineTmaUmma.producer_acquire")

    def producer_commit(self, state: PipelineState, *, loc: Any = None, ip: Any = None) -> None:
        """Nothing: the TMA copies complete the stage's transaction bytes."""

    def consumer_release(self, state: PipelineState, *, loc: Any = None, ip: Any = None) -> None:
        """``tcgen05.commit`` to the stage's empty barrier (after the UMMAs reading it), in every CTA
        whose loads the UMMAs read."""
        _commit(self.empty + state.index, self._release_mask(), self.cta_group if self.cluster > 1 else None)


class PipelineUmmaAsync(_UmmaPipeline):
    """UMMA producer, async-thread consumers (see the module docstring)."""

    _FULL_OP, _EMPTY_OP = "TCGen05Mma", "AsyncThread"

    def producer_commit(self, state: PipelineState, *, loc: Any = None, ip: Any = None) -> None:
        """``tcgen05.commit`` to the stage's full barrier (after the UMMAs writing it), in both CTAs of a
        pair (a 2-CTA UMMA writes both CTAs' accumulators)."""
        if self.cluster == 1:
            _commit(self.full + state.index)
            return
        v0, m0, n0, l0 = self.coord
        mask = _mask_of(self.vmnk, [(v, m0, n0, l0) for v in range(self.v)])
        _commit(self.full + state.index, mask, self.cta_group)

    def producer_tail(self, state: PipelineState, *, loc: Any = None, ip: Any = None) -> None:
        """In the leader CTA (even rank in the cluster), wait until the consumers released the last
        stage used (state is the next one), as CuTe DSL does."""
        from .kernel import arch

        def wait() -> None:
            s = state.clone()
            for _ in range(self.num_stages - 1):
                s.advance()
            arch.mbarrier_wait(self.empty + s.index, s.phase)

        rank = arch.make_warp_uniform(arch.block_idx_in_cluster())
        _in_branch(True if isinstance(rank, int) and rank % 2 == 0 else rank % 2 == 0, wait,
                   "PipelineUmmaAsync.producer_tail")

    def consumer_release(self, state: PipelineState, *, loc: Any = None, ip: Any = None) -> None:
        """Each consumer thread arrives on the stage's empty barrier: of the pair's leader, which issues
        the UMMAs, for a 2-CTA pipeline."""
        from .kernel import arch

        if self.v == 1:
            arch.mbarrier_arrive(self.empty + state.index)
            return
        rank = arch.make_warp_uniform(arch.block_idx_in_cluster())
        arch.mbarrier_arrive(self.empty + state.index, rank // self.v * self.v)


class PipelineAsyncUmma(_UmmaPipeline):
    """Async-thread producers, UMMA consumer (see the module docstring)."""

    _FULL_OP, _EMPTY_OP = "AsyncThread", "TCGen05Mma"

    @classmethod
    def create(cls, **kwargs: Any) -> "PipelineAsyncUmma":
        p = super().create(**kwargs)
        if p.v == 2:  # producers arrive at the leader's full barrier (the rank of v 0 of this pair), as CuTe DSL's
            from .kernel import arch

            rank = arch.make_warp_uniform(arch.block_idx_in_cluster())
            p.producer_mask = rank // 2 * 2
        return p

    def consumer_release(self, state: PipelineState, *, loc: Any = None, ip: Any = None) -> None:
        """``tcgen05.commit`` to the stage's empty barrier (after the UMMAs reading it); of a 2-CTA pipeline, at
        both CTAs of the pair (CuTe DSL's _compute_peer_cta_mask: this CTA and its peer along V)."""
        if self.v == 1:
            _commit(self.empty + state.index)
            return
        v0, m0, n0, l0 = self.coord
        mask = _mask_of(self.vmnk, [(v, m0, n0, l0) for v in range(self.v)])
        _commit(self.empty + state.index, mask, self.cta_group)


class PipelineTmaMultiConsumersAsync(PipelineTmaUmma):
    """TMA producer, two kinds of consumers of each stage: UMMAs (their release a ``tcgen05.commit``) and async
    threads (their release an mbarrier arrive), as CuTe DSL 4.8.1 has it (CUTLASS's mamba2_ssd), for one CTA.

    The empty barrier counts both consumer groups' arrivals. ``consumer_release(state, PipelineOp.TCGen05Mma)``
    commits (one arrive per releasing warp); ``consumer_release(state, PipelineOp.AsyncThread)`` arrives from
    lane 0 of each async warp, or from every async thread where a consumer group's count is whole warps (CuTe
    DSL's deprecated per-lane signaling, which it then falls back to unless
    ``force_deprecated_per_lane_signaling=False``)."""

    @classmethod
    def create(cls, *, num_stages: int, producer_group: Any, consumer_group_umma: Any, consumer_group_async: Any,
               tx_count: int, barrier_storage: Any = None, cta_layout_vmnk: Any = None, mcast_mode_mn: Any = (1, 1),
               tidx: Any = None, enable_multicast_signaling: bool = False, defer_sync: bool = False,
               force_deprecated_per_lane_signaling: Any = None, name: str = "",
               **kwargs: Any) -> "PipelineTmaMultiConsumersAsync":
        from .pipeline_async import _threads
        from .pipeline_sm90 import Agent, CooperativeGroup

        where = "PipelineTmaMultiConsumersAsync.create"
        if _cluster_size(cta_layout_vmnk) != 1:
            raise TraceError(f"{where}: cutelab supports this pipeline in one CTA (cta_layout_vmnk of size 1) so far, "
                             f"got {cta_layout_vmnk}")
        if enable_multicast_signaling:
            raise TraceError(f"{where}(enable_multicast_signaling=True) is not supported by cutelab yet")
        if consumer_group_umma.agent != consumer_group_async.agent:
            raise ValueError("UMMA and AsyncThread consumer groups must be the same agent")
        nu = _threads(consumer_group_umma, "consumer_group_umma")
        na = _threads(consumer_group_async, "consumer_group_async")

        def legacy(g: Any, n: int) -> bool:
            return g.agent is Agent.Thread and n >= 32 and n % 32 == 0

        if force_deprecated_per_lane_signaling is None:
            force_deprecated_per_lane_signaling = legacy(consumer_group_umma, nu) or legacy(consumer_group_async, na)
        p = super().create(num_stages=num_stages, producer_group=producer_group,
                           consumer_group=CooperativeGroup(consumer_group_umma.agent, nu + na), tx_count=tx_count,
                           barrier_storage=barrier_storage, cta_layout_vmnk=cta_layout_vmnk, defer_sync=defer_sync,
                           name=name, mcast_mode_mn=mcast_mode_mn, **kwargs)
        if force_deprecated_per_lane_signaling:
            p.is_signaling_thread = True
        else:
            from .kernel import arch
            from .kernel.ir.symbolic import Cmp

            t = arch.thread_idx()[0] if tidx is None else tidx
            lane = t.as_index() % 32 if hasattr(t, "as_index") else t % 32
            p.is_signaling_thread = (lane == 0) if isinstance(lane, int) else Cmp.make("<", lane, 1)
        return p

    def consumer_release(self, state: PipelineState, op_type: Any = None, *, loc: Any = None, ip: Any = None) -> None:
        """The UMMAs' release (``tcgen05.commit`` to the stage's empty barrier) or the async threads' (an arrive
        from each signaling thread)."""
        from .kernel import arch
        from .pipeline_mbarrier import PipelineOp

        if op_type is None or op_type == PipelineOp.TCGen05Mma:
            super().consumer_release(state)
        elif op_type == PipelineOp.AsyncThread:
            _in_branch(self.is_signaling_thread, lambda: arch.mbarrier_arrive(self.empty + state.index),
                       "PipelineTmaMultiConsumersAsync.consumer_release")
        else:
            raise ValueError(f"Invalid PipelineOp specified. op_type:{op_type}")


def sync(barrier_id: int = 0, *, loc: Any = None, ip: Any = None) -> None:
    """``cutlass.pipeline.sync``: every thread of the block waits at named barrier barrier_id
    (``bar.sync id``; 0 is ``sync_threads``)."""
    from .kernel import arch
    from .kernel.frontend.trace import current

    if isinstance(barrier_id, bool) or not isinstance(barrier_id, int) or not 0 <= barrier_id < 16:
        raise TraceError(f"cutlass.pipeline.sync(barrier_id={barrier_id!r}): barrier_id must be a static int in [0, 15]")
    if barrier_id == 0:
        arch.sync_threads()
        return
    t = current("cutlass.pipeline.sync")
    arch.barrier(barrier_id=barrier_id, number_of_threads=t.block[0] * t.block[1] * t.block[2])  # NamedBarrier's
