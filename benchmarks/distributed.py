"""Issue 22's distributed table: all-reduce bandwidth and the fused GEMM + all-reduce, under torchrun.

    NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 \\
        torchrun --nproc-per-node 2 -m cutelab run benchmarks/distributed.py [--sizes 1M,64M,1G]
            [--gemm 4096,4096,4096:8192,8192,4096] [--rounds 5] [--iters 20] [--only nccl,push,...] [--json FILE]
    torchrun --nproc-per-node 2 -m cutelab run benchmarks/distributed.py --smoke   # no GPU: tiny sizes
    torchrun --nproc-per-node 2 benchmarks/distributed.py --only nccl,simple,lamport  # CuTe DSL compiles them

Without ``cutelab run``, ``import cutlass`` is the installed CuTe DSL, which then compiles CUTLASS's
programs (``simple``, ``lamport``), so the two commands, run one after the other on the same GPUs, put the
same programs side by side; the table's first line names the compiler.

All-reduces of f32 messages (``--sizes``, bytes; ``--only`` names):

- ``nccl``: ``dist.all_reduce`` (NCCL, NVLS off), in place;
- ``push``: examples/distributed/allreduce_push.py (ours: 16-byte pushes, a release flag per CTA);
- ``flags``: tests/distributed/programs/allreduce_flags.py (ours, the emulation's test program: one
  element per thread, a flag per block). Its receive buffer is not doubled and its wait is for
  ``flag == epoch``, so it is not safe back to back: single launches only;
- ``simple``: CUTLASS's all_reduce_simple.py (carried unchanged in tests/distributed/programs/), its
  ``all_reduce_simple`` (each rank reads every rank's input over NVLink) on torch symmetric-memory
  peer tensors; the module imports nvshmem4py (``nvshmem.core``, the nvidia-nvshmem library): a row
  says skipped where they are missing;
- ``lamport``: CUTLASS's all_reduce_one_shot_lamport.py (carried), ``AllReduceOneShotLamportKernel``
  (three -0.0-filled buffers, the signal advanced every call); the module imports ``cuda.bindings``
  (cuda-python): skipped where it is missing.

The fused GEMM (``--gemm``: each rank's M,N,K, bf16; C = sum over ranks of A_r B_r^T):

- ``fused``: examples/distributed/gemm_allreduce.py (128x256x64 tiles, 2 MMA warpgroups, 3 stages,
  one CTA per SM);
- ``matmul+nccl``: ``torch.matmul(A, B.t(), out=C)`` then ``dist.all_reduce(C)`` (cuBLAS, reduced-precision
  reductions off; NCCL);
- ``sm90+nccl``: examples/gemm/sm90_gemm.py's HopperGemm (same configuration) then ``dist.all_reduce(C)``.

Every program's first result is checked (the all-reduces against ``dist.all_reduce`` of the same
input, the GEMMs against ``torch.matmul`` + ``dist.all_reduce`` in f32); one that fails is reported
and not timed. Timing, in ``--rounds`` rounds, the programs of a size in a rotated order each round:

- back to back: barrier, synchronize, CUDA events around ``--iters`` calls (and the host time per call);
- single launch: ``--iters`` times barrier, synchronize, events around one call, synchronize; the median
  (for a program timed in single launches only, the host time is that of one such call).

Each number is the slowest rank's (all-reduced with MAX), then the median over the rounds. Bandwidth
is the message size over the time (algbw) and, as nccl-tests reports it, algbw * 2(world-1)/world
(busbw). Ours run through ``cute.compile``'s calls with the same arguments every time (their epochs are
counted on the device); CUTLASS's through their ``@cute.jit`` functions, remembered by cutelab after the
first call of each signature. cutelab traces a call again for each new value of an Int32 argument (up to
64 kept), so the Int32 arguments cycle through as few values as the kernels allow: Lamport's signal
0, 1, 2 (it uses signal % 3), allreduce_flags' epoch 1, 2. Prints one JSON line per row (rank 0),
then a markdown table. With ``--smoke`` (for machines without a GPU: each rank's kernels on the CPU
interpreter) the sizes are 8 KB and 32 KB, the GEMM 128x128x64, 2 rounds of 1 call: it checks
that everything runs, and its times mean nothing.
"""

