"""``cutlass.pipeline`` for SM90 mainloops: ``PipelineTmaAsync`` (a TMA producer and consumer
threads over a ring of shared-memory stages, synchronised by mbarriers, on one CTA or over the
CTAs of a cluster that multicast into each other), ``PipelineState``, ``make_pipeline_state``,
``PipelineUserType``, ``CooperativeGroup``, ``Agent``.

Each stage has a *full* barrier (the producer arrives with the stage's transaction bytes, the
TMA copies complete them) and an *empty* barrier (one thread of each consumer warp arrives when
the stage has been read). A ``PipelineState`` walks the ring: ``index`` (the stage), ``phase``
(the parity to wait for) and ``count`` (stages passed so far).

In cutelab a state is a trace-time count: ``count`` is an int or an index expression of the
kernel, ``index = count % stages`` and ``phase = (phase0 + count // stages) % 2``. Advancing it
is a Python update, right for straight-line code and static loops (``range`` over ints,
``range_constexpr``), which unroll. Inside a *runtime* loop (traced once) a state moved in place
lives in registers from then on; a runtime loop that rebinds a state's variable, or a runtime
branch that rebinds or moves it, carries its count and position (kernel/frontend/carry_obj.py).

>>> s = make_pipeline_state(PipelineUserType.Producer, 3)
>>> for _ in range(4):
...     s.advance()
...     print(s.index, s.phase, s.count)
1 1 1
2 1 2
0 0 3
1 0 4
"""

from __future__ import annotations

import enum
from typing import Any, Optional

from .errors import TraceError
from .pipeline_mbarrier import Agent, MbarrierArray, PipelineOp  # noqa: F401  (Agent: cutlass.pipeline's)

__all__ = ["Agent", "CooperativeGroup", "PipelineUserType", "PipelineState", "make_pipeline_state",
           "PipelineTmaAsync", "pipeline_init_arrive", "pipeline_init_wait"]


class CooperativeGroup:
    """``size`` agents of one kind (e.g. the number of consumer arrivals per stage)."""

    def __init__(self, agent: Agent, size: int = 1, alignment: Optional[int] = None):
        if not isinstance(agent, Agent):
            raise ValueError(f"CooperativeGroup({agent!r}, {size!r}): unsupported agent type")
        if isinstance(size, int) and size <= 0:
            raise ValueError(f"CooperativeGroup({agent}, {size}): the number of threads in a CooperativeGroup must be "
                             f"greater than 0")
        self.agent, self.size = agent, size

    def __repr__(self) -> str:
        return f"CooperativeGroup({self.agent}, {self.size})"


class PipelineUserType(enum.Enum):
    Producer = enum.auto()
    Consumer = enum.auto()
    ProducerConsumer = enum.auto()


def _loops() -> tuple:
    from .kernel.frontend.trace import active

    t = active()
    return tuple(t.loops) + tuple(getattr(t, "whiles", ())) if t is not None else ()  # runtime for and while loops


