"""An Ampere-style tensor-core GEMM written with cutelab, in CuTe DSL style.

    C[m, n] = sum_k A[m, k] * B[n, k]        (A: M x K, B: N x K, both K-major; C: M x N, N-major)

f16 or bf16 inputs, f32 accumulation, C in the input type. One thread block computes a
``bM x bN`` tile of C with four warps (2 x 2 ``mma.sync.m16n8k16`` atoms, each warp 64 x 64):

1. global -> shared: ``cp.async`` 16-byte copies into a ``num_stages``-deep ring of K-slices,
   laid out with the ``Swizzle<3,3,3>`` atom over 8 x 64 elements (128-byte rows), so that the
   ``ldmatrix`` reads below touch every bank once per phase;
2. shared -> registers: ``ldmatrix.x4`` through ``make_tiled_copy_A/B`` of the TiledMMA, one
   k-block ahead of the tensor cores (a register double buffer);
3. ``cute.gemm`` over the TiledMMA for each k-block;
4. epilogue: the accumulators are converted to the output type, staged through shared memory
   (over the A/B ring, whose last reads are done) and written with 16-byte stores.

The k-loop is split so that every global load's index is provably in bounds: the steady-state
loop issues the load of tile ``k + num_stages - 1`` while tile ``k`` is consumed, and a drain
loop consumes the last ``num_stages - 1`` tiles. M and N must be multiples of the tile, K a
multiple of ``bK`` (checked on the host, with an error naming the sizes).

Run on a GPU (``python examples/gemm/sm80_gemm.py --mnk 8192,8192,8192``) or, without one, on
the CPU interpreter at a small size (``--mnk 256,256,128``); either way the result is checked
against torch (or numpy) within the accumulator's rounding.

The same file runs on CuTe DSL with its import lines changed back (``import cutlass``,
``import cutlass.cute as cute``, ``from cutlass.cute.runtime import from_dlpack``).
"""

from __future__ import annotations

import argparse
import math
import time

import cutelab as cutlass
import cutelab as cute
import cutelab.utils as utils
from cutelab.runtime import from_dlpack


