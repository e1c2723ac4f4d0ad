# Seed: "Thread Value Layouts in CuTe" (simons blog). CuTe DSL program, changed only in its
# import lines and in the line choosing the device its array lives on.
import torch

import cutelab as cute
from cutelab.runtime import from_dlpack


@cute.kernel
def visualize_tv_layout_kernel(mA: cute.Tensor, tv_layout: cute.Layout):
    tidx, _, _ = cute.arch.thread_idx()
    # Compose mA with TV Layout
    composed = cute.composition(mA, tv_layout)
    cute.printf("TIDX: {}", tidx)
    cute.printf("DATA: {}", composed[(tidx, None)])


@cute.jit
def visualize_tv_layout(
    mA: cute.Tensor,
):
    # mA Layout: (24, 1) : (1, 0)
    tv_layout = cute.make_layout(shape=((2, 2), (2, 3)), stride=((2, 12), (1, 4)))
    print(f"TV Layout: {tv_layout}")

    # Launch the kernel asynchronously
    # Async token(s) can also be specified as dependencies
    visualize_tv_layout_kernel(mA, tv_layout).launch(
        grid=[1, 1, 1],
        block=[cute.size(tv_layout, mode=[0]), 1, 1],
    )


if __name__ == "__main__":
    M, N = 24, 1
    device = "cuda" if torch.cuda.is_available() else "cpu"
    a = torch.arange(M * N, device=device, dtype=torch.int32).reshape(M, N)
    a_ = from_dlpack(a, assumed_align=16)

    visualize_tv_layout(a_)
