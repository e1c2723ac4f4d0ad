"""An object of CuTe DSL's value protocol that a runtime branch changes in place without naming it
(kernel/frontend/carry_escape.py), as flash_attn.cute's SM100 forward does: each warp role's branch
passes one tile scheduler to a @cute.jit method whose runtime loop advances it
(``if warp == load: self.load(..., tile_scheduler)``). After the branch the object holds the arm's
values in the threads that ran the arm and its values from before elsewhere, as in CuTe DSL; the other
arm starts from the values from before. Before, the next branch read the first arm's loop values (a
TraceError: a value of a branch that has ended)."""

from __future__ import annotations

import numpy as np

import cutelab as cute
import cutelab as cutlass
from cutelab import Int32
from cutelab.runtime import from_dlpack


class Sched:
    """A tile scheduler held as its value: the tile index, advanced by a stride."""

    def __init__(self, idx):
        self._idx = idx

    def advance(self):
        self._idx = self._idx + Int32(10)

    def __extract_mlir_values__(self):
        return [self._idx]

    def __new_from_mlir_values__(self, values):
        return Sched(Int32(values[0]))


@cute.jit
def run_tiles(sched: Sched, n: Int32, out: cute.Tensor, col: cutlass.Constexpr):
    i = Int32(0)
    while i < n:
        sched.advance()
        i = i + 1
    tidx, _, _ = cute.arch.thread_idx()
    out[tidx, col] = sched._idx


@cute.kernel
def roles_kernel(out: cute.Tensor, n: Int32):
    tidx, _, _ = cute.arch.thread_idx()
    sched = Sched(Int32(tidx))
    if tidx < 2:
        run_tiles(sched, n, out, 0)
    else:
        out[tidx, 0] = sched._idx  # the else arm starts from the values from before the branch
    if tidx >= 2:
        run_tiles(sched, n + 1, out, 1)
    out[tidx, 2] = sched._idx  # after both: each thread's own result


def test_a_branch_gives_an_object_changed_in_a_called_function_its_result():
    out = np.full((4, 3), -1, np.int32)
    roles_kernel(from_dlpack(out), 2).launch(grid=1, block=4)
    assert out.tolist() == [[20, -1, 20], [21, -1, 21], [2, 32, 32], [3, 33, 33]]
