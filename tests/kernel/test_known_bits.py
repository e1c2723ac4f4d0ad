"""Possible-bits masks of registers (trace.RegVar.bits, proved by carry.Carry for a moving
view's offset) and their use by the CUDA printer's swizzle split (cuda._possible_bits,
cuda.swz_split): masks checked against every value the CPU interpreter's registers actually hold,
the split identity checked on those values, and tensorop_gemm's mainloop ldmatrix addresses."""

from __future__ import annotations

import itertools
import random
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
from cutelab.kernel.cuda import printer as cuda
from cutelab.kernel.cpu import interpreter as interp
from cutelab.kernel.frontend.carry import _value_bits
from cutelab.kernel.launch.plan import capture
from cutelab.kernel.ir.symbolic import Expr, Lin, Var, atoms, evaluate, swizzle_expr
from cutelab.kernel.ir.nodes import Load, Reg, RegVar, Store, walk
from cutelab.numeric import Int32, Uint32
from cutelab.runtime import from_dlpack

ROOT = Path(__file__).resolve().parents[2]


def _covers(mask: int, v: int) -> bool:
    return v & ~mask == 0


# --------------------------------------------------------------------------- the masks themselves

def test_possible_bits_of_register_atoms_cover_every_value():
    """_possible_bits of sums of a masked register times 2**j and thread terms: every value the
    atoms can take (the register over every value its mask and range allow) sets no other bit."""
    rng = random.Random(7)
    for trial in range(300):
        reg = Reg(trial, Int32, 1, None, mutable=True)
        rv = RegVar((reg, 0))
        bits = rng.choice([0b1110, 0b1001110, -64, -64 | 0b110, -2, ~0b10000, 0b1100000])
        rv.bits = bits
        rv.lo, rv.hi = (-300, 300) if bits < 0 else (0, bits)
        t = Var("tid.x", rng.choice([1, 2, 4, 8, 6]))
        j = rng.choice([0, 1, 2, 5])
        x = rv * (1 << j) + t * rng.choice([1, 2, 16, 32, 3])
        assert isinstance(x, Lin) or t.extent == 1
        if not isinstance(x, Lin):
            continue
        mask = cuda._possible_bits(x)
        vals = [v for v in range(rv.lo, rv.hi + 1) if _covers(bits, v)]
        for v, tv in itertools.product(vals, range(t.extent)):
            got = sum(c * (v if a is rv else tv) for a, c in x.terms) + x.const
            assert _covers(mask, got), (bits, j, x.expr_str(), v, tv, bin(mask))


@pytest.mark.parametrize("dtype", [Int32, Uint32])
def test_value_bits_cover_every_wrapped_value(dtype):
    """_value_bits(e, dtype) against every value of random expressions over small thread indices,
    wrapped to dtype as the register holds them (including sums that overflow Int32)."""
    rng = random.Random(3)
    w = dtype.width
    for _ in range(200):
        t, u = Var("tid.x", rng.choice([2, 3, 8])), Var("tid.y", rng.choice([1, 2, 4]))
        ct = rng.choice([1, 2, 4, 64, 3, 1 << 28, 1 << 30])
        cu = rng.choice([8, 16, 1024, 5, 1 << 29])
        c = rng.choice([0, 1, 16, 32, 2048, 2080, -4, 1 << 31, (1 << 31) - 8])
        e = t * ct + u * cu + c
        m = _value_bits(e, dtype)
        for a, b in itertools.product(range(t.extent), range(u.extent)):
            v = (a * ct + b * cu + c) % (1 << w)
            if dtype is Int32 and v >= 1 << 31:
                v -= 1 << 32
            assert _covers(m, v), (e.expr_str(), a, b, v, bin(m))
    assert _value_bits(7, Int32) == 7 and _value_bits(-8, Int32) == -8


# --------------------------------------------------------------------------- moving views, run

@cute.kernel
def movers(A: cute.Tensor, O: cute.Tensor, n: cutlass.Int32):
    """Views of A that runtime loops and branches move: by a wrap-around stage register, by the
    loop index, by pointer arithmetic on themselves, and per thread in a branch."""
    t, _, _ = cute.arch.thread_idx()
    v = A[t, None, 0]
    w = A[t, None, 1]
    x = A[t, None, 0]
    stage = cutlass.Int32(0)
    for i in range(n):
        O[i * 8 + t] = v[0] + v[1] + w[1] + x[0]
        stage = stage + 1
        if stage == cute.size(A, mode=[2]):
            stage = 0
        v = A[t, None, stage]
        x = A[t, None, (i + 1) % cute.size(A, mode=[2])]
        w = cute.make_tensor(w.iterator + 4, w.layout)
        if t % 2 == 0:
            w = A[t, None, 0]
    O[n * 8 + t] = v[0] + x[1] + w[0]


