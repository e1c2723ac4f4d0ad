"""Value ranges of registers (kernel/analysis/ranges.py): hand-built IR with known answers, the launch's
bounds checks using them, random programs against the CPU interpreter's actual values, and the
DSL GEMM examples' mainloops, which must need no guard on the GPU."""

from __future__ import annotations

import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from cutelab.errors import LaunchError
from cutelab.kernel.analysis import ranges
from cutelab.kernel.cpu.interpreter import interpret
from cutelab.kernel.analysis.bounds import check_bounds, check_deferred
from cutelab.kernel.ir.symbolic import Var
from cutelab.kernel.ir.nodes import ArgVar, Assign, Block, Compute, For, If, KernelIR, Load, LoopVar, Param, Reg, RegVar, ScalarParam, Store
from cutelab.numeric import Boolean, Float32, Int32

ROOT = Path(__file__).resolve().parents[2]


class Prog:
    """A small kernel IR built by hand: one block of `threads` threads unless told."""

    def __init__(self, threads: int = 32, grid: int = 1):
        self.regs = []
        self.params = []
        self.body = Block()
        self.cur = self.body
        self.threads, self.grid = threads, grid
        self.tid = Var("tid.x", threads)
        self.bid = Var("bid.x", grid)

    def reg(self, dtype=Int32, mutable=False, n=1):
        r = Reg(len(self.regs), dtype, n, self.body if mutable else self.cur, mutable)
        self.regs.append(r)
        return r

    def param(self, name, length, dtype=Float32):
        p = Param(len(self.params), name, dtype, 4, length)
        self.params.append(p)
        return p

    def scalar(self, name):
        p = ScalarParam(len(self.params), name, Int32)
        self.params.append(p)
        return ArgVar(p)

    def emit(self, op):
        self.cur.ops.append(op)
        return op

    def compute(self, op, *args, dtype=Int32):
        d = self.reg(dtype)
        self.emit(Compute(d, op, tuple((a,) for a in args), src_dtype=None if op not in ranges._CMP_OPS else Int32))
        return (d, 0)

    def assign(self, m, v):
        self.emit(Assign(m, (0,), (v,)))

    def for_(self, lo, hi, step=1):
        """As Tracer.begin_for: the variable ranges over the hull of the bounds' ranges."""
        from math import gcd

        from cutelab.kernel.ir.symbolic import sym_div, sym_range

        self.loops = getattr(self, "loops", 0) + 1
        (llo, lhi), (hlo, hhi) = sym_range(lo), sym_range(hi)
        vlo, vhi = (llo, hhi - 1) if step > 0 else (hlo + 1, lhi)
        var = LoopVar(f"i{self.loops}", vlo, vhi, gcd(sym_div(lo), abs(step)))
        f = For(var, lo, hi, step, Block(self.cur), None)
        self.emit(f)
        return f, var

    def if_(self, cond):
        op = If(cond, Block(self.cur), Block(self.cur))
        self.emit(op)
        return op

    def ir(self):
        return KernelIR("k", self.params, self.body, self.regs, (self.grid, 1, 1), (self.threads, 1, 1))


class _Into:
    """with p.into(block): ops go to block."""

    def __init__(self, p, blk):
        self.p, self.blk = p, blk

    def __enter__(self):
        self.old = self.p.cur
        self.p.cur = self.blk

    def __exit__(self, *a):
        self.p.cur = self.old


Prog.into = lambda self, blk: _Into(self, blk)


def _stage_counter_kernel(stages=4, trips=100):
    """s = 0; for i: r = s; n = r + 1; s = n; if n == stages: s = 0;  load A[tid + 32 * r]"""
    p = Prog()
    A = p.param("A", 32 * stages)
    s = p.reg(mutable=True)
    p.assign(s, 0)
    f, i = p.for_(0, trips)
    with p.into(f.body):
        r = p.compute("mov", (s, 0))
        dst = p.reg(Float32)
        ld = p.emit(Load(dst, A, p.tid + RegVar(r) * 32, (0,)))
        n = p.compute("add", r, 1)
        c = p.compute("eq", n, stages, dtype=Boolean)
        p.assign(s, n)
        br = p.if_(c)
        with p.into(br.then):
            p.assign(s, 0)
    return p, s, ld