from __future__ import annotations

import argparse
import datetime
import gc
import importlib.util
import json
import os
import statistics
import sys
import time
import traceback
from typing import Any, Callable, Dict, List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
EXAMPLES = os.path.join(ROOT, "examples", "distributed")
PROGRAMS = os.path.join(ROOT, "tests", "distributed", "programs")
sys.path[:0] = [EXAMPLES]

ALLREDUCES = ("nccl", "push", "flags", "simple", "lamport")
GEMMS = ("fused", "matmul+nccl", "sm90+nccl")
CUTLASS_PROGRAMS = ("simple", "lamport")  # CUTLASS's, written for CuTe DSL: either compiler runs them


def compiler() -> str:
    """Who compiles the kernels: cutelab (under ``cutelab run``, whose import hook makes ``cutlass`` cutelab)
    or the CuTe DSL installed beside this script (plain ``torchrun benchmarks/distributed.py``)."""
    try:
        from cutelab.compat import installed
    except ImportError:
        installed = None
    if installed is not None and installed():
        return "cutelab"
    import cutlass

    return f"CuTe DSL {getattr(cutlass, '__version__', '(version unknown)')}"


def _load(name: str, path: str) -> Any:
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def _size(s: str) -> int:
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(float(s[:-1]) * mult[s[-1].upper()]) if s[-1].upper() in mult else int(s)


def _fmt_size(b: int) -> str:
    for unit, m in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if b >= m and b % m == 0:
            return f"{b // m} {unit}"
    return f"{b} B"


class Timer:
    """Back-to-back and single-launch times of fn on every rank; the slowest rank's."""

    def __init__(self, iters: int):
        import torch

        self.iters = iters
        self.start, self.end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    @staticmethod
    def _slowest(*vals: float) -> List[float]:
        import torch
        import torch.distributed as dist

        t = torch.tensor(vals, dtype=torch.float64, device="cuda")
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        return t.tolist()

    def measure(self, fn: Callable[[], None], b2b_ok: bool = True) -> Dict[str, float]:
        """b2b_ok=False: single launches only (a program that is not safe back to back); the host time
        is then that of one call between synchronizations."""
        import torch
        import torch.distributed as dist

        b2b, host = float("nan"), float("nan")
        if b2b_ok:
            dist.barrier()
            torch.cuda.synchronize()
            self.start.record()
            t0 = time.perf_counter()
            for _ in range(self.iters):
                fn()
            host = (time.perf_counter() - t0) / self.iters * 1e6
            self.end.record()
            torch.cuda.synchronize()
            b2b = self.start.elapsed_time(self.end) / self.iters
        one, hosts = [], []
        for _ in range(self.iters):
            dist.barrier()
            torch.cuda.synchronize()
            self.start.record()
            t0 = time.perf_counter()
            fn()
            hosts.append((time.perf_counter() - t0) * 1e6)
            self.end.record()
            torch.cuda.synchronize()
            one.append(self.start.elapsed_time(self.end))
        if not b2b_ok:
            host = statistics.median(hosts)
        b2b, single, host = self._slowest(b2b, statistics.median(one), host)
        return {"b2b_ms": b2b, "single_ms": single, "host_us": host}


def allreduce_programs(nbytes: int, only: List[str]) -> Dict[str, Any]:
    """name -> (call, output tensor, what to do after the check[, note]) or the reason it is skipped, for
    f32 messages of nbytes; every rank makes them in the same order (symmetric allocations are collective)."""
    import torch
    import torch.distributed as dist

    rank = dist.get_rank()
    n = nbytes // 4
    g = torch.Generator().manual_seed(rank)
    inp = torch.randn(n, generator=g).cuda()
    progs: Dict[str, Any] = {"_input": inp}
    for name in ALLREDUCES:
        if name in only:
            progs[name] = _MAKERS[name](inp)
    return progs


def _nccl(inp: Any) -> Any:
    import torch.distributed as dist

    x = inp.clone()

    def nccl():  # in place: after the check the tensor holds zeros, whose sums stay zeros
        dist.all_reduce(x)
    return nccl, x, x.zero_


