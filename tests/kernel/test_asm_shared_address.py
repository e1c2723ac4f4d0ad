"""Inline PTX on shared-memory addresses (``smem_ptr.toint().ir_value()`` as an operand), as quack
writes its cluster reductions: ``mapa.shared::cluster`` of a local address and
``st.async...complete_tx::bytes [remote], value, [remote mbar]`` are lowered to the IR's DSMEM ops;
any other instruction on an address is refused by name. Also cute.arch.sync_warp."""

from __future__ import annotations

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
from cutelab import Float32, Int32, Int64
from cutelab.compat.cutlass_dsl import T
from cutelab.compat.dsl_names import ARCH_EXTRAS
from cutelab.compat.mlir.dialects import llvm
from cutelab.kernel.cuda import printer as cuda
from cutelab.compat.where import NotEmulatedError
from cutelab.kernel.launch.plan import last_launch
from cutelab.runtime import from_dlpack


def _set_block_rank(smem_ptr, rank):
    return Int32(llvm.inline_asm(T.i32(), [smem_ptr.toint().ir_value(), rank.ir_value()],
                                 "mapa.shared::cluster.u32 $0, $1, $2;", "=r,r,r"))


def _store_remote(val, smem_ptr, mbar_ptr, rank):
    a = _set_block_rank(smem_ptr, rank).ir_value()
    m = _set_block_rank(mbar_ptr, rank).ir_value()
    suffix, c = ("f32", "f") if isinstance(val, Float32) else ("s64", "l")
    llvm.inline_asm(None, [a, val.ir_value(), m],
                    f"st.async.shared::cluster.mbarrier::complete_tx::bytes.{suffix} [$0], $1, [$2];", f"r,{c},r")


@cute.kernel
def _exchange(A: cute.Tensor, B: cute.Tensor, C: cute.Tensor):
    """Each CTA of a (2, 1, 1) cluster writes its 32 floats and 32 int64s into the other's shared memory."""
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    rank = cute.arch.block_idx_in_cluster()
    smem = cutlass.utils.SmemAllocator()
    bar = smem.allocate_tensor(cutlass.Int64, cute.make_layout(1), 8)
    s = smem.allocate_tensor(cutlass.Float32, cute.make_layout(32), 16)
    w = smem.allocate_tensor(cutlass.Int64, cute.make_layout(32), 16)
    if tidx == 0:
        cute.arch.mbarrier_init(bar.iterator, 1)
    cute.arch.mbarrier_init_fence()
    cute.arch.cluster_arrive_relaxed()
    cute.arch.cluster_wait()
    if tidx == 0:
        cute.arch.mbarrier_arrive_and_expect_tx(bar.iterator, 32 * 4 + 32 * 8)
    cute.arch.sync_warp()
    _store_remote(A[bidx * 32 + tidx] * 2.0, s.iterator + tidx, bar.iterator, 1 - rank)
    _store_remote(Int64(tidx) + bidx * 1000, w.iterator + tidx, bar.iterator, 1 - rank)
    cute.arch.mbarrier_wait(bar.iterator, 0)
    B[bidx * 32 + tidx] = s[tidx]
    C[bidx * 32 + tidx] = w[tidx]
    cute.arch.cluster_arrive()
    cute.arch.cluster_wait()


def test_mapa_and_st_async_on_addresses_write_the_peers_shared_memory():
    A = np.arange(64, dtype=np.float32)
    B = np.zeros_like(A)
    C = np.zeros(64, np.int64)
    _exchange(from_dlpack(A), from_dlpack(B), from_dlpack(C)).launch(grid=2, block=32, cluster=(2, 1, 1))
    np.testing.assert_array_equal(B, 2 * np.concatenate([A[32:], A[:32]]))
    np.testing.assert_array_equal(C, np.concatenate([np.arange(32) + 1000, np.arange(32)]))
    src = cuda.render(last_launch().ir)
    assert "st.async.shared::cluster.mbarrier::complete_tx::bytes.f32" in src
    assert "st.async.shared::cluster.mbarrier::complete_tx::bytes.b64" in src
    assert "mapa.shared::cluster.u32" in src and "__syncwarp(0xffffffffu);" in src


@cute.kernel
def _load_through_address(A: cute.Tensor):
    smem = cutlass.utils.SmemAllocator()
    s = smem.allocate_tensor(cutlass.Float32, cute.make_layout(32), 16)
    A[0] = Float32(llvm.inline_asm(T.f32(), [s.iterator.toint().ir_value()], "ld.shared.f32 $0, [$1];", "=f,r"))


def test_other_instructions_on_addresses_are_refused_by_name():
    A = np.zeros(4, np.float32)
    with pytest.raises(NotEmulatedError, match=r"test_asm_shared_address.py:\d+.*PTX instruction 'ld.shared.f32' with "
                                               r"shared-memory address operands is not lowered"):
        _load_through_address(from_dlpack(A)).launch(grid=1, block=32)