def test_stage_counter_wraps_around():
    p, s, ld = _stage_counter_kernel(4)
    a = ranges.analyze(p.ir())
    assert a.value_at_end((s, 0)).range() == (0, 3)
    rec = a.record(ld)
    (v,) = rec.env.values()
    assert v.range() == (0, 3)
    ir = p.ir()
    check_bounds(ir, "gpu")
    assert not ir.guards  # A has 32 * 4 elements: proved


def test_stage_counter_one_stage_too_many_stays_guarded():
    p, s, ld = _stage_counter_kernel(5)  # s reaches 4: A[tid + 128] leaves A's 160 elements? no: 32*5 = 160
    p.params[0].length = 32 * 4  # but A holds only 4 stages
    ir = p.ir()
    check_bounds(ir, "gpu")
    assert len(ir.guards) == 1


def test_refinement_follows_copies_and_select():
    """x = g + 1 (g in [1, 9]); y = select(x < 10, x', 1) where x' recomputes g + 1: y in [1, 9]."""
    p = Prog()
    g = p.reg(mutable=True)
    p.assign(g, 5)
    f, i = p.for_(0, 50)
    with p.into(f.body):
        r = p.compute("mov", (g, 0))
        x = p.compute("add", r, 1)
        c = p.compute("lt", x, 10, dtype=Boolean)
        x2 = p.compute("add", r, 1)
        y = p.compute("select", c, x2, 1)
        p.assign(g, y)
    a = ranges.analyze(p.ir())
    assert a.value_at_end((g, 0)).range() == (1, 9)


def test_a_branch_on_a_copy_compared_as_an_expression_bounds_the_variable():
    """CUTLASS's Hopper dense_gemm.py producer: c = 0; for i: r = c; if warp == 0 and (r < 16) != 0:
    load A[32 * r' + tid] (r' = c); c = c + 1. The comparison is an index expression of r (not a
    compare op), the branch tests r, a copy of c: c, and the load's r', stay in [0, 16] / [0, 15]."""
    from cutelab.kernel.ir.symbolic import Cmp, floordiv

    p = Prog(threads=64)
    A = p.param("A", 32 * 16)
    c = p.reg(mutable=True)
    p.assign(c, 0)
    f, i = p.for_(0, 100)
    with p.into(f.body):
        r = p.compute("mov", (c, 0))
        w = p.compute("ne", Cmp("==", floordiv(p.tid, 32), 0), 0, dtype=Boolean)
        lt = p.compute("ne", Cmp("<", RegVar(r), 16), 0, dtype=Boolean)
        both = p.compute("and", w, lt, dtype=Boolean)
        br = p.if_(both)
        with p.into(br.then):
            r2 = p.compute("mov", (c, 0))
            dst = p.reg(Float32)
            ld = p.emit(Load(dst, A, p.tid % 32 + RegVar(r2) * 32, (0,)))
            n = p.compute("add", (c, 0), 1)
            p.assign(c, RegVar(n))
    a = ranges.analyze(p.ir())
    assert a.value_at_end((c, 0)).range() == (0, 16)
    (v,) = a.record(ld).env.values()
    assert v.range() == (0, 15)
    ir = p.ir()
    check_bounds(ir, "gpu")
    assert not ir.guards


def test_induction_variable_with_its_guard_proves_the_access():
    """k = 3 before the loop, k += 1 each trip; the access A[32 * k + tid] runs under k < 16 (the
    tensorop pattern `if k_tile + stages - 1 < k_tile_count`): in bounds for 16 * 32 elements."""
    p = Prog()
    A = p.param("A", 16 * 32)
    k = p.reg(mutable=True)
    p.assign(k, 3)
    f, i = p.for_(0, 100)
    with p.into(f.body):
        r = p.compute("mov", (k, 0))
        br = p.if_(i + 3 < 16)
        with p.into(br.then):
            ld = p.emit(Load(p.reg(Float32), A, p.tid + 32 * RegVar(r), (0,)))
        n = p.compute("add", r, 1)
        p.assign(k, n)
    ir = p.ir()
    a = ranges.analyze(ir)
    (v,) = a.record(ld).env.values()
    assert v.exact and v.expr().expr_str() == "(loop.i1 + 3)"
    assert a.value_at_end((k, 0)).range() == (3, 103)
    check_bounds(ir, "gpu")
    assert not ir.guards
    # without the guard: k reaches 102, out of A: guarded
    br.cond = i + 3 < 100
    ir = p.ir()
    check_bounds(ir, "gpu")
    assert len(ir.guards) == 1


