"""The core of the memory-access analysis: per-lane byte addresses of warp instructions.

An ``AccessTrace`` is what a memory instruction of a warp does, for each instruction and each
of its 32 lanes: the byte address the lane reads or writes (-1: the lane is inactive) and how
many bytes each lane moves (1, 2, 4, 8 or 16). Everything else is a producer of traces (the
TV-layout front end in ``cutelab.analysis.tv``, and later the CPU kernel profiler) or a consumer
(``analyze`` here, the pictures in ``cutelab.analysis.draw``).

The model is the one Nsight Compute counts on Volta and newer GPUs (NVIDIA's "Kernel Profiling
Guide", memory tables; Greg Smith's descriptions of L1TEX on the NVIDIA forums):

Global memory (``l1tex__t_requests_pipe_lsu_mem_global_op_{ld,st}.sum`` and
``l1tex__t_sectors_pipe_lsu_mem_global_op_{ld,st}.sum``): each warp instruction with at least
one active lane is one *request*; it needs every 32-byte *sector* that an active lane's bytes
fall in, each counted once however many lanes share it. Coalescing efficiency is the number of
distinct bytes the lanes ask for over the bytes of the sectors fetched (32 per sector).

Shared memory (``l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{ld,st,ldsm}.sum`` and
``l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{ld,st}.sum``): 32 banks of 4 bytes; the
word at byte address a lives in bank (a // 4) % 32. A request is processed in *phases* of
lanes such that one phase asks for at most 128 bytes: accesses of up to 32 bits in one phase of
all 32 lanes, 64-bit accesses in two phases (half-warps: lanes 0-15, 16-31), 128-bit accesses
in four (quarter-warps: lanes 0-7, 8-15, ...). ``ldmatrix`` gives one 16-byte row address per
lane of lanes 0..8*num-1 (lane 8j+i: row i of matrix j) and is processed one matrix (8 lanes)
per phase, like a 128-bit access. In each phase, lanes reading the same 32-bit word share it
(broadcast), and a bank that must deliver k different words takes k *wavefronts*; the phase
takes as many wavefronts as its busiest bank. A request's wavefronts are the sum over its
phases with an active lane; its bank conflicts are the wavefronts beyond one per such phase.

What the model leaves out, on purpose: the L1 hit/miss state (sectors are counted at the tag
stage, hit or miss), the uniform-address packing some GPUs do for LDS.128 when lane pairs share
addresses (it can lower wavefronts below the model for such broadcast patterns), and
misaligned accesses, which the hardware faults on and which ``AccessTrace`` rejects.

>>> import numpy as np
>>> lanes = np.arange(32)
>>> r = analyze(AccessTrace(lanes[None, :] * 4 * 32, 4, "shared"))  # column of a 32x32 f32 tile
>>> int(r.wavefronts[0]), int(r.conflicts[0])
(32, 31)
>>> r = analyze(AccessTrace(lanes[None, :] * 4, 4, "global"))        # 32 consecutive floats
>>> int(r.requests[0]), int(r.sectors[0]), float(r.efficiency[0])
(1, 4, 1.0)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from ..errors import LayoutError

__all__ = [
    "AccessTrace", "AccessReport", "PhaseDetail", "analyze", "WARP_SIZE", "NUM_BANKS", "BANK_BYTES",
    "SECTOR_BYTES", "LINE_BYTES", "NCU_METRICS",
]

WARP_SIZE = 32
NUM_BANKS = 32
BANK_BYTES = 4
SECTOR_BYTES = 32
LINE_BYTES = 128

_SPACES = ("global", "shared")
_OPS = ("ld", "st", "ldsm")
_LANE_BYTES = (1, 2, 4, 8, 16)

#: the Nsight Compute counters each prediction corresponds to, per (space, op)
NCU_METRICS = {
    ("global", "ld"): {"requests": "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
                       "sectors": "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"},
    ("global", "st"): {"requests": "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
                       "sectors": "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"},
    ("shared", "ld"): {"wavefronts": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
                       "conflicts": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"},
    ("shared", "st"): {"wavefronts": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
                       "conflicts": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"},
    ("shared", "ldsm"): {"wavefronts": "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum",
                         "conflicts": "sm__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_ldsm.sum"},
}


def _phase_lanes(bytes_per_lane: int) -> int:
    """Lanes processed together in one shared-memory phase (128 bytes at most)."""
    return WARP_SIZE if bytes_per_lane <= BANK_BYTES else WARP_SIZE * BANK_BYTES // bytes_per_lane


@dataclass(frozen=True, eq=False)
class AccessTrace:
    """Byte addresses of warp memory instructions: ``addresses[i, lane]``, -1 for an inactive lane.

    addresses:      (instructions, lanes <= 32) integer array of byte addresses.
    bytes_per_lane: bytes each active lane moves (1, 2, 4, 8 or 16); every address is a multiple of it.
    space:          "global" or "shared".
    op:             "ld", "st" or "ldsm" (ldmatrix: a shared load of 16-byte rows, 8 lanes per matrix).
    warps:          the warp of each instruction (for the explanations); default all 0.
    index:          the number of each instruction within its warp; default 0, 1, ... per warp.

    >>> t = AccessTrace([[0, 4, 8, -1]], 4, "shared")
    >>> t.addresses.shape, int(t.active.sum())
    ((1, 32), 3)
    """

    addresses: Any
    bytes_per_lane: int
    space: str
    op: str = "ld"
    warps: Any = None
    index: Any = None
    label: str = ""

    def __post_init__(self) -> None:
        what = f"AccessTrace(space={self.space!r}, op={self.op!r}, bytes_per_lane={self.bytes_per_lane!r})"
        if self.space not in _SPACES:
            raise LayoutError(f"{what}: space must be one of {', '.join(_SPACES)}")
        if self.op not in _OPS:
            raise LayoutError(f"{what}: op must be one of {', '.join(_OPS)}")
        if self.op == "ldsm" and self.space != "shared":
            raise LayoutError(f"{what}: ldmatrix reads shared memory only")
        if isinstance(self.bytes_per_lane, bool) or self.bytes_per_lane not in _LANE_BYTES:
            raise LayoutError(f"{what}: bytes per lane must be one of {_LANE_BYTES}")
        if self.op == "ldsm" and self.bytes_per_lane != 16:
            raise LayoutError(f"{what}: ldmatrix rows are 16 bytes per lane")
        a = np.asarray(self.addresses)
        if a.dtype.kind not in "iu":
            if a.size == 0 and a.dtype.kind == "f":
                a = a.astype(np.int64)
            else:
                raise LayoutError(f"{what}: addresses must be integers, got dtype {a.dtype}")
        if a.ndim == 1:
            a = a[None, :]
        if a.ndim != 2 or a.shape[1] > WARP_SIZE or a.shape[1] == 0:
            raise LayoutError(f"{what}: addresses must be (instructions, lanes <= 32), got shape {a.shape}")
        a = a.astype(np.int64)
        if a.shape[1] < WARP_SIZE:
            a = np.concatenate([a, np.full((a.shape[0], WARP_SIZE - a.shape[1]), -1, np.int64)], axis=1)
        if (a < -1).any():
            i, lane = (int(x[0]) for x in np.nonzero(a < -1))
            raise LayoutError(f"{what}: instruction {i}, lane {lane}: negative address {int(a[i, lane])} "
                              "(-1 marks an inactive lane)")
        bad = (a >= 0) & (a % self.bytes_per_lane != 0)
        if bad.any():
            i, lane = (int(x[0]) for x in np.nonzero(bad))
            raise LayoutError(f"{what}: instruction {i}, lane {lane}: address {int(a[i, lane])} is not aligned "
                              f"to the {self.bytes_per_lane}-byte access (the GPU faults on a misaligned access)")
        if self.op == "ldsm" and not self._ldsm_ok(a):
            raise LayoutError(f"{what}: ldmatrix takes row addresses from exactly lanes 0-7, 0-15 or 0-31 "
                              "(x1, x2, x4); mark the other lanes -1")
        n = a.shape[0]
        warps = np.zeros(n, np.int64) if self.warps is None else np.asarray(self.warps, np.int64).reshape(-1)
        if warps.shape != (n,):
            raise LayoutError(f"{what}: warps must give one warp per instruction ({n}), got {warps.shape}")
        if self.index is None:
            index = np.zeros(n, np.int64)
            for w in np.unique(warps):
                sel = warps == w
                index[sel] = np.arange(int(sel.sum()))
        else:
            index = np.asarray(self.index, np.int64).reshape(-1)
            if index.shape != (n,):
                raise LayoutError(f"{what}: index must give one number per instruction ({n}), got {index.shape}")
        a.setflags(write=False)
        object.__setattr__(self, "addresses", a)
        object.__setattr__(self, "warps", warps)
        object.__setattr__(self, "index", index)

    @classmethod
    def from_threads(cls, addresses: Any, bytes_per_lane: int, space: str, op: str = "ld",
                     label: str = "") -> "AccessTrace":
        """A trace from a block-level record: ``addresses[k, thread]`` is the byte address thread
        ``thread`` uses in its k-th access (-1: none), as a kernel interpreter records it. Threads
        32w..32w+31 form warp w; the result holds warp 0's instructions, then warp 1's, ...

        >>> t = AccessTrace.from_threads(np.arange(64)[None, :] * 4, 4, "global")
        >>> t.num_instructions, t.describe(1), int(t.addresses[1, 0])
        (2, 'warp 1, instruction 0', 128)
        """
        a = np.asarray(addresses)
        if a.ndim != 2:
            raise LayoutError(f"AccessTrace.from_threads: addresses must be (accesses, threads), got shape {a.shape}")
        k, n = a.shape
        nw = -(-n // WARP_SIZE)
        pad = np.full((k, nw * WARP_SIZE), -1, np.int64)
        pad[:, :n] = a
        per_warp = pad.reshape(k, nw, WARP_SIZE).transpose(1, 0, 2)  # (warp, access, lane)
        return cls(per_warp.reshape(-1, WARP_SIZE), bytes_per_lane, space, op, np.repeat(np.arange(nw), k),
                   np.tile(np.arange(k), nw), label)

    @staticmethod
    def _ldsm_ok(a: np.ndarray) -> bool:
        act = a >= 0
        m = act.sum(axis=1)
        prefix = act == (np.arange(WARP_SIZE)[None, :] < m[:, None])
        return bool(np.isin(m, (0, 8, 16, 32)).all() and prefix.all())

    @property
    def active(self) -> np.ndarray:
        """(instructions, 32) bool: which lanes take part."""
        return self.addresses >= 0

    @property
    def num_instructions(self) -> int:
        return int(self.addresses.shape[0])

    @property
    def phase_lanes(self) -> int:
        """Lanes per shared-memory phase: 32 (<= 32-bit), 16 (64-bit), 8 (128-bit and ldmatrix)."""
        return 8 if self.op == "ldsm" else _phase_lanes(self.bytes_per_lane)

    def describe(self, i: int) -> str:
        """'warp 0, instruction 3' for instruction row i."""
        return f"warp {int(self.warps[i])}, instruction {int(self.index[i])}"

    def kind(self) -> str:
        """'128-bit ld.shared', 'ldmatrix.x4', ..."""
        if self.op == "ldsm":
            return "ldmatrix"
        return f"{8 * self.bytes_per_lane}-bit {self.op}.{self.space}"


@dataclass
class PhaseDetail:
    """One phase of one shared-memory request: its lanes, wavefronts and busiest bank."""

    phase: int
    lanes: tuple[int, int]  # first, last lane of the phase
    wavefronts: int
    bank: int  # the busiest bank (the lowest one when several tie)
    words: list[int]  # the distinct byte addresses (of 4-byte words) that bank serves
    bank_lanes: list[int]  # the lanes that touch that bank


@dataclass
class AccessReport:
    """The counts of ``analyze``: one entry per instruction, and totals as Nsight Compute sums them."""

    trace: AccessTrace
    requests: np.ndarray
    sectors: np.ndarray
    lines: np.ndarray
    bytes_used: np.ndarray
    wavefronts: np.ndarray
    ideal_wavefronts: np.ndarray
    _phase_cache: dict = field(default_factory=dict, repr=False)

    @property
    def conflicts(self) -> np.ndarray:
        """Bank conflicts per instruction: wavefronts beyond one per active phase (shared only)."""
        return self.wavefronts - self.ideal_wavefronts

    @property
    def bytes_fetched(self) -> np.ndarray:
        return self.sectors * SECTOR_BYTES

    @property
    def efficiency(self) -> np.ndarray:
        """bytes used / bytes fetched per instruction (1.0 where nothing is fetched)."""
        f = self.bytes_fetched
        return np.where(f > 0, self.bytes_used / np.maximum(f, 1), 1.0)

    def totals(self) -> dict:
        """Sums over all instructions: requests, sectors, wavefronts, conflicts, bytes, efficiency."""
        used, fetched = int(self.bytes_used.sum()), int(self.bytes_fetched.sum())
        return {
            "instructions": self.trace.num_instructions,
            "requests": int(self.requests.sum()),
            "sectors": int(self.sectors.sum()),
            "wavefronts": int(self.wavefronts.sum()),
            "ideal_wavefronts": int(self.ideal_wavefronts.sum()),
            "conflicts": int(self.conflicts.sum()),
            "bytes_used": used,
            "bytes_fetched": fetched,
            "efficiency": used / fetched if fetched else 1.0,
        }

    def ncu(self) -> dict:
        """The predicted Nsight Compute counters for this trace: {metric name: value}."""
        t = self.totals()
        return {name: t[key] for key, name in NCU_METRICS[(self.trace.space, self.trace.op)].items()}

    # ---------------------------------------------------------------- details and words

    def phases(self, i: int) -> list[PhaseDetail]:
        """The shared-memory phases of instruction i that have an active lane."""
        if i in self._phase_cache:
            return self._phase_cache[i]
        tr = self.trace
        if tr.space != "shared":
            raise LayoutError(f"AccessReport.phases({i}): phases are a shared-memory notion; this trace is global")
        if not 0 <= i < tr.num_instructions:
            raise LayoutError(f"AccessReport.phases({i}): instruction out of range [0, {tr.num_instructions})")
        pl = tr.phase_lanes
        out = []
        for p in range(WARP_SIZE // pl):
            lanes = np.arange(p * pl, (p + 1) * pl)
            addr = tr.addresses[i, lanes]
            act = addr >= 0
            if not act.any():
                continue
            per_bank: dict[int, set] = {}
            lanes_of_bank: dict[int, set] = {}
            for lane, a in zip(lanes[act], addr[act]):
                for w in _lane_words(int(a), tr.bytes_per_lane):
                    b = w % NUM_BANKS
                    per_bank.setdefault(b, set()).add(w)
                    lanes_of_bank.setdefault(b, set()).add(int(lane))
            wf = max(len(s) for s in per_bank.values())
            bank = min(b for b, s in per_bank.items() if len(s) == wf)
            out.append(PhaseDetail(p, (int(lanes[0]), int(lanes[-1])), wf, bank,
                                   sorted(w * BANK_BYTES for w in per_bank[bank]), sorted(lanes_of_bank[bank])))
        self._phase_cache[i] = out
        return out

    def explain(self, i: int) -> str:
        """One instruction in words.

        >>> import numpy as np
        >>> r = analyze(AccessTrace(np.arange(32)[None, :] * 128, 4, "shared"))
        >>> print(r.explain(0))
        warp 0, instruction 0 (32-bit ld.shared, 32 lanes): 32 lanes hit bank 0 at 32 different addresses: 32 wavefronts, 31 of them conflicts
        """
        tr = self.trace
        act = tr.active[i]
        n = int(act.sum())
        head = f"{tr.describe(i)} ({tr.kind()}{_ldsm_suffix(tr, i)}, {n} lane{'s' if n != 1 else ''})"
        if n == 0:
            return f"{head}: no active lane, no request"
        if tr.space == "global":
            s, used = int(self.sectors[i]), int(self.bytes_used[i])
            return (f"{head}: {used} bytes used in {s} sector{'s' if s != 1 else ''} ({s * SECTOR_BYTES} bytes "
                    f"fetched) of {int(self.lines[i])} cache line{'s' if self.lines[i] != 1 else ''}: "
                    f"{_pct(self.efficiency[i])} efficiency, 1 request")
        ph = self.phases(i)
        wf, ideal = int(self.wavefronts[i]), int(self.ideal_wavefronts[i])
        worst = max(ph, key=lambda d: d.wavefronts)
        if worst.wavefronts == 1:
            what = "all lanes hit different banks or share words" if n > 1 else "one lane"
            return f"{head}: {what}: {wf} wavefront{'s' if wf != 1 else ''}, no conflicts"
        k = worst.wavefronts
        hit = (f"{len(worst.bank_lanes)} lanes hit bank {worst.bank} at {k} different addresses: "
               f"{k} wavefronts, {k - 1} of them conflicts")
        if len(ph) == 1 and WARP_SIZE // tr.phase_lanes == 1:
            return f"{head}: {hit}"
        unit = "matrix" if tr.op == "ldsm" else "phase"
        return (f"{head}: in {unit} {worst.phase} (lanes {worst.lanes[0]}-{worst.lanes[1]}) {hit}; "
                f"the request takes {wf} wavefronts for {ideal} phase{'s' if ideal != 1 else ''}: "
                f"{wf - ideal} conflict{'s' if wf - ideal != 1 else ''}")

    def summary(self) -> str:
        """All instructions in one line of totals."""
        t, tr = self.totals(), self.trace
        if tr.space == "global":
            return (f"{t['instructions']} instruction(s) of {tr.kind()}: {t['requests']} requests, {t['sectors']} "
                    f"sectors ({t['bytes_fetched']} bytes fetched for {t['bytes_used']} used): "
                    f"{_pct(t['efficiency'])} coalescing efficiency")
        return (f"{t['instructions']} instruction(s) of {tr.kind()}: {t['wavefronts']} wavefronts "
                f"(ideal {t['ideal_wavefronts']}), {t['conflicts']} bank conflicts")

    def explanation(self, limit: int | None = 16) -> list[str]:
        """The summary, then one line per instruction (the first ``limit``; None for all)."""
        n = self.trace.num_instructions
        k = n if limit is None else min(n, limit)
        lines = [self.summary()] + [self.explain(i) for i in range(k)]
        if k < n:
            lines.append(f"... {n - k} more instruction(s)")
        return lines


def _ldsm_suffix(tr: AccessTrace, i: int) -> str:
    if tr.op != "ldsm":
        return ""
    m = int(tr.active[i].sum()) // 8
    return f".x{m}"


def _pct(x: float) -> str:
    return f"{100 * float(x):.1f}%".replace(".0%", "%")


def _lane_words(a: int, nbytes: int) -> range:
    return range(a // BANK_BYTES, (a + nbytes - 1) // BANK_BYTES + 1)


def _unique_pairs(groups: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """The distinct (group, key) rows, sorted; groups >= 0.

    One int64 per pair (group * span + key - min) where that cannot overflow: a plain sort, 10x
    faster than np.unique(axis=0)'s structured rows (the swizzle search analyses ~150 traces).
    """
    if keys.size == 0:
        return np.zeros((0, 2), np.int64)
    lo, hi = int(keys.min()), int(keys.max())
    span = hi - lo + 1
    if span * (int(groups.max()) + 1) < (1 << 62):
        u = np.unique(groups.astype(np.int64) * span + (keys.astype(np.int64) - lo))
        return np.stack([u // span, u % span + lo], axis=1)
    return np.unique(np.stack([groups, keys], axis=1), axis=0)


def _unique_count(keys: np.ndarray, groups: np.ndarray, n: int) -> np.ndarray:
    """For each group g < n: the number of distinct keys with that group (keys, groups: same shape)."""
    if keys.size == 0:
        return np.zeros(n, np.int64)
    pairs = _unique_pairs(groups, keys)
    return np.bincount(pairs[:, 0].astype(np.intp, copy=False), minlength=n).astype(np.int64)  # intp: int32 on wasm32


def analyze(trace: AccessTrace) -> AccessReport:
    """Requests, sectors and efficiency (global) or wavefronts and bank conflicts (shared) of a trace.

    Postconditions: requests[i] == 1 exactly when instruction i has an active lane;
    sectors * 32 >= bytes_used; wavefronts >= ideal_wavefronts (shared); all counts are 0 for
    an instruction without active lanes.

    >>> import numpy as np
    >>> r = analyze(AccessTrace(np.arange(32)[None, :] * 16, 16, "shared"))  # 128-bit, contiguous
    >>> int(r.wavefronts[0]), int(r.conflicts[0])
    (4, 0)
    """
    if not isinstance(trace, AccessTrace):
        raise LayoutError(f"analyze: expected an AccessTrace, got {type(trace).__name__}")
    a, nb = trace.addresses, trace.bytes_per_lane
    n = trace.num_instructions
    act = a >= 0
    requests = act.any(axis=1).astype(np.int64)
    inst = np.broadcast_to(np.arange(n)[:, None], a.shape)
    ai, aa = inst[act], a[act]
    # every byte of every active lane: distinct bytes, sectors and lines per instruction
    byte_addr = (aa[:, None] + np.arange(nb)[None, :]).reshape(-1)
    byte_inst = np.repeat(ai, nb)
    bytes_used = _unique_count(byte_addr, byte_inst, n)
    sectors = _unique_count(byte_addr // SECTOR_BYTES, byte_inst, n)
    lines = _unique_count(byte_addr // LINE_BYTES, byte_inst, n)
    wavefronts = np.zeros(n, np.int64)
    ideal = np.zeros(n, np.int64)
    if trace.space == "shared" and ai.size:
        pl = trace.phase_lanes
        lanes = np.broadcast_to(np.arange(WARP_SIZE)[None, :], a.shape)[act]
        nw = max(1, nb // BANK_BYTES)
        words = (aa[:, None] // BANK_BYTES + np.arange(nw)[None, :]).reshape(-1)
        nph = WARP_SIZE // pl
        grp = np.repeat(ai * nph + lanes // pl, nw)  # (instruction, phase)
        # distinct words per (instruction, phase), then the busiest bank of each phase
        uw = _unique_pairs(grp, words)
        gb = uw[:, 0] * NUM_BANKS + uw[:, 1] % NUM_BANKS
        per_bank = np.bincount(gb.astype(np.intp, copy=False), minlength=n * nph * NUM_BANKS).reshape(n * nph, NUM_BANKS)
        per_phase = per_bank.max(axis=1).reshape(n, nph)
        wavefronts = per_phase.sum(axis=1)
        ideal = (per_phase > 0).sum(axis=1).astype(np.int64)
    return AccessReport(trace, requests, sectors, lines, bytes_used, wavefronts, ideal)


def concat(traces: Sequence[AccessTrace]) -> AccessTrace:
    """Several traces of the same kind of access as one (instructions in order)."""
    if not traces:
        raise LayoutError("concat: no traces")
    t0 = traces[0]
    for t in traces[1:]:
        if (t.space, t.op, t.bytes_per_lane) != (t0.space, t0.op, t0.bytes_per_lane):
            raise LayoutError(f"concat: traces differ: {t0.kind()} vs {t.kind()}")
    return AccessTrace(np.concatenate([t.addresses for t in traces]), t0.bytes_per_lane, t0.space, t0.op,
                       np.concatenate([t.warps for t in traces]), np.concatenate([t.index for t in traces]),
                       t0.label)