class Sm80Gemm:
    def __init__(self, ab_dtype=cutlass.Float16, acc_dtype=cutlass.Float32, cta_tiler=(128, 128, 64),
                 num_stages: int = 3, atom_layout_mnk=(2, 2, 1), raster: int = 1):
        self.ab_dtype = ab_dtype
        self.acc_dtype = acc_dtype
        self.cta_tiler = cta_tiler
        self.bM, self.bN, self.bK = cta_tiler
        self.num_stages = num_stages
        self.atom_layout_mnk = atom_layout_mnk
        self.raster = raster  # blocks walk `raster` tile-rows at a time (L2 reuse of B); must divide M / bM
        self.num_threads = 32 * atom_layout_mnk[0] * atom_layout_mnk[1] * atom_layout_mnk[2]
        if self.bK not in (32, 64):
            raise ValueError(f"Sm80Gemm: bK={self.bK} must be 32 or 64 (one 64- or 128-byte swizzle row)")
        if num_stages < 2:
            raise ValueError(f"Sm80Gemm: num_stages={num_stages} must be at least 2")

    # ----------------------------------------------------------------- host side
    def smem_layout_AB(self, rows: int):
        """(rows, bK, stages) K-major: Swizzle<3,3,3> over 8 x 64 f16/bf16 atoms (128-byte rows), or
        Swizzle<2,3,3> over 8 x 32 (64-byte rows) when bK is 32."""
        bits = 3 if self.bK == 64 else 2
        atom = cute.make_composed_layout(cute.make_swizzle(bits, 3, 3), 0,
                                         cute.make_layout((8, self.bK), stride=(self.bK, 1)))
        return cute.tile_to_shape(atom, (rows, self.bK, self.num_stages), (0, 1, 2))

    def smem_layout_C(self):
        """(bM, bN) N-major, the same swizzle: the accumulator writes and the 16-byte row reads
        both spread over the banks."""
        atom = cute.make_composed_layout(cute.make_swizzle(3, 3, 3), 0,
                                         cute.make_layout((8, 64), stride=(64, 1)))
        return cute.tile_to_shape(atom, (self.bM, self.bN), (0, 1))

    def g2s_copy(self, dtype):
        """cp.async, 8 elements (16 bytes) per thread and copy, bK / 8 threads per row."""
        atom = cute.make_copy_atom(cute.nvgpu.cpasync.CopyG2SOp(cache_mode=cute.nvgpu.LoadCacheMode.GLOBAL),
                                   dtype, num_bits_per_copy=128)
        per_row = self.bK // 8
        thr = cute.make_layout((self.num_threads // per_row, per_row), stride=(per_row, 1))
        return cute.make_tiled_copy_tv(atom, thr, cute.make_layout((1, 8)))

    def s2g_copy(self, dtype):
        """Epilogue: 16-byte stores, 8 threads per 64-element row segment."""
        atom = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), dtype, num_bits_per_copy=128)
        thr = cute.make_layout((self.num_threads // 8, 8), stride=(8, 1))
        return cute.make_tiled_copy_tv(atom, thr, cute.make_layout((1, 8)))

    @cute.jit
    def __call__(self, mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor):
        op = cute.nvgpu.warp.MmaF16BF16Op(self.ab_dtype, self.acc_dtype, (16, 8, 16))
        # each warp's atom repeats twice along N so that one ldmatrix.x4 feeds B for two atoms
        tiled_mma = cute.make_tiled_mma(
            op, cute.make_layout(self.atom_layout_mnk),
            permutation_mnk=(self.atom_layout_mnk[0] * 16, self.atom_layout_mnk[1] * 16, 16))
        sA_layout = self.smem_layout_AB(self.bM)
        sB_layout = self.smem_layout_AB(self.bN)
        sC_layout = self.smem_layout_C()
        num_tiles = (cute.size(mC, mode=[0]) // self.bM) * (cute.size(mC, mode=[1]) // self.bN)
        self.kernel(mA, mB, mC, sA_layout, sB_layout, sC_layout, self.g2s_copy(mA.element_type),
                    self.g2s_copy(mB.element_type), self.s2g_copy(mC.element_type),
                    tiled_mma).launch(grid=[num_tiles, 1, 1], block=[self.num_threads, 1, 1])

    # ----------------------------------------------------------------- the kernel
    @cute.kernel
    def kernel(self, mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, sA_layout: cute.ComposedLayout,
               sB_layout: cute.ComposedLayout, sC_layout: cute.ComposedLayout, copy_A: cute.TiledCopy,
               copy_B: cute.TiledCopy, copy_C: cute.TiledCopy, tiled_mma: cute.TiledMma):
        tidx, _, _ = cute.arch.thread_idx()
        bidx, _, _ = cute.arch.block_idx()
        # rasterize in groups of `raster` tile-rows: neighbouring blocks share B tiles in L2
        per_group = self.raster * (cute.size(mC, mode=[1]) // self.bN)
        m_blk = (bidx // per_group) * self.raster + bidx % self.raster
        n_blk = (bidx % per_group) // self.raster
        coord = (m_blk, n_blk, None)

        gA = cute.local_tile(mA, tiler=self.cta_tiler, coord=coord, proj=(1, None, 1))  # (bM, bK, k)
        gB = cute.local_tile(mB, tiler=self.cta_tiler, coord=coord, proj=(None, 1, 1))  # (bN, bK, k)
        gC = cute.local_tile(mC, tiler=self.cta_tiler, coord=coord, proj=(1, 1, None))  # (bM, bN)

        # one shared region: the A/B ring, and later the epilogue's C tile over the same bytes
        @cute.struct
        class SharedAB:
            a: cute.struct.Align[cute.struct.MemRange[mA.element_type, cute.cosize(sA_layout)], 128]
            b: cute.struct.Align[cute.struct.MemRange[mB.element_type, cute.cosize(sB_layout)], 128]

        @cute.struct
        class SharedC:
            c: cute.struct.Align[cute.struct.MemRange[mC.element_type, cute.cosize(sC_layout)], 128]

        smem = utils.SmemAllocator()
        storage = smem.allocate(max(SharedAB.size_in_bytes(), SharedC.size_in_bytes()), byte_alignment=128)
        sA = SharedAB(storage).a.get_tensor(sA_layout)
        sB = SharedAB(storage).b.get_tensor(sB_layout)

        thr_A = copy_A.get_slice(tidx)
        thr_B = copy_B.get_slice(tidx)
        tAgA = thr_A.partition_S(gA)  # (CPY, CPY_M, CPY_K, k)
        tAsA = thr_A.partition_D(sA)  # (CPY, CPY_M, CPY_K, PIPE)
        tBgB = thr_B.partition_S(gB)
        tBsB = thr_B.partition_D(sB)

        thr_mma = tiled_mma.get_slice(tidx)
        tCrA = tiled_mma.make_fragment_A(thr_mma.partition_A(sA)[None, None, None, 0])  # (MMA, MMA_M, MMA_K)
        tCrB = tiled_mma.make_fragment_B(thr_mma.partition_B(sB)[None, None, None, 0])
        tCgC = thr_mma.partition_C(gC)
        acc = tiled_mma.make_fragment_C(tCgC)
        acc.fill(0.0)

        ldsm = cute.make_copy_atom(cute.nvgpu.warp.LdMatrix8x8x16bOp(False, 4), mA.element_type)
        s2r_A = cute.make_tiled_copy_A(ldsm, tiled_mma)
        s2r_B = cute.make_tiled_copy_B(ldsm, tiled_mma)
        thr_s2r_A = s2r_A.get_slice(tidx)
        thr_s2r_B = s2r_B.get_slice(tidx)
        tXsA = thr_s2r_A.partition_S(sA)  # (CPY, CPY_M, CPY_K, PIPE)
        tXrA = thr_s2r_A.retile(tCrA)
        tXsB = thr_s2r_B.partition_S(sB)
        tXrB = thr_s2r_B.retile(tCrB)

        k_tiles = cute.size(gA, mode=[2])
        k_blocks = cute.size(tCrA, mode=[2])
        stages = self.num_stages

        # prologue: the first stages-1 k-tiles in flight
        for s in cutlass.range_constexpr(stages - 1):
            cute.copy(copy_A, tAgA[None, None, None, s], tAsA[None, None, None, s])
            cute.copy(copy_B, tBgB[None, None, None, s], tBsB[None, None, None, s])
            cute.arch.cp_async_commit_group()

        cute.arch.cp_async_wait_group(stages - 2)
        cute.arch.sync_threads()
        cute.copy(s2r_A, tXsA[None, None, 0, 0], tXrA[None, None, 0])
        cute.copy(s2r_B, tXsB[None, None, 0, 0], tXrB[None, None, 0])

        # steady state: consume k-tile k (stage k % stages) while tile k + stages - 1 loads
        for k in cutlass.range(k_tiles - (stages - 1)):  # a loop in the kernel, not unrolled
            read = k % stages
            for kb in cutlass.range_constexpr(k_blocks):
                if cutlass.const_expr(kb == k_blocks - 1):
                    # the next tile must have landed before its first k-block is read
                    cute.arch.cp_async_wait_group(stages - 2)
                    cute.arch.sync_threads()
                    nxt = (k + 1) % stages
                    cute.copy(s2r_A, tXsA[None, None, 0, nxt], tXrA[None, None, 0])
                    cute.copy(s2r_B, tXsB[None, None, 0, nxt], tXrB[None, None, 0])
                else:
                    cute.copy(s2r_A, tXsA[None, None, kb + 1, read], tXrA[None, None, kb + 1])
                    cute.copy(s2r_B, tXsB[None, None, kb + 1, read], tXrB[None, None, kb + 1])
                if cutlass.const_expr(kb == 0):
                    write = (k + stages - 1) % stages
                    cute.copy(copy_A, tAgA[None, None, None, k + stages - 1], tAsA[None, None, None, write])
                    cute.copy(copy_B, tBgB[None, None, None, k + stages - 1], tBsB[None, None, None, write])
                    cute.arch.cp_async_commit_group()
                cute.gemm(tiled_mma, acc, tCrA[None, None, kb], tCrB[None, None, kb], acc)

        # drain: the last stages-1 tiles, nothing more to load
        for k in cutlass.range(k_tiles - (stages - 1), k_tiles):
            rd = k % stages
            for kb in cutlass.range_constexpr(k_blocks):
                if cutlass.const_expr(kb == k_blocks - 1):
                    cute.arch.cp_async_commit_group()  # an empty group keeps the wait count uniform
                    cute.arch.cp_async_wait_group(stages - 2)
                    cute.arch.sync_threads()
                    if k + 1 < k_tiles:
                        nx = (k + 1) % stages
                        cute.copy(s2r_A, tXsA[None, None, 0, nx], tXrA[None, None, 0])
                        cute.copy(s2r_B, tXsB[None, None, 0, nx], tXrB[None, None, 0])
                else:
                    cute.copy(s2r_A, tXsA[None, None, kb + 1, rd], tXrA[None, None, kb + 1])
                    cute.copy(s2r_B, tXsB[None, None, kb + 1, rd], tXrB[None, None, kb + 1])
                cute.gemm(tiled_mma, acc, tCrA[None, None, kb], tCrB[None, None, kb], acc)

        # epilogue: registers -> shared -> global with 16-byte stores
        cute.arch.cp_async_wait_group(0)
        cute.arch.sync_threads()
        sC = SharedC(storage).c.get_tensor(sC_layout)  # over the A ring: every read of it is done
        out = cute.make_fragment_like(acc, mC.element_type)
        out.store(acc.load().to(mC.element_type))
        cute.autovec_copy(out, thr_mma.partition_C(sC))
        cute.arch.sync_threads()
        thr_C = copy_C.get_slice(tidx)
        cute.copy(copy_C, thr_C.partition_S(sC), thr_C.partition_D(gC))


def run(mnk, dtype_name: str = "f16", iterations: int = 20, warmup: int = 3, check: bool = True,
        bk: int = 64, stages: int = 3):
    import torch

    M, N, K = mnk
    ab = cutlass.BFloat16 if dtype_name == "bf16" else cutlass.Float16
    raster = 8 if (M // 128) % 8 == 0 else 1
    gemm = Sm80Gemm(ab_dtype=ab, raster=raster, cta_tiler=(128, 128, bk), num_stages=stages)
    if M % gemm.bM or N % gemm.bN or K % gemm.bK or K // gemm.bK < gemm.num_stages - 1:
        raise SystemExit(f"sm80_gemm: M={M}, N={N} must be multiples of {gemm.bM}, {gemm.bN} and K={K} a "
                         f"multiple of {gemm.bK} with at least {gemm.num_stages - 1} k-tiles")
    device = "cuda" if torch.cuda.is_available() else "cpu"
    tdt = torch.bfloat16 if dtype_name == "bf16" else torch.float16
    torch.manual_seed(0)
    a = torch.randn(M, K, dtype=tdt, device=device)
    b = torch.randn(N, K, dtype=tdt, device=device)
    c = torch.zeros(M, N, dtype=tdt, device=device)
    tA, tB, tC = (from_dlpack(x, assumed_align=16) for x in (a, b, c))
    t0 = time.perf_counter()
    compiled = cute.compile(gemm, tA, tB, tC)
    print(f"Compilation time: {time.perf_counter() - t0:.4f} seconds")
    compiled(tA, tB, tC)
    if check:
        ref = (a.float() @ b.float().t())
        # f32 accumulation in a different order, then rounding to the output type
        tol = 2.0 ** -7 if dtype_name == "bf16" else 2.0 ** -10
        err = ((c.float() - ref).abs() / (ref.abs() + math.sqrt(K))).max().item()
        if device == "cuda":
            torch.cuda.synchronize()
        print(f"max relative error {err:.3e} (tolerance {tol * 4:.3e})")
        if not err <= tol * 4:
            raise SystemExit("sm80_gemm: result differs from the reference")
        print("Results verified successfully!")
    if device == "cuda":
        for _ in range(warmup):
            compiled(tA, tB, tC)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(iterations):
            compiled(tA, tB, tC)
        torch.cuda.synchronize()
        us = (time.perf_counter() - t0) / iterations * 1e6
        print(f"Kernel execution time: {us / 1e3:.4f} ms, {2 * M * N * K / us / 1e6:.1f} TFLOP/s")
        return us
    return None


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mnk", default="256,256,128", type=lambda s: tuple(int(x) for x in s.split(",")))
    p.add_argument("--dtype", default="f16", choices=["f16", "bf16"])
    p.add_argument("--iterations", default=20, type=int)
    p.add_argument("--bk", default=64, type=int, choices=[32, 64], help="k-tile (64: 128-byte rows)")
    p.add_argument("--stages", default=3, type=int, help="shared-memory pipeline stages")
    p.add_argument("--skip_ref_check", action="store_true")
    args = p.parse_args()
    run(args.mnk, args.dtype, args.iterations, check=not args.skip_ref_check, bk=args.bk, stages=args.stages)
    print("PASS")
