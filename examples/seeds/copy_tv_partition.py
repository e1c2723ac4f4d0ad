# Seed: "CuTe partitions" (simons blog), Thread Value Partitioning. CuTe DSL program, changed
# only in its import lines and in the line choosing the device its arrays live on.
import torch

import cutelab as cutlass
import cutelab as cute
from cutelab.runtime import from_dlpack


@cute.kernel
def copy_kernel(S: cute.Tensor, D: cute.Tensor, tv_layout: cute.Layout):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()

    x = bidx
    # Slice into the tiled tensors
    block_coordinate = ((None, None), x)
    tile_S = S[block_coordinate]
    tile_D = D[block_coordinate]

    print("Block Tile:")
    print(f"tile_S = {tile_S}")
    print(f"tile_D = {tile_D}")

    thr_val_tile_S = cute.composition(tile_S, tv_layout)
    thr_val_tile_D = cute.composition(tile_D, tv_layout)
    thr_coord = (tidx, None)
    val_tile_S = thr_val_tile_S[thr_coord]
    val_tile_D = thr_val_tile_D[thr_coord]

    print("thr_val_tile_S:")
    print(f"thr_val_tile_S = {thr_val_tile_S}")
    print(f"thr_val_tile_D = {thr_val_tile_D}")
    print(f"val_tile_S = {val_tile_S}")
    print(f"val_tile_D = {val_tile_D}")

    fragment = cute.make_fragment_like(val_tile_S)

    print("Fragment:")
    print(f"fragment = {fragment}")

    fragment.store(val_tile_S.load())
    val_tile_D.store(fragment.load())
    return


@cute.jit
def launch_copy(
    tensor_S: cute.Tensor,
    tensor_D: cute.Tensor,
    thread_shape: cute.Shape,
    value_shape: cute.Shape,
):
    print("Tensors:")
    print(f"tensor_S = {tensor_S}")
    print(f"tensor_D = {tensor_D}")

    # Obtain Tiler and TV Layout
    thr_layout = cute.make_layout(thread_shape, stride=(thread_shape[1], 1))
    val_layout = cute.make_layout(value_shape, stride=(value_shape[1], 1))
    tiler_mn, tv_layout = cute.make_layout_tv(thr_layout, val_layout)

    print("Block Tile Tensor:")
    print(f"thr_layout = {thr_layout}")
    print(f"val_layout = {val_layout}")
    print(f"tiler_mn = {tiler_mn}")
    print(f"tv_layout = {tv_layout}")

    tiled_tensor_S = cute.zipped_divide(tensor_S, tiler_mn)  # (M, N), (m', n'))
    tiled_tensor_D = cute.zipped_divide(tensor_D, tiler_mn)  # (M, N), (m', n'))

    print("Block Tile Tensor:")
    print(f"tiled_tensor_S = {tiled_tensor_S}")
    print(f"tiled_tensor_D = {tiled_tensor_D}")

    grid_dim = (
        cute.size(tiled_tensor_D, mode=[1]),
        1,
        1,
    )
    block_dim = (cute.size(tv_layout, mode=[0]), 1, 1)

    print("Grid and Block Configuration:")
    print(f"grid_dim = {grid_dim}")
    print(f"block_dim = {block_dim}")

    copy_kernel(tiled_tensor_S, tiled_tensor_D, tv_layout).launch(
        grid=grid_dim, block=block_dim
    )
    return


if __name__ == "__main__":
    cutlass.cuda.initialize_cuda_context()

    thread_shape = (32, 8)
    value_shape = (4, 8)

    device = "cuda" if torch.cuda.is_available() else "cpu"
    S = torch.randn(8192, 8192, device=device, dtype=torch.bfloat16)
    D = torch.zeros(8192, 8192, device=device, dtype=torch.bfloat16)

    tensor_S = from_dlpack(S, assumed_align=16)
    tensor_D = from_dlpack(D, assumed_align=16)

    launch_copy(tensor_S, tensor_D, thread_shape, value_shape)

    torch.testing.assert_close(S, D)

    print(S)
    print(D)