class PipelineState:
    """A position in the ring of ``stages`` buffers: ``count`` stages passed since the count was
    last reset, ``pos`` in all, starting at phase ``phase0``.

    A state is a trace-time count (an int or an index expression) until it is read or advanced
    inside a runtime loop (``cutlass.range``, or a runtime ``while``) that did not exist where it was made: from then on its
    position and count live in two Int32 registers (set just before that loop), so each iteration
    moves them, as CuTe DSL's PipelineState does."""

    def __init__(self, stages: int, count: Any = 0, index: Any = None, phase: Any = None, *, phase0: int = 0,
                 pos: Any = None):
        self._dsl = False
        self._was_read = False  # whether it was read or moved (a clone neither read nor moved yet can be rebased)
        if index is not None or phase is not None:
            # CuTe DSL's PipelineState(stages, count, index, phase): a state held as its values, as libraries
            # make one (flash_attn.cute's _make_state(index, phase); quack's PipelineStateWAdvance(stages,
            # Int32(0), Int32(0), Int32(1)), which moves its _count/_index/_phase itself)
            if index is None or phase is None:
                raise ValueError("PipelineState: give both index= and phase=, or neither")
            self._dsl = True
            self._stages, self._count, self._index, self._phase = stages, count, index, phase
            self._phase0, self._pos, self._loops, self._mark, self._regs = 0, 0, _loops(), None, None
            return
        if not isinstance(stages, int) or stages < 1:
            raise ValueError(f"PipelineState: stages must be a positive int, got {stages!r}")
        self._stages, self._count, self._phase0 = stages, count, int(phase0) & 1
        self._pos = count if pos is None else pos
        self._loops = _loops()
        from .kernel.frontend.trace import active

        t = active()
        # where the state last changed at trace time: its registers get their values there (after the
        # op that was last then: an index would go stale when other states insert their registers' values
        # earlier in the same block)
        self._mark = (t.cur, t.cur.ops[-1] if t.cur.ops else None) if t is not None else None
        self._regs: Any = None  # (pos register, count register) once the state lives in registers

    def _remark(self) -> None:
        from .kernel.frontend.trace import active

        t = active()
        if t is not None:
            self._mark = (t.cur, t.cur.ops[-1] if t.cur.ops else None)

    def _live(self) -> bool:
        """Move the state into registers if it is used inside a runtime loop newer than it."""
        if self._regs is not None:
            return True
        if not [v for v in _loops() if not any(v is w for w in self._loops)]:
            return False
        from .kernel.frontend.trace import current

        t = current("PipelineState")
        now = _loops()
        here = [v for v in getattr(self, "_cloned_in", ()) if any(v is w for w in now)]
        pending = [c for c, lp in getattr(self, "_clones", ()) if any(v is w for v in lp for w in now)]
        if here and not any(c._was_read for c in pending):
            # cloned in this loop and neither clone read yet (flash_attn.cute's `prev = state.clone();
            # state.advance()`): the clones take this state's values from its registers, read here (nothing
            # moved it between the clone and now), so each iteration's clone is that iteration's position
            self._cloned_in, self._clones = [], []
            self._go_live(t)
            for c in pending:
                c._count, c._pos = self._read(1), self._read(0)
                c._remark()
            return True
        if here:
            raise TraceError("PipelineState: cloned inside this runtime loop before it was read or advanced here; "
                             "the clone kept the first iteration's position. Read or advance the state before "
                             "cloning it in the loop (or clone it before the loop)")
        self._go_live(t)
        return True

    def _go_live(self, t: Any) -> None:
        from .kernel.ir.nodes import Assign
        from .numeric import Int32

        if self._mark is None:
            raise TraceError("PipelineState: made outside the kernel it is used in, inside a runtime loop")
        blk, after = self._mark
        at = 0 if after is None else next((i for i, op in enumerate(blk.ops) if op is after), None)
        if at is None:
            raise TraceError("PipelineState: the point where the state last changed is no longer in the kernel "
                             "(cutelab dropped the op it followed); cannot give its registers their values there")
        at = at + 1 if after is not None else 0
        regs = []
        for v in (self._count, self._pos):
            r = t.new_reg(Int32, 1, mutable=True)
            blk.ops.insert(at, Assign(r, (0,), (v,)))  # right after the state's last trace-time change
            regs.append(r)
        self._regs = (regs[1], regs[0])

    def _read(self, which: int) -> Any:
        from .kernel.ir.nodes import Compute, RegVar
        from .kernel.frontend.trace import current

        r = self._regs[which]
        t = current("PipelineState")
        dst = t.new_reg(r.dtype, 1)
        t.emit(Compute(dst, "mov", (((r, 0),),)))
        v = RegVar((dst, 0))
        if which == 0:
            v.lo = 0  # positions only grow from 0 (they would wrap after 2**31 stages)
        return v

    @property
    def stages(self) -> int:
        return self._stages

    def _fixed(self, what: str) -> None:
        if self._dsl and not (isinstance(self._stages, int) and self._stages >= 1):
            raise TraceError(f"PipelineState.{what}: this state was made at a given index= and phase= with "
                             f"stages={self._stages!r}; it has no ring of stages to move in")

    @property
    def count(self) -> Any:
        self._was_read = True
        if self._dsl:
            return self._count
        return self._read(1) if self._live() else self._count

    @property
    def index(self) -> Any:
        self._was_read = True
        if self._dsl:
            return self._index
        return (self._read(0) if self._live() else self._pos) % self._stages

    @property
    def phase(self) -> Any:
        self._was_read = True
        if self._dsl:
            return self._phase
        pos = self._read(0) if self._live() else self._pos
        return (self._phase0 + pos // self._stages) % 2

    def clone(self) -> "PipelineState":
        """A copy. Cloning inside a newer runtime loop keeps a trace-time state as it is (states
        derived from loop indices, ``s = state.clone(); s.advance(i * k + j)``, stay index
        expressions); advancing the original later in such a loop is then refused (the clone would
        have seen the first iteration's position only)."""
        if self._dsl:  # CuTe DSL's clone: a PipelineState at the same values
            return PipelineState(self._stages, self._count, self._index, self._phase)
        if self._regs is not None:
            return PipelineState(self._stages, self._read(1), phase0=self._phase0, pos=self._read(0))
        new = [v for v in _loops() if not any(v is w for w in self._loops)]
        c = PipelineState(self._stages, self._count, phase0=self._phase0, pos=self._pos)
        if new:
            self._cloned_in = getattr(self, "_cloned_in", []) + new
            self._clones = getattr(self, "_clones", []) + [(c, new)]
        return c

    def reset_count(self) -> None:
        """Count from zero again, at the same index and phase."""
        if self._dsl:
            from .numeric import Int32

            self._count = Int32(0)
            return
        self._was_read = True  # (a clone moved after it was made is not rebased: see _live)
        if self._live():
            from .kernel.ir.nodes import Assign
            from .kernel.frontend.trace import current

            current("PipelineState.reset_count").emit(Assign(self._regs[1], (0,), (0,)))
            return
        self._count = 0
        self._remark()

    def advance(self, count: Any = 1) -> None:
        """Move ``count`` stages on (an int >= 1 or an index expression)."""
        self._fixed("advance")
        self._was_read = True
        if isinstance(count, int) and count < 1:
            raise ValueError("count must be >= 1")
        if self._dsl:
            self._advance_values(count)
            return
        if self._live():
            from .kernel.ir.nodes import Assign
            from .kernel.frontend.trace import current
            from .kernel.ir.symbolic import add

            t = current("PipelineState.advance")
            for which in (0, 1):
                t.emit(Assign(self._regs[which], (0,), (add(self._read(which), count),)))
            return
        self._count = self._count + count
        self._pos = self._pos + count
        self._remark()

    def _advance_values(self, count: Any) -> None:
        """CuTe DSL's advance of a state held as its values: by one, the index wraps to 0 and the
        phase flips when it reaches the stage count (a runtime branch when the index is a runtime
        value); by more (or by a runtime count), index and phase from a division by the stage count."""
        from .numeric import Int32
        from .kernel.frontend.control import if_generate

        runtime = not isinstance(count, int) or isinstance(count, bool)
        if runtime or count > 1:
            self._count = self._count + count
            self._index = self._index + count
            flips = self._index // self._stages
            self._index = self._index % self._stages
            self._phase = self._phase ^ (flips % 2)
            return
        self._index = self._index + 1
        self._count = self._count + 1

        def wrap(index: Any, phase: Any) -> tuple:
            return Int32(0), phase ^ 1

        def keep(index: Any, phase: Any) -> tuple:
            return index, phase

        self._index, self._phase = if_generate(self._index == self._stages, wrap, keep, [self._index, self._phase],
                                               [Int32, Int32])

    # CuTe DSL's DynamicExpression protocol: a state held as its values is carried through a runtime loop
    # or branch by them (kernel/frontend/carry_obj.py); a trace-time count (make_pipeline_state's) gives
    # no values (_TRACE_COUNT is no register's value), and keeps its own registers (_live)
    def __extract_mlir_values__(self) -> list:
        if not self._dsl:
            return [_TRACE_COUNT]
        return [self._count, self._index, self._phase]

    def __new_from_mlir_values__(self, values: list) -> "PipelineState":
        return PipelineState(self._stages, values[0], values[1], values[2])

    # cutelab's own carrying protocol (kernel/frontend/carry_obj.py): a runtime loop that rebinds a trace-time
    # state's variable (CUTLASS's grouped mixed-input GEMM: `state0, state = state.clone(), state` advanced, in a
    # cutlass.range and a while loop), or a runtime branch that rebinds or moves it, carries its count and
    # position, as CuTe DSL's region carries a PipelineState's Int32 values. A loop that only moves it in place
    # leaves it to its own registers (_live), and so does a branch once it lives in registers.
    def __carried_by_values__(self, in_place: bool, loop: bool) -> bool:
        if self._dsl:
            return False  # CuTe DSL's values: __extract_mlir_values__
        if in_place and (loop or self._live()):
            return False
        return True

    def __carry_values__(self) -> list:
        from .kernel.frontend.trace import TraceValue
        from .kernel.ir.symbolic import is_sym
        from .numeric import Int32

        count, pos = (self._read(1), self._read(0)) if self._regs is not None else (self._count, self._pos)
        # Int32 values, as _go_live's registers (an index expression's own range would widen the register to Int64
        # where it may pass 2**31, and each iteration's + 1 again)
        return [TraceValue([v], (), Int32) if is_sym(v) else Int32(v) if isinstance(v, int) else v
                for v in (count, pos)] + [self._ring()]

    def __new_from_carry_values__(self, values: list) -> "PipelineState":
        from .kernel.ir.nodes import RegVar

        count, pos = (v.as_index() if hasattr(v, "as_index") else v for v in values[:2])
        if isinstance(pos, RegVar):
            pos.lo = max(pos.lo, 0)  # positions only grow from 0 (as _read says)
        return PipelineState(self._stages, count, phase0=self._phase0, pos=pos)

    def _ring(self) -> str:
        """What two states carried through one register pair must share (a static value of the carry)."""
        return f"a ring of {self._stages} stages starting at phase {self._phase0}"

    def _handle_values(self) -> list:
        """The values of a handle's state (a state that is not moved again): CuTe DSL's values of a state
        held as them; of a trace-time count, its count and position as runtime Int32s (registers' values once
        it lives in registers), so that a runtime region can carry the handle."""
        from .numeric import Int32

        if self._dsl:
            return self.__extract_mlir_values__()
        count, pos = (self._read(1), self._read(0)) if self._regs is not None else (self._count, self._pos)
        return [Int32(v) if isinstance(v, int) else v for v in (count, pos)]

    def _from_handle_values(self, values: list) -> "PipelineState":
        if self._dsl:
            return self.__new_from_mlir_values__(values)
        return PipelineState(self._stages, values[0], phase0=self._phase0, pos=values[1])

    def __repr__(self) -> str:
        return f"PipelineState(stages={self._stages}, count={self._count}, index={self.index}, phase={self.phase})"


_TRACE_COUNT = "a PipelineState counted at trace time (make_pipeline_state's)"


def wait_unless_done(token: Any, barrier: Any, phase: Any) -> None:
    """Wait on the mbarrier's phase unless ``token`` (a try_wait's or try_acquire's answer for it) says it has
    completed: CuTe DSL's consumer_wait / producer_acquire branch on the token, so a stage found full (or empty)
    by the peek costs no second wait. A static token decides at trace time; None always waits."""
    from .kernel import arch
    from .kernel.frontend.control import if_generate

    if token is None:
        arch.mbarrier_wait(barrier, phase)
    else:
        if_generate(token == 0, lambda: arch.mbarrier_wait(barrier, phase))


def make_pipeline_state(type: PipelineUserType, stages: int) -> PipelineState:
    """A state at stage 0: producers start at phase 1 (the buffers start empty), consumers at phase 0."""
    if type in (PipelineUserType.Producer, PipelineUserType.ProducerConsumer):
        return PipelineState(stages, 0, phase0=1)
    if type is PipelineUserType.Consumer:
        return PipelineState(stages, 0, phase0=0)
    raise ValueError(f"make_pipeline_state: unknown PipelineUserType {type!r}")


def _arrivals(group: CooperativeGroup, what: str) -> int:
    if not isinstance(group, CooperativeGroup):
        raise TraceError(f"PipelineTmaAsync.create: {what} must be a CooperativeGroup, got {group!r}")
    n = group.size
    if isinstance(n, float) and n.is_integer():  # CuTe DSL takes a whole float (threads_per_warp_group / 32)
        n = int(n)
    if group.agent is Agent.Warp:
        n = n * 32
    if not isinstance(n, int):
        raise TraceError(f"PipelineTmaAsync.create: the {what}'s size must be a static int, got {n!r}")
    return n


class PipelineTmaAsync:
    """TMA producer, async-thread consumers (Hopper mainloops); barriers at ``barrier_storage``:
    ``num_stages`` full barriers, then ``num_stages`` empty barriers (64-bit words in smem).

    Over a cluster (``cta_layout_vmnk`` of more than one CTA, the CTAs whose TMA loads multicast
    into each other's stages), a stage of one CTA is free only when the consumers of every CTA its
    tiles are multicast to have read it: as in CuTe DSL, lane l < cluster size of each consumer
    warp arrives on the empty barrier of CTA ``l`` (``mapa`` + a remote arrive, ``.release.cta`` as in CuTe DSL) when
    that CTA shares this CTA's row (M coordinate) or column (N coordinate) in the cluster (the
    multicast modes of ``mcast_mode_mn``): each empty barrier then counts one arrive per consumer
    warp per multicast partner, the consumer_group's size the program gives (or, with
    ``enable_multicast_signaling``, the count computed from the consumer threads)."""

    def __init__(self, full: Any, empty: Any, num_stages: int, tx_count: int, producer_count: int,
                 consumer_count: int, signal: Any = None, dst_rank: Any = None):

        self.full, self.empty, self.num_stages, self.tx_count = full, empty, num_stages, tx_count
        self.producer_count, self.consumer_count = producer_count, consumer_count
        self.is_signaling_thread, self.dst_rank = signal, dst_rank  # multi-CTA: who arrives, on which CTA
        # CuTe DSL's internals that libraries extending the pipeline use (flash_attn.cute's producer_acquire):
        # the full barriers as a TMA load's sync object, the empty ones as the consumers', both initialised by
        # create; the consumers' arrives go to CTA consumer_mask of the cluster (None: this CTA)
        self.sync_object_full = MbarrierArray(full, num_stages, (PipelineOp.TmaLoad, CooperativeGroup(
            Agent.Thread, producer_count)), tx_count, init=False)
        self.sync_object_empty = MbarrierArray(empty, num_stages, (PipelineOp.AsyncThread, CooperativeGroup(
            Agent.Thread, consumer_count)), init=False)
        self.producer_mask, self.consumer_mask = None, dst_rank

    @staticmethod
    def init_empty_barrier_arrive_signal(cta_layout_vmnk: Any, tidx: Any, mcast_mode_mn: Any = (1, 1)) -> tuple:
        """(destination CTA rank, whether this thread signals) of a consumer release: lane l of a warp
        signals CTA l % size when l < size and that CTA shares this CTA's coordinates in the
        multicast modes (CuTe DSL's schedule of empty-barrier arrives)."""
        from . import int_tuple as it
        from .kernel import arch
        from .kernel.ir.symbolic import BoolAnd, Cmp

        shape = cta_layout_vmnk.shape
        size = it.product(shape)
        if tuple(mcast_mode_mn) == (0, 0):
            raise TraceError("PipelineTmaAsync: mcast_mode_mn=(0, 0) multicasts in neither mode")
        lane = tidx % 32
        me = arch.block_idx_in_cluster()
        dst = lane % size
        dc, cc = cta_layout_vmnk.get_hier_coord(dst), cta_layout_vmnk.get_hier_coord(me)
        if not (isinstance(dc, tuple) and len(dc) == 4):
            raise TraceError(f"PipelineTmaAsync: cta_layout_vmnk must have 4 modes (V, M, N, L), got {cta_layout_vmnk}")

        def eq(i: int) -> Any:
            a, b = it.crd2idx(dc[i], shape[i]), it.crd2idx(cc[i], shape[i])
            return 1 if it.product(shape[i]) == 1 else Cmp.make("==", a - b, 0)

        def both(*cs: Any) -> Any:
            cs = tuple(c for c in cs if not (type(c) is int and c == 1))
            if not cs:
                return 1
            return cs[0] if len(cs) == 1 else BoolAnd(cs)

        common = both(eq(0), eq(3))
        m_mode, n_mode = both(eq(1)), both(eq(2))
        if mcast_mode_mn[0] and mcast_mode_mn[1]:
            either = 1 if any(type(x) is int for x in (m_mode, n_mode)) else Cmp.make(">=", m_mode + n_mode, 1)
            part = either
        elif mcast_mode_mn[0]:
            part = m_mode
        else:
            part = n_mode
        return dst, both(Cmp.make("<", lane, size), common, part)

    @staticmethod
    def create(*, num_stages: int, producer_group: CooperativeGroup, consumer_group: CooperativeGroup,
               tx_count: int, barrier_storage: Any = None, cta_layout_vmnk: Any = None, tidx: Any = None,
               mcast_mode_mn: Any = (1, 1), enable_multicast_signaling: bool = False, defer_sync: bool = False,
               name: Any = None, **kwargs: Any) -> "PipelineTmaAsync":
        """Initialise the barriers (warp 0, one thread) and, unless defer_sync, fence and sync the block
        (the cluster, for a cta_layout_vmnk of more than one CTA)."""
        from . import int_tuple as it
        from .kernel import arch
        from .layout import Layout

        if barrier_storage is None:
            raise TraceError("PipelineTmaAsync.create: pass barrier_storage= (a pointer to 2 * num_stages Int64 "
                             "words of shared memory: smem.allocate_tensor(cutlass.Int64, 2 * stages).iterator)")
        if not isinstance(num_stages, int) or num_stages < 1:
            raise TraceError(f"PipelineTmaAsync.create: num_stages must be a positive int, got {num_stages!r}")
        size = 1
        if cta_layout_vmnk is not None:
            if not isinstance(cta_layout_vmnk, Layout) or not all(
                    isinstance(x, int) for x in it.flatten_to_tuple(cta_layout_vmnk.shape)):
                raise TraceError(f"PipelineTmaAsync.create: the cluster shape (cta_layout_vmnk) needs to be a static "
                                 f"Layout, got {cta_layout_vmnk!r}")
            size = it.product(cta_layout_vmnk.shape)
        pc = _arrivals(producer_group, "producer_group")
        cc = _arrivals(consumer_group, "consumer_group")
        signal = dst = None
        if size > 1:
            from .kernel.frontend.trace import current

            t = current("PipelineTmaAsync.create")
            csize = t.cluster[0] * t.cluster[1] * t.cluster[2]
            if size != csize:
                raise TraceError(f"kernel {t.name}: PipelineTmaAsync.create: cta_layout_vmnk {cta_layout_vmnk} has "
                                 f"{size} CTAs but the kernel is launched with clusters of {csize} "
                                 f"{tuple(t.cluster)}{t.where()}")
            if enable_multicast_signaling:
                if cc % 32:
                    raise ValueError("Error: Consumer arrival count must be aligned with warp size")
                shp = it.flatten_to_tuple(cta_layout_vmnk.shape)
                mm = shp[2] if mcast_mode_mn[0] else 0
                mn = shp[1] if mcast_mode_mn[1] else 0
                cc = (mm + mn - (1 if mcast_mode_mn[0] and mcast_mode_mn[1] else 0)) * (cc // 32)
            if tidx is None:
                tidx = arch.thread_idx()[0]
            dst, signal = PipelineTmaAsync.init_empty_barrier_arrive_signal(cta_layout_vmnk, tidx, mcast_mode_mn)
        elif tidx is not None:  # one CTA: lane tidx % 32 == 0 signals, as in CuTe DSL; a static tidx (CUTLASS's
            # mixed-input FMHA gives tidx=0 to a pipeline of 256 consumer threads) makes every thread signal
            from .kernel.ir.symbolic import Cmp

            lane = tidx.as_index() % 32 if hasattr(tidx, "as_index") else tidx % 32
            signal = (1 if lane == 0 else 0) if isinstance(lane, int) else Cmp.make("<", lane, 1)
        full, empty = barrier_storage, barrier_storage + num_stages
        warp = arch.make_warp_uniform(arch.warp_idx())
        p = PipelineTmaAsync(full, empty, num_stages, int(tx_count), pc, cc, signal, dst)
        from .kernel.frontend.trace import current

        t = current("PipelineTmaAsync.create")
        op = t.begin_if(warp == 0)
        outer, t.cur = t.cur, op.then
        with arch.elect_one():
            for i in range(num_stages):
                arch.mbarrier_init(full + i, pc)
                arch.mbarrier_init(empty + i, cc)
        t.cur = outer
        if not defer_sync:
            arch.mbarrier_init_fence()
            if size > 1:
                arch.cluster_arrive_relaxed()
                arch.cluster_wait()
            else:
                arch.sync_threads()
        return p

    def producer_acquire(self, state: PipelineState, try_acquire_token: Any = None, *, loc: Any = None,
                         ip: Any = None) -> None:
        """Wait until the stage is empty (unless the token says so), then arrive on its full barrier with the
        stage's bytes."""
        from .kernel import arch

        wait_unless_done(try_acquire_token, self.empty + state.index, state.phase)
        with arch.elect_one():
            arch.mbarrier_arrive_and_expect_tx(self.full + state.index, self.tx_count)

    def producer_try_acquire(self, state: PipelineState, *, loc: Any = None, ip: Any = None) -> Any:
        """Whether the stage is empty now (a token for producer_acquire, which then skips its wait)."""
        from .kernel import arch

        return arch.mbarrier_try_wait(self.empty + state.index, state.phase)

    def producer_commit(self, state: PipelineState, *, loc: Any = None, ip: Any = None) -> None:
        """Nothing to do: the TMA copies complete the stage's transaction bytes."""

    def producer_get_barrier(self, state: PipelineState, *, loc: Any = None, ip: Any = None) -> Any:
        return self.full + state.index

    def consumer_get_barrier(self, state: PipelineState, *, loc: Any = None, ip: Any = None) -> Any:
        return self.empty + state.index

    def consumer_try_wait(self, state: PipelineState, *, loc: Any = None, ip: Any = None) -> Any:
        from .kernel import arch

        return arch.mbarrier_try_wait(self.full + state.index, state.phase)

    def consumer_wait(self, state: PipelineState, try_wait_token: Any = None, *, loc: Any = None,
                      ip: Any = None) -> None:
        """Wait until the stage is full, unless the token from consumer_try_wait says it is."""
        wait_unless_done(try_wait_token, self.full + state.index, state.phase)

    def consumer_release(self, state: PipelineState, *, loc: Any = None, ip: Any = None) -> None:
        """One thread of each consumer warp arrives on the stage's empty barrier; over a cluster, one
        lane per multicast partner arrives on that CTA's empty barrier (see the class)."""
        from .kernel import arch
        from .kernel.frontend.trace import current

        t = current("PipelineTmaAsync.consumer_release")
        if self.is_signaling_thread is None:
            op = t.begin_if(arch.lane_idx() == 0)
            outer, t.cur = t.cur, op.then
            arch.mbarrier_arrive(self.empty + state.index)
            t.cur = outer
            return
        from .kernel.instr.cluster import remote_mbarrier

        sig = self.is_signaling_thread
        if self.dst_rank is None:  # one CTA, signalling threads chosen by the tidx given to create
            if isinstance(sig, int):
                if sig:
                    arch.mbarrier_arrive(self.empty + state.index)
                return
            op = t.begin_if(sig)
            outer, t.cur = t.cur, op.then
            arch.mbarrier_arrive(self.empty + state.index)
            t.cur = outer
            return
        if isinstance(sig, int):
            remote_mbarrier("arrive", self.empty + state.index, self.dst_rank, None,
                            "PipelineTmaAsync.consumer_release")
            return
        op = t.begin_if(sig)
        outer, t.cur = t.cur, op.then
        remote_mbarrier("arrive", self.empty + state.index, self.dst_rank, None, "PipelineTmaAsync.consumer_release")
        t.cur = outer

    def producer_tail(self, state: PipelineState, *, loc: Any = None, ip: Any = None) -> None:
        """Wait until the consumers have released every stage (before the producer exits)."""
        s = state.clone()
        for _ in range(self.num_stages):
            from .kernel import arch

            arch.mbarrier_wait(self.empty + s.index, s.phase)
            s.advance()

    # ---- participants (CuTe DSL's make_participants): a producer and a consumer with their own states, the
    # producer's starting at phase 1 (the stages start empty); pipeline_async.PipelineProducer/Consumer
    def make_producer(self) -> Any:
        from .pipeline_participants import PipelineProducer

        return PipelineProducer(self, make_pipeline_state(PipelineUserType.Producer, self.num_stages))

    def make_consumer(self) -> Any:
        from .pipeline_participants import PipelineConsumer

        return PipelineConsumer(self, make_pipeline_state(PipelineUserType.Consumer, self.num_stages))

    def make_participants(self) -> tuple:
        return self.make_producer(), self.make_consumer()


def _clustered(cluster_shape_mn: Any) -> bool:
    """Whether cluster_shape_mn (a layout or shape, or None) has more than one CTA, as CuTe DSL asks."""
    from . import int_tuple as it

    if cluster_shape_mn is None:
        return False
    return it.product(getattr(cluster_shape_mn, "shape", cluster_shape_mn)) > 1


def pipeline_init_arrive(cluster_shape_mn: Any = None, is_relaxed: bool = False) -> None:
    """After barrier init with defer_sync=True: make the inits visible (the init fence); in a
    cluster (cluster_shape_mn of more than one CTA), then arrive at the cluster barrier (relaxed
    if is_relaxed), as CuTe DSL does."""
    from .kernel import arch

    arch.mbarrier_init_fence()
    if _clustered(cluster_shape_mn):
        (arch.cluster_arrive_relaxed if is_relaxed else arch.cluster_arrive)()


def pipeline_init_wait(cluster_shape_mn: Any = None) -> None:
    """Wait until every thread sees the initialised barriers: a block barrier, or in a cluster
    (cluster_shape_mn of more than one CTA) the cluster barrier's wait (every CTA's barriers are
    initialised)."""
    from .kernel import arch

    if _clustered(cluster_shape_mn):
        arch.cluster_wait()
    else:
        arch.sync_threads()

