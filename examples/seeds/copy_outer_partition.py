# Seed: "CuTe partitions" (simons blog), Inner and Outer Partition. CuTe DSL program, changed
# only in its import lines and in the line choosing the device its arrays live on.
import torch

import cutelab as cutlass
import cutelab as cute
from cutelab.runtime import from_dlpack


@cute.kernel
def copy_kernel(S: cute.Tensor, D: cute.Tensor, ThreadLayout: cute.Layout):
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

    thr_tile_S = cute.local_partition(tile_S, ThreadLayout, tidx)
    thr_tile_D = cute.local_partition(tile_D, ThreadLayout, tidx)

    print("Thread Tile:")
    print(f"thr_tile_S = {thr_tile_S}")
    print(f"thr_tile_D = {thr_tile_D}")

    fragment = cute.make_fragment_like(thr_tile_S)

    print("Fragment:")
    print(f"fragment = {fragment}")

    fragment.store(thr_tile_S.load())
    thr_tile_D.store(fragment.load())
    return


@cute.jit
def launch_copy(
    tensor_S: cute.Tensor,  # Pointer to Source
    tensor_D: cute.Tensor,  # Pointer to Destination
    block_shape: cute.Shape,  # (M, N)
    thread_shape: cutlass.Shape,
):
    print("Tensors:")
    print(f"tensor_S = {tensor_S}")
    print(f"tensor_D = {tensor_D}")

    # Tile (m, n) by (M, N) to obtain ((M, N), (m', n'))
    # , where M' and N' are the number of block tiles
    tiled_tensor_S = cute.zipped_divide(tensor_S, block_shape)  # (M, N), (m', n'))
    tiled_tensor_D = cute.zipped_divide(tensor_D, block_shape)  # (M, N), (m', n'))

    print("Block Tile Tensor:")
    print(f"tiled_tensor_S = {tiled_tensor_S}")
    print(f"tiled_tensor_D = {tiled_tensor_D}")

    thr_layout = cute.make_layout(thread_shape, stride=(thread_shape[1], 1))

    print("Thread Layout:")
    print(f"thr_layout = {thr_layout}")

    grid_dim = (
        cute.size(tiled_tensor_D, mode=[1]),
        1,
        1,
    )
    block_dim = (cute.size(thr_layout), 1, 1)

    print("Grid and Block Configuration:")
    print(f"grid_dim = {grid_dim}")
    print(f"block_dim = {block_dim}")

    copy_kernel(tiled_tensor_S, tiled_tensor_D, thr_layout).launch(
        grid=grid_dim, block=block_dim
    )
    return


if __name__ == "__main__":
    cutlass.cuda.initialize_cuda_context()

    block_shape = (32, 256)
    thread_shape = (8, 32)

    device = "cuda" if torch.cuda.is_available() else "cpu"
    S = torch.randn(8192, 8192, device=device, dtype=torch.bfloat16)
    D = torch.zeros(8192, 8192, device=device, dtype=torch.bfloat16)

    tensor_S = from_dlpack(S, assumed_align=16)
    tensor_D = from_dlpack(D, assumed_align=16)

    launch_copy(tensor_S, tensor_D, block_shape, thread_shape)

    torch.testing.assert_close(S, D)

    print(S)
    print(D)