def test_persistent_tile_guard_bounds_the_index_itself():
    """A persistent loop: tile = bid + i * grid over more trips than tiles (the last one guarded off
    by `if tile < tiles`), and the access at q * tiles + tile for a later slot q: the loop variable
    alone reaches past the end (bid + i * grid up to 4 * 132 - 1), the guard bounds the index itself."""
    tiles, grid = 512, 132
    p = Prog(threads=32, grid=grid)
    A = p.param("A", 2 * tiles)
    f, i = p.for_(0, 4)  # ceil(512 / 132) trips
    with p.into(f.body):
        br = p.if_(p.bid + grid * i < tiles)
        with p.into(br.then):
            p.emit(Load(p.reg(Float32), A, p.bid + grid * i + tiles, (0,)))
    ir = p.ir()
    check_bounds(ir, "gpu")
    assert not ir.guards
    br.cond = p.bid + grid * i < tiles + 1  # one tile too many: not proved, guarded
    ir = p.ir()
    check_bounds(ir, "gpu")
    assert len(ir.guards) == 1


def _block_dependent_loop(shift, inner=None):
    """FlashAttention-2's causal loop: for i in range(2, 2 * bid + 2), n = 2 * bid + shift - i in a
    register (the key block n_block_max - i), A[tid + 32 * n] read, optionally under ``if inner(i)``;
    A holds 32 * 16 elements. The index reads a register: proved by the ranges, else guarded."""
    p = Prog(threads=32, grid=8)
    A = p.param("A", 32 * 16)
    f, i = p.for_(2, 2 * p.bid + 2)
    with p.into(f.body):
        n = p.compute("sub", 2 * p.bid + shift, i)
        blk = f.body
        if inner is not None:
            br = p.if_(inner(p, i))
            blk = br.then
        with p.into(blk):
            p.emit(Load(p.reg(Float32), A, p.tid + 32 * RegVar(n), (0,)))
    ir = p.ir()
    check_bounds(ir, "gpu")
    return ir


def test_loop_bound_of_the_block_bounds_its_variable_per_thread():
    """i <= 2 * bid + 1 per block: the index tid + 32 * (2 * bid + 1 - i) >= tid for every thread,
    though i's interval [2, 15] and bid's [0, 7] apart would reach -14 * 32 (guarded before)."""
    assert not _block_dependent_loop(1).guards
    # one row lower: the last trip (i = 2 * bid + 1) reads A[tid - 32]: stays guarded
    assert len(_block_dependent_loop(0).guards) == 1
    # ... unless a branch inside skips that trip (if 2 * bid + 1 - i > 0: the causal K load), a second
    # bound of i besides the loop's, of which the proof takes the better
    assert not _block_dependent_loop(0, lambda p, i: 2 * p.bid + 1 - i > 0).guards
    assert len(_block_dependent_loop(0, lambda p, i: 2 * p.bid + 2 - i > 0).guards) == 1
    # the upper end: tid + 32 * (2 * bid + 2 - i) reaches 32 * 14 + 31 < 32 * 16 at i = 2, bid = 7: proved;
    # 2 * bid + 4 - i reaches 32 * 16 + 31: guarded
    assert not _block_dependent_loop(2).guards
    assert len(_block_dependent_loop(4).guards) == 1


