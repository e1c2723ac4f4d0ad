"""The compiler's passes (kernel/passes): their order, switching each off by name, and the
printer's public emit API (cuda/lowering.py) as the only thing instructions print through."""

from __future__ import annotations

import ast
import contextlib
import io
import runpy
from pathlib import Path

import numpy as np
import pytest

import cutelab as cute
from cutelab.kernel.cuda.lowering import LoweringContext
from cutelab.kernel.cuda.printer import CudaRenderer, render
from cutelab.kernel.launch.plan import capture
from cutelab.kernel.passes import PASS_NAMES, PIPELINE, Options, run_passes
from cutelab.runtime import from_dlpack

SRC = Path(__file__).resolve().parents[2] / "src" / "cutelab"
SEEDS = Path(__file__).resolve().parents[2] / "examples" / "seeds"


def _trace(name, a, b, n=1024):
    """The IR of one of examples/seeds' copy kernels over an n x n fp16 tensor (as test_cuda.py)."""
    S = np.zeros((n, n), np.float16)
    with contextlib.redirect_stdout(io.StringIO()):
        with capture() as ks:
            runpy.run_path(str(SEEDS / f"{name}.py"), run_name="t")["launch_copy"](
                from_dlpack(S, assumed_align=16), from_dlpack(S.copy(), assumed_align=16), a, b)
    return ks[0]