def _push(inp: Any) -> Any:
    import torch

    from cutelab.runtime import from_dlpack

    push = _load("allreduce_push", os.path.join(EXAMPLES, "allreduce_push.py"))
    bufs = push.Buffers(inp.numel(), torch.float32)
    out = torch.zeros_like(inp)
    mI, mO = from_dlpack(inp, assumed_align=16), from_dlpack(out, assumed_align=16)
    return (lambda: bufs(mI, mO)), out, None


def _flags(inp: Any) -> Any:
    import torch
    import torch.distributed as dist
    import torch.distributed._symmetric_memory as symm_mem

    import cutelab as cutlass
    from cutelab.runtime import from_dlpack

    fl = _load("allreduce_flags", os.path.join(PROGRAMS, "allreduce_flags.py"))
    rank, world, n = dist.get_rank(), dist.get_world_size(), inp.numel()
    nblk = n // fl.THREADS
    recv = symm_mem.empty((world, n), dtype=torch.float32, device="cuda")
    rh = symm_mem.rendezvous(recv, dist.group.WORLD)
    flag = symm_mem.empty((world * nblk,), dtype=torch.int32, device="cuda")
    flag.zero_()
    fh = symm_mem.rendezvous(flag, dist.group.WORLD)
    recvs = [from_dlpack(rh.get_buffer(r, (world, n), torch.float32)) for r in range(world)]
    flags = [from_dlpack(fh.get_buffer(r, (world * nblk,), torch.int32)) for r in range(world)]
    out = torch.zeros_like(inp)
    mI, mO = from_dlpack(inp), from_dlpack(out)
    state = {"epoch": 0, "keep": (recv, flag, rh, fh)}
    dist.barrier()  # every rank's flags are zero before any rank signals

    def flags_call():  # epochs 1, 2, 1, 2, ...: with a barrier between calls its `flag == epoch` waits need no
        state["epoch"] = state["epoch"] % 2 + 1  # more, and cutelab traces a jit call per Int32 value (2 traces)
        fl.allreduce(mI, recvs, flags, mO, rank, world, cutlass.Int32(state["epoch"]), "none")
    return flags_call, out, None, "single launches only: its receive buffer is not doubled"


def _matrix(n: int) -> Any:
    """The CUTLASS programs' 2-D view of n elements: rows in 16s, columns in 128s."""
    N = 1024 if n % (1024 * 16) == 0 else 128
    return n // N, N


def _simple(inp: Any) -> Any:
    import torch
    import torch.distributed as dist
    import torch.distributed._symmetric_memory as symm_mem

    import cutlass.cute as cute
    from cutlass.cute.runtime import from_dlpack

    try:
        simple = _load("all_reduce_simple", os.path.join(PROGRAMS, "all_reduce_simple.py"))
    except Exception as e:  # noqa: BLE001 - nvshmem4py / nvidia-nvshmem / cuda.core missing
        sys.modules.pop("all_reduce_simple", None)
        return f"skipped: importing all_reduce_simple.py: {type(e).__name__}: {str(e).splitlines()[0]}"
    world = dist.get_world_size()
    M, N = _matrix(inp.numel())
    t = symm_mem.empty((M, N), dtype=torch.float32, device="cuda")
    t.copy_(inp.view(M, N))
    h = symm_mem.rendezvous(t, dist.group.WORLD)
    peers = [from_dlpack(h.get_buffer(r, (M, N), torch.float32)) for r in range(world)]
    out = torch.zeros(M, N, device="cuda")
    mO = from_dlpack(out)
    dist.barrier()  # every rank's input is in place before any rank reads it

    compiled = cute.compile(simple.all_reduce_simple, peers, mO)

    def simple_call(_keep=(t, h)):  # (the symmetric allocation lives as long as the call)
        compiled(peers, mO)
    return simple_call, out.view(-1), None