def test_doubling_register_widens_to_its_type_and_stays_guarded():
    p = Prog()
    A = p.param("A", 1 << 20)
    x = p.reg(mutable=True)
    p.assign(x, 1)
    f, i = p.for_(0, 10)
    with p.into(f.body):
        r = p.compute("mov", (x, 0))
        p.emit(Load(p.reg(Float32), A, RegVar(r), (0,)))
        p.assign(x, p.compute("mul", r, 2))
    ir = p.ir()
    a = ranges.analyze(ir)
    lo, hi = a.value_at_end((x, 0)).range()
    assert lo <= 1 and hi == 2**31 - 1  # wraps around in Int32: the whole range (not [1, 1024])
    check_bounds(ir, "gpu")
    assert len(ir.guards) == 1


def test_index_loaded_from_memory_stays_guarded():
    p = Prog()
    A = p.param("A", 64, Int32)
    B = p.param("B", 64)
    f, i = p.for_(0, 4)
    with p.into(f.body):
        d = p.reg(Int32)
        p.emit(Load(d, A, p.tid, (0,)))
        p.emit(Store(B, RegVar((d, 0)), (0,), (1.0,)))
    ir = p.ir()
    check_bounds(ir, "gpu")
    assert len(ir.guards) == 1


def test_scalar_argument_proof_is_checked_again_for_other_values():
    """A[tid * n + j] for j in range(n) with n a scalar argument... proved for n = 2 (A has 64
    elements, 32 threads), and re-checked at a launch with n = 3: refused, nothing launched."""
    p = Prog()
    A = p.param("A", 64)
    n = p.scalar("n")
    j = p.reg(mutable=True)
    p.assign(j, 0)
    f, i = p.for_(0, 2)
    with p.into(f.body):
        r = p.compute("mov", (j, 0))
        br = p.if_(p.tid < 32)
        with p.into(br.then):
            p.emit(Load(p.reg(Float32), A, p.tid * n + RegVar(r), (0,)))
        p.assign(j, p.compute("add", r, 1))
    ir = p.ir()
    deferred = check_bounds(ir, "gpu", launch_scalars={"arg.n": 2})
    assert not ir.guards and len(deferred) == 1
    check_deferred(ir, deferred, {"arg.n": 2})
    with pytest.raises(LaunchError, match=r"k: the load from A .*not for n = 3.*Nothing was launched"):
        check_deferred(ir, deferred, {"arg.n": 3})
    ir = p.ir()
    check_bounds(ir, "gpu", launch_scalars={"arg.n": 3})  # compiled with n = 3: guarded
    assert len(ir.guards) == 1


# --------------------------------------------------------------------------- random programs

class _Probe(ranges.Analysis):
    """The analysis, also keeping the Val of each Store's value (at the last pass over it)."""

    def note(self, op, k, base, guards, S):
        super().note(op, k, base, guards, S)
        if isinstance(op, Store):
            self.seen = getattr(self, "seen", {})
            self.seen[id(op)] = self.val(op.src[0], S)


