"""A memory profiler without a GPU: every load and store of a kernel, run by the CPU interpreter.

``cutelab.profile(fn, *args, **kwargs)`` calls ``fn`` (a ``@cute.jit`` function, a compiled
function, anything that launches kernels) with every launch run by the CPU interpreter
(``kernel/cpu/interpreter.py``) and recorded: for each memory instruction of each warp, the byte
address of each lane. The records are counted with the model of ``cutelab.analysis.access``
(Nsight Compute's L1TEX counters: requests and 32-byte sectors for global memory, wavefronts and
bank conflicts for shared memory) and reported per source line of the kernel: memory space,
bytes moved, vector width, global sectors per request, shared wavefronts per request, requests;
totals per kernel; the worst lines first, in words. ``cutelab profile program.py [args...]``
does the same for a whole program (``cutelab.cli``).

What counts as an instruction is what the compiler's passes (``kernel/passes``, the plan the CUDA
printer prints) make of the op: a load or store of several elements becomes the vector accesses
of the ``vectorize`` pass (16, 8, 4, 2 bytes where the elements are contiguous and provably
aligned), and the schedule rewrites of straight-line copy kernels are followed as planned (a
warp-retiled copy, ``retile``: each lane moves 16 bytes of the warp's run per instruction; lane
pairs, ``pair``: two lanes share two 16-byte loads). Ops that carry their own back ends (``trace.Op``: cp.async, ldmatrix, ...) are
recorded through ``accesses()`` (and their optional ``profile(access)``, see ``trace.Op``).

Sampling: recording every warp of a big launch costs time and memory, so by default the
profiler records ``DEFAULT_BLOCKS`` (32) thread blocks of each launch, evenly spaced over the
grid (the first and the last included; all of them when the grid is that small), and scales the
counts by (blocks in the grid) / (blocks recorded). The kernel still runs in full (its results
are exact). ``blocks=None`` (``--all-blocks``) records every block. Only the first launch of
each traced kernel is recorded (``launches=``); the others run and are counted.

Addresses: each tensor is taken to start at a 256-byte boundary (as cudaMalloc and torch's
caching allocator give), whatever its host address; shared arrays are laid out one after
another, each aligned as the CUDA printer declares it. A shift of all of a shared array's
addresses by a multiple of 4 bytes does not change bank conflicts, so only global sector counts
depend on this assumption (for a tensor that is a view starting inside an allocation).

>>> import numpy as np, cutelab as cute
>>> from cutelab.runtime import from_dlpack
>>> @cute.kernel
... def strided(S: cute.Tensor, D: cute.Tensor):
...     tidx, _, _ = cute.arch.thread_idx()
...     D[tidx] = S[tidx * 4]
>>> @cute.jit
... def run(S, D):
...     strided(S, D).launch(grid=(1, 1, 1), block=(32, 1, 1))
>>> S, D = np.arange(128, dtype=np.float32), np.zeros(32, np.float32)
>>> p = cute.profile(run, from_dlpack(S), from_dlpack(D))
>>> [(r.tensor, r.op, r.width, r.sectors_per_request) for r in p.kernels[0].rows()]
[('S', 'ld', (4,), 16.0), ('D', 'st', (4,), 4.0)]
>>> bool((D == S[::4]).all())
True
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from ...analysis.access import (BANK_BYTES, NCU_METRICS, NUM_BANKS, SECTOR_BYTES, WARP_SIZE, AccessTrace,
                              analyze)
from ...errors import LaunchError
from .instructions import _Plans, dead_loads  # noqa: F401  (dead_loads: re-exported)

__all__ = ["profile", "Profiler", "Profile", "KernelProfile", "LineRow", "InstrStats", "DEFAULT_BLOCKS",
           "count_rows"]

DEFAULT_BLOCKS = 32  # thread blocks recorded per launch unless told otherwise
VIRTUAL_ALIGN = 256  # bytes: where each tensor is taken to start (cudaMalloc's alignment)
_BIG = np.iinfo(np.int64).max
#: the counters of cp.async's global reads (LDGSTS; its shared writes have no counter of this model)
NCU_LDGSTS = {"requests": "l1tex__t_requests_pipe_lsu_mem_global_op_ldgsts.sum",
              "sectors": "l1tex__t_sectors_pipe_lsu_mem_global_op_ldgsts.sum"}


# --------------------------------------------------------------------------- counting

def count_rows(addresses: np.ndarray, bytes_per_lane: int, space: str, op: str = "ld") -> Dict[str, np.ndarray]:
    """Per warp instruction (a row of 32 lane byte addresses, -1 inactive): requests, sectors,
    distinct bytes used, wavefronts and ideal wavefronts, as ``analysis.analyze`` counts them.

    The same model as ``analyze``, vectorized for many rows at once and without its checks: the
    addresses must be aligned to ``bytes_per_lane`` (a power of two <= 16, so no access crosses
    a sector or splits a bank word unevenly).

    >>> a = np.arange(32)[None, :] * 128       # 32 lanes, one column of a 32x32 f32 tile
    >>> c = count_rows(a, 4, "shared")
    >>> int(c["wavefronts"][0]), int(c["ideal"][0])
    (32, 1)
    >>> int(count_rows(np.arange(32)[None, :] * 4, 4, "global")["sectors"][0])
    4
    """
    a = np.asarray(addresses, dtype=np.int64)
    nb = int(bytes_per_lane)
    act = a >= 0
    rows = a.shape[0]
    requests = act.any(axis=1).astype(np.int64)

    def distinct(keys: np.ndarray, valid: np.ndarray) -> np.ndarray:
        s = np.where(valid, keys, _BIG)
        s.sort(axis=-1)
        new = np.ones(s.shape, bool)
        new[..., 1:] = s[..., 1:] != s[..., :-1]
        return new & (s != _BIG), s

    d_addr, _ = distinct(a, act)
    bytes_used = d_addr.sum(axis=1) * nb  # aligned accesses of one width are equal or disjoint
    d_sec, _ = distinct(a // SECTOR_BYTES, act)
    sectors = d_sec.sum(axis=1)
    wavefronts = np.zeros(rows, np.int64)
    ideal = np.zeros(rows, np.int64)
    if space == "shared" and rows:
        pl = 8 if op == "ldsm" else (WARP_SIZE if nb <= BANK_BYTES else WARP_SIZE * BANK_BYTES // nb)
        nph = WARP_SIZE // pl
        nw = max(1, nb // BANK_BYTES)
        words = (a // BANK_BYTES)[:, :, None] + np.arange(nw)[None, None, :]  # (rows, 32, nw)
        wact = np.broadcast_to(act[:, :, None], words.shape)
        words = words.reshape(rows, nph, pl * nw)
        wact = wact.reshape(rows, nph, pl * nw)
        new, s = distinct(words, wact)
        grp = (np.arange(rows * nph).reshape(rows, nph, 1) * NUM_BANKS + np.where(new, s % NUM_BANKS, 0))
        per_bank = np.bincount(grp[new].ravel(), minlength=rows * nph * NUM_BANKS).reshape(rows, nph, NUM_BANKS)
        per_phase = per_bank.max(axis=2)
        wavefronts = per_phase.sum(axis=1)
        ideal = (per_phase > 0).sum(axis=1)
    return {"requests": requests, "sectors": sectors, "bytes_used": bytes_used, "wavefronts": wavefronts,
            "ideal": ideal, "lane_bytes": act.sum(axis=1) * nb}


# --------------------------------------------------------------------------- records

@dataclass
class InstrStats:
    """The counts of one memory instruction of the kernel (one vector access of one op), summed
    over every warp that executed it (in the recorded blocks)."""

    loc: Optional[str]
    tensor: str
    space: str  # "global" | "shared"
    op: str  # "ld" | "st" | "ldsm" (ldmatrix) | "ldgsts" (cp.async: its global read and its shared write)
    bytes_per_lane: int
    name: str  # the instruction, as printed, e.g. "128-bit ld.global"
    executed: int = 0  # warp instructions with an active lane (= requests)
    sectors: int = 0
    bytes_used: int = 0
    lane_bytes: int = 0
    wavefronts: int = 0
    ideal: int = 0
    ideal_sectors: int = 0  # sectors the requests need at least for the bytes they use (global)
    worst: Optional[np.ndarray] = None  # the 32 lane addresses of the worst warp instruction seen
    worst_excess: int = -1
    worst_where: str = ""

    def add(self, addr: np.ndarray, where: Callable[[int], str]) -> None:
        c = count_rows(addr, self.bytes_per_lane, self.space, self.op)
        self.executed += int(c["requests"].sum())
        self.sectors += int(c["sectors"].sum())
        self.bytes_used += int(c["bytes_used"].sum())
        self.lane_bytes += int(c["lane_bytes"].sum())
        self.wavefronts += int(c["wavefronts"].sum())
        self.ideal += int(c["ideal"].sum())
        self.ideal_sectors += int((-(-c["bytes_used"] // SECTOR_BYTES)).sum())
        if self.space == "shared":
            excess = c["wavefronts"] - c["ideal"]
        else:
            excess = c["sectors"] - -(-c["bytes_used"] // SECTOR_BYTES)
        excess = np.where(c["requests"] > 0, excess, -1)
        if excess.size:
            i = int(np.argmax(excess))
            if excess[i] > self.worst_excess:
                self.worst_excess = int(excess[i])
                self.worst = addr[i].copy()
                self.worst_where = where(i)


@dataclass
class LineRow:
    """One row of the report: the accesses of one source line to one tensor, in one direction."""

    loc: Optional[str]
    tensor: str
    space: str
    op: str
    instrs: List[InstrStats]
    scale: float

    @property
    def width(self) -> Tuple[int, ...]:
        """Bytes per lane of the instructions of this line (the vector width), distinct, largest first."""
        return tuple(sorted({i.bytes_per_lane for i in self.instrs}, reverse=True))

    def _sum(self, name: str) -> int:
        return sum(getattr(i, name) for i in self.instrs)

    @property
    def requests(self) -> float:
        return self._sum("executed") * self.scale

    @property
    def sectors(self) -> float:
        return self._sum("sectors") * self.scale

    @property
    def wavefronts(self) -> float:
        return self._sum("wavefronts") * self.scale

    @property
    def ideal_wavefronts(self) -> float:
        return self._sum("ideal") * self.scale

    @property
    def bytes(self) -> float:
        """Bytes moved between memory and the lanes' registers (active lanes x bytes per lane)."""
        return self._sum("lane_bytes") * self.scale

    @property
    def bytes_used(self) -> float:
        return self._sum("bytes_used") * self.scale

    @property
    def sectors_per_request(self) -> Optional[float]:
        r = self._sum("executed")
        return self._sum("sectors") / r if r and self.space == "global" else None

    @property
    def wavefronts_per_request(self) -> Optional[float]:
        r = self._sum("executed")
        return self._sum("wavefronts") / r if r and self.space == "shared" else None

    @property
    def ideal_per_request(self) -> Optional[float]:
        """What the line would need per request without waste: sectors for its bytes (global),
        one wavefront per phase (shared)."""
        r = self._sum("executed")
        if not r:
            return None
        if self.space == "shared":
            return self._sum("ideal") / r
        return sum(i.ideal_sectors for i in self.instrs) / r

    @property
    def excess(self) -> float:
        """Transactions beyond the ideal: sectors (global) or wavefronts (shared), scaled."""
        if self.space == "shared":
            return (self._sum("wavefronts") - self._sum("ideal")) * self.scale
        return (self._sum("sectors") - sum(i.ideal_sectors for i in self.instrs)) * self.scale

    @property
    def efficiency(self) -> float:
        """Global: bytes used / bytes of the sectors fetched; shared: ideal / actual wavefronts."""
        if self.space == "shared":
            w = self._sum("wavefronts")
            return self._sum("ideal") / w if w else 1.0
        s = self._sum("sectors")
        return self._sum("bytes_used") / (s * SECTOR_BYTES) if s else 1.0

    def worst(self) -> Optional[InstrStats]:
        cand = [i for i in self.instrs if i.worst is not None]
        return max(cand, key=lambda i: i.worst_excess) if cand else None

    def explain(self) -> str:
        """The line's accesses in words: what they cost, and why."""
        return _explain_row(self)