def _masked(ir):
    """The RegVars with a mask that the IR's accesses read."""
    out = {}
    for op in walk(ir.body):
        if isinstance(op, (Load, Store)):
            for a in atoms(op.base):
                if isinstance(a, RegVar) and a.bits is not None:
                    out[a.ref[0].id] = a
    return out


def _run_recording(ir, buffers, scalars, watch):
    """Run ir in the CPU interpreter; every value each watched register is set to (all threads)."""
    seen = {i: set() for i in watch}
    real = interp._compute

    def compute(b, s):
        v = real(b, s)
        if s.dst.id in seen:
            seen[s.dst.id].update(int(x) for x in np.asarray(v).reshape(-1))
        return v

    interp._compute = compute
    try:
        interp.interpret(ir, buffers, scalars=scalars)
    finally:
        interp._compute = real
    return seen


def _trace_movers(shape, stride, n, threads=8):
    size = 1 + sum((s - 1) * d for s, d in zip(shape, stride))
    A = np.arange(size + 4 * n + 8, dtype=np.float32)  # w moves by 4 a trip
    O = np.zeros(8 * (n + 1) + threads, np.float32)
    a = from_dlpack(A)
    with capture() as ks:
        movers(cute.make_tensor(a.iterator, cute.make_layout(shape, stride=stride)), from_dlpack(O), n).launch(
            grid=1, block=threads, interpret=True)
    return ks[0], {0: A, 1: O}, {2: n}


def test_masks_of_moving_views_are_exact_where_known():
    ir, bufs, sc = _trace_movers((8, 2, 4), (2, 1, 64), 10)
    masks = sorted(rv.bits for rv in _masked(ir).values())
    # the thread's 2 * tid.x (and the constant) is each view's fixed part, outside its register;
    # v, x: the register holds 64 * stage (a register: any multiple of 64; the loop index's
    # (i + 1) % 4: 0..3, bits 6..7); w moves by itself by 4 per trip (or back by 64): multiples of 4
    assert -64 in masks and 0b11000000 in masks and -4 in masks, [bin(m) for m in masks]
    # and they let constants and themselves out of swizzles (checked on the values the registers hold)
    regs = _masked(ir)
    seen = _run_recording(ir, bufs, sc, regs)
    assert _check_split(regs, seen, 10) >= 20
    # the check has teeth: the first offset's mask alone (0: v starts at stage 0) misses the values it moves to
    assert any(v != 0 for rid, rv in regs.items() if rv.bits == -64 for v in seen[rid])


@pytest.mark.parametrize("seed", range(24))
def test_masks_cover_every_value_the_interpreter_holds(seed):
    """Random strides and trip counts: every value each masked register takes in the CPU
    interpreter (each thread, each trip) is within its mask, and the split that swz_split makes
    with the mask gives the swizzle's value for each of them and every constant tried."""
    rng = random.Random(seed)
    threads = 8
    stride = (rng.choice([1, 2, 4, 8, 16]), rng.choice([1, 2]), rng.choice([16, 24, 64, 100, 128, 512]))
    shape = (threads, 2, rng.choice([2, 3, 4]))
    n = rng.choice([0, 1, 3, 7])
    ir, bufs, sc = _trace_movers(shape, stride, n, threads)
    regs = _masked(ir)
    assert regs
    seen = _run_recording(ir, bufs, sc, regs)
    _check_split(regs, seen, n)


def _check_split(regs, seen, n):
    splits = 0
    for rid, rv in regs.items():
        assert seen[rid] or n == 0
        for v in seen[rid]:
            assert _covers(rv.bits, v), (rv.c_name, v, bin(rv.bits))
        for (b, m, s), c in itertools.product([(3, 3, 3), (2, 4, 3), (3, 4, 3), (1, 5, 2)], [8, 16, 32, 2080, 96, 4]):
            e = swizzle_expr(rv + c, b, m, s)
            got = cuda.swz_split(e)
            if got is None:
                continue
            splits += 1
            x2, k, c_add = got
            for val in seen[rid]:
                env = {rv.name: np.int64(val)}
                xv = int(evaluate(x2, env)) if isinstance(x2, Expr) else x2
                yv = int(evaluate(c_add, env)) if isinstance(c_add, Expr) else c_add
                assert _sw(val + c, b, m, s) == (_sw(xv, b, m, s) ^ k) + yv, (rv.c_name, val, c, b, m, s)
    return splits


