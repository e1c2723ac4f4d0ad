"""Swizzled shared memory and ldmatrix inside kernels: the swizzled index expressions against
swizzle.py for every thread, ldmatrix (x1/x2/x4, transposed) against nvgpu's host copy, an
smem -> ldmatrix -> mma.sync tile against numpy, and the CUDA text (nvcc where installed)."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
from cutelab.errors import TraceError
from cutelab.kernel.cuda import printer as cuda
from cutelab.kernel.ir.nodes import thread_env
from cutelab.kernel.launch.plan import last_launch
from cutelab.kernel.ir.symbolic import Var, evaluate, swizzle_expr
from cutelab.kernel.ir.nodes import Load, Store, walk
from cutelab.nvgpu import warp
from cutelab.runtime import from_dlpack

torch = pytest.importorskip("torch")
NVCC = shutil.which("nvcc")


def _nvcc(tmp_path, src):
    cu = tmp_path / "k.cu"
    cu.write_text(src)
    p = subprocess.run([NVCC, "-arch=sm_90a", "-cubin", "-o", str(tmp_path / "k.cubin"), str(cu)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]


# --------------------------------------------------------------------------- the Swizzle expression

@pytest.mark.parametrize("b,m,s", [(3, 3, 3), (2, 3, 3), (3, 4, 3), (1, 2, 5), (3, 3, 4)])
def test_swizzle_expression_evaluates_as_swizzle_py(b, m, s):
    t = Var("tid.x", 256)
    sw = cute.make_swizzle(b, m, s)
    tids = np.arange(256, dtype=np.int64)
    for e in (t * 8, t * 64 + 3, (t // 8) * 72 + (t % 8) * 8 + 512, t):
        x = swizzle_expr(e, b, m, s)
        got = np.broadcast_to(evaluate(x, {"tid.x": tids}), tids.shape)
        want = sw(np.broadcast_to(evaluate(e, {"tid.x": tids}), tids.shape).astype(np.int64))
        assert np.array_equal(got, want)
        assert x.lo <= got.min() and got.max() <= x.hi  # the range holds every value
        assert all(int(v) % x.div == 0 for v in got)  # and so does the divisibility


def test_swizzle_expression_simplifies_when_no_source_bit_moves():
    t = Var("tid.x", 4)
    assert swizzle_expr(t * 512, 3, 3, 3) is not None
    assert swizzle_expr(t * 512, 3, 3, 3).expr_str() == "(512 * tid.x)"  # bits 6..8 are zero: identity
    assert swizzle_expr(77, 3, 3, 3) == cute.make_swizzle(3, 3, 3)(77)
    # a possibly negative offset (a view's offset carried in a register) swizzles as two's complement,
    # within the range the node claims
    e = swizzle_expr(t * 64 - 64, 3, 3, 3)
    got = evaluate(e, {"tid.x": np.arange(4, dtype=np.int64)})
    want = [cute.make_swizzle(3, 3, 3)(int(x)) if x >= 0 else (x ^ ((x & (7 << 6)) >> 3)) for x in range(-64, 192, 64)]
    assert got.tolist() == want and e.lo <= got.min() and got.max() <= e.hi


# --------------------------------------------------------------------------- swizzled smem in a kernel

@cute.kernel
def through_smem(mA: cute.Tensor, mB: cute.Tensor, sl: cutlass.Constexpr, tiled: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    smem = cutlass.utils.SmemAllocator()
    s = smem.allocate_tensor(mA.element_type, sl, 16)
    thr = tiled.get_slice(tidx)
    r = cute.make_fragment_like(thr.partition_S(mA))
    cute.autovec_copy(thr.partition_S(mA), r)
    cute.autovec_copy(r, thr.partition_D(s))
    cute.arch.sync_threads()
    # read back transposed: thread t reads column-major what others wrote row-major
    thr2 = tiled.get_slice((tidx + 37) % 64)
    cute.autovec_copy(thr2.partition_S(s), r)
    cute.autovec_copy(r, thr2.partition_D(mB))


def _tiled_rows():
    atom = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), cutlass.Float16, num_bits_per_copy=128)
    return cute.make_tiled_copy_tv(atom, cute.make_layout((8, 8), stride=(8, 1)), cute.make_layout((1, 8)))


def _swizzled(b, m, s):
    return cute.tile_to_shape(cute.make_composed_layout(cute.make_swizzle(b, m, s), 0,
                                                        cute.make_layout((8, 64), stride=(64, 1))), (16, 64), (0, 1))


@pytest.mark.parametrize("bms", [(3, 3, 3), (2, 3, 3), (3, 2, 3)])
def test_swizzled_smem_index_expressions_match_swizzle_py_for_every_thread(bms):
    A = torch.arange(16 * 64).reshape(16, 64).half()
    B = torch.zeros_like(A)
    sl = _swizzled(*bms)
    through_smem(from_dlpack(A), from_dlpack(B), sl, _tiled_rows()).launch(grid=1, block=64)
    assert torch.equal(A, B)
    ir = last_launch().ir
    (sh,) = ir.shared
    period = cute.make_swizzle(*bms).cosize()  # elements the swizzle permutes among
    assert sh.align == min(1024, 2 * period) and sh.length % period == 0
    env = thread_env(ir.grid, ir.block, 0, 1)
    tiled = _tiled_rows()
    stores = [s for s in walk(ir.body) if isinstance(s, Store) and s.param is sh]
    # what thread t stores: the composed layout at the coordinates its partition_D names
    want = np.zeros((64, 16 * 64 // 64), dtype=np.int64)
    got = []
    for s in stores:
        base = np.broadcast_to(evaluate(s.base, env), (64,))
        for o in s.offsets:
            got.append(base + o)
    got = np.stack(got, axis=1)  # (threads, values) in program order
    for t in range(64):
        crd = tiled.get_slice(t).partition_D(cute.make_identity_tensor((16, 64)))
        coords = [crd[i] for i in range(cute.size(crd))]
        want_t = [sl(c) for c in coords]
        assert sorted(got[t].tolist()) == sorted(int(w) for w in want_t), t
        assert got[t].tolist() == [int(w) for w in want_t], t


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed")
def test_swizzled_smem_cuda_compiles(tmp_path):
    A = torch.arange(16 * 64).reshape(16, 64).half()
    through_smem(from_dlpack(A), from_dlpack(torch.zeros_like(A)), _swizzled(3, 3, 3), _tiled_rows()).launch(
        grid=1, block=64)
    src = cuda.render(last_launch().ir)
    assert "__shared__ alignas(1024) unsigned short smem0[1024];" in src
    assert "& 448u) >> 3))" in src  # the XOR of bits 6..8 into bits 3..5
    _nvcc(tmp_path, src)


# --------------------------------------------------------------------------- ldmatrix

@cute.kernel
def ldsm_kernel(mS: cute.Tensor, mOut: cute.Tensor, sl: cutlass.Constexpr, tiled_mma: cutlass.Constexpr,
                atom: cutlass.Constexpr, operand: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    smem = cutlass.utils.SmemAllocator()
    s = smem.allocate_tensor(mS.element_type, sl, 16)
    R, C = cute.size(mS, mode=[0]), cute.size(mS, mode=[1])
    for i in cutlass.range_constexpr(R * C // 32):
        e = i * 32 + tidx
        s[e // C, e % C] = mS[e // C, e % C]
    cute.arch.sync_threads()
    thr = tiled_mma.get_slice(tidx)
    if cutlass.const_expr(operand == "A"):
        frag = tiled_mma.make_fragment_A(thr.partition_A(s))
        tc = cute.make_tiled_copy_A(atom, tiled_mma)
    else:
        frag = tiled_mma.make_fragment_B(thr.partition_B(s))
        tc = cute.make_tiled_copy_B(atom, tiled_mma)
    tcs = tc.get_slice(tidx)
    cute.copy(tc, tcs.partition_S(s), tcs.retile(frag))
    mOut[tidx, None].store(frag.load())


# (operand, mma k, ldmatrix matrices): the fragment one k-block of the operand needs
LDSM = [("A", 16, 4), ("A", 8, 2), ("B", 16, 2), ("B", 8, 1)]


@pytest.mark.parametrize("operand,k,num", LDSM, ids=[f"{o}-k{k}-x{n}" for o, k, n in LDSM])
@pytest.mark.parametrize("trans", [False, True], ids=["N", "T"])
@pytest.mark.parametrize("swz", [False, True], ids=["plain", "swizzled"])
def test_ldmatrix_matches_the_host_copy_and_the_mma_fragment(operand, k, num, trans, swz):
    mma = cute.make_tiled_mma(warp.MmaF16BF16Op(cutlass.Float16, cutlass.Float32, (16, 8, k)), cute.make_layout((1, 1, 1)))
    atom = cute.make_copy_atom(warp.LdMatrix8x8x16bOp(trans, num), cutlass.Float16)
    R, C = (16 if operand == "A" else 8), 2 * k  # two k-blocks of the operand: (MN, K)
    # K-major rows for ldmatrix, MN-major columns for ldmatrix.trans; the swizzle keeps 8-element chunks whole
    L = cute.make_layout((R, C), stride=(1, R)) if trans else cute.make_layout((R, C), stride=(C, 1))
    sl = cute.make_composed_layout(cute.make_swizzle(1, 3, 4 if not trans else 3), 0, L) if swz else L
    data = (np.arange(R * C) % 2039).astype(np.float16).reshape(R, C)
    nv = cute.size(mma.tv_layout_A if operand == "A" else mma.tv_layout_B) // 32 * 2
    out = np.zeros((32, nv), np.float16)
    ldsm_kernel(from_dlpack(data), from_dlpack(out), sl, mma, atom, operand).launch(grid=1, block=32)
    # what the MMA expects in its registers: its partition of the operand, for all 32 threads
    S = cute.make_tensor(data.ravel().copy(), cute.make_layout((R, C), stride=(C, 1)))
    thr = mma.get_slice(np.arange(32))
    part = thr.partition_A(S) if operand == "A" else thr.partition_B(S)
    want = np.asarray(part.load().values).reshape(32, nv)
    assert np.array_equal(out, want)
    # and nvgpu's host copy (the warp exchange) agrees
    tc = cute.make_tiled_copy_A(atom, mma) if operand == "A" else cute.make_tiled_copy_B(atom, mma)
    ths = tc.get_slice(np.arange(32))
    Sl = cute.make_tensor(data.ravel().copy(), cute.make_layout((R, C), stride=(C, 1)))
    frag = cute.make_fragment_like(part)
    cute.copy(tc, ths.partition_S(Sl), ths.retile(frag))
    assert np.array_equal(np.asarray(frag.load().values).reshape(32, nv), out)


def _ldsm_case(trans=False, num=4, operand="A", k=16, L=None):
    mma = cute.make_tiled_mma(warp.MmaF16BF16Op(cutlass.Float16, cutlass.Float32, (16, 8, k)), cute.make_layout((1, 1, 1)))
    atom = cute.make_copy_atom(warp.LdMatrix8x8x16bOp(trans, num), cutlass.Float16)
    R, C = (16 if operand == "A" else 8), 2 * k
    L = L or (cute.make_layout((R, C), stride=(1, R)) if trans else cute.make_layout((R, C), stride=(C, 1)))
    nv = 2 * (8 if operand == "A" else 4) * k // 16
    ldsm_kernel(from_dlpack(np.zeros((R, C), np.float16)), from_dlpack(np.zeros((32, nv), np.float16)),
                L, mma, atom, operand).launch(grid=1, block=32)


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed")
@pytest.mark.parametrize("operand,k,num,trans", [("B", 8, 1, False), ("B", 16, 2, True), ("A", 16, 4, False)])
def test_ldmatrix_cuda_compiles(operand, k, num, trans, tmp_path):
    _ldsm_case(trans, num, operand, k)
    src = cuda.render(last_launch().ir)
    assert f"ldmatrix.sync.aligned.m8n8.x{num}{'.trans' if trans else ''}.shared.b16" in src
    # the address is the array's 32-bit window address (taken once) plus the offset in bytes, in 32 bits
    assert "const unsigned int smem0_sw = (unsigned int)__cvta_generic_to_shared(smem0);" in src
    assert "_addr = (smem0_sw + 2u * (unsigned int)(" in src and "__cvta_generic_to_shared(smem0 + " not in src
    _nvcc(tmp_path, src)


def test_ldmatrix_rows_that_are_not_contiguous_are_refused():
    # K-major data read with the non-transposed ldmatrix needs rows along K; M-major has them along M
    with pytest.raises(TraceError, match="a lane's row must be 8 consecutive elements of shared memory"):
        _ldsm_case(False, 4, "A", 16, cute.make_layout((16, 32), stride=(1, 16)))


# --------------------------------------------------------------------------- smem -> ldmatrix -> mma.sync

@cute.kernel
def smem_mma(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, tiled_mma: cutlass.Constexpr,
             sA_l: cutlass.Constexpr, sB_l: cutlass.Constexpr, transA: cutlass.Constexpr, transB: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    smem = cutlass.utils.SmemAllocator()
    sA = smem.allocate_tensor(mA.element_type, sA_l, 16)
    sB = smem.allocate_tensor(mB.element_type, sB_l, 16)
    for i in cutlass.range_constexpr(cute.size(mA) // 128):
        e = i * 128 + tidx
        sA[e % cute.size(mA, mode=[0]), e // cute.size(mA, mode=[0])] = mA[e % cute.size(mA, mode=[0]),
                                                                            e // cute.size(mA, mode=[0])]
    for i in cutlass.range_constexpr(cute.size(mB) // 128):
        e = i * 128 + tidx
        sB[e % cute.size(mB, mode=[0]), e // cute.size(mB, mode=[0])] = mB[e % cute.size(mB, mode=[0]),
                                                                            e // cute.size(mB, mode=[0])]
    cute.arch.sync_threads()
    thr = tiled_mma.get_slice(tidx)
    tCrA = tiled_mma.make_fragment_A(thr.partition_A(sA))
    tCrB = tiled_mma.make_fragment_B(thr.partition_B(sB))
    tC = thr.partition_C(mC)
    tCrC = tiled_mma.make_fragment_C(tC)
    tCrC.fill(0.0)
    s2rA = cute.make_tiled_copy_A(cute.make_copy_atom(warp.LdMatrix8x8x16bOp(transA, 4), mA.element_type), tiled_mma)
    s2rB = cute.make_tiled_copy_B(cute.make_copy_atom(warp.LdMatrix8x8x16bOp(transB, 4), mB.element_type), tiled_mma)
    ta = s2rA.get_slice(tidx)
    tb = s2rB.get_slice(tidx)
    tCsA = ta.partition_S(sA)
    tCrA_v = ta.retile(tCrA)
    tCsB = tb.partition_S(sB)
    tCrB_v = tb.retile(tCrB)
    for kb in cutlass.range_constexpr(cute.size(tCrA, mode=[2])):
        cute.copy(s2rA, tCsA[None, None, kb], tCrA_v[None, None, kb])
        cute.copy(s2rB, tCsB[None, None, kb], tCrB_v[None, None, kb])
        cute.gemm(tiled_mma, tCrC, tCrA[None, None, kb], tCrB[None, None, kb], tCrC)
    cute.autovec_copy(tCrC, tC)


def _smem_layout(mn, k, major, swizzle):
    if major == "k":  # K-major: 8 rows of 32 elements, 16-byte chunks XOR'd with the row
        atom, sw = cute.make_layout((8, 32), stride=(32, 1)), cute.make_swizzle(2, 3, 3)
    else:  # M/N-major: 64 x 8, the transposed ldmatrix reads it
        atom, sw = cute.make_layout((64, 8), stride=(1, 64)), cute.make_swizzle(3, 3, 3)
    if not swizzle:
        return cute.tile_to_shape(atom, (mn, k), (0, 1))
    return cute.tile_to_shape(cute.make_composed_layout(sw, 0, atom), (mn, k), (0, 1))


@pytest.mark.parametrize("a_major,b_major", [("k", "k"), ("m", "k"), ("k", "n"), ("m", "n")])
@pytest.mark.parametrize("swizzle", [True, False], ids=["swizzled", "plain"])
@pytest.mark.parametrize("ab", [cutlass.Float16, cutlass.BFloat16], ids=["f16", "bf16"])
def test_smem_ldmatrix_mma_tile_equals_numpy(a_major, b_major, swizzle, ab):
    op = warp.MmaF16BF16Op(ab, cutlass.Float32, (16, 8, 16))
    mma = cute.make_tiled_mma(op, cute.make_layout((2, 2, 1)), permutation_mnk=(32, 32, 16))
    M, N, K = 64, 64, 32
    tdt = torch.float16 if ab is cutlass.Float16 else torch.bfloat16
    g = torch.Generator().manual_seed(3)
    A = torch.randint(-3, 4, (M, K), generator=g).to(tdt)
    B = torch.randint(-3, 4, (N, K), generator=g).to(tdt)
    C = torch.zeros(M, N)
    smem_mma(from_dlpack(A), from_dlpack(B), from_dlpack(C), mma, _smem_layout(M, K, a_major, swizzle),
             _smem_layout(N, K, b_major, swizzle), a_major == "m", b_major == "n").launch(grid=1, block=128)
    assert torch.equal(C, A.float() @ B.float().T)


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed")
def test_smem_ldmatrix_mma_cuda_compiles(tmp_path):
    op = warp.MmaF16BF16Op(cutlass.Float16, cutlass.Float32, (16, 8, 16))
    mma = cute.make_tiled_mma(op, cute.make_layout((2, 2, 1)), permutation_mnk=(32, 32, 16))
    A, B, C = torch.zeros(64, 32).half(), torch.zeros(64, 32).half(), torch.zeros(64, 64)
    smem_mma(from_dlpack(A), from_dlpack(B), from_dlpack(C), mma, _smem_layout(64, 32, "m", True),
             _smem_layout(64, 32, "k", True), True, False).launch(grid=1, block=128)
    src = cuda.render(last_launch().ir)
    assert "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16" in src and "mma.sync.aligned.m16n8k16" in src
    _nvcc(tmp_path, src)


# --------------------------------------------------------------------------- stmatrix

@cute.kernel
def ld_st_kernel(mS: cute.Tensor, mOut: cute.Tensor, sl: cutlass.Constexpr, tiled_mma: cutlass.Constexpr,
                 trans: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    smem = cutlass.utils.SmemAllocator()
    s = smem.allocate_tensor(mS.element_type, sl, 16)
    s2 = smem.allocate_tensor(mS.element_type, sl, 16)
    R, C = cute.size(mS, mode=[0]), cute.size(mS, mode=[1])
    for i in cutlass.range_constexpr(R * C // 32):
        e = i * 32 + tidx
        s[e // C, e % C] = mS[e // C, e % C]
        s2[e // C, e % C] = mS[e // C, e % C] * 0
    cute.arch.sync_threads()
    thr = tiled_mma.get_slice(tidx)
    frag = tiled_mma.make_fragment_A(thr.partition_A(s))
    ld = cute.make_tiled_copy_A(cute.make_copy_atom(warp.LdMatrix8x8x16bOp(trans, 4), mS.element_type), tiled_mma)
    st = cute.make_tiled_copy_A(cute.make_copy_atom(warp.StMatrix8x8x16bOp(trans, 4), mS.element_type), tiled_mma)
    lds, sts = ld.get_slice(tidx), st.get_slice(tidx)
    cute.copy(ld, lds.partition_S(s), lds.retile(frag))
    cute.copy(st, sts.retile(frag), sts.partition_D(s2))
    cute.arch.sync_threads()
    for i in cutlass.range_constexpr(R * C // 32):
        e = i * 32 + tidx
        mOut[e // C, e % C] = s2[e // C, e % C]


@pytest.mark.parametrize("trans", [False, True], ids=["N", "T"])
@pytest.mark.parametrize("swz", [False, True], ids=["plain", "swizzled"])
def test_stmatrix_writes_back_what_ldmatrix_read(trans, swz):
    mma = cute.make_tiled_mma(warp.MmaF16BF16Op(cutlass.Float16, cutlass.Float32, (16, 8, 16)), cute.make_layout((1, 1, 1)))
    R, C = 16, 32
    L = cute.make_layout((R, C), stride=(1, R)) if trans else cute.make_layout((R, C), stride=(C, 1))
    sl = cute.make_composed_layout(cute.make_swizzle(1, 3, 3 if trans else 4), 0, L) if swz else L
    data = (np.arange(R * C) % 2039 + 1).astype(np.float16).reshape(R, C)
    out = np.zeros_like(data)
    ld_st_kernel(from_dlpack(data), from_dlpack(out), sl, mma, trans).launch(grid=1, block=32)
    assert np.array_equal(out, data)
    src = cuda.render(last_launch().ir)
    assert f"stmatrix.sync.aligned.m8n8.x4{'.trans' if trans else ''}.shared.b16 [%0], {{%1,%2,%3,%4}}" in src


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed")
def test_stmatrix_cuda_compiles(tmp_path):
    mma = cute.make_tiled_mma(warp.MmaF16BF16Op(cutlass.Float16, cutlass.Float32, (16, 8, 16)), cute.make_layout((1, 1, 1)))
    data = np.zeros((16, 32), np.float16)
    ld_st_kernel(from_dlpack(data), from_dlpack(np.zeros_like(data)), cute.make_layout((16, 32), stride=(32, 1)),
                 mma, False).launch(grid=1, block=32)
    _nvcc(tmp_path, cuda.render(last_launch().ir))