def _lamport(inp: Any) -> Any:
    import torch
    import torch.distributed as dist
    import torch.distributed._symmetric_memory as symm_mem

    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.runtime import from_dlpack

    try:
        lp = _load("all_reduce_one_shot_lamport", os.path.join(PROGRAMS, "all_reduce_one_shot_lamport.py"))
    except Exception as e:  # noqa: BLE001 - cuda.bindings (cuda-python) missing
        sys.modules.pop("all_reduce_one_shot_lamport", None)
        return f"skipped: importing all_reduce_one_shot_lamport.py: {type(e).__name__}: {str(e).splitlines()[0]}"
    rank, world = dist.get_rank(), dist.get_world_size()
    M, N = _matrix(inp.numel())
    t = symm_mem.empty((lp.PING_PONG_SIZE, world, M, N), dtype=torch.float32, device="cuda")
    t.fill_(-0.0)
    h = symm_mem.rendezvous(t, dist.group.WORLD)
    bufs = [from_dlpack(h.get_buffer(r, t.shape, t.dtype).permute(2, 3, 1, 0), assumed_align=32)
            for r in range(world)]
    out = torch.zeros(M, N, device="cuda")
    mI, mO = from_dlpack(inp.view(M, N), assumed_align=32), from_dlpack(out, assumed_align=32)
    kern, stream = lp.AllReduceOneShotLamportKernel(), cutlass.cuda.default_stream()
    compiled = cute.compile(kern, rank, world, cutlass.Int32(0), mI, mO, bufs, stream=stream)  # as the program does
    state = {"signal": 0, "keep": (t, h)}
    dist.barrier()  # every rank's buffers hold -0.0 before any rank writes

    def lamport():  # the kernel uses signal % 3 only (ping and pong buffers): signals 0, 1, 2, 0, ... are its
        compiled(cutlass.Int32(state["signal"]), mI, mO, bufs, stream)  # calls 0, 1, 2, 3, ...; and cutelab
        state["signal"] = (state["signal"] + 1) % 3  # traces a call per Int32 value (3 traces)
    return lamport, out.view(-1), None


_MAKERS = {"nccl": _nccl, "push": _push, "flags": _flags, "simple": _simple, "lamport": _lamport}


def gemm_programs(M: int, N: int, K: int, only: List[str], smoke: bool) -> Dict[str, Any]:
    import torch
    import torch.distributed as dist

    ga = _load("gemm_allreduce", os.path.join(EXAMPLES, "gemm_allreduce.py"))
    cfg = dict(tile=(64, 64, 64), stages=2, mma_wgs=1) if smoke else dict(tile=(128, 256, 64), stages=3, mma_wgs=2)
    from cutelab.compat import emulating

    pr = ga.Problem(M, N, K, dynamic=not emulating(), **cfg)  # runtime loops on a GPU, unrolled on the CPU
    progs: Dict[str, Any] = {"_problem": pr}
    if "fused" in only:
        progs["fused"] = pr.fused
    if "matmul+nccl" in only:
        def matmul_nccl():
            torch.matmul(pr.A, pr.B.t(), out=pr.C)
            dist.all_reduce(pr.C)
        progs["matmul+nccl"] = matmul_nccl
    if "sm90+nccl" in only:
        progs["sm90+nccl"] = pr.unfused
    return progs


def _everywhere(ok: bool) -> bool:
    """Whether ok holds on every rank (collective)."""
    import torch
    import torch.distributed as dist

    t = torch.tensor([1 if ok else 0], dtype=torch.int32, device="cuda")
    dist.all_reduce(t, op=dist.ReduceOp.MIN)
    return bool(t.item())