def _add16():
    """c = a + b on fp16, each thread 16 contiguous elements (two 16-byte vectors, 32 bytes from
    its neighbour's): lane pairs apply."""

    @cute.kernel
    def add(gA: cute.Tensor, gB: cute.Tensor, gC: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        bidx, _, _ = cute.arch.block_idx()
        gC[(None, tidx, bidx)].store(gA[(None, tidx, bidx)].load() + gB[(None, tidx, bidx)].load())

    A = np.zeros(16 * 64 * 8, np.float16)
    t = [cute.make_tensor(from_dlpack(x, assumed_align=16).iterator, cute.make_layout((16, 64, 8)))
         for x in (A, A.copy(), A.copy())]
    with capture() as ks:
        add(*t).launch(grid=(8, 1, 1), block=(64, 1, 1))
    return ks[0]


def _div():
    """A runtime division of the block index by a scalar argument (a structured kernel)."""

    @cute.kernel
    def div(gA: cute.Tensor, gC: cute.Tensor, n: cute.Int32):
        tidx, _, _ = cute.arch.thread_idx()
        bidx, _, _ = cute.arch.block_idx()
        gC[bidx * 32 + tidx] = gA[(bidx // n) * 32 + tidx]

    A = np.zeros(4096, np.float32)
    with capture() as ks:
        div(from_dlpack(A, assumed_align=16), from_dlpack(A.copy(), assumed_align=16), cute.Int32(3)).launch(
            grid=(8, 1, 1), block=(32, 1, 1))
    return ks[0]


def _barrier():
    """A value loaded before a block barrier and used after it (quack's RMSNorm weights), and one
    loaded after it."""

    @cute.kernel
    def early(gA: cute.Tensor, gC: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        w = gA[tidx]
        cute.arch.sync_threads()
        gC[tidx] = w * 2.0 + gA[63 - tidx]

    A = np.zeros(64, np.float32)
    with capture() as ks:
        early(from_dlpack(A, assumed_align=16), from_dlpack(A.copy(), assumed_align=16)).launch(
            grid=(1, 1, 1), block=(64, 1, 1))
    return ks[0]


def _warps(block=(256, 1, 1)):
    """Each thread reads the elements at its warp index and its warpgroup index."""

    @cute.kernel
    def warps(gA: cute.Tensor, gC: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        warp = cute.arch.make_warp_uniform(tidx // 32)
        gC[tidx] = gA[warp] + gA[tidx // 128 + 64]

    A = np.zeros(4096, np.float32)
    with capture() as ks:
        warps(from_dlpack(A, assumed_align=16), from_dlpack(A.copy(), assumed_align=16)).launch(
            grid=(1, 1, 1), block=block)
    return ks[0]


KERNELS = {
    "copy_inner_partition": lambda: _trace("copy_inner_partition", (1, 16), 256),
    "copy_outer_partition": lambda: _trace("copy_outer_partition", (32, 256), (8, 32)),
    "copy_tv_partition": lambda: _trace("copy_tv_partition", (32, 8), (4, 8)),
    "add16": _add16,
    "div": _div,
    "barrier": _barrier,
    "warps": _warps,
}

# kernel -> the passes whose switching off changes its CUDA (the others decide nothing for it)
CHANGES = {
    "copy_inner_partition": {"retile", "cache"},
    "copy_outer_partition": {"remap", "retile", "cache"},
    "copy_tv_partition": {"remap", "vectorize", "cache", "share"},
    "add16": {"vectorize", "pair", "cache", "share"},
    "div": {"cache", "hoist", "share"},
    "barrier": {"cache", "coherent"},
    "warps": {"cache", "uniform"},
}

# pass -> (C text its decision prints, kernel where it shows): gone once the pass is off
MARKS = {
    "remap": ("const unsigned int cl_bid0", "copy_outer_partition"),
    "retile": ("(threadIdx.x & 0xffffffe0u)", "copy_inner_partition"),
    "vectorize": ("reinterpret_cast<const uint4*>", "add16"),
    "pair": ("cl_odd", "add16"),
    "cache": ("__ldg(", "add16"),
    "coherent": ("__ldca(", "barrier"),
    "hoist": ("const int hd", "div"),
    "share": (" ix", "add16"),
    "uniform": ("__shfl_sync(0xffffffffu, (((unsigned int)threadIdx.x) / 32u), 0)", "warps"),
}


@pytest.fixture(scope="module")
def irs():
    return {name: make() for name, make in KERNELS.items()}


def test_the_passes_run_in_order(irs):
    assert PASS_NAMES == ("remap", "coarsen", "retile", "vectorize", "pair", "cache", "coherent", "index32", "hoist",
                          "share", "uniform", "ranges", "loopidx")
    assert [name for name, _ in PIPELINE] == list(PASS_NAMES)
    assert run_passes(irs["add16"], Options()).ran == list(PASS_NAMES)
    assert run_passes(irs["add16"], Options(off=frozenset({"pair", "share"}))).ran == [
        p for p in PASS_NAMES if p not in ("pair", "share")]


def test_only_loads_a_barrier_follows_take_the_coherent_path(irs):
    body = render(irs["barrier"]).split("__global__")[1]
    assert body.count("__ldca(") == 1 and body.count("__ldg(") == 1
    assert body.index("__ldca(") < body.index("__syncthreads();") < body.index("__ldg(")


@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_turning_a_pass_off_by_name(irs, kernel, monkeypatch):
    for v in ("CUTELAB_PASSES_OFF", "CUTELAB_CUDA_PAIR", "CUTELAB_CUDA_RETILE", "CUTELAB_CUDA_REMAP",
              "CUTELAB_CUDA_COARSEN", "CUTELAB_CUDA_LOAD", "CUTELAB_CUDA_STORE"):
        monkeypatch.delenv(v, raising=False)
    ir = irs[kernel]
    base = render(ir)
    changed = set()
    for name in PASS_NAMES:
        monkeypatch.setenv("CUTELAB_PASSES_OFF", name)
        src = render(ir)
        if src != base:
            changed.add(name)
        mark, where = MARKS.get(name, (None, None))
        if where == kernel:
            assert mark in base and mark not in src, name
    assert changed == CHANGES[kernel]


def test_coarsen_is_configured_and_turned_off_by_name(irs, monkeypatch):
    monkeypatch.delenv("CUTELAB_PASSES_OFF", raising=False)
    ir = irs["add16"]
    base = render(ir)
    monkeypatch.setenv("CUTELAB_CUDA_COARSEN", "2")
    r = CudaRenderer(ir)
    src = r.render()
    assert "cl_bid1" in src and r.launch_grid == (ir.grid[0] // 2, 1, 1)
    monkeypatch.setenv("CUTELAB_PASSES_OFF", "coarsen")
    assert render(ir) == base


@pytest.mark.parametrize("name,env", [("pair", "CUTELAB_CUDA_PAIR"), ("retile", "CUTELAB_CUDA_RETILE"),
                                      ("remap", "CUTELAB_CUDA_REMAP")])
def test_the_older_switches_turn_the_same_passes_off(irs, name, env, monkeypatch):
    monkeypatch.delenv("CUTELAB_PASSES_OFF", raising=False)
    ir = irs[MARKS[name][1]]
    monkeypatch.setenv(env, "0")
    old = render(ir)
    monkeypatch.delenv(env)
    monkeypatch.setenv("CUTELAB_PASSES_OFF", name)
    assert render(ir) == old
    assert render(ir, **{name: True}) != old  # an explicit option wins over the environment


def test_load_and_store_configure_the_cache_pass(irs, monkeypatch):
    monkeypatch.delenv("CUTELAB_PASSES_OFF", raising=False)
    monkeypatch.setenv("CUTELAB_CUDA_LOAD", "ldcs")
    monkeypatch.setenv("CUTELAB_CUDA_STORE", "stcs")
    src = render(irs["add16"], pair=False)
    assert "__ldcs(" in src and "__stcs(" in src and "__ldg(" not in src


def test_index32_prints_proved_offsets_in_32_bits(monkeypatch):
    from test_index_mod32 import _gpu_source  # a launch (under fake_gpu) that proves its accesses in bounds

    monkeypatch.delenv("CUTELAB_PASSES_OFF", raising=False)
    src, ir = _gpu_source(5, 3)
    assert render(ir, restrict=False) == src or render(ir) == src
    assert ir.bounds_proved and "long long o" not in src
    monkeypatch.setenv("CUTELAB_PASSES_OFF", "index32")
    assert "const long long o" in render(ir)


def test_an_unknown_pass_name_is_refused(irs, monkeypatch):
    monkeypatch.setenv("CUTELAB_PASSES_OFF", "pair,nosuchpass")
    with pytest.raises(ValueError, match="nosuchpass"):
        render(irs["div"])


def test_the_profiler_reads_the_plan_the_printer_prints(irs, monkeypatch):
    monkeypatch.delenv("CUTELAB_PASSES_OFF", raising=False)
    ir = irs["copy_inner_partition"]
    r = CudaRenderer(ir)
    r.render()
    assert r.plan.retiled and r.retiled is r.plan.retiled
    from cutelab.kernel.cpu.instructions import AccessPlans as _Plans

    plans = _Plans(ir)
    assert set(plans.compiled.retiled) == set(r.plan.retiled)
    load = next(op for op in ir.stmts if id(op) in r.plan.retiled)
    assert all(kind == "retile" for kind, *_ in plans.of(load))


# ---------------------------------------------------------------------------- the emit API

_INSTR_FILES = sorted((SRC / "kernel" / "instr").glob("*.py")) + [SRC / "kernel" / "arch.py", SRC / "kernel" / "ir" / "fault.py",
                                                                  SRC / "pipeline.py"]


def _context_uses(path: Path):
    """(function, attribute) for every ``ctx.attr`` in the functions of path whose lowering
    context parameter is named r or ctx (the instructions' CUDA methods and their helpers)."""
    tree = ast.parse(path.read_text())
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef):
            continue
        names = {a.arg for a in fn.args.args} & {"r", "ctx"}
        if not names or fn.name in ("interpret", "run", "execute"):
            continue
        for node in ast.walk(fn):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in names:
                yield fn.name, node.attr


def test_instructions_print_only_through_the_lowering_context():
    public = {n for n in dir(LoweringContext) if not n.startswith("_")}
    bad = [(p.name, f, a) for p in _INSTR_FILES for f, a in _context_uses(p) if a not in public]
    assert not bad, bad
    for p in _INSTR_FILES:  # no instruction imports the printer
        assert "cuda.printer" not in p.read_text(), p


def test_warp_indices_are_broadcast_only_where_a_warp_agrees_on_them():
    """``uniform``: tid.x // 32k is lane 0's value where every warp lies in one row of the block and
    has 32 lanes; (16, 16) blocks put two rows in a warp, (48, 1) a partial warp: printed as they are."""
    from cutelab.kernel.ir.symbolic import Var, floordiv, mod
    from cutelab.kernel.passes import uniform

    t = Var("tid.x", 1024)
    assert uniform.warp_uniform(floordiv(t, 32)) and uniform.warp_uniform(floordiv(t, 128))
    assert uniform.warp_uniform(floordiv(mod(t, 128), 32))
    assert not uniform.warp_uniform(floordiv(t, 16)) and not uniform.warp_uniform(floordiv(t + 1, 32))
    shfl = "__shfl_sync(0xffffffffu, (((unsigned int)threadIdx.x) / 32u), 0)"
    assert shfl in render(_warps((64, 2, 1)))
    for block in ((16, 16, 1), (48, 1, 1)):
        ir = _warps(block)
        assert not run_passes(ir, Options()).uniform and "__shfl_sync" not in render(ir), block


def test_box_coordinates_fold_with_the_ranges_their_registers_hold():
    """``ranges``: a coordinate view's decode of a k-tile index k read from a register, with k proven in
    [0, 15] where the copy runs, is a plain sum; over all of Int32 it stays the remainder and division."""
    from cutelab.kernel.analysis.values import Val
    from cutelab.kernel.ir.nodes import Block, Reg, RegVar
    from cutelab.kernel.ir.symbolic import Var, floordiv, mod
    from cutelab.kernel.passes.ranges import simplify
    from cutelab.numeric import Int32

    k = RegVar((Reg(7, Int32, 1, Block()), 0))
    b = Var("bid.x", 64)
    off = 2097152 * b + k
    coords = (mod(k, 16384) * 64, floordiv(mod(off, 1 << 34), 16384), floordiv(off, 1 << 34))
    assert "%" in coords[0].expr_str() and "//" in coords[1].expr_str()
    got = simplify(coords, {k.name: Val(0, 0, 15)})
    assert [c.expr_str() if hasattr(c, "expr_str") else c for c in got] == [
        "(64 * reg.7.0)", "(128 * bid.x)", 0]
    assert got[0].lo == 0 and got[0].hi == 64 * 15
    assert simplify(coords, {k.name: Val.top(Int32)}) == coords  # nothing proven: as traced
    # a range that a carry could reach: 16384 * 64 elements along k is past the mode's 2^20
    far = simplify(coords, {k.name: Val(0, 0, 16384)})
    assert "%" in far[0].expr_str()