class KernelProfile:
    """The record of one traced kernel: its instructions' counts and the launches seen."""

    def __init__(self, ir: Any, sampled: np.ndarray, nblocks: int):
        self.name = ir.name
        self.grid = tuple(ir.grid)
        self.block = tuple(ir.block)
        self.nblocks = nblocks
        self.sampled = sampled
        self.launches = 0  # launches seen (recorded or not)
        self.recorded = 0  # launches recorded
        self.instrs: Dict[Any, InstrStats] = {}
        self.notes: List[str] = []

    @property
    def scale(self) -> float:
        """What a recorded count is multiplied by to stand for one whole launch."""
        return self.nblocks / max(1, len(self.sampled)) / max(1, self.recorded)

    @property
    def sampling(self) -> str:
        n = len(self.sampled)
        if n == self.nblocks:
            return f"all {self.nblocks} block{'s' if self.nblocks != 1 else ''} recorded"
        return (f"{n} of {self.nblocks} blocks recorded (evenly spaced, first and last included); "
                f"counts scaled by {self.nblocks / n:g}")

    def rows(self) -> List[LineRow]:
        """The report's rows in program order: (source line, tensor, direction)."""
        groups: Dict[Any, List[InstrStats]] = {}
        for st in self.instrs.values():
            groups.setdefault((st.loc, st.tensor, st.space, st.op), []).append(st)
        return [LineRow(k[0], k[1], k[2], k[3], v, self.scale) for k, v in groups.items()]

    def worst_rows(self) -> List[LineRow]:
        """Rows ordered worst first: by transactions beyond the ideal, then by bytes moved."""
        return sorted(self.rows(), key=lambda r: (-r.excess, -r.bytes))

    def totals(self) -> Dict[str, float]:
        """Per launch: requests, sectors, wavefronts, bank conflicts and bytes, per space and op."""
        out: Dict[str, float] = {}
        for r in self.rows():
            k = f"{r.space}_{r.op}"
            for name, v in (("requests", r.requests), ("sectors", r.sectors), ("wavefronts", r.wavefronts),
                            ("conflicts", r.wavefronts - r.ideal_wavefronts), ("bytes", r.bytes)):
                if r.space == "global" and name in ("wavefronts", "conflicts"):
                    continue
                if r.space == "shared" and name == "sectors":
                    continue
                out[f"{k}_{name}"] = out.get(f"{k}_{name}", 0.0) + v
        return out

    def ncu(self) -> Dict[str, float]:
        """The predicted Nsight Compute counters of one launch: {metric name: value}."""
        t = self.totals()
        out: Dict[str, float] = {}
        for (space, op), metrics in list(NCU_METRICS.items()) + [(("global", "ldgsts"), NCU_LDGSTS)]:
            for key, metric in metrics.items():
                v = t.get(f"{space}_{op}_{key}")
                if v is not None:
                    out[metric] = v
        return out

    def report(self, top: int = 5, source: bool = True) -> str:
        return _kernel_report(self, top, source)