def rounds(names: List[str], calls: Dict[str, Callable[[], None]], timer: Timer, n_rounds: int,
           single_only=()) -> Dict[str, Dict]:
    """Median over rounds of each program's times; the programs rotated each round."""
    got: Dict[str, List[Dict[str, float]]] = {k: [] for k in names}
    for r in range(n_rounds if names else 0):  # (every program dropped: nothing to time)
        order = names[r % len(names):] + names[: r % len(names)]
        for k in order:
            got[k].append(timer.measure(calls[k], b2b_ok=k not in single_only))
    return {k: {m: statistics.median(x[m] for x in v) for m in v[0]} for k, v in got.items() if v}


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sizes", default=None, help="all-reduce message sizes in bytes, K/M/G suffixes (1M,64M,1G; "
                   "--smoke: 8K,32K)")
    p.add_argument("--gemm", default=None, help="each rank's M,N,K, ':'-separated (4096,4096,4096:8192,8192,4096; "
                   "--smoke: 128,128,64)")
    p.add_argument("--rounds", type=int, default=None, help="rounds (5; --smoke: 2)")
    p.add_argument("--iters", type=int, default=None, help="calls per measurement (20; --smoke: 1)")
    p.add_argument("--only", default=None, help="programs, ','-separated (all; under CuTe DSL: nccl,simple,lamport)")
    p.add_argument("--smoke", action="store_true", help="tiny sizes, few calls (no GPU needed)")
    p.add_argument("--json", default=None, help="also write the rows here (rank 0)")
    a = p.parse_args(argv)
    for k, full, smoke in (("sizes", "1M,64M,1G", "8K,32K"), ("gemm", "4096,4096,4096:8192,8192,4096", "128,128,64"),
                           ("rounds", 5, 2), ("iters", 20, 1)):
        if getattr(a, k) is None:
            setattr(a, k, smoke if a.smoke else full)
    if a.rounds < 1 or a.iters < 1:
        p.error(f"--rounds {a.rounds}, --iters {a.iters}: both must be at least 1")
    push = _load("allreduce_push", os.path.join(EXAMPLES, "allreduce_push.py"))  # (cutelab, with or without its hook)
    push.no_multicast("benchmarks/distributed.py")
    import torch
    import torch.distributed as dist

    by = compiler()
    if by == "cutelab":
        from cutelab.compat import emulating
    else:  # our own programs are written with cutelab; CUTLASS's run under either compiler
        emulating = lambda: False  # noqa: E731

    only = a.only.split(",") if a.only else list(ALLREDUCES + GEMMS if by == "cutelab" else ("nccl",) + CUTLASS_PROGRAMS)
    bad = [o for o in only if o not in ALLREDUCES + GEMMS]
    if bad:
        p.error(f"--only: {bad} not among {list(ALLREDUCES + GEMMS)}")
    if by != "cutelab":
        mine = [o for o in only if o not in CUTLASS_PROGRAMS + ("nccl",)]
        if mine:
            p.error(f"--only: {mine} are written with cutelab; under {by} only {list(CUTLASS_PROGRAMS)} and NCCL run")
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", 0)))  # before NCCL picks a device
    dist.init_process_group(backend="nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
    torch.backends.cuda.matmul.allow_tf32 = False
    device = "the CPU interpreter (cutelab's emulated device)" if emulating() else torch.cuda.get_device_name()
    timer = Timer(a.iters)
    rows: List[Dict[str, Any]] = []
    meta = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "world": world,
            "device": device, "rounds": a.rounds, "iters": a.iters, "compiler": by}

    def emit(row: Dict[str, Any]) -> None:
        row = {**meta, **row}
        rows.append(row)
        if rank == 0:
            print(json.dumps(row), flush=True)

    for s in (a.sizes.split(",") if any(o in ALLREDUCES for o in only) else []):
        nbytes = _size(s)
        progs = allreduce_programs(nbytes, [o for o in only if o in ALLREDUCES])
        inp = progs.pop("_input")
        expected = inp.clone()
        dist.all_reduce(expected)
        timed: Dict[str, Callable[[], None]] = {}
        notes: Dict[str, str] = {}
        for name in [o for o in ALLREDUCES if o in progs]:
            entry = progs[name]
            if isinstance(entry, str):
                emit({"kind": "allreduce", "bytes": nbytes, "program": name, "status": entry})
                continue
            fn, out, after, *note = entry
            why = None
            try:
                fn()
                torch.cuda.synchronize()
                torch.testing.assert_close(out.cpu(), expected.cpu(), rtol=1e-5, atol=1e-5)
            except Exception as e:  # noqa: BLE001 - reported as the row's status
                traceback.print_exc()
                why = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
            if not _everywhere(why is None):  # every rank times it, or none (the timings meet in barriers)
                emit({"kind": "allreduce", "bytes": nbytes, "program": name,
                      "status": f"failed: {why or 'on another rank'}"})
                continue
            if after:
                after()
            timed[name] = fn
            if note:
                notes[name] = note[0]
        b2b_ok = [k for k in timed if k not in notes]
        res = rounds(list(timed), timed, timer, a.rounds, single_only=list(notes))
        for name, r in res.items():
            t = (r["b2b_ms"] if name in b2b_ok else r["single_ms"]) / 1e3
            algbw = nbytes / t / 1e9
            emit({"kind": "allreduce", "bytes": nbytes, "program": name, "status": "ok",
                  "b2b_ms": r["b2b_ms"] if name in b2b_ok else None, "single_ms": r["single_ms"],
                  "host_us": r["host_us"], "algbw_GBps": algbw, "busbw_GBps": algbw * 2 * (world - 1) / world,
                  "note": notes.get(name, "")})
        del progs, timed
        gc.collect()
        dist.barrier()

    for shape in (a.gemm.split(":") if any(o in GEMMS for o in only) else []):
        M, N, K = (int(x) for x in shape.split(","))
        progs = gemm_programs(M, N, K, [o for o in only if o in GEMMS], a.smoke)
        pr = progs.pop("_problem")
        timed = {}
        for name in [o for o in GEMMS if o in progs]:
            why = None
            try:
                pr.C.zero_()
                progs[name]()
                torch.cuda.synchronize()
            except Exception as e:  # noqa: BLE001
                traceback.print_exc()
                why = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
            if _everywhere(why is None):  # (the check's collectives run on every rank or on none)
                try:
                    pr.check(name, roundings=2 if name == "fused" else world + 1)  # NCCL sums in bf16 step by step
                except AssertionError as e:
                    why = f"AssertionError: {str(e).splitlines()[0]}"
            if not _everywhere(why is None):
                emit({"kind": "gemm", "mnk": [M, N, K], "program": name, "status": f"failed: {why or 'on another rank'}"})
                continue
            timed[name] = progs[name]
        res = rounds(list(timed), timed, timer, a.rounds)
        flops = 2 * M * N * K
        for name, r in res.items():
            emit({"kind": "gemm", "mnk": [M, N, K], "program": name, "status": "ok", "b2b_ms": r["b2b_ms"],
                  "single_ms": r["single_ms"], "host_us": r["host_us"], "tflops_per_rank": flops / r["b2b_ms"] / 1e9})
        del progs, timed, pr
        gc.collect()
        dist.barrier()

    if rank == 0:
        print(table(rows, meta))
        if a.json:
            with open(a.json, "w") as f:
                json.dump(rows, f, indent=1)
    dist.destroy_process_group()
    return 0 if all(r["status"] == "ok" or r["status"].startswith("skipped") for r in rows) else 1