def _random_program(rng: random.Random):
    """Mutable Int32 registers x0..x2 changed in a runtime loop (nested loops and branches
    inside); every value is stored to OUT[slot, iteration, thread] so the interpreter's actual
    values can be compared with the analysis's ranges."""
    T = 8
    p = Prog(threads=T)
    trips = rng.randint(1, 6)
    slots = []
    OUT = p.param("OUT", 1, Int32)  # length set at the end
    xs = [p.reg(mutable=True) for _ in range(3)]
    for x in xs:
        p.assign(x, rng.choice([0, 1, 3, -2, p.tid, p.tid * 2 - 5]))
    f, i = p.for_(0, trips)
    consts = [-3, -1, 0, 1, 2, 3, 4, 7]

    def snap(x):
        return p.compute("mov", (x, 0))

    def statement(depth):
        kind = rng.choice(["add", "add", "sub", "mul", "mod", "wrap", "sel", "if", "min", "cmp", "expr"] +
                          (["loop"] if depth < 1 else []))
        a, b = rng.choice(xs), rng.choice(xs)
        c = rng.choice(consts)
        if kind in ("add", "sub"):
            p.assign(a, p.compute(kind, snap(b), c if rng.random() < 0.7 else snap(a)))
        elif kind == "mul":
            p.assign(a, p.compute("mul", snap(b), rng.choice([-2, 0, 1, 2, 3, 1 << 16, 1 << 20])))  # may wrap
        elif kind == "mod":
            p.assign(a, p.compute(rng.choice(["mod", "floordiv"]), snap(b), rng.choice([2, 3, 4, -3])))
        elif kind == "min":
            p.assign(a, p.compute(rng.choice(["min", "max"]), snap(b), c))
        elif kind == "wrap":  # the stage counter
            n = p.compute("add", snap(a), 1)
            cc = p.compute(rng.choice(["eq", "ge", "gt"]), n, rng.choice([2, 3, 4]), dtype=Boolean)
            p.assign(a, n)
            br = p.if_(cc)
            with p.into(br.then):
                p.assign(a, rng.choice([0, 1, c]))
        elif kind == "sel":
            x = snap(b)
            cc = p.compute(rng.choice(list(ranges._CMP_OPS)), x, c, dtype=Boolean)
            p.assign(a, p.compute("select", cc, p.compute("add", snap(b), rng.choice([0, 1])), rng.choice(consts)))
        elif kind == "cmp":
            x = snap(b)
            if rng.random() < 0.5:
                cc = p.compute(rng.choice(list(ranges._CMP_OPS)), x, c, dtype=Boolean)
            else:  # the comparison as an index expression of the copy, tested != 0 (as traced `if r < n:`)
                from cutelab.kernel.ir.symbolic import Cmp

                cc = p.compute("ne", Cmp(rng.choice(list(ranges._CMP_OPS.values())), RegVar(x), c), 0, dtype=Boolean)
            br = p.if_(cc)
            with p.into(br.then if rng.random() < 0.5 else br.orelse):
                p.assign(a, p.compute("add", snap(b), rng.choice([-1, 1, 2])))
        elif kind == "expr":  # a symbolic operand (an index expression of the thread, or of the loop)
            e = rng.choice([p.tid * 3 - 4, p.tid + c, i * 2 + p.tid, p.tid * (1 << 28)])
            p.assign(a, p.compute(rng.choice(["add", "max", "lt"]), snap(b), e) if rng.random() < 0.7 else e)
        elif kind == "if":
            br = p.if_(p.tid < rng.randint(1, T))
            with p.into(br.then):
                statement(depth + 1)
        elif kind == "loop":  # an inner loop: any start (per thread, too), step and trip count up to 4
            step = rng.choice([1, 1, 2, 3, -1, -2])
            lo = rng.choice([0, -2, 3, p.tid % 3 - 1])
            n = rng.randint(0, 4)
            hi = lo + step * n if rng.random() < 0.7 else rng.choice([0, 5, -3])
            g, j = p.for_(lo, hi, step)
            with p.into(g.body):
                inner.append((j - lo) // step if step > 0 else (lo - j) // -step)
                for _ in range(rng.randint(1, 3)):
                    statement(depth + 1)
                    if rng.random() < 0.4:
                        slots.append((p.emit(Store(OUT, 0, (0,), (snap(rng.choice(xs)),))), inner[-1]))
                inner.pop()

    inner = []
    with p.into(f.body):
        for _ in range(rng.randint(1, 6)):
            statement(0)
            if rng.random() < 0.5:
                slots.append((p.emit(Store(OUT, 0, (0,), (snap(rng.choice(xs)),))), 0))
        for x in xs:
            slots.append((p.emit(Store(OUT, 0, (0,), (snap(x),))), 0))
    for x in xs:
        slots.append((p.emit(Store(OUT, 0, (0,), (snap(x),))), 0))
    # OUT[slot][outer iteration][inner iteration][thread]
    per = (trips + 1) * 8 * T  # (an inner loop makes at most 7 trips)
    from cutelab.kernel.ir.nodes import walk

    in_loop = {id(op) for op in walk(f.body)}
    for k, (st, j) in enumerate(slots):
        st.base = k * per + ((i if id(st) in in_loop else trips) * 8 + j) * T + p.tid
    OUT.length = len(slots) * per
    return p, [st for st, _ in slots], per, trips


@pytest.mark.parametrize("seed", range(150))
def test_random_programs_stay_within_their_ranges(seed):
    rng = random.Random(seed)
    p, slots, per, trips = _random_program(rng)
    ir = p.ir()
    a = _Probe(ir).run()
    out = np.full(len(slots) * per, np.iinfo(np.int32).min, dtype=np.int32)
    sentinel = out.copy()
    interpret(ir, {0: out})
    for k, st in enumerate(slots):
        got = out[k * per:(k + 1) * per]
        ran = got != sentinel[k * per:(k + 1) * per]
        v = a.seen.get(id(st))
        if v is None:  # never reached (decided branches) or untracked: nothing must have run
            assert not ran.any(), (seed, k)
            continue
        lo, hi = v.range()
        vals = got[ran]
        assert ((vals >= lo) & (vals <= hi)).all(), (seed, k, v, sorted(set(vals.tolist()))[:10])
        if v.exact and ran.any() and isinstance(v.sym, ranges.Expr) is False:
            assert (vals == v.lo).all()


# --------------------------------------------------------------------------- the DSL GEMM examples

_GUARD_COUNT = """
import sys
sys.path.insert(0, {examples!r})
import torch
import cutelab as cutlass
from cutelab import cuda
from cutelab.kernel.cuda.fakegpu import fake_gpu, fake_cuda_tensor
from cutelab.kernel.launch.plan import last_launch
from cutelab.runtime import from_dlpack, make_fake_stream
which, m, n, k = sys.argv[1], *map(int, sys.argv[2:5])
out = sys.argv[5] if len(sys.argv) > 5 else None
with fake_gpu():
    if which == "tensorop":
        sys.argv = ["tensorop_gemm"]
        import tensorop_gemm as tg
        # the example's defaults: A m-major, B n-major, C n-major; f16 in and out, f32 accumulate
        a = fake_cuda_tensor(torch.empty((1, k, m), dtype=torch.float16).permute(0, 2, 1))
        b = fake_cuda_tensor(torch.empty((1, k, n), dtype=torch.float16))
        c = fake_cuda_tensor(torch.empty((1, m, n), dtype=torch.float16))
        a_, b_, c_ = tg.mark_dynamic_layout(a, b, c, 1, 2, 2, cutlass.Float16, cutlass.Float16)
        gemm = tg.TensorOpGemm(cutlass.Float16, cutlass.Float16, cutlass.Float32, (2, 2, 1), False)
        tg.bmm(gemm, a_, b_, c_, make_fake_stream())
    else:
        sys.argv = ["sgemm"]
        import sgemm as sg
        # the example's defaults: A m-major, B k-major, C n-major
        a = fake_cuda_tensor(torch.empty((k, m), dtype=torch.float32).permute(1, 0))
        b = fake_cuda_tensor(torch.empty((n, k), dtype=torch.float32))
        c = fake_cuda_tensor(torch.empty((m, n), dtype=torch.float32))
        a_ = from_dlpack(a, assumed_align=16)
        b_ = from_dlpack(b, assumed_align=16).mark_layout_dynamic(leading_dim=1).mark_compact_shape_dynamic(
            mode=1, divisibility=k)
        c_ = from_dlpack(c, assumed_align=16).mark_layout_dynamic(leading_dim=1).mark_compact_shape_dynamic(
            mode=1, divisibility=n)
        sg.SGemm()(a_, b_, c_, stream=cuda.CUstream(0))
    li = last_launch()
    print("guards", len(li.ir.guards))
    if out:
        open(out, "w").write(li.source)
"""


def _launch_example(which, mnk, out=None):
    import os

    pytest.importorskip("torch")  # the examples build their tensors with torch

    env = dict(os.environ, PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    code = _GUARD_COUNT.format(examples=str(ROOT / "examples" / "dsl"))
    args = [sys.executable, "-c", code, which, *map(str, mnk)] + ([str(out)] if out else [])
    r = subprocess.run(args, capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    return int(r.stdout.split("guards")[-1].split()[0])


@pytest.mark.parametrize("which,mnk", [("tensorop", (256, 256, 512)), ("tensorop", (4096, 4096, 4096)),
                                       ("tensorop", (8192, 8192, 8192)), ("sgemm", (256, 256, 64)),
                                       ("sgemm", (4096, 4096, 4096))])
def test_dsl_gemm_examples_need_no_guards(which, mnk):
    assert _launch_example(which, mnk) == 0


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
def test_tensorop_mainloop_sass_has_no_guard_traffic(tmp_path):
    src = tmp_path / "k.cu"
    assert _launch_example("tensorop", (4096, 4096, 4096), src) == 0
    text = src.read_text()
    assert "cl_fail" not in text.split("__global__")[1]
    cubin = tmp_path / "k.cubin"
    r = subprocess.run(["nvcc", "-arch=sm_90a", "-cubin", "-o", str(cubin), str(src)], capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    nvdis = shutil.which("nvdisasm") or "/tmp/nvdis/x/nvidia/cu13/bin/nvdisasm"
    if not Path(nvdis).exists():
        pytest.skip("nvdisasm is not installed")
    sass = subprocess.run([nvdis, str(cubin)], capture_output=True, text=True, timeout=600).stdout
    # a guard is ISETP + SEL + LDG (the error word's pointer) + ST.E.STRONG.SYS (the error store);
    # the kernel has no plain global load at all (A and B come in by cp.async: LDGSTS)
    assert "STRONG.SYS" not in sass
    assert not re.search(r"\bLDG\.", sass)
    assert sass.count("LDGSTS") >= 8 and sass.count("HMMA") >= 64


import cutelab as cute  # noqa: E402
import cutelab as cutlass  # noqa: E402


@cute.kernel
def nested(A: cute.Tensor, n: cutlass.Int32):
    for i in range(n):
        for j in range(n):
            A[i * 8 + j] = 1.0


def test_loop_bounds_from_a_scalar_argument_prove_nested_loops():
    """A[i * 8 + j] for i, j in range(n): proved from the loops' bounds with n's value (3), the
    proof re-done at a launch with n = 9, which would leave A: refused there."""
    from cutelab.kernel.launch.plan import capture
    from cutelab.runtime import from_dlpack

    A = np.zeros(64, np.float32)
    with capture() as ks:
        nested(from_dlpack(A), 3).launch(grid=1, block=1, interpret=True)
    ir = ks[0]
    deferred = check_bounds(ir, "gpu")  # without the argument's value: guarded, as before
    assert len(ir.guards) == 1
    deferred = check_bounds(ir, "gpu", launch_scalars={"arg.n": 3})
    assert not ir.guards and len(deferred) == 1
    check_deferred(ir, deferred, {"arg.n": 8})  # 7 * 8 + 7 = 63: in bounds
    with pytest.raises(LaunchError, match=r"nested: the store to A at .*test_ranges.py:\d+ was proved in bounds "
                                          r".* but not for n = 9"):
        check_deferred(ir, deferred, {"arg.n": 9})


@cute.kernel
def scatter4(I: cute.Tensor, B: cute.Tensor):
    """Four stores at indices read from memory: unprovable, so each is guarded."""
    t, _, _ = cute.arch.thread_idx()
    for k in range(4):
        B[I[4 * t + k]] = 1.0


def test_guards_read_the_error_word_pointer_once(tmp_path):
    from cutelab.kernel.cuda import printer as cuda
    from cutelab.kernel.analysis.guards import GUARD_ENTRY
    from cutelab.kernel.launch.plan import capture
    from cutelab.runtime import from_dlpack

    I = np.arange(128, dtype=np.int32)
    B = np.zeros(128, np.float32)
    with capture() as ks:
        scatter4(from_dlpack(I), from_dlpack(B)).launch(grid=1, block=32, interpret=True)
    ir = ks[0]
    check_bounds(ir, "gpu")
    assert len(ir.guards) == 4
    src = cuda.render(ir)
    body = src.split("__global__")[1]
    assert body.count("cl_err_ptr") == 1 and GUARD_ENTRY in body and body.count("cl_fail(") == 4
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not installed")
    (tmp_path / "g.cu").write_text(src)
    r = subprocess.run(["nvcc", "-arch=sm_90a", "-cubin", "-o", str(tmp_path / "g.cubin"), str(tmp_path / "g.cu")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    nvdis = shutil.which("nvdisasm") or "/tmp/nvdis/x/nvidia/cu13/bin/nvdisasm"
    if not Path(nvdis).exists():
        pytest.skip("nvdisasm is not installed")
    sass = subprocess.run([nvdis, str(tmp_path / "g.cubin")], capture_output=True, text=True, timeout=300).stdout
    # the four index loads and one read of cl_err_ptr (it was re-read at every guard: 4 more)
    assert len(re.findall(r"\bLDG\.", sass)) == 5, sass


def test_straight_line_kernel_indexed_by_memory_is_checked_as_it_runs():
    """No loop or branch, but an index read from memory: the launch's exact check cannot evaluate
    it (it crashed with a KeyError); the interpreter checks it as it runs, the GPU guards it."""
    from cutelab.runtime import from_dlpack

    I = np.arange(128, dtype=np.int32)
    I[77] = 128
    B = np.zeros(128, np.float32)
    with pytest.raises(LaunchError, match=r"scatter4: store to B: offsets \[1, 128\] fall outside the tensor's 128 "
                                          r"elements; nothing was written \(at .*test_ranges.py:\d+\)"):
        scatter4(from_dlpack(I), from_dlpack(B)).launch(grid=1, block=32, interpret=True)
    assert not B.any()


def test_an_analysis_that_fails_leaves_the_accesses_guarded(monkeypatch):
    def broken(ir):
        raise TypeError("an op the analysis does not know")

    monkeypatch.setattr(ranges, "analyze", broken)
    p, s, ld = _stage_counter_kernel(4)
    ir = p.ir()
    check_bounds(ir, "gpu")
    assert len(ir.guards) == 1  # as without the analysis: guarded, not refused, no crash


def test_gpu_launch_path_reproves_for_new_scalar_values():
    """Through the GPU launch path (fake driver): the first launch (n = 3) compiles the stores
    unguarded, a launch with n = 8 is proved again and launched, one with n = 9 is refused."""
    from cutelab.kernel.cuda.fakegpu import FakeDeviceArray, fake_gpu
    from cutelab.kernel.launch.plan import last_launch
    from cutelab.runtime import from_dlpack

    with fake_gpu() as gpu:
        a = FakeDeviceArray(np.zeros(64, np.float32))
        A = from_dlpack(a)
        nested(A, 3).launch(grid=1, block=1)
        li = last_launch()
        assert li.mode == "gpu" and not li.ir.guards and "cl_fail" not in li.source
        nested(A, 8).launch(grid=1, block=1)
        with pytest.raises(LaunchError, match=r"was proved in bounds .* but not for n = 9.*Nothing was launched"):
            nested(A, 9).launch(grid=1, block=1)
        assert len(gpu.launches) == 2


def _register_bound_loop(length):
    """for i in range(0, min(bid + 1, 4)): A[tid + 32 * i], A of `length` elements: a causal key loop
    whose bound is a traced min, held in a register."""
    p = Prog(threads=32, grid=8)
    A = p.param("A", length)
    n = p.compute("min", p.bid + 1, 4)
    f, i = p.for_(0, RegVar(n))
    with p.into(f.body):
        p.emit(Load(p.reg(Float32), A, p.tid + 32 * i, (0,)))
    ir = p.ir()
    check_bounds(ir, "gpu")
    return ir


def test_loop_bound_in_a_register_is_left_to_the_ranges():
    """The exact per-thread evaluation of an access in a loop binds the loop variable to the loop's
    bounds: a bound read from a register cannot be evaluated so (it raised KeyError: 'reg.N.0' at
    the launch); the ranges take it instead, and, not proving it (they do not bound i by the min),
    guard it, in bounds or not."""
    assert len(_register_bound_loop(32 * 4).guards) == 1  # i <= min(bid + 1, 4) - 1 <= 3
    assert len(_register_bound_loop(32 * 3).guards) == 1  # bid >= 3 reaches A[tid + 96]
