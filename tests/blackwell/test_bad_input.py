"""Issue 20's bad input on the CPU interpreter: clear errors naming the rule and the user's line, never a hang.

Where each is tested: cluster shapes no part can launch (more than 16 CTAs, a grid that is not whole
clusters, a zero extent): tests/kernel/test_cluster.py; a multicast mask naming CTAs outside the
cluster (static: at trace time; a runtime mask: at launch) and a multicast that leaves CTAs waiting
(a deadlock report, not a hang): tests/kernel/test_cluster.py; tensor-memory overuse, columns not
allocated, a lane quarter a warp may not touch, a column count that is not a power of two of at
least 32: tests/blackwell/test_tmem.py. Here: a 2-CTA UMMA (CtaGroup.TWO) launched without the pair
of CTAs it runs on, and issued by both CTAs of the pair."""

from __future__ import annotations

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
import cutelab.utils.blackwell_helpers as sm100_utils
from cutelab.errors import LaunchError
from cutelab.nvgpu import OperandMajorMode, tcgen05
from cutelab.runtime import from_dlpack

from test_umma import umma_kernel  # every CTA's warp 0 issues the UMMAs (tests/blackwell/test_umma.py)


def _two_cta(grid, cluster):
    M, N, K = 256, 128, 64
    op = tcgen05.MmaF16BF16Op(cutlass.Float16, cutlass.Float32, (M, N, 16), tcgen05.CtaGroup.TWO,
                              tcgen05.OperandSource.SMEM, OperandMajorMode.K, OperandMajorMode.K)
    mma = cute.make_tiled_mma(op)
    al = cute.select(sm100_utils.make_smem_layout_a(mma, (M, N, K), cutlass.Float16, 1), mode=[0, 1, 2])
    bl = cute.select(sm100_utils.make_smem_layout_b(mma, (M, N, K), cutlass.Float16, 1), mode=[0, 1, 2])
    A = np.ones((M // 2, K), np.float16)  # one CTA's half of A and B
    B = np.ones((N // 2, K), np.float16)
    C = np.zeros((M // 2, N), np.float32)
    umma_kernel(mma, from_dlpack(A), from_dlpack(B), from_dlpack(C), al, bl, "ok").launch(grid=grid, block=128,
                                                                                          cluster=cluster)


@pytest.mark.parametrize("grid,cluster,n", [(1, None, "1 CTA"), (2, None, "1 CTA"), (3, (3, 1, 1), "3 CTAs")])
def test_a_two_cta_umma_without_its_pair_is_an_error_naming_the_line(grid, cluster, n):
    with pytest.raises(LaunchError, match=r"umma_kernel \(at .*test_umma.py:\d+\): block \(0,0,0\) issues a 2-CTA "
                                          rf"UMMA \(CtaGroup.TWO\), but its cluster has {n}: a 2-CTA UMMA runs on a "
                                          r"pair of CTAs of one cluster"):
        _two_cta(grid, cluster)


def test_a_two_cta_umma_issued_by_the_peer_cta_is_an_error():
    with pytest.raises(LaunchError, match=r"block \(1,0,0\) issues a 2-CTA UMMA \(CtaGroup.TWO\) but is not the leader "
                                          r"\(even rank\) of a CTA pair of its cluster \(cluster size 2\)"):
        _two_cta(2, (2, 1, 1))


def test_tma_of_4_bit_elements_with_a_row_of_10_bytes_is_refused():
    # e2m1, two to a byte: a row of 20 elements is 10 bytes, and TMA's strides are multiples of 16 bytes
    import ctypes

    from cutelab.errors import LayoutError
    from cutelab.nvgpu import cpasync
    from cutelab.runtime import make_ptr

    raw = np.zeros(64 * 10, np.uint8)
    ptr = make_ptr(cutlass.Float4E2M1FN, raw.ctypes.data_as(ctypes.POINTER(ctypes.c_uint8)), cute.AddressSpace.gmem,
                   assumed_align=16)
    A = cute.make_tensor(ptr, cute.make_layout((64, 20), stride=(20, 1)))
    with pytest.raises(LayoutError, match=r"mode 0 has a byte stride of 10, not a multiple of 16 as TMA requires"):
        cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), A, cute.make_layout((64, 20), stride=(20, 1)),
                                    (64, 20))