def table(rows: List[Dict[str, Any]], meta: Dict[str, Any]) -> str:
    """The markdown table for RESULTS.md."""
    ms = lambda v: "-" if v is None else f"{v:.4f}"  # noqa: E731
    out = [f"{meta['date']}, {meta['world']} ranks on {meta['device']}, kernels compiled by {meta['compiler']}; "
           f"medians of {meta['rounds']} rounds "
           f"(slowest rank), {meta['iters']} call(s) each", "",
           "| all-reduce (f32) | program | back to back ms | single launch ms | algbw GB/s | busbw GB/s | host us/call |",
           "|---|---|---|---|---|---|---|"]
    for r in rows:
        if r["kind"] != "allreduce":
            continue
        if r["status"] != "ok":
            out.append(f"| {_fmt_size(r['bytes'])} | {r['program']} | {r['status']} | | | | |")
            continue
        b2b = ms(r["b2b_ms"]) if r["b2b_ms"] is not None or not r.get("note") else f"- ({r['note']})"
        out.append(f"| {_fmt_size(r['bytes'])} | {r['program']} | {b2b} | {ms(r['single_ms'])} | "
                   f"{r['algbw_GBps']:.1f} | {r['busbw_GBps']:.1f} | {r['host_us']:.1f} |")
    g = [r for r in rows if r["kind"] == "gemm"]
    if g:
        out += ["", "| GEMM + all-reduce (bf16, per rank M,N,K) | program | back to back ms | single launch ms | "
                "TFLOP/s per rank | host us/call |", "|---|---|---|---|---|---|"]
        for r in g:
            mnk = "x".join(str(v) for v in r["mnk"])
            if r["status"] != "ok":
                out.append(f"| {mnk} | {r['program']} | {r['status']} | | | |")
                continue
            out.append(f"| {mnk} | {r['program']} | {ms(r['b2b_ms'])} | {ms(r['single_ms'])} | "
                       f"{r['tflops_per_rank']:.1f} | {r['host_us']:.1f} |")
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
