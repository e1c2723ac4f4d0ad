"""Passes: the compiler's decisions about a traced kernel, each a named pass, run in order.

``run_passes(ir, options)`` runs ``PIPELINE`` over a ``KernelIR`` and returns a ``Plan``: what
each decision became (a vector split per access, the block schedule, the lane pairs, the
warp-retiled copies, the cache operators, the hoisted divisions, the shared index sums). The IR
itself is left as traced. The CUDA printer (``cuda/printer.py``) prints what the plan says and
decides nothing; the memory profiler (``cpu/profiler.py``) reads the same plan to learn which
instructions an access becomes.

The pipeline, in order (``PIPELINE``; each pass reads the plan of the passes before it):

- ``remap`` (``remap.py``): logical blocks run in the order of the memory they touch;
- ``coarsen`` (``coarsen.py``): each CUDA block runs F logical blocks (``Plan.schedule`` combines
  the two; off by default: F = 1);
- ``retile`` (``retile.py``): a pure copy moves its warp's addresses with 16-byte accesses;
- ``vectorize`` (``vectorize.py``): contiguous, aligned elements of a load or store move as one
  16/8/4/2-byte access;
- ``pair`` (``pair.py``): two adjacent lanes share 2 x 16-byte runs so every access moves
  whole 32-byte sectors (needs ``vectorize``'s 16-byte accesses);
- ``cache`` (``cache.py``): the cache operator of each global load and store (``__ldg``, ...);
- ``coherent`` (``coherent.py``): a read-only load that a block barrier follows takes the
  coherent path (``__ldca``), so ptxas keeps it before the barrier;
- ``index32`` (``index32.py``): offsets of accesses the launch proved in bounds are computed
  in 32 bits (modulo 2**32);
- ``hoist`` (``hoist.py``): a runtime division of thread/block indices and scalar arguments is
  computed once at the kernel's entry (not under a block schedule);
- ``share`` (``share.py``): an index sum of several terms is a local shared by the accesses of
  its C scope;
- ``uniform`` (``uniform.py``): a warp index (``tid.x // 32``, ``tid.x // 128``) is broadcast from
  lane 0 once at the kernel's entry, so ptxas keeps it, the branches on it and what they assign
  warp-uniform (CuTe DSL's ``make_warp_uniform``);
- ``ranges`` (``ranges.py``): an op's index expressions that read registers (TMA box coordinates)
  are simplified with the value ranges the registers hold there (``analysis/ranges.py``);
- ``loopidx`` (``loopidx.py``): where ptxas spills a kernel with a runtime loop, the loop's index
  expressions may read a per-trip copy of the thread index that NVVM cannot hoist, so they are
  computed in the loop (as CuTe DSL's PTX does) rather than held in registers across it.

Switches (``Options.from_env``): ``CUTELAB_PASSES_OFF=pair,retile`` turns passes off by name;
``CUTELAB_PASSES_ON=loopidx`` turns on a pass that is off unless asked for (``OFF_BY_DEFAULT``);
the older switches still work: ``CUTELAB_CUDA_PAIR=0``, ``CUTELAB_CUDA_RETILE=0``,
``CUTELAB_CUDA_REMAP=0`` turn those passes off, ``CUTELAB_CUDA_COARSEN=F`` sets the coarsening
factor, ``CUTELAB_CUDA_LOAD``/``CUTELAB_CUDA_STORE`` pick the cache operators. An explicit
option (``render(ir, pair=True)``) wins over the environment. A pass that is off leaves its part
of the plan as if the decision were "do nothing": scalar accesses, no schedule, no pairs, no
retiled copies, plain loads and stores, offsets in the type their ranges need, no hoisted
divisions, no shared sums. Straight-line
kernels only (``KernelIR.structured`` false) get ``remap``, ``coarsen``, ``pair`` and ``retile``.

May import: ``kernel.ir``, ``kernel.analysis``, ``kernel.instr`` and cutelab's core. Never
``kernel.cuda`` or ``kernel.cpu``: they import this package.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, FrozenSet, List, Optional, Set, Tuple

from ..ir.nodes import KernelIR
from . import cache, coarsen, coherent, hoist, index32, loopidx, pair, ranges, remap, retile, share, uniform, vectorize
from .vectorize import vector_plan  # noqa: F401  (re-exported: the profiler's model of an op's access)

__all__ = ["PIPELINE", "PASS_NAMES", "Options", "Plan", "run_passes", "vector_plan", "block_schedule"]

# (name, pass): each pass is ``fn(ir, plan, options) -> None`` and fills its part of the plan
PIPELINE: List[Tuple[str, Callable[[KernelIR, "Plan", "Options"], None]]] = [
    ("remap", remap.run),
    ("coarsen", coarsen.run),
    ("retile", retile.run),
    ("vectorize", vectorize.run),
    ("pair", pair.run),
    ("cache", cache.run),
    ("coherent", coherent.run),
    ("index32", index32.run),
    ("hoist", hoist.run),
    ("share", share.run),
    ("uniform", uniform.run),
    ("ranges", ranges.run),
    ("loopidx", loopidx.run),
]
PASS_NAMES = tuple(name for name, _ in PIPELINE)

LOADS = ("ldg", "ldcs", "ldcg", "ldca", "plain", "nc128", "nc256")
STORES = ("plain", "stcs", "stcg")


def _env_on(name: str) -> bool:
    return os.environ.get(name, "1") not in ("", "0")


#: passes that run only where ``CUTELAB_PASSES_ON`` names them: ``loopidx`` was slower than without it on the H200
#: for FlashAttention-2's non-causal kernel (5813 against 5684 us, 2026-11-28) and gained 0.5% on its causal one
OFF_BY_DEFAULT = frozenset({"loopidx"})


@dataclass(frozen=True)
class Options:
    """Which passes run and how they are configured (see the module docstring for the switches).

    ``off``: names of passes that do not run; ``coarsen``: the coarsening factor; ``load``/``store``:
    the cache operators of global loads of read-only tensors and of global stores."""

    off: FrozenSet[str] = frozenset()
    coarsen: int = 1
    load: str = "ldg"
    store: str = "plain"

    def on(self, name: str) -> bool:
        return name not in self.off

    @classmethod
    def from_env(cls, load: Optional[str] = None, store: Optional[str] = None, coarsen: Optional[int] = None,
                 remap: Optional[bool] = None, pair: Optional[bool] = None,
                 retile: Optional[bool] = None) -> "Options":
        """The options of the environment, with the explicit ones (not None) winning."""
        off = {x.strip() for x in os.environ.get("CUTELAB_PASSES_OFF", "").split(",") if x.strip()}
        on = {x.strip() for x in os.environ.get("CUTELAB_PASSES_ON", "").split(",") if x.strip()}
        for var, names in (("CUTELAB_PASSES_OFF", off), ("CUTELAB_PASSES_ON", on)):
            unknown = names - set(PASS_NAMES)
            if unknown:
                raise ValueError(f"{var} names no pass {sorted(unknown)}; the passes are {list(PASS_NAMES)}")
        off |= OFF_BY_DEFAULT - on
        for name, explicit, env in (("pair", pair, "CUTELAB_CUDA_PAIR"), ("retile", retile, "CUTELAB_CUDA_RETILE"),
                                    ("remap", remap, "CUTELAB_CUDA_REMAP")):
            if explicit is not None:
                (off.discard if explicit else off.add)(name)
            elif not _env_on(env):
                off.add(name)
        f = coarsen if coarsen is not None else int(os.environ.get("CUTELAB_CUDA_COARSEN", "1"))
        ld = load or os.environ.get("CUTELAB_CUDA_LOAD", "ldg")
        st = store or os.environ.get("CUTELAB_CUDA_STORE", "plain")
        if ld not in LOADS:
            raise KeyError(ld)
        if st not in STORES:
            raise KeyError(st)
        return cls(frozenset(off), f, ld, st)


@dataclass
class Plan:
    """What the passes decided for one kernel; accesses are keyed by ``id(op)`` of their Load/Store.

    - ``block_order``: the block index's mixed-radix modes (d, s, stride) in the order logical
      blocks run, or None (``remap``); ``coarsen``: logical blocks per CUDA block (``coarsen``);
      ``schedule``: the two together (``Plan.schedule``), None when blocks run as launched;
    - ``retiled``: id(op) -> warp plan {"A": [first element of the j-th 16-byte access at lane 0],
      "B": elements between lanes, "h": elements per access, "nvec", "span"} (``retile``);
    - ``vectors``: id(op) -> [(first element, elements)] accesses over its offsets (``vectorize``);
    - ``pairs``: id(op) -> starts i of vector pairs (i, h), (i + h, h) that lane pairs share (``pair``);
    - ``cache``: id(op) -> the cache operator of a global access, a name of LOADS or STORES (``cache``);
    - ``index32``: accesses the launch proved in bounds get 32-bit offsets (``index32``;
      ``Plan.narrow`` says which);
    - ``hoist``: runtime divisions of thread/block indices and scalar arguments are computed once
      at the kernel's entry (``hoist``; ``hoist.hoistable(e)`` says which);
    - ``share``: index sums of several terms are locals shared within a C scope (``share``;
      ``share.shareable(e)`` says which);
    - ``uniform``: warp indices of the thread index are broadcast from lane 0 at the kernel's entry
      (``uniform``; ``uniform.warp_uniform(e)`` says which);
    - ``ranged``: id(op) -> its index expressions simplified with its registers' proven ranges (``ranges``);
    - ``loopidx_ok``: the kernel has a runtime loop whose bodies may read the thread index from a
      per-trip opaque copy (``loopidx``); ``loopidx``: they do (set by the launch, cuda/build.py).
    """

    options: Options
    block_order: Optional[List[Tuple[int, int, int]]] = None
    coarsen: int = 1
    retiled: Dict[int, dict] = field(default_factory=dict)
    vectors: Dict[int, List[Tuple[int, int]]] = field(default_factory=dict)
    pairs: Dict[int, Set[int]] = field(default_factory=dict)
    cache: Dict[int, str] = field(default_factory=dict)
    index32: bool = False
    hoist: bool = False
    share: bool = False
    uniform: bool = False
    ranged: Dict[int, Tuple[Any, ...]] = field(default_factory=dict)
    loopidx_ok: bool = False
    loopidx: bool = False
    ran: List[str] = field(default_factory=list)  # the passes that ran, in order
    grid: Tuple[int, int, int] = (1, 1, 1)

    @property
    def schedule(self) -> Optional[dict]:
        """How CUDA blocks run the logical blocks, or None: {"grid": the CUDA grid, "coarsen": F,
        "order": the modes in run order (None: not remapped), "remapped": bool,
        "logical_to_bid": logical block -> bid.x (numpy-friendly)}."""
        if self.coarsen <= 1 and self.block_order is None:
            return None
        return coarsen.schedule_of(self.grid[0], self.coarsen, self.block_order)

    def vector(self, op: Any) -> List[Tuple[int, int]]:
        """The accesses (first element, elements) a Load/Store becomes (scalar ones if none was planned)."""
        got = self.vectors.get(id(op))
        if got is None:  # an op the pass did not see (made after it ran), or the pass was off
            if "vectorize" in self.ran:
                return vector_plan(op.param, op.base, op.offsets)
            return [(i, 1) for i in range(len(op.offsets))]
        return got

    def narrow(self, ir: KernelIR, op: Any, param: Any, offsets: Any) -> bool:
        """Whether the access of op to param at offsets may have its offset computed modulo 2**32."""
        return self.index32 and index32.narrow(ir, op, param, offsets)

    def hoisted(self, e: Any) -> bool:
        """Whether the runtime division e is computed once at the kernel's entry."""
        return self.hoist and hoist.hoistable(e)

    def warp_uniform(self, e: Any) -> bool:
        """Whether e (a division of the thread index) is a warp-uniform local computed at the kernel's entry."""
        return self.uniform and uniform.warp_uniform(e)

    def shared(self, e: Any) -> bool:
        """Whether the index sum e (pure: reads no register) is held in a local of its C scope."""
        return self.share and share.shareable(e)


def run_passes(ir: KernelIR, options: Optional[Options] = None) -> Plan:
    """Run PIPELINE over ir (the passes that options leave on) and return the plan."""
    options = options if options is not None else Options.from_env()
    plan = Plan(options, grid=tuple(ir.grid))
    for name, fn in PIPELINE:
        if options.on(name):
            fn(ir, plan, options)
            plan.ran.append(name)
    return plan


def block_schedule(ir: KernelIR, coarsen: int = 1, remap: bool = True) -> Optional[dict]:
    """The block schedule of ``remap`` and ``coarsen`` alone (see ``Plan.schedule``)."""
    off = set() if remap else {"remap"}
    plan = Plan(Options(frozenset(off), coarsen), grid=tuple(ir.grid))
    for name, fn in PIPELINE[:2]:
        if plan.options.on(name):
            fn(ir, plan, plan.options)
    return plan.schedule