# quack 0.5.3's form: the peer's address as an Int32 (map_dsmem_ptr(...).toint()), st.async's type suffix
# looked up by type(val), and a four-lane store built in a .v4 register by mov
_SUFFIX = {Float32: "f32", Int32: "s32"}
inline_ptx = ARCH_EXTRAS["inline_ptx"]  # cutlass.cute.arch.inline_ptx under cutelab run


def _peer_address(ptr, rank):
    return Int32(cute.arch.map_dsmem_ptr(ptr, rank).toint())


def _store_remote_typed(val, smem_ptr, mbar_ptr, rank):
    inline_ptx(
        f"st.async.shared::cluster.mbarrier::complete_tx::bytes.{_SUFFIX[type(val)]} [{{$r0}}], {{$r1}}, [{{$r2}}];",
        read_only_args=[_peer_address(smem_ptr, rank), val, _peer_address(mbar_ptr, rank)])


def _store_remote_x4(v0, v1, v2, v3, smem_ptr, mbar_ptr, rank):
    inline_ptx(
        "{\n\t.reg .v4 .s32 abcd;\n\tmov.s32 abcd.x, {$r2};\n\tmov.s32 abcd.y, {$r3};\n\tmov.s32 abcd.z, {$r4};\n\t"
        "mov.s32 abcd.w, {$r5};\n\tst.async.shared::cluster.mbarrier::complete_tx::bytes.v4.s32 [{$r0}], abcd, "
        "[{$r1}];\n\t}\n",
        read_only_args=[_peer_address(smem_ptr, rank), _peer_address(mbar_ptr, rank), v0, v1, v2, v3])


@cute.kernel
def _exchange_as_integers(A: cute.Tensor, B: cute.Tensor, C: cute.Tensor):
    """Each CTA of a (2, 1, 1) cluster writes 32 floats (one per thread) and 32 Int32s (four per thread
    of the first 8) into the other's shared memory."""
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    rank = cute.arch.block_idx_in_cluster()
    smem = cutlass.utils.SmemAllocator()
    bar = smem.allocate_tensor(cutlass.Int64, cute.make_layout(1), 8)
    s = smem.allocate_tensor(cutlass.Float32, cute.make_layout(32), 16)
    w = smem.allocate_tensor(cutlass.Int32, cute.make_layout(32), 16)
    if tidx == 0:
        cute.arch.mbarrier_init(bar.iterator, 1)
    cute.arch.mbarrier_init_fence()
    cute.arch.cluster_arrive_relaxed()
    cute.arch.cluster_wait()
    if tidx == 0:
        cute.arch.mbarrier_arrive_and_expect_tx(bar.iterator, 32 * 4 + 32 * 4)
    cute.arch.sync_warp()
    _store_remote_typed(A[bidx * 32 + tidx] + 0.5, s.iterator + tidx, bar.iterator, 1 - rank)
    if tidx < 8:
        base = Int32(tidx * 4 + bidx * 100)
        _store_remote_x4(base, base + 1, base + 2, base + 3, w.iterator + tidx * 4, bar.iterator, 1 - rank)
    cute.arch.mbarrier_wait(bar.iterator, 0)
    B[bidx * 32 + tidx] = s[tidx]
    C[bidx * 32 + tidx] = w[tidx]
    cute.arch.cluster_arrive()
    cute.arch.cluster_wait()


def test_integer_addresses_and_a_four_lane_vector_store_to_the_peer():
    A = np.arange(64, dtype=np.float32)
    B = np.zeros_like(A)
    C = np.zeros(64, np.int32)
    _exchange_as_integers(from_dlpack(A), from_dlpack(B), from_dlpack(C)).launch(grid=2, block=32, cluster=(2, 1, 1))
    np.testing.assert_array_equal(B, np.concatenate([A[32:], A[:32]]) + 0.5)
    np.testing.assert_array_equal(C, np.concatenate([np.arange(32) + 100, np.arange(32)]))
    src = cuda.render(last_launch().ir)
    assert "st.async.shared::cluster.mbarrier::complete_tx::bytes.f32" in src
    assert "st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32" in src


@cute.kernel
def _vector_register_misused(A: cute.Tensor):
    smem = cutlass.utils.SmemAllocator()
    bar = smem.allocate_tensor(cutlass.Int64, cute.make_layout(1), 8)
    w = smem.allocate_tensor(cutlass.Int32, cute.make_layout(32), 16)
    v = Int32(A[0])
    inline_ptx(
        "{\n\t.reg .v4 .s32 abcd;\n\tmov.s32 abcd.x, {$r2};\n\tadd.s32 abcd.y, {$r2}, 1;\n\t"
        "st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.s32 [{$r0}], abcd, [{$r1}];\n\t}\n",
        read_only_args=[_peer_address(w.iterator, 0), _peer_address(bar.iterator, 0), v])


def test_other_programs_around_an_address_are_refused_by_name():
    A = np.zeros(1, np.int32)
    with pytest.raises(NotEmulatedError, match=r"PTX program with addresses \(\.reg\).*test_asm_shared_address.py:\d+"):
        _vector_register_misused(from_dlpack(A)).launch(grid=1, block=1, cluster=(1, 1, 1))
