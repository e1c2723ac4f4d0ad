"""cutlass.experimental.cuda tensor maps (compat/experimental/tensor_map.py) and the TMA primitives over
them (kernel/instr/tma_map.py), in small kernels: a map may move a byte buffer as Float16 boxes, boxes
past the tensor's edge load zeros and store nothing, the swizzle places the box as TMA does, and what
cutelab does not do is refused by name. (CUTLASS's tma/ programs run in test_compat_primitives.py.)"""
import shutil

import numpy as np
import pytest

from compat_helpers import run


def _copy_kernel(swizzle, box, dims_of, dtype_name="Float16", coords=(0, 0)):
    """A kernel that TMA-loads one box of src (as the map's dtype) into shared memory, then TMA-stores it
    into dst at the same coordinates; the host builds both maps over byte buffers."""
    import cutelab as cute
    import cutelab as cutlass
    from cutelab.compat.experimental import tensor_map as cuda
    from cutelab.compat.experimental import wrappers as prims
    from cutelab.compat.experimental.memory import Array

    dt = getattr(cutlass, dtype_name)
    nbytes = box[0] * box[1] * dt.width // 8

    @cute.kernel
    def k(ms: cuda.TensorMap, md: cuda.TensorMap, ck: cutlass.Int32, cm: cutlass.Int32):
        smem = Array(cutlass.Uint8, nbytes, space=cute.AddressSpace.smem, alignment=1024)
        bar = Array(cutlass.Int64, 1, space=cute.AddressSpace.smem, alignment=8)
        tidx, _, _ = cute.arch.thread_idx()
        if tidx == 0:
            prims.mbarrier_init(bar, 1)
        prims.fence_mbarrier_init()
        prims.barrier_cta_sync(0)
        if tidx == 0:
            prims.mbarrier_arrive_expect_tx(bar, ms.global_tx_bytes())
            prims.cp_async_bulk_tensor_shared_cta_global(smem, ms.get_ptr(), (ck, cm), bar)
        while not prims.mbarrier_try_wait_parity(bar, 0):
            pass
        if tidx == 0:
            prims.cp_async_bulk_tensor_global_shared_cta(md.get_ptr(), smem, (ck, cm))
            prims.cp_async_bulk_commit_group()
            prims.cp_async_bulk_wait_group(0)

    @cute.jit
    def host(src: cute.Tensor, dst: cute.Tensor):
        rows, row_bytes = dims_of
        maps = [cuda.create_tensor_map_tiled(global_address=t.iterator.toint(), dtype=dt,
                                             global_dims=[row_bytes * 8 // dt.width, rows],
                                             global_strides=[row_bytes // 16], box_dims=list(box),
                                             swizzle=swizzle) for t in (src, dst)]
        k(maps[0], maps[1], cutlass.Int32(coords[0]), cutlass.Int32(coords[1])).launch(grid=(1, 1, 1),
                                                                                       block=(32, 1, 1))

    return host


def test_a_byte_buffer_moves_as_float16_boxes_inside_the_tensor_only():
    """A 40 x 96-byte buffer (48 f16 per row) through 32 x 32 f16 boxes at (24, 16): the box's elements
    past column 48 or row 40 are not loaded (zeros) and not stored; the others arrive byte for byte."""
    import torch
    from cutelab.compat.experimental.tensor_map import TensorMapSwizzle
    from cutelab.runtime import from_dlpack

    src = torch.randint(0, 256, (40, 96), dtype=torch.uint8)
    dst = torch.zeros_like(src)
    _copy_kernel(TensorMapSwizzle.none, (32, 32), (40, 96), coords=(24, 16))(
        from_dlpack(src, assumed_align=16), from_dlpack(dst, assumed_align=16))
    want = torch.zeros_like(src)
    want[16:40, 48:96] = src[16:40, 48:96]  # f16 columns 24..47 = bytes 48..95, rows 16..39
    assert torch.equal(dst, want)


@pytest.mark.parametrize("sw", ["s32b", "s64b", "s128b"])
def test_swizzled_box_lands_where_tma_puts_it(sw):
    """The shared copy of a swizzled box is the row-major box with Swizzle<b,4,3> on its byte addresses:
    a load then a store through the same map gives the tensor back, and the shared bytes (read back
    through a second kernel-free check of TmaDescriptor.placement) differ from the unswizzled order."""
    import torch
    from cutelab.compat.experimental.tensor_map import TensorMapSwizzle
    from cutelab.runtime import from_dlpack

    span = {"s32b": 32, "s64b": 64, "s128b": 128}[sw]
    src = torch.randint(0, 256, (16, span), dtype=torch.uint8)
    dst = torch.zeros_like(src)
    _copy_kernel(getattr(TensorMapSwizzle, sw), (span // 2, 16), (16, span))(
        from_dlpack(src, assumed_align=16), from_dlpack(dst, assumed_align=16))
    assert torch.equal(dst, src)
    from cutelab import Float16
    from cutelab.nvgpu.cpasync.tma import TmaDescriptor

    d = TmaDescriptor(Float16, (span // 2, 16), (2, span), (span // 2, 16), int(getattr(TensorMapSwizzle, sw)),
                      (0, 1))
    p = d.placement(0)  # element offsets (the swizzle acts on their bytes)
    assert sorted(p.tolist()) == list(range(8 * span)) and p.tolist() != list(range(8 * span))


def test_a_plain_integer_address_is_refused_by_name(tmp_path):
    p = run(tmp_path, """
        import torch
        import cutlass
        import cutlass.cute as cute
        import cutlass.experimental.cuda as cuda
        from cutlass.cute.runtime import from_dlpack

        @cute.jit
        def host(src: cute.Tensor):
            cuda.create_tensor_map_tiled(global_address=12345, dtype=cutlass.Float16, global_dims=[64, 8],
                                         global_strides=[8], box_dims=[64, 8])

        host(from_dlpack(torch.zeros(8, 64, dtype=torch.float16)))
    """)
    assert p.returncode != 0
    assert "create_tensor_map_tiled(global_address=12345) is not emulated by cutelab" in p.stderr
    assert "prog.py:10" in p.stderr


def test_packed_fp4_format_is_refused_by_name(tmp_path):
    p = run(tmp_path, """
        import torch
        import cutlass
        import cutlass.cute as cute
        import cutlass.experimental.cuda as cuda
        from cutlass.cute.runtime import from_dlpack

        @cute.jit
        def host(src: cute.Tensor):
            cuda.create_tensor_map_tiled(global_address=src.iterator.toint(), dtype=cutlass.Uint8,
                                         global_dims=[128, 8], global_strides=[4], box_dims=[128, 8],
                                         tma_format=cuda.TensorMapDataFormat.B4X16)

        host(from_dlpack(torch.zeros(8, 64, dtype=torch.uint8)))
    """)
    assert p.returncode != 0 and "tma_format=b4x16" in p.stderr and "sub-byte" in p.stderr


def test_swizzle_wider_than_its_span_is_an_error():
    import torch
    from cutelab.compat.experimental.tensor_map import TensorMapSwizzle
    from cutelab.runtime import from_dlpack

    src = torch.zeros((16, 128), dtype=torch.uint8)
    with pytest.raises(ValueError, match=r"swizzle s64b requires the bounding-box inner dimension to be at most 64B"):
        _copy_kernel(TensorMapSwizzle.s64b, (64, 16), (16, 128))(from_dlpack(src, assumed_align=16),
                                                                 from_dlpack(src.clone(), assumed_align=16))


def test_from_view_orders_dimensions_innermost_first():
    """create_tensor_map_tiled_from_view of a row-major (M, K) tensor: dims (K, M), byte strides (2, 2K),
    the box reordered the same way."""
    import torch
    import cutelab as cute
    from cutelab.compat.experimental import tensor_map as cuda
    from cutelab.runtime import from_dlpack

    got = {}

    @cute.jit
    def host(a: cute.Tensor):
        got["m"] = cuda.create_tensor_map_tiled_from_view(a, box_dims=(16, 64), swizzle=cuda.TensorMapSwizzle.s128b)

    host(from_dlpack(torch.zeros(32, 64, dtype=torch.float16)))
    d = got["m"].desc
    assert (d.dims, d.strides, d.box, d.swizzle) == ((64, 32), (2, 128), (64, 16), 3)
    assert got["m"].global_tx_bytes() == 64 * 16 * 2


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc to compile the CUDA")
def test_tensor_map_copies_compile_for_sm90(tmp_path):
    import torch
    from cutelab.compat.experimental.tensor_map import TensorMapSwizzle
    from cutelab.kernel.cuda.fakegpu import fake_cuda_tensor, fake_gpu
    from cutelab.kernel.launch.plan import last_launch
    from cutelab.runtime import from_dlpack

    with fake_gpu(arch=(9, 0), nvcc=shutil.which("nvcc"), cache_dir=str(tmp_path)) as g:
        t = [fake_cuda_tensor(torch.zeros((16, 128), dtype=torch.uint8)) for _ in range(2)]
        _copy_kernel(TensorMapSwizzle.s128b, (64, 16), (16, 128))(*(from_dlpack(x, assumed_align=16) for x in t))
        assert g.nvrtc.compiles == 1 and len(g.launches) == 1
        src = last_launch().source
    assert "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes" in src
    assert "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group" in src
    assert np.sum([line.count("__grid_constant__") for line in src.splitlines()]) == 2