def _sw(x, b, m, s):
    ymask = ((1 << b) - 1) << (m + s)
    return x ^ ((x & ymask) >> s)


def test_a_stage_register_is_added_after_the_swizzle_of_the_fixed_part():
    """sw(T + R + c), R a moving view's register whose values are multiples of 2**(m+s+b): printed
    as (sw(T) ^ k) + R + c_add, so sw(T) is the same text for every stage (nvcc computes it once)."""
    ir, bufs, sc = _trace_movers((8, 2, 4), (2, 1, 64), 3)
    rv = next(r for r in _masked(ir).values() if r.bits == -64)
    t = Var("tid.x", 8)
    texts = [re.sub(r"\((?:long long|int)\)|(?<=\d)ll\b", "", cuda.int_expr(swizzle_expr(t * 2 + rv + c, 2, 1, 2))[0])
             for c in (0, 16, 80)]
    fixed = "((2 * (threadIdx.x)) ^ (((2 * (threadIdx.x)) & 24) >> 2))"
    assert all(fixed in x and rv.c_name in x.split(fixed)[-1] for x in texts), texts  # the register after it
    for val in (0, 64, 128, -64, 1 << 20):
        for c, x in zip((0, 16, 80), texts):
            for tv in range(8):
                want = _sw(2 * tv + val + c, 2, 1, 2)
                got = eval(x.replace(rv.c_name, str(val)).replace("threadIdx.x", str(tv)))
                assert got == want, (x, val, c, tv)


def test_a_register_written_by_other_code_gets_no_mask():
    """Only a moving view's own register is proved: a plain Int32 register read in an index
    (trace's RegVar for a loaded or computed value) has no mask, so nothing splits over it."""
    ir, _, _ = _trace_movers((8, 2, 4), (2, 1, 64), 3)
    for op in walk(ir.body):
        if isinstance(op, (Load, Store)):
            for a in atoms(op.base):
                if isinstance(a, RegVar) and a.bits is None:
                    assert cuda._possible_bits(a * 64) == -64


# --------------------------------------------------------------------------- tensorop_gemm

_RENDER = """
import sys
sys.path.insert(0, {examples!r})
import torch
import cutelab as cutlass
from cutelab.kernel.cuda.fakegpu import fake_gpu, fake_cuda_tensor
from cutelab.kernel.launch.plan import last_launch
from cutelab.runtime import make_fake_stream
with fake_gpu():
    sys.argv = ["tensorop_gemm"]
    import tensorop_gemm as tg
    m = n = k = 4096
    a = fake_cuda_tensor(torch.empty((1, k, m), dtype=torch.float16).permute(0, 2, 1))
    b = fake_cuda_tensor(torch.empty((1, k, n), dtype=torch.float16))
    c = fake_cuda_tensor(torch.empty((1, m, n), dtype=torch.float16))
    a_, b_, c_ = tg.mark_dynamic_layout(a, b, c, 1, 2, 2, cutlass.Float16, cutlass.Float16)
    gemm = tg.TensorOpGemm(cutlass.Float16, cutlass.Float16, cutlass.Float32, (2, 2, 1), False)
    tg.bmm(gemm, a_, b_, c_, make_fake_stream())
    sys.stdout.write(last_launch().source)
"""


def test_tensorop_gemm_mainloop_ldmatrix_addresses_all_split():
    """The mainloop's ldmatrix addresses are swizzles of a moving view's offset register plus a
    constant (e.g. r37[0] + 2080): with the register's mask every one prints as (sw(r) ^ k) + c,
    so nvcc computes sw(r) once (before: the 4 whose constant has a bit below the swizzle's top
    recomputed the swizzle each)."""
    import os

    pytest.importorskip("torch")
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-c", _RENDER.format(examples=str(ROOT / "examples" / "dsl"))],
                       capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    addrs = re.findall(r"ldsm\d+_addr = .*", r.stdout)
    over_regs = [a for a in addrs if re.search(r"r\d+\[0\]", a)]
    assert len(addrs) == 24 and len(over_regs) >= 8
    # an unsplit swizzle of a register sum: (r + c) ^ (((r + c) & mask) >> s)
    unsplit = [a for a in over_regs if re.search(r"\(\(long long\)r\d+\[0\]\) \+ \d+ll\) \^", a)]
    assert not unsplit, unsplit[:2]
    assert sum(" ^ 32ll) + " in a for a in over_regs) >= 4
