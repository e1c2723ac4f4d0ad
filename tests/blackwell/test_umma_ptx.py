"""UMMAs issued from inline PTX through descriptors the program builds itself, as flash_attn.cute's SM100
kernels issue them (its blackwell_helpers): the start address ``(smem_ptr.toint() & 0x3FFFF) >> 4`` OR'd
with the descriptor's other fields, registers declared at function scope by one asm statement and used
by the next (moved inside a runtime loop and back, as flash_attn.cute moves Q's descriptors by a stage), ``@leader
tcgen05.mma`` after ``elect.sync``, and an mbarrier try-wait loop. On the CPU they are lowered while traced
(kernel/instr/ptx_umma.py); checked against numpy. And the refusals."""

from __future__ import annotations

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
import cutelab.utils.blackwell_helpers as sm100_utils
from cutelab.compat.mlir.dialects import llvm
from cutelab.compat.where import NotEmulatedError
from cutelab.errors import TensorError
from cutelab.nvgpu import OperandMajorMode, tcgen05
from cutelab.runtime import from_dlpack

M, N, K = 128, 64, 64
SBO = 8 * 128 // 16  # K-major, 128-byte swizzle: 8 rows of 128 bytes between row groups, in 16-byte units
HI = SBO | (1 << 14) | (2 << 29)  # the descriptor's high word: SBO, version 1, layout type 2 (128-byte swizzle)
LO_FIELDS = 1 << 16  # LBO 1 (unused by a swizzled K-major layout)
IDESC = (1 << 4) | ((N >> 3) << 17) | ((M >> 4) << 24)  # f32 += f16 * f16, both K-major


def _asm(ins, text, cons):
    llvm.inline_asm(None, ins, text, cons, has_side_effects=True, is_align_stack=False,
                    asm_dialect=llvm.AsmDialect.AD_ATT)