# --------------------------------------------------------------------------- the recorder

def _sample_blocks(nblocks: int, limit: Optional[int]) -> np.ndarray:
    if limit is None or nblocks <= limit:
        return np.arange(nblocks, dtype=np.int64)
    return np.unique(np.round(np.linspace(0, nblocks - 1, limit)).astype(np.int64))


class _LaunchRec:
    def __init__(self, prof: "Profiler", kp: KernelProfile, ir: Any, plans: _Plans):
        self.prof = prof
        self.kp = kp
        self.ir = ir
        self.plans = plans
        self.nt = ir.num_threads
        self.nwarps = -(-self.nt // WARP_SIZE)
        self.exec_no: Dict[Any, int] = {}
        # virtual byte addresses: tensors at 256-byte boundaries, shared arrays one after another
        self.gbase = {p.index: (p.index + 1) << 36 for p in ir.params}
        self.sbase: Dict[int, int] = {}
        off = 0
        for sh in ir.shared:
            if hasattr(sh, "base"):  # nodes.SharedAlias: the base array's addresses
                self.sbase[sh.index] = self.sbase[sh.base.index]
                continue
            a = max(16, sh.align)
            off = -(-off // a) * a
            self.sbase[sh.index] = off
            off += sh.bytes

    def batch(self, b: Any, first: int, k: int) -> Optional["_BatchRec"]:
        s = self.kp.sampled
        sel = s[(s >= first) & (s < first + k)]
        if not len(sel):
            return None
        rows = ((sel - first)[:, None] * self.nt + np.arange(self.nt)[None, :]).ravel()
        return _BatchRec(self, b, rows, sel)

    def finish(self) -> None:
        self.kp.recorded += 1


class _BatchRec:
    def __init__(self, lr: _LaunchRec, b: Any, rows: np.ndarray, blocks: np.ndarray):
        self.lr = lr
        self.b = b
        self.rows = rows
        self.blocks = blocks
        self._env = None

    def _where(self, key: Any) -> Callable[[int], str]:
        nw = self.lr.nwarps
        n = self.lr.exec_no.get(key, 0)

        def where(i: int) -> str:
            blk = int(self.blocks[i // nw])
            return f"block {blk}, warp {i % nw}" + (f", execution {n + 1}" if n else "")

        return where

    def _warps(self, addr: np.ndarray) -> np.ndarray:
        """(selected threads,) byte addresses -> (warps, 32), -1 for lanes past the block's end."""
        nb, nt, nw = len(self.blocks), self.lr.nt, self.lr.nwarps
        a = addr.reshape(nb, nt)
        if nt % WARP_SIZE:
            pad = np.full((nb, nw * WARP_SIZE), -1, np.int64)
            pad[:, :nt] = a
            a = pad
        return a.reshape(nb * nw, WARP_SIZE)

    def _stats(self, key: Any, loc: Any, tensor: str, space: str, op: str, nb: int, name: str) -> InstrStats:
        st = self.lr.kp.instrs.get(key)
        if st is None:
            st = InstrStats(loc, tensor, space, op, nb, name)
            self.lr.kp.instrs[key] = st
        return st

    def _record(self, key: Any, st: InstrStats, addr: np.ndarray) -> None:
        w = self._warps(addr)
        if (w[w >= 0] % st.bytes_per_lane).any():
            raise LaunchError(f"profile {self.lr.ir.name}: {st.name} at {st.loc}: a lane's address is not aligned to "
                              f"its {st.bytes_per_lane}-byte access (the GPU faults on that)")
        st.add(w, self._where(key))
        self.lr.exec_no[key] = self.lr.exec_no.get(key, 0) + 1

    def _space(self, p: Any) -> Tuple[str, int]:
        from ..ir.nodes import Shared

        if isinstance(p, Shared):
            return "shared", self.lr.sbase[p.index]
        return "global", self.lr.gbase[p.index]

    def _env_rows(self) -> Dict[str, Any]:
        if self._env is None:
            n = self.b.n
            for a in ("tid.x", "tid.y", "tid.z", "bid.x", "bid.y", "bid.z"):  # made on demand by the interpreter
                self.b.env[a]
            self._env = {k: (v[self.rows] if isinstance(v, np.ndarray) and v.shape == (n,) else v)
                         for k, v in self.b.env.items()}
        return self._env

    def access(self, s: Any, idx: np.ndarray, mask: Any) -> None:
        """A Load or Store: idx[thread, i] is the element index of offsets[i] (inside the block for
        shared memory); mask the active threads (None: all)."""
        from ..ir.nodes import Load

        self._env = None  # loop variables change between calls
        p = s.param
        space, base = self._space(p)
        e = p.dtype.bytes
        op = "ld" if isinstance(s, Load) else "st"
        sel = np.asarray(idx)[self.rows]
        act = None if mask is None else np.asarray(mask)[self.rows]
        lane = None
        for j, (kind, i, k, extra) in enumerate(self.lr.plans.of(s)):
            nb = k * e
            if kind == "vec":
                el = sel[:, i]
                name = f"{8 * nb}-bit {op}.{space}" + (" (merged by the compiler)" if extra else "")
            elif kind in ("pair0", "pair1"):
                if lane is None:
                    lane = self._env_rows()["tid.x"] & 1
                el = sel[:, i] + (np.where(lane == 1, -k, 0) if kind == "pair0" else np.where(lane == 1, k, 2 * k))
                name = f"{8 * nb}-bit {op}.{space} (lane pairs)"
            else:  # retile: the j-th 16-byte access of the warp's run
                import copy

                from ..ir.symbolic import evaluate

                env = copy.copy(self.b.env)  # the batch's environment (it may look registers up)
                tid = np.broadcast_to(np.asarray(env["tid.x"], dtype=np.int64), (self.b.n,))
                env["tid.x"] = tid & ~np.int64(WARP_SIZE - 1)
                wb = np.broadcast_to(np.asarray(evaluate(s.base, env), dtype=np.int64), (self.b.n,))[self.rows]
                t = tid[self.rows]
                el = wb + extra["A"][i] + extra["B"] * (t & (WARP_SIZE - 1))
                name = f"{8 * nb}-bit {op}.{space} (warp-retiled copy)"
            addr = base + np.asarray(el, dtype=np.int64) * e
            if act is not None:
                addr = np.where(act, addr, -1)
            key = (id(s), j)
            st = self._stats(key, getattr(s, "loc", None), p.name, space, op, nb, name)
            self._record(key, st, np.broadcast_to(addr, (len(self.rows),)).copy())

    def op(self, o: Any, mask: Any) -> None:
        """An op with its own back ends: recorded through o.accesses() (and o.profile(access))."""
        self._env = None
        if id(o) in self.lr.plans.dead:  # it loads registers nobody reads: the compiler drops it
            return
        prof_fn = getattr(o, "profile", None)
        for ai, a in enumerate(o.accesses()):
            info = (prof_fn(a) if callable(prof_fn) else None) or {}
            act = None if mask is None else np.asarray(mask)
            for cond, holds in getattr(a, "guards", ()):  # an access made only where its guards hold

                c = self.b.cond(cond)
                c = c if holds else ~c
                act = c if act is None else act & c
            act = None if act is None else act[self.rows]
            p = a.param
            space, base = self._space(p)
            e = p.dtype.bytes
            op = info.get("op") or ("st" if a.is_store else "ld")
            if op not in ("ld", "st", "ldsm", "ldgsts"):
                raise LaunchError(f"profile: {type(o).__name__}.profile() gave op {op!r}; expected ld, st, ldsm or "
                                  f"ldgsts")
            bv = np.broadcast_to(np.asarray(self.b.index(a.base), dtype=np.int64), (self.b.n,))[self.rows]
            if op == "ldsm":
                plan = info.get("plan") or [(0, 16 // e)]
            else:
                plan = info.get("plan") or self.lr.plans.vector_plan(p, a.base, a.offsets)
            lanes = int(info.get("lanes", WARP_SIZE))
            for j, (i, k) in enumerate(plan):
                nb = k * e
                if op == "ldsm" and nb != 16:
                    raise LaunchError(f"profile: {type(o).__name__}: an ldmatrix row is 16 bytes, the plan gives {nb}")
                addr = base + (bv + int(a.offsets[i])) * e
                if act is not None:
                    addr = np.where(act, addr, -1)
                if op == "ldsm" and lanes < WARP_SIZE:
                    ln = self._env_rows()["tid.x"] % WARP_SIZE  # lanes past the row-address lanes give none
                    addr = np.where(ln < lanes, addr, -1)
                name = info.get("name") or f"{type(o).__name__}: {8 * nb}-bit {op}.{space}"
                key = (id(o), ai, j)
                st = self._stats(key, getattr(o, "loc", None), p.name, space, op, nb, name)
                self._record(key, st, np.asarray(addr, dtype=np.int64).copy())


class Profiler:
    """Record the memory accesses of every kernel launched inside ``with Profiler() as prof:``
    (run by the CPU interpreter); ``prof.result`` is the ``Profile``.

    blocks: thread blocks recorded per launch (evenly spaced; None: all of them);
    launches: launches recorded per traced kernel (later ones run unrecorded, and are counted).
    """

    def __init__(self, blocks: Optional[int] = DEFAULT_BLOCKS, launches: int = 1):
        if blocks is not None and (isinstance(blocks, bool) or not isinstance(blocks, int) or blocks < 1):
            raise LaunchError(f"Profiler(blocks={blocks!r}): blocks must be a positive int, or None for all blocks")
        if isinstance(launches, bool) or not isinstance(launches, int) or launches < 1:
            raise LaunchError(f"Profiler(launches={launches!r}): launches must be a positive int")
        self.blocks = blocks
        self.launches = launches
        self.result = Profile([], blocks)
        self._by_ir: Dict[int, Tuple[KernelProfile, _Plans, Any]] = {}
        self._env_old: Optional[str] = None

    def launch(self, ir: Any) -> Optional[_LaunchRec]:
        got = self._by_ir.get(id(ir))
        if got is None:
            nblocks = ir.grid[0] * ir.grid[1] * ir.grid[2]
            kp = KernelProfile(ir, _sample_blocks(nblocks, self.blocks), nblocks)
            plans = _Plans(ir)
            if plans.note:
                kp.notes.append(plans.note.strip())
            if plans.dead:
                from ..ir.nodes import walk

                dead = [op for op in walk(ir.body) if id(op) in plans.dead]
                where = sorted({_short_loc(getattr(op, "loc", None)) for op in dead})
                kp.notes.append(f"{len(dead)} load(s) whose values are never used are left out (the CUDA compiler "
                                f"drops them): at {', '.join(where[:6])}{' ...' if len(where) > 6 else ''}")
            got = (kp, plans, ir)  # ir kept alive: id(ir) stays unique while recording
            self._by_ir[id(ir)] = got
            self.result.kernels.append(kp)
        kp, plans, _ = got
        kp.launches += 1
        if kp.recorded >= self.launches:
            return None
        return _LaunchRec(self, kp, ir, plans)

    def __enter__(self) -> "Profiler":
        from . import interpreter as interpret

        if interpret.recorder is not None:
            raise LaunchError("cutelab.profile: a profiler is already recording (profilers do not nest)")
        interpret.recorder = self
        self._env_old = os.environ.get("CUTELAB_INTERPRET")
        os.environ["CUTELAB_INTERPRET"] = "1"  # every launch runs on the CPU interpreter
        return self

    def __exit__(self, *exc: Any) -> None:
        from . import interpreter as interpret

        interpret.recorder = None
        if self._env_old is None:
            os.environ.pop("CUTELAB_INTERPRET", None)
        else:
            os.environ["CUTELAB_INTERPRET"] = self._env_old


@dataclass
class Profile:
    """What ``profile`` recorded: one ``KernelProfile`` per traced kernel, in launch order."""

    kernels: List[KernelProfile]
    blocks: Optional[int] = DEFAULT_BLOCKS
    value: Any = None  # what the profiled function returned

    def report(self, top: int = 5, source: bool = True) -> str:
        """The whole report as text (kernels in launch order, each with its worst lines first)."""
        if not self.kernels:
            return "cutelab profile: no kernel was launched"
        head = (f"cutelab profile: {len(self.kernels)} kernel{'s' if len(self.kernels) != 1 else ''}, run by the "
                f"CPU interpreter; counts per launch as Nsight Compute's L1TEX counters count them")
        return "\n\n".join([head] + [k.report(top, source) for k in self.kernels])

    __str__ = report

    def figure(self, top: int = 4) -> Any:
        """A picture of the worst accesses (bank maps of shared, sectors of global): one Figure."""
        return _worst_figure(self, top)

    def to_dict(self) -> Dict[str, Any]:
        """The report as plain data (for JSON): per kernel its totals, predicted ncu counters, rows."""
        out = []
        for k in self.kernels:
            rows = []
            for r in k.worst_rows():
                rows.append({"loc": r.loc, "tensor": r.tensor, "space": r.space, "op": r.op, "width": list(r.width),
                             "requests": r.requests, "sectors": r.sectors if r.space == "global" else None,
                             "sectors_per_request": r.sectors_per_request, "wavefronts": r.wavefronts
                             if r.space == "shared" else None, "wavefronts_per_request": r.wavefronts_per_request,
                             "ideal_per_request": r.ideal_per_request, "bytes": r.bytes, "excess": r.excess,
                             "explanation": r.explain()})
            out.append({"name": k.name, "grid": list(k.grid), "block": list(k.block), "launches": k.launches,
                        "recorded_launches": k.recorded, "blocks": k.nblocks, "recorded_blocks": len(k.sampled),
                        "scale": k.scale, "totals": k.totals(), "ncu": k.ncu(), "rows": rows, "notes": k.notes})
        return {"kernels": out}


def profile(fn: Callable, *args: Any, **kwargs: Any) -> Profile:
    """Call ``fn(*args, **kwargs)`` with every kernel launch run by the CPU interpreter and its
    memory accesses recorded; returns the ``Profile`` (``print(p.report())``; ``p.value`` is what
    fn returned). Records ``DEFAULT_BLOCKS`` blocks of the first launch of each kernel: use
    ``with Profiler(blocks=None) as prof: ...`` for every block, or more launches.

    >>> import numpy as np, cutelab as cute
    >>> from cutelab.runtime import from_dlpack
    >>> @cute.kernel
    ... def copy1(S: cute.Tensor, D: cute.Tensor):
    ...     i = cute.arch.thread_idx()[0] + cute.arch.block_idx()[0] * 64
    ...     D[i] = S[i]
    >>> @cute.jit
    ... def run(S, D):
    ...     copy1(S, D).launch(grid=(4, 1, 1), block=(64, 1, 1))
    >>> S, D = np.arange(256, dtype=np.float32), np.zeros(256, np.float32)
    >>> p = cute.profile(run, from_dlpack(S), from_dlpack(D))
    >>> k = p.kernels[0]
    >>> k.name, k.ncu()["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"], k.rows()[0].sectors_per_request
    ('copy1', 8.0, 4.0)
    """
    with Profiler() as prof:
        prof.result.value = fn(*args, **kwargs)
    return prof.result


# --------------------------------------------------------------------------- words

def _short_loc(loc: Optional[str]) -> str:
    if not loc:
        return "(unknown line)"
    path, _, line = loc.rpartition(":")
    return f"{os.path.basename(path)}:{line}"


def _source_line(loc: Optional[str]) -> str:
    if not loc:
        return ""
    path, _, line = loc.rpartition(":")
    try:
        import linecache

        return linecache.getline(path, int(line)).strip()
    except (ValueError, OSError):
        return ""


def _fmt_num(x: float) -> str:
    if x >= 1e6:
        return f"{x / 1e6:.3g}M"
    if x >= 1e4:
        return f"{x / 1e3:.3g}k"
    return f"{x:.4g}"


def _fmt_bytes(x: float) -> str:
    for unit, f in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if x >= f:
            return f"{x / f:.3g} {unit}"
    return f"{x:.0f} B"


def _lane_stride(addr: np.ndarray) -> Optional[int]:
    """The most common byte distance between consecutive active lanes (None: < 2 active lanes)."""
    a = addr[addr >= 0]
    if len(a) < 2:
        return None
    d = np.diff(a)
    vals, cnt = np.unique(d, return_counts=True)
    return int(vals[np.argmax(cnt)])


def _explain_row(r: LineRow) -> str:
    what = {"ld": "load", "st": "store", "ldsm": "ldmatrix", "ldgsts": "cp.async"}[r.op]
    w = "/".join(str(x) for x in r.width)
    names: Dict[str, int] = {}
    for i in r.instrs:
        if i.executed:
            names[i.name] = names.get(i.name, 0) + 1
    how = ", ".join(f"{n} x {k}" if n > 1 else k for k, n in names.items())
    head = f"{r.space} {what} of {r.tensor}, {w} bytes per lane" + (f" ({how})" if how else "")
    req = r._sum("executed")
    if not req:
        return f"{head}: no lane was active in the recorded blocks"
    worst = r.worst()
    if r.space == "shared":
        wpr, ipr = r.wavefronts_per_request, r.ideal_per_request
        if r.excess <= 0:
            return f"{head}: {wpr:.3g} wavefront(s) per request, no bank conflicts"
        text = (f"{head}: {wpr:.3g} wavefronts per request where {ipr:.3g} would do "
                f"({_fmt_num(r.excess)} extra wavefronts, bank conflicts)")
        if worst is not None:
            rep = analyze(AccessTrace(worst.worst[None, :], worst.bytes_per_lane, "shared", _trace_op(worst)))
            detail = rep.explain(0).split(": ", 1)[-1]
            text += f"; worst ({worst.worst_where}): {detail}"
        return text
    spr, ipr = r.sectors_per_request, r.ideal_per_request
    eff = r.efficiency
    if r.excess <= 0:
        return (f"{head}: {spr:.3g} sectors per request, every fetched byte used" if eff >= 0.999 else
                f"{head}: {spr:.3g} sectors per request, as few as its bytes allow ({100 * eff:.0f}% of the fetched "
                f"bytes used: lanes share data)")
    text = (f"{head}: {spr:.3g} sectors per request where {ipr:.3g} would hold its bytes: {100 * eff:.0f}% of "
            f"the bytes of the sectors each request fetches are used")
    if worst is not None:
        nb = worst.bytes_per_lane
        stride = _lane_stride(worst.worst)
        if stride is not None and stride > nb:
            text += f"; consecutive lanes are {stride} bytes apart and each moves {nb}"
            if stride <= 16 and stride % nb == 0:
                text += (f": each thread's own {stride} bytes are contiguous but this line moves them {nb} at a time "
                         f"(the CUDA printer vectorizes only the elements of one load/store that are contiguous "
                         f"and provably aligned; a copy predicated element by element is split into single elements)")
            elif stride >= SECTOR_BYTES:
                text += f": every lane needs a sector of its own ({SECTOR_BYTES} bytes fetched for {nb} used)"
        elif stride is not None and stride == nb:
            text += "; the lanes' bytes are contiguous but do not start on a 32-byte sector boundary"
        else:
            text += "; the lanes' addresses are scattered"
    return text


def _kernel_report(k: KernelProfile, top: int, source: bool) -> str:
    lines = [f"kernel {k.name}  grid {k.grid}  block {k.block}  "
             f"launched {k.launches} time{'s' if k.launches != 1 else ''}"
             + (f" ({k.recorded} recorded; figures per launch)" if k.recorded != k.launches else "")]
    lines.append(f"  {k.sampling}")
    for n in k.notes:
        lines.append(f"  note: {n}")
    rows = k.rows()
    if not rows:
        lines.append("  no global or shared memory access")
        return "\n".join(lines)
    t = k.totals()
    parts = []
    for space, op in (("global", "ld"), ("global", "ldgsts"), ("global", "st"), ("shared", "ld"), ("shared", "ldsm"),
                      ("shared", "st"), ("shared", "ldgsts")):
        key = f"{space}_{op}"
        if f"{key}_requests" not in t:
            continue
        req = t[f"{key}_requests"]
        if space == "global":
            s = t[f"{key}_sectors"]
            parts.append(f"{space} {op}: {_fmt_num(req)} requests, {_fmt_num(s)} sectors "
                         f"({s / req if req else 0:.3g}/request), {_fmt_bytes(t[f'{key}_bytes'])}")
        else:
            wv = t[f"{key}_wavefronts"]
            parts.append(f"{space} {op}: {_fmt_num(req)} requests, {_fmt_num(wv)} wavefronts "
                         f"({wv / req if req else 0:.3g}/request), {_fmt_num(t[f'{key}_conflicts'])} bank conflicts, "
                         f"{_fmt_bytes(t[f'{key}_bytes'])}")
    lines.append("  totals per launch: " + "; ".join(parts))
    lines.append("")
    hdr = (f"  {'line':<28} {'tensor':<10} {'access':<9} {'B/lane':>6} {'requests':>9} {'sect/req':>8} "
           f"{'wave/req':>8} {'ideal':>6} {'bytes':>9}")
    lines.append(hdr)
    for r in k.worst_rows():
        spr = r.sectors_per_request
        wpr = r.wavefronts_per_request
        ipr = r.ideal_per_request
        lines.append(f"  {_short_loc(r.loc):<28.28} {r.tensor:<10.10} {r.space[:1] + ' ' + r.op:<9} "
                     f"{'/'.join(map(str, r.width)):>6} {_fmt_num(r.requests):>9} "
                     f"{(f'{spr:.3g}' if spr is not None else '-'):>8} {(f'{wpr:.3g}' if wpr is not None else '-'):>8} "
                     f"{(f'{ipr:.3g}' if ipr is not None else '-'):>6} {_fmt_bytes(r.bytes):>9}")
    bad = [r for r in k.worst_rows() if r.excess > 0][:top]
    lines.append("")
    if not bad:
        lines.append("  no wasted sectors and no bank conflicts in the recorded blocks")
    for n, r in enumerate(bad, 1):
        src = _source_line(r.loc) if source else ""
        lines.append(f"  {n}. {_short_loc(r.loc)}" + (f"  {src}" if src else ""))
        lines.append(f"     {r.explain()}")
    return "\n".join(lines)


def _worst_figure(p: Profile, top: int) -> Any:
    from ...analysis.draw import access_figure
    from ...render.figure import Figure

    grids, notes = [], []
    bad = any(r.excess > 0 for k in p.kernels for r in k.rows())
    for k in p.kernels:
        for r in k.worst_rows():
            if bad and r.excess <= 0:  # draw the wasteful accesses (all of them only when none is)
                continue
            if len(grids) >= 64 or sum(1 for n in notes if n.startswith("#")) >= top:
                break
            w = r.worst()
            if w is None:
                continue
            rows = np.where(w.worst >= 0, w.worst - _rebase(w), -1)[None, :]
            rep = analyze(AccessTrace(rows, w.bytes_per_lane, w.space, _trace_op(w)))
            f = access_figure(rep, 0)
            label = f"{k.name} {_short_loc(r.loc)} {r.tensor} ({w.worst_where})"
            for g in f.grids:
                g.title = f"{label}: {g.title}"
                grids.append(g)
            notes.append(f"# {label}: {r.explain()}")
    if not grids:
        from ...errors import LayoutError

        raise LayoutError("Profile.figure: no memory access was recorded, nothing to draw")
    return Figure(f"cutelab profile: the worst {sum(1 for n in notes if n.startswith('#'))} access(es)", grids,
                  notes=[n[2:] for n in notes], kind="layout")


def _trace_op(st: InstrStats) -> str:
    """The AccessTrace op of an instruction: cp.async reads global memory and writes shared memory."""
    if st.op == "ldgsts":
        return "ld" if st.space == "global" else "st"
    return st.op


def _rebase(w: InstrStats) -> int:
    """A multiple of 128 bytes below the lowest address of the worst row, so pictures show small
    addresses (global: the tensor's virtual base; shared: the array's offset stays)."""
    a = w.worst[w.worst >= 0]
    if not len(a) or w.space == "shared":
        return 0
    return int(a.min()) // 128 * 128
