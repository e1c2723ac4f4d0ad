"""cutelab.profile: the CPU memory profiler (src/cutelab/profiler.py, the interpreter's recording hook,
the source locations of ops) and `cutelab profile` on the command line."""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import cutelab
import cutelab as cute
import cutelab as cutlass
from cutelab.analysis import AccessTrace, analyze
from cutelab.errors import LaunchError
from cutelab.kernel.cpu import interpreter as I
from cutelab.kernel.launch.plan import last_launch
from cutelab.kernel.ir.nodes import Access, Load, Op, Store, walk
from cutelab.kernel.frontend.trace import current
from cutelab.kernel.cpu.profiler import Profiler, count_rows
from cutelab.runtime import from_dlpack

HERE = os.path.abspath(__file__)
ROOT = os.path.dirname(os.path.dirname(HERE))


def _line_of(text):
    """The line number of the one line of this file that contains text."""
    with open(HERE) as f:
        hits = [i + 1 for i, line in enumerate(f) if text in line]
    assert len(hits) == 1, (text, hits)
    return hits[0]


# ----------------------------------------------------------------------------- the counting model

@pytest.mark.parametrize("space", ["global", "shared"])
@pytest.mark.parametrize("nb", [1, 2, 4, 8, 16])
def test_count_rows_matches_analyze(space, nb):
    rng = np.random.default_rng(nb * 7 + len(space))
    for trial in range(30):
        rows = int(rng.integers(1, 6))
        span = int(rng.choice([64, 512, 4096, 1 << 16]))
        a = rng.integers(0, span // nb, size=(rows, 32)) * nb
        a[rng.random((rows, 32)) < rng.random()] = -1  # some inactive lanes, some rows with none
        c = count_rows(a, nb, space)
        r = analyze(AccessTrace(a, nb, space))
        np.testing.assert_array_equal(c["requests"], r.requests)
        np.testing.assert_array_equal(c["sectors"], r.sectors)
        np.testing.assert_array_equal(c["bytes_used"], r.bytes_used)
        if space == "shared":
            np.testing.assert_array_equal(c["wavefronts"], r.wavefronts)
            np.testing.assert_array_equal(c["ideal"], r.ideal_wavefronts)


@pytest.mark.parametrize("m", [1, 2, 4])
def test_count_rows_matches_analyze_ldmatrix(m):
    rng = np.random.default_rng(m)
    for trial in range(20):
        a = rng.integers(0, 256, size=(3, 32)) * 16
        a[:, 8 * m:] = -1
        c = count_rows(a, 16, "shared", "ldsm")
        r = analyze(AccessTrace(a, 16, "shared", "ldsm"))
        np.testing.assert_array_equal(c["wavefronts"], r.wavefronts)
        np.testing.assert_array_equal(c["ideal"], r.ideal_wavefronts)


# ----------------------------------------------------------------------------- kernels

@cute.kernel
def strided_copy(S: cute.Tensor, D: cute.Tensor, k: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    D[bidx * 64 + tidx] = S[(bidx * 64 + tidx) * k]  # <- the strided line


@cute.jit
def run_strided(S, D, k: cutlass.Constexpr, blocks: cutlass.Constexpr):
    strided_copy(S, D, k).launch(grid=(blocks, 1, 1), block=(64, 1, 1))


def _strided(k, nblk, **prof):
    S = np.arange(64 * nblk * k, dtype=np.float32)
    D = np.zeros(64 * nblk, np.float32)
    if prof:
        with Profiler(**prof) as p:
            run_strided(from_dlpack(S), from_dlpack(D), k, nblk)
        res = p.result
    else:
        res = cute.profile(run_strided, from_dlpack(S), from_dlpack(D), k, nblk)
    np.testing.assert_array_equal(D, S[::k])  # the kernel ran, in full
    return res


@pytest.mark.parametrize("k,spr", [(1, 4), (2, 8), (4, 16), (8, 32), (16, 32)])
def test_strided_loads_sectors(k, spr):
    p = _strided(k, 4)
    (kp,) = p.kernels
    rows = {r.tensor: r for r in kp.rows()}
    ld, st = rows["S"], rows["D"]
    assert (ld.op, ld.space, ld.width) == ("ld", "global", (4,))
    assert ld.requests == 4 * 2  # 4 blocks of 2 warps, one request each
    assert ld.sectors_per_request == spr
    assert st.sectors_per_request == 4 and st.excess == 0
    assert ld.bytes == 4 * 64 * 4
    # the same numbers from a hand-made trace of warp 0
    r = analyze(AccessTrace(np.arange(32)[None, :] * 4 * k, 4, "global"))
    assert r.sectors[0] == spr
    assert kp.ncu()["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] == 8 * spr
    assert kp.ncu()["l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"] == 8


def test_locations_are_the_users_lines():
    p = _strided(2, 1)
    want = f"{HERE}:{_line_of('# <- the strided ' + 'line')}"
    locs = {r.tensor: r.loc for r in p.kernels[0].rows()}
    assert locs["S"] == want and locs["D"] == want
    ir = last_launch().ir
    for op in walk(ir.body):
        if isinstance(op, (Load, Store)):
            assert op.loc == want


def test_sampling_scales_and_all_blocks_is_exact():
    exact = _strided(4, 100, blocks=None).kernels[0]
    assert len(exact.sampled) == 100 and exact.scale == 1
    samp = _strided(4, 100, blocks=10).kernels[0]
    assert len(samp.sampled) == 10 and samp.sampled[0] == 0 and samp.sampled[-1] == 99
    assert samp.scale == 10
    assert samp.totals() == exact.totals()  # a uniform kernel: scaling is exact
    assert "10 of 100 blocks recorded" in samp.report() and "scaled by 10" in samp.report()
    assert "all 100 blocks recorded" in exact.report()


def test_only_the_first_launch_is_recorded_by_default():
    S, D = np.arange(64, dtype=np.float32), np.zeros(64, np.float32)
    with Profiler() as p:
        for _ in range(3):
            run_strided(from_dlpack(S), from_dlpack(D), 1, 1)
    (kp,) = p.result.kernels
    assert (kp.launches, kp.recorded) == (3, 1)
    assert kp.rows()[0].requests == 2
    assert "launched 3 times (1 recorded" in kp.report()
    with Profiler(launches=2) as p:
        for _ in range(3):
            run_strided(from_dlpack(S), from_dlpack(D), 1, 1)
    (kp,) = p.result.kernels
    assert (kp.launches, kp.recorded) == (3, 2)
    assert kp.rows()[0].requests == 2  # per launch


def test_recorder_is_off_after_profile_and_after_an_error():
    assert I.recorder is None
    _strided(1, 1)
    assert I.recorder is None

    def boom():
        raise RuntimeError("x")

    with pytest.raises(RuntimeError):
        cute.profile(boom)
    assert I.recorder is None and os.environ.get("CUTELAB_INTERPRET") in (None, "", "0")
    with Profiler():
        with pytest.raises(LaunchError, match="do not nest"):
            with Profiler():
                pass
    with pytest.raises(LaunchError, match="blocks must be a positive int"):
        Profiler(blocks=0)


@cute.kernel
def half_active(S: cute.Tensor, D: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    if tidx < 8:
        D[tidx] = S[tidx * 8]


@cute.jit
def run_half(S, D):
    half_active(S, D).launch(grid=(1, 1, 1), block=(64, 1, 1))


def test_masked_lanes_do_not_count():
    S, D = np.arange(512, dtype=np.float32), np.zeros(64, np.float32)
    p = cute.profile(run_half, from_dlpack(S), from_dlpack(D))
    rows = {r.tensor: r for r in p.kernels[0].rows()}
    # warp 0: 8 active lanes, 32 bytes apart: 8 sectors; warp 1: no lane active, no request
    assert rows["S"].requests == 1 and rows["S"].sectors == 8 and rows["S"].bytes == 32
    assert rows["D"].requests == 1 and rows["D"].sectors == 1
    np.testing.assert_array_equal(D[:8], S[:64:8])


@cute.kernel
def smem_transpose(A: cute.Tensor, B: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    smem = cutlass.utils.SmemAllocator()
    s = smem.allocate_tensor(cutlass.Float32, cute.make_layout((32, 32), stride=(32, 1)), 16)
    for i in range(32):
        s[i, tidx] = A[i * 32 + tidx]       # rows: conflict-free
    cute.arch.sync_threads()
    for i in range(32):
        B[i * 32 + tidx] = s[tidx, i]  # columns: 32-way conflicts


@cute.jit
def run_transpose(A, B):
    smem_transpose(A, B).launch(grid=(1, 1, 1), block=(32, 1, 1))


def test_shared_bank_conflicts():
    A = np.arange(1024, dtype=np.float32)
    B = np.zeros_like(A)
    p = cute.profile(run_transpose, from_dlpack(A), from_dlpack(B))
    np.testing.assert_array_equal(B.reshape(32, 32), A.reshape(32, 32).T)
    (kp,) = p.kernels
    sh = {r.op: r for r in kp.rows() if r.space == "shared"}
    assert sh["st"].wavefronts_per_request == 1 and sh["st"].excess == 0
    assert sh["st"].requests == 32
    # the 32 column reads of a thread are contiguous in its row: the compiler merges them into 8
    # 128-bit loads (as SASS shows); each: 4 phases of 8 lanes 128 bytes apart, 8 wavefronts each
    assert sh["ld"].width == (16,) and sh["ld"].requests == 8
    assert sh["ld"].wavefronts_per_request == 32 and sh["ld"].ideal_per_request == 4
    assert sh["ld"].excess == 8 * 28
    assert kp.worst_rows()[0].op == "ld" and kp.worst_rows()[0].space == "shared"
    text = kp.report()
    assert "32 wavefronts per request where 4 would do" in text
    assert "8 lanes hit bank" in text
    ncu = kp.ncu()
    assert ncu["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] == 8 * 28
    assert ncu["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"] == 32
    line = _line_of("B[i * 32 + tidx] = s[tidx, i]  " + "# columns")
    assert sh["ld"].loc == f"{HERE}:{line}"


# ----------------------------------------------------------------------------- what the CUDA printer emits

@cute.kernel
def vec_add1(S: cute.Tensor, D: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    src = cute.slice_(cute.zipped_divide(S, (16,)), (None, bidx * 64 + tidx))
    dst = cute.slice_(cute.zipped_divide(D, (16,)), (None, bidx * 64 + tidx))
    dst.store(src.load() + 1.0)


@cute.jit
def run_vec_add1(S, D):
    vec_add1(S, D).launch(grid=(2, 1, 1), block=(64, 1, 1))


def test_lane_pairs_as_the_printer_emits_them():
    S = np.arange(2 * 64 * 16, dtype=np.float16)
    D = np.zeros_like(S)
    p = cute.profile(run_vec_add1, from_dlpack(S, assumed_align=16), from_dlpack(D, assumed_align=16))
    np.testing.assert_array_equal(D, S + np.float16(1))
    kp = p.kernels[0]
    names = {st.name for st in kp.instrs.values()}
    from cutelab.kernel.cuda import printer as cuda

    src = cuda.render(last_launch().ir)
    if "cl_odd" in src:  # the printer shares 32-byte runs between lane pairs: 16 sectors per request
        assert any("lane pairs" in n for n in names)
        for r in kp.rows():
            assert r.width == (16,) and r.sectors_per_request == 16 and r.excess == 0
    else:  # plain 16-byte accesses 32 bytes apart: 32 sectors per request
        for r in kp.rows():
            assert r.width == (16,) and r.sectors_per_request == 32


@cute.kernel
def tv_copy(S: cute.Tensor, D: cute.Tensor, tv: cute.Layout):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    tS = cute.composition(S[((None, None), bidx)], tv)[(tidx, None)]
    tD = cute.composition(D[((None, None), bidx)], tv)[(tidx, None)]
    f = cute.make_fragment_like(tS)
    f.store(tS.load())
    tD.store(f.load())


@cute.jit
def run_tv_copy(S, D):
    tiler, tv = cute.make_layout_tv(cute.make_layout((8, 4), stride=(4, 1)), cute.make_layout((1, 8), stride=(8, 1)))
    gS, gD = cute.zipped_divide(S, tiler), cute.zipped_divide(D, tiler)
    tv_copy(gS, gD, tv).launch(grid=(cute.size(gD, mode=[1]), 1, 1), block=(cute.size(tv, mode=[0]), 1, 1))


def test_retiled_copy_covers_the_same_bytes():
    """A pure copy kernel is printed warp-retiled: the recorded instructions move exactly the bytes
    the kernel's loads name, 16 per lane, every request 16 sectors."""
    S = np.arange(32 * 8 * 8, dtype=np.float16).reshape(64, 32)
    D = np.zeros_like(S)
    with Profiler(blocks=None) as prof:
        run_tv_copy(from_dlpack(S, assumed_align=16), from_dlpack(D, assumed_align=16))
    np.testing.assert_array_equal(D, S)
    kp = prof.result.kernels[0]
    from cutelab.kernel.cuda import printer as cuda

    r = cuda.CudaRenderer(last_launch().ir)
    r.render()
    assert r.retiled or os.environ.get("CUTELAB_CUDA_RETILE") == "0"
    for row in kp.rows():
        assert row.width == (16,)
        assert row.bytes == S.nbytes  # every byte once
        assert all(("warp-retiled" in st.name) == bool(r.retiled) for st in row.instrs)
        assert row.excess == 0 and row.sectors_per_request == 16


@cute.kernel
def dead_load(S: cute.Tensor, D: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    unused = S[tidx * 2 + 1]  # noqa: F841 - read, never used: the compiler drops the load
    D[tidx] = S[tidx] + 1.0


@cute.jit
def run_dead_load(S, D):
    dead_load(S, D).launch(grid=(1, 1, 1), block=(32, 1, 1))


def test_loads_whose_values_are_never_used_are_left_out():
    S, D = np.arange(64, dtype=np.float32), np.zeros(32, np.float32)
    p = cute.profile(run_dead_load, from_dlpack(S), from_dlpack(D))
    kp = p.kernels[0]
    lines = {r.loc.rpartition(":")[2] for r in kp.rows()}
    assert lines == {str(_line_of("D[tidx] = S[tidx] " + "+ 1.0"))}
    assert len(kp.rows()) == 2 and kp.totals()["global_ld_requests"] == 1
    assert any("1 load(s) whose values are never used are left out" in n for n in kp.notes)
    from cutelab.kernel.cpu.profiler import dead_loads

    ir = last_launch().ir
    (dead,) = [op for op in walk(ir.body) if isinstance(op, Load) and id(op) in dead_loads(ir)]
    assert dead.loc.endswith(f":{_line_of('unused = ' + 'S[tidx * 2 + 1]')}")


# ----------------------------------------------------------------------------- ops with their own back ends

class RowRead(Op):
    """A toy ldmatrix-like op: each lane reads 8 f16 (16 bytes) of shared memory at row `base`."""

    __slots__ = ("sh", "base", "kind")

    def __init__(self, sh, base, kind):
        self.sh, self.base, self.kind = sh, base, kind

    def interpret(self, b, mask, buffers):
        pass

    def cuda(self, r):
        r.emit("/* row read */")

    def accesses(self):
        return [Access(self.sh, self.base, tuple(range(8)), False, self)]

    def profile(self, access):
        return {"op": "ldsm", "lanes": 32, "name": "ldmatrix.x4 (toy)"} if self.kind == "ldsm" else None


def _row_kernel(kind, stride):
    @cute.kernel
    def rows(A: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        smem = cutlass.utils.SmemAllocator()
        s = smem.allocate_tensor(cutlass.Float16, cute.make_layout(32 * 64), 16)
        current().emit(RowRead(s.engine.param, tidx * stride, kind))
        A[tidx] = A[tidx]

    @cute.jit
    def run(A):
        rows(A).launch(grid=(1, 1, 1), block=(32, 1, 1))

    return run


@pytest.mark.parametrize("kind", ["ldsm", "plain"])
def test_op_accesses_are_recorded(kind):
    A = np.zeros(32, np.float16)
    stride = 64  # 128-byte rows: within each 8-lane phase all rows start in bank 0
    p = cute.profile(_row_kernel(kind, stride), from_dlpack(A))
    kp = p.kernels[0]
    (row,) = [r for r in kp.rows() if r.space == "shared"]
    want = analyze(AccessTrace(np.arange(32)[None, :] * stride * 2, 16, "shared", "ldsm" if kind == "ldsm" else "ld"))
    assert row.op == ("ldsm" if kind == "ldsm" else "ld")
    assert row.wavefronts == want.wavefronts[0] == 32
    assert row.ideal_wavefronts == 4 and row.width == (16,)
    assert row.loc is not None and row.loc.startswith(HERE + ":")
    names = {st.name for st in kp.instrs.values() if st.space == "shared"}
    assert names == ({"ldmatrix.x4 (toy)"} if kind == "ldsm" else {"RowRead: 128-bit ld.shared"})


class ToyCpAsync(Op):
    """A toy cp.async: each lane copies 16 bytes from global memory to shared memory (no data moved)."""

    __slots__ = ("src", "sbase", "dst", "dbase")

    def __init__(self, src, sbase, dst, dbase):
        self.src, self.sbase, self.dst, self.dbase = src, sbase, dst, dbase

    def interpret(self, b, mask, buffers):
        pass

    def cuda(self, r):
        r.emit("/* cp.async */")

    def accesses(self):
        return [Access(self.src, self.sbase, tuple(range(4)), False, self),
                Access(self.dst, self.dbase, tuple(range(4)), True, self)]

    def profile(self, access):
        return {"op": "ldgsts", "name": "cp.async.cg.shared.global 16B (toy)"}


@cute.kernel
def toy_cp_async(A: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    smem = cutlass.utils.SmemAllocator()
    s = smem.allocate_tensor(cutlass.Float32, cute.make_layout(64 * 8), 16)
    current().emit(ToyCpAsync(A.engine.param, tidx * 4, s.engine.param, tidx * 8))


@cute.jit
def run_toy_cp_async(A):
    toy_cp_async(A).launch(grid=(1, 1, 1), block=(64, 1, 1))


def test_cp_async_counts_as_ldgsts():
    A = np.zeros(256, np.float32)
    p = cute.profile(run_toy_cp_async, from_dlpack(A, assumed_align=16))
    kp = p.kernels[0]
    rows = {r.space: r for r in kp.rows()}
    g, sh = rows["global"], rows["shared"]
    assert (g.op, sh.op) == ("ldgsts", "ldgsts") and g.width == sh.width == (16,)
    assert g.requests == 2 and g.sectors_per_request == 16
    # shared side: lanes 32 bytes apart, 16 bytes each: phases of 8 lanes over 256 bytes, 2 wavefronts each
    want = analyze(AccessTrace(np.arange(32)[None, :] * 32, 16, "shared", "st"))
    assert sh.wavefronts_per_request == want.wavefronts[0] == 8
    ncu = kp.ncu()
    assert ncu["l1tex__t_requests_pipe_lsu_mem_global_op_ldgsts.sum"] == 2
    assert ncu["l1tex__t_sectors_pipe_lsu_mem_global_op_ldgsts.sum"] == 32
    assert "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum" not in ncu
    assert "global ldgsts: 2 requests" in kp.report()
    assert {st.name for st in kp.instrs.values()} == {"cp.async.cg.shared.global 16B (toy)"}
    fig = p.figure()  # the shared side wastes wavefronts: it is drawn (as a store's bank map)
    assert len(fig.grids) == 4 and "2 wavefronts" in fig.grids[0].title


def test_op_profile_errors():
    class Bad(ToyCpAsync):
        __slots__ = ()

        def profile(self, access):
            return {"op": "tma"}

    @cute.kernel
    def k(A: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        smem = cutlass.utils.SmemAllocator()
        s = smem.allocate_tensor(cutlass.Float32, cute.make_layout(64 * 8), 16)
        current().emit(Bad(A.engine.param, tidx * 4, s.engine.param, tidx * 8))

    @cute.jit
    def run(A):
        k(A).launch(grid=(1, 1, 1), block=(64, 1, 1))

    with pytest.raises(LaunchError, match="Bad.profile\\(\\) gave op 'tma'; expected ld, st, ldsm or ldgsts"):
        cute.profile(run, from_dlpack(np.zeros(256, np.float32), assumed_align=16))
    assert I.recorder is None


class GuardedToyAccess(Access):
    __slots__ = ("guards",)

    def __init__(self, *a, guards=()):
        Access.__init__(self, *a)
        self.guards = guards


class RowLoad(RowRead):
    """RowRead into registers ``dst`` (as ldmatrix does), its read made only where ``guard`` holds."""

    __slots__ = ("dst", "guard")

    def __init__(self, sh, base, dst, guard):
        RowRead.__init__(self, sh, base, "plain")
        self.dst, self.guard = dst, guard

    def accesses(self):
        return [GuardedToyAccess(self.sh, self.base, tuple(range(8)), False, self, guards=self.guard)]

    def interpret(self, b, mask, buffers):
        b.regs[self.dst.id] = np.zeros((b.n, 8), self.dst.dtype.storage)


def _row_load_kernel(use, guarded):
    from cutelab.kernel.ir.nodes import Store as IrStore

    @cute.kernel
    def rows(A: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        smem = cutlass.utils.SmemAllocator()
        s = smem.allocate_tensor(cutlass.Float16, cute.make_layout(32 * 64), 16)
        t = current()
        dst = t.new_reg(cutlass.Float16, 8)
        t.emit(RowLoad(s.engine.param, tidx * 8, dst, ((tidx < 8, True),) if guarded else ()))
        if use:
            t.emit(IrStore(A.engine.param, tidx * 8, tuple(range(8)), tuple((dst, i) for i in range(8))))

    @cute.jit
    def run(A):
        rows(A).launch(grid=(1, 1, 1), block=(32, 1, 1))

    return run


def test_atom_loads_nobody_reads_are_left_out_and_guards_hold():
    A = np.zeros(256, np.float16)
    p = cute.profile(_row_load_kernel(False, False), from_dlpack(A, assumed_align=16))
    kp = p.kernels[0]
    assert [r for r in kp.rows() if r.space == "shared"] == []
    assert any("1 load(s) whose values are never used" in n for n in kp.notes)
    p = cute.profile(_row_load_kernel(True, False), from_dlpack(A, assumed_align=16))
    (sh,) = [r for r in p.kernels[0].rows() if r.space == "shared"]
    assert sh.requests == 1 and sh.bytes == 32 * 16 and sh.wavefronts == 4
    p = cute.profile(_row_load_kernel(True, True), from_dlpack(A, assumed_align=16))
    (sh,) = [r for r in p.kernels[0].rows() if r.space == "shared"]
    assert sh.requests == 1 and sh.bytes == 8 * 16 and sh.wavefronts == 1  # lanes 0-7 only: one phase


# ----------------------------------------------------------------------------- report, picture, json

def test_report_words_and_figure():
    p = _strided(4, 2)
    text = p.report()
    assert "kernel strided_copy" in text
    assert ("16 sectors per request where 4 would hold its bytes: 25% of the bytes of the sectors each request "
            "fetches are used") in text
    assert "consecutive lanes are 16 bytes apart and each moves 4" in text
    fig = p.figure()
    assert "strided_copy" in fig.grids[0].title and "16 sector(s)" in fig.grids[0].title
    from cutelab import render as R

    assert R.render(fig, "svg").startswith("<svg")
    d = p.to_dict()
    json.dumps(d)
    assert d["kernels"][0]["ncu"]["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] == 2 * 2 * 16


def test_nothing_launched():
    p = cute.profile(lambda: 3)
    assert p.value == 3 and p.kernels == [] and "no kernel was launched" in p.report()
    with pytest.raises(Exception, match="nothing to draw"):
        p.figure()


# ----------------------------------------------------------------------------- the command line

PROGRAM = textwrap.dedent('''
    import sys
    import numpy as np
    import cutelab as cute
    from cutelab.runtime import from_dlpack

    @cute.kernel
    def gather(S: cute.Tensor, D: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        D[tidx] = S[tidx * 8]

    @cute.jit
    def main(S, D):
        gather(S, D).launch(grid=(1, 1, 1), block=(32, 1, 1))

    S = np.arange(256, dtype=np.float32)
    D = np.zeros(32, np.float32)
    main(from_dlpack(S), from_dlpack(D))
    assert (D == S[::8]).all()
    print("program args", sys.argv[1:])
    sys.exit(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
''')


def _cli(tmp_path, *args):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src"))
    return subprocess.run([sys.executable, "-m", "cutelab", "profile", *args], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=300)


def test_cli_profile(tmp_path):
    prog = tmp_path / "gather.py"
    prog.write_text(PROGRAM)
    r = _cli(tmp_path, "--json", "out.json", "--svg", "worst.svg", "--blocks", "2", str(prog), "0", "--flag")
    assert r.returncode == 0, r.stderr
    assert "program args ['0', '--flag']" in r.stdout
    assert "kernel gather" in r.stdout and "all 1 block recorded" in r.stdout
    assert "gather.py:10" in r.stdout and "D[tidx] = S[tidx * 8]" in r.stdout
    d = json.loads((tmp_path / "out.json").read_text())
    (k,) = d["kernels"]
    assert k["ncu"]["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] == 32
    assert k["rows"][0]["loc"].endswith("gather.py:10") and k["rows"][0]["sectors_per_request"] == 32
    assert (tmp_path / "worst.svg").read_text().startswith("<svg")
    # the program's own exit status comes through, with the report of what ran
    r = _cli(tmp_path, str(prog), "3")
    assert r.returncode == 3 and "exited with status 3" in r.stdout and "kernel gather" in r.stdout


def test_cli_profile_errors(tmp_path):
    r = _cli(tmp_path, str(tmp_path / "missing.py"))
    assert r.returncode == 2 and "no such program" in r.stderr
    r = _cli(tmp_path, "--blocks", "4", "--all-blocks", str(tmp_path / "missing.py"))
    assert r.returncode == 2 and "exclude each other" in r.stderr
    r = _cli(tmp_path, "--blocks", "0", "x.py")
    assert r.returncode == 2 and "must be at least 1" in r.stderr
    prog = tmp_path / "bad.py"
    prog.write_text("raise ValueError('broken program')\n")
    r = _cli(tmp_path, str(prog))
    assert r.returncode == 1 and "broken program" in r.stderr and "no kernel was launched" in r.stdout


# ----------------------------------------------------------------------------- against the machine code

def _nvdisasm():
    import shutil

    p = os.environ.get("CUTELAB_NVDISASM") or shutil.which("nvdisasm")
    if not p:
        try:  # the nvidia-cuda-nvdisasm wheel
            import nvidia

            for d in nvidia.__path__:
                for sub in ("cu13", "cuda_nvdisasm", "cu12"):
                    c = os.path.join(d, sub, "bin", "nvdisasm")
                    if os.path.exists(c):
                        return c
        except ImportError:
            pass
    return p


def _sass_memory_ops(src, tmp_path):
    """Counter of (space, op, bytes per lane) over the SASS memory instructions of a CUDA source."""
    import collections
    import re
    import shutil

    nvcc, dis = shutil.which("nvcc"), _nvdisasm()
    if not nvcc or not dis:
        pytest.skip("needs nvcc and nvdisasm (CUTELAB_NVDISASM=...; pip wheel nvidia-cuda-nvdisasm)")
    cu, cubin = tmp_path / "k.cu", tmp_path / "k.cubin"
    cu.write_text(src)
    r = subprocess.run([nvcc, "-arch=sm_90a", "-cubin", "-o", str(cubin), str(cu)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    sass = subprocess.run([dis, str(cubin)], capture_output=True, text=True, check=True).stdout
    kinds = {"LDG": ("global", "ld"), "STG": ("global", "st"), "LDS": ("shared", "ld"), "STS": ("shared", "st"),
             "LDSM": ("shared", "ldsm")}
    widths = {"128": 16, "64": 8, "U8": 1, "S8": 1, "U16": 2, "S16": 2}
    out = collections.Counter()
    for m in re.finditer(r"(?<!@!PT )\b(LDGSTS|LDG|STG|LDS|STS|LDSM)((?:\.[A-Z0-9_]+)*)\s", sass):
        toks = m.group(2).split(".")  # (an instruction predicated on !PT never runs: padding)
        w = 16 if m.group(1) == "LDSM" else next((widths[t] for t in toks if t in widths), 4)
        if m.group(1) == "LDGSTS":  # cp.async: the profiler counts its global read and its shared write
            out[("global", "ldgsts", w)] += 1
            out[("shared", "ldgsts", w)] += 1
        else:
            out[kinds[m.group(1)] + (w,)] += 1
    return out


def _profile_ops(kp):
    import collections

    return collections.Counter((st.space, st.op, st.bytes_per_lane) for st in kp.instrs.values() if st.executed)


def _run_example(path, *argv):
    import contextlib
    import io
    import runpy

    old = sys.argv
    sys.argv = [path, *argv]
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            runpy.run_path(path, run_name="__main__")
    finally:
        sys.argv = old


@cute.kernel
def adjacent(S: cute.Tensor, D: cute.Tensor, shift: cutlass.Constexpr):
    t, _, _ = cute.arch.thread_idx()
    smem = cutlass.utils.SmemAllocator()
    s = smem.allocate_tensor(cutlass.Float32, cute.make_layout(160), 16)
    a = S[t * 4]          # global: not merged (the compiler does not know the pointer's alignment)
    b = S[t * 4 + 1]
    c = S[t]              # the same read-only address twice: loaded once
    d = S[t]
    s[t * 4 + shift] = a  # shared: merged when aligned (shift 0), not when not (shift 1)
    s[t * 4 + shift + 1] = b
    s[t * 4 + shift + 2] = c
    s[t * 4 + shift + 3] = d
    cute.arch.sync_threads()
    x = s[t * 4 + shift]
    y = s[t * 4 + shift + 1]
    D[t * 2] = x
    D[t * 2 + 1] = y


def _run_adjacent(shift):
    @cute.jit
    def run(S, D):
        adjacent(S, D, shift).launch(grid=(1, 1, 1), block=(32, 1, 1))

    S = np.arange(256, dtype=np.float32)
    D = np.zeros(64, np.float32)
    run(from_dlpack(S, assumed_align=16), from_dlpack(D, assumed_align=16))
    np.testing.assert_array_equal(D, S[np.stack([np.arange(32) * 4, np.arange(32) * 4 + 1], 1).ravel()])


def test_what_the_compiler_merges():
    with Profiler() as prof:
        _run_adjacent(0)
    got = _profile_ops(prof.result.kernels[0])
    assert got == {("global", "ld", 4): 3, ("shared", "st", 16): 1, ("shared", "ld", 8): 1, ("global", "st", 4): 2}
    with Profiler() as prof:
        _run_adjacent(1)
    got = _profile_ops(prof.result.kernels[0])
    # shift 1: elements 4t+1..4t+4: 4-byte, 8-byte (4t+2, 4t+3: 8-aligned), 4-byte stores; loads 4t+1, 4t+2: scalars
    assert got == {("global", "ld", 4): 3, ("shared", "st", 4): 2, ("shared", "st", 8): 1, ("shared", "ld", 4): 2,
                   ("global", "st", 4): 2}


CASES = {
    "adjacent aligned": lambda: _run_adjacent(0),
    "adjacent misaligned": lambda: _run_adjacent(1),
    "strided": lambda: run_strided(from_dlpack(np.arange(256 * 4, dtype=np.float32)),
                                   from_dlpack(np.zeros(256, np.float32)), 4, 4),
    "masked": lambda: run_half(from_dlpack(np.arange(512, dtype=np.float32)), from_dlpack(np.zeros(64, np.float32))),
    "shared transpose": lambda: run_transpose(from_dlpack(np.arange(1024, dtype=np.float32)),
                                              from_dlpack(np.zeros(1024, np.float32))),
    "lane pairs": lambda: run_vec_add1(from_dlpack(np.arange(2048, dtype=np.float16), assumed_align=16),
                                       from_dlpack(np.zeros(2048, np.float16), assumed_align=16)),
    "retiled copy": lambda: run_tv_copy(
        from_dlpack(np.arange(2048, dtype=np.float16).reshape(64, 32), assumed_align=16),
        from_dlpack(np.zeros((64, 32), np.float16), assumed_align=16)),
    "dead load": lambda: run_dead_load(from_dlpack(np.arange(64, dtype=np.float32)),
                                       from_dlpack(np.zeros(32, np.float32))),
    "elementwise_add": lambda: _run_example(os.path.join(ROOT, "examples/dsl/elementwise_add.py"),
                                            "--M", "64", "--N", "256"),
    "elementwise_apply": lambda: _run_example(os.path.join(ROOT, "examples/dsl/elementwise_apply.py"),
                                              "--M", "64", "--N", "256"),
    "sgemm, k loop at run time": lambda: _run_example(os.path.join(ROOT, "examples/dsl/sgemm.py"), "--mnk",
                                                      "128,128,256", "--warmup_iterations", "0", "--iterations", "1"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_instructions_are_what_the_gpu_executes(case, tmp_path):
    """The profiler's memory instructions (space, direction, bytes per lane), one per kernel op and
    vector access, are exactly the SASS memory instructions nvcc makes of the printed kernel."""
    import shutil

    if not shutil.which("nvcc") or not _nvdisasm():
        pytest.skip("needs nvcc and nvdisasm (CUTELAB_NVDISASM=...; pip wheel nvidia-cuda-nvdisasm)")
    from cutelab.kernel.cuda import printer as cuda

    with Profiler(blocks=None) as prof:
        CASES[case]()
    kp = prof.result.kernels[-1]
    want = _sass_memory_ops(cuda.render(last_launch().ir), tmp_path)
    assert _profile_ops(kp) == want


def test_sgemm_cp_async_is_ldgsts():
    """CuTe DSL's sgemm.py (examples/dsl): its cp.async copies are counted as LDGSTS, both sides."""
    with Profiler(blocks=None) as prof:
        _run_example(os.path.join(ROOT, "examples/dsl/sgemm.py"), "--mnk", "64,64,16",
                     "--warmup_iterations", "0", "--iterations", "1")
    kp = prof.result.kernels[0]
    ops = {(r.space, r.op) for r in kp.rows()}
    assert ("global", "ldgsts") in ops and ("shared", "ldgsts") in ops
    assert ("global", "ld") not in ops  # every global read of sgemm is a cp.async
    names = {st.name for st in kp.instrs.values() if st.op == "ldgsts"}
    assert names and all(n.startswith("cp.async.") for n in names)
    ncu = kp.ncu()
    assert ncu["l1tex__t_requests_pipe_lsu_mem_global_op_ldgsts.sum"] > 0


def test_tensorop_gemm_ldmatrix_and_cp_async():
    """CuTe DSL's tensorop_gemm.py: its ldmatrix.x4 and cp.async are counted as LDSM and LDGSTS."""
    with Profiler(blocks=None) as prof:
        _run_example(os.path.join(ROOT, "examples/dsl/tensorop_gemm.py"), "--mnkl", "128,128,64,1",
                     "--benchmark", "none")
    kp = prof.result.kernels[-1]
    ops = {(r.space, r.op) for r in kp.rows()}
    assert {("shared", "ldsm"), ("global", "ldgsts"), ("shared", "ldgsts")} <= ops
    names = {st.name for st in kp.instrs.values() if st.op == "ldsm"}
    assert names and all(n.startswith("ldmatrix.sync.aligned.m8n8.x4") for n in names)
    ncu = kp.ncu()
    assert ncu["sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum"] > 0