@cute.kernel
def ptx_umma_kernel(A: cute.Tensor, B: cute.Tensor, C: cute.Tensor, a_layout: cute.ComposedLayout,
                    b_layout: cute.ComposedLayout, tiled_mma: cute.TiledMma, case: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    smem = cutlass.utils.SmemAllocator()
    holder = smem.allocate_tensor(cutlass.Int32, cute.make_layout(1), 4)
    bar = smem.allocate_tensor(cutlass.Int64, cute.make_layout(2), 8)
    sA = smem.allocate_tensor(element_type=A.element_type, layout=a_layout.outer, byte_alignment=1024,
                              swizzle=a_layout.inner)
    sB = smem.allocate_tensor(element_type=B.element_type, layout=b_layout.outer, byte_alignment=1024,
                              swizzle=b_layout.inner)
    if tidx == 0:
        cute.arch.mbarrier_init(bar.iterator, 1)
        cute.arch.mbarrier_init(bar.iterator + 1, 1)
    for j in cutlass.range_constexpr(M * K // 128):  # element i of the partitioned tile is (i % M, i // M)
        i = j * 128 + tidx
        sA[i] = A[(i % M, i // M)]
    for j in cutlass.range_constexpr(N * K // 128):
        i = j * 128 + tidx
        sB[i] = B[(i % N, i // N)]
    cute.arch.fence_view_async_shared()
    if warp == 0:
        cute.arch.alloc_tmem(512, holder.iterator)
    cute.arch.mbarrier_init_fence()
    cute.arch.sync_threads()
    ptr = cute.arch.retrieve_tmem_ptr(C.element_type, 16, holder.iterator)
    acc = cute.make_tensor(ptr, tiled_mma.make_fragment_C(tiled_mma.partition_shape_C((M, N))).layout)
    a_start = (sA.iterator.toint() & 0x3FFFF) >> 4
    b_start = (sB.iterator.toint() & 0x3FFFF) >> 4
    if cutlass.const_expr(case == "refuse_mask"):
        sA.iterator.toint() & 0xFFF0  # masks bits above the shared array's alignment
    # function-scope registers: A's descriptors of the 4 k-blocks (32 bytes apart) and the instruction descriptor
    _asm([cutlass.Int32(LO_FIELDS | a_start).ir_value()],
         ".reg .b32 t_lo;\n.reg .b64 t_desc_a<4>;\n" + "".join(
             f"add.s32 t_lo, $0, {2 * k};\nmov.b64 t_desc_a{k}, {{t_lo, {hex(HI)}}};\n" for k in range(4)), "r")
    _asm([], f".reg .b32 t_idesc;\nmov.b32 t_idesc, {hex(IDESC)};\n", "")
    if cutlass.const_expr(case in ("loop", "drift")):  # flash_attn.cute's Q stages: moved, then moved back
        for _ in cutlass.range(2):
            for step in cutlass.range_constexpr(1 if case == "drift" else 2):
                _asm([], "{\n.reg .b32 lo, hi;\nmov.b64 {lo, hi}, t_desc_a0;\n"
                     f"add.s32 lo, lo, {64 if step == 0 else -64};\nmov.b64 t_desc_a0, {{lo, hi}};\n}}\n", "")
    if warp == 0:
        if cutlass.const_expr(case == "wait"):  # a tcgen05.commit on barrier 1, waited for in the PTX itself
            with cute.arch.elect_one():
                tcgen05.commit(bar.iterator + 1)
        _asm([cutlass.Int32(LO_FIELDS | b_start).ir_value(), cutlass.Int32(acc.iterator.toint()).ir_value(),
              cutlass.Int32(0).ir_value(), (bar.iterator + 1).toint().ir_value()],
             "{\n.reg .pred leader;\n.reg .pred p;\n.reg .b32 b_lo;\n.reg .b64 desc_b;\n"
             + ("" if case != "wait" else
                ".reg .pred P1;\nLAB_WAIT:\nmbarrier.try_wait.parity.shared::cta.b64 P1, [$3], 0, 10000000;\n"
                "@P1 bra DONE;\nbra LAB_WAIT;\nDONE:\n")
             + "elect.sync _|leader, -1;\nsetp.ne.b32 p, $2, 0;\n"
             + "".join(f"add.u32 b_lo, $0, {2 * k};\nmov.b64 desc_b, {{b_lo, {hex(HI)}}};\n"
                       f"@leader tcgen05.mma.cta_group::1.kind::f16 [$1], t_desc_a{k}, desc_b, t_idesc, "
                       f"{'p' if k == 0 else '1'};\n" for k in range(4))
             + ("" if case != "unelected" else "tcgen05.mma.cta_group::1.kind::f16 [$1], t_desc_a0, desc_b, t_idesc, 1;\n")
             + "}\n", "r,r,r,r")
        with cute.arch.elect_one():
            tcgen05.commit(bar.iterator)
    cute.arch.mbarrier_wait(bar.iterator, 0)
    ld = tcgen05.make_tmem_copy(cute.make_copy_atom(tcgen05.Ld32x32bOp(tcgen05.Repetition.x16), C.element_type),
                                acc[((None, None), 0, 0)])
    thr = ld.get_slice(tidx)
    r = cute.make_rmem_tensor(thr.partition_D(C).shape, C.element_type)
    cute.copy(ld, thr.partition_S(acc[((None, None), 0, 0)]), r)
    thr.partition_D(C).store(r.load())
    cute.arch.sync_threads()
    if warp == 0:
        cute.arch.dealloc_tmem(ptr, 512)


def _run(case):
    op = tcgen05.MmaF16BF16Op(cutlass.Float16, cutlass.Float32, (M, N, 16), tcgen05.CtaGroup.ONE,
                              tcgen05.OperandSource.SMEM, OperandMajorMode.K, OperandMajorMode.K)
    mma = cute.make_tiled_mma(op)
    al = cute.select(sm100_utils.make_smem_layout_a(mma, (M, N, K), cutlass.Float16, 1), mode=[0, 1, 2])
    bl = cute.select(sm100_utils.make_smem_layout_b(mma, (M, N, K), cutlass.Float16, 1), mode=[0, 1, 2])
    rng = np.random.default_rng(3)
    A = rng.integers(-3, 4, (M, K)).astype(np.float32)
    B = rng.integers(-3, 4, (N, K)).astype(np.float32)
    C = np.full((M, N), np.nan, np.float32)
    ptx_umma_kernel(from_dlpack(A.astype(np.float16)), from_dlpack(B.astype(np.float16)), from_dlpack(C), al, bl,
                    mma, case).launch(grid=1, block=128)
    return A, B, C


@pytest.mark.parametrize("case", ["ok", "wait", "loop"])
def test_ptx_umma_through_hand_built_descriptors_equals_numpy(case):
    A, B, C = _run(case)
    np.testing.assert_array_equal(C, A @ B.T)  # small integers: exact


def test_ptx_umma_refusals():
    with pytest.raises(NotEmulatedError, match="predicated on elect.sync's leader"):
        _run("unelected")
    with pytest.raises(TensorError, match="masking the bits of an address above"):
        _run("refuse_mask")
    with pytest.raises(cute.errors.TraceError, match="'t_desc_a0', declared at function scope, has another value at "
                                                     "the end of the runtime loop"):
        _run("drift")


def test_tmem_pointer_from_an_address_and_back():
    """cute.make_ptr(dtype, lane << 16 | column, AddressSpace.tmem) is a tensor-memory pointer (flash_attn.cute's
    SM100 backward makes its TMEM tensors so), and a TMEM pointer's toint() is that address again."""
    from cutelab.nvgpu.tcgen05.tmem import TmemEngine

    addr = (3 << 16) | 5
    p32 = cute.make_ptr(cutlass.Float32, addr, mem_space=cute.AddressSpace.tmem, assumed_align=16)
    p16 = cute.make_ptr(cutlass.BFloat16, addr, mem_space=cute.AddressSpace.tmem)
    assert isinstance(p32.engine, TmemEngine) and isinstance(p16.engine, TmemEngine)
    assert (p32.offset, p16.offset) == (addr, 3 * 2 * 65536 + 2 * 5)  # two 16-bit elements to a column
    assert int(p32.toint()) == addr and int(p16.toint()) == addr and int((p16 + 2).toint()) == addr + 1
