# Seed: "CuTe partitions" (simons blog), Pure Inner Partition. CuTe DSL program, changed only
# in its import lines and in the line choosing the device its arrays live on.
import torch

import cutelab as cutlass
import cutelab as cute
from cutelab.runtime import from_dlpack


@cute.kernel
def copy_kernel(S: cute.Tensor, D: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    bdimx, _, _ = cute.arch.block_dim()

    num = cute.size(S, mode=[2])
    block_start = bidx * bdimx + tidx
    x = block_start // num
    y = block_start % num
    # Slice into the tiled tensors
    block_coordinate = ((None, None), x, y)
    tile_S = S[block_coordinate]
    tile_D = D[block_coordinate]

    print("Block Tile:")
    print(f"tile_S = {tile_S}")
    print(f"tile_D = {tile_D}")

    fragment = cute.make_fragment_like(tile_S)

    print("Fragment:")
    print(f"fragment = {fragment}")

    fragment.store(tile_S.load())
    tile_D.store(fragment.load())
    return


@cute.jit
def launch_copy(
    tensor_S: cute.Tensor,
    tensor_D: cute.Tensor,
    block_shape: cute.Shape,
    num_threads: cutlass.Constexpr[cutlass.Int32],
):
    print("Tensors:")
    print(f"tensor_S = {tensor_S}")
    print(f"tensor_D = {tensor_D}")

    # Tile (m, n) by (M, N) to obtain ((M, N), m', n')
    # , where M' and N' are the number of block tiles
    tiled_tensor_S = cute.tiled_divide(tensor_S, block_shape)  # (M, N), m', n')
    tiled_tensor_D = cute.tiled_divide(tensor_D, block_shape)  # (M, N), m', n')

    print("Block Tile Tensor:")
    print(f"tiled_tensor_S = {tiled_tensor_S}")
    print(f"tiled_tensor_D = {tiled_tensor_D}")

    grid_dim = (
        (cute.size(tiled_tensor_D, mode=[1]) * cute.size(tiled_tensor_D, mode=[2]))
        // num_threads,
        1,
        1,
    )
    block_dim = (num_threads, 1, 1)

    print("Grid and Block Configuration:")
    print(f"grid_dim = {grid_dim}")
    print(f"block_dim = {block_dim}")

    copy_kernel(tiled_tensor_S, tiled_tensor_D).launch(grid=grid_dim, block=block_dim)
    return


if __name__ == "__main__":
    cutlass.cuda.initialize_cuda_context()

    tensor_shape = (8192, 8192)
    block_shape = (1, 16)
    num_threads = 256

    device = "cuda" if torch.cuda.is_available() else "cpu"
    S = torch.randn(8192, 8192, device=device, dtype=torch.bfloat16)
    D = torch.zeros(8192, 8192, device=device, dtype=torch.bfloat16)

    tensor_S = from_dlpack(S, assumed_align=16)
    tensor_D = from_dlpack(D, assumed_align=16)

    launch_copy(tensor_S, tensor_D, block_shape, num_threads)

    torch.testing.assert_close(S, D)

    print(S)
    print(D)
