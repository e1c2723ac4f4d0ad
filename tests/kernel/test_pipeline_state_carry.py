"""A pipeline state (make_pipeline_state's, counted at trace time) that a runtime region rebinds or moves
in a branch is carried through the region by its count and position, as CuTe DSL's scf.for / scf.while /
scf.if carry a PipelineState's Int32 values (CUTLASS's grouped_mixed_input_gemm_acc_scale.py:
``state0, state = clone_and_advance(state)`` in a ``cutlass.range`` inside a ``while``, state0 moved in a
runtime branch and used after the loop). Each kernel runs on the CPU interpreter against the same Python
run with plain ints (the states outside a kernel count at trace time)."""

from __future__ import annotations

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
from cutelab import Int32
from cutelab.errors import TraceError
from cutelab.runtime import from_dlpack

P = cutlass.pipeline


def _clone_and_advance(s):
    c = s.clone()
    s.advance()
    return c, s


def _row(s):
    return [s.index, s.phase, s.count]


def _in_branch(n, out):
    s = P.make_pipeline_state(P.PipelineUserType.Producer, 3)
    if n > 2:
        s.advance()  # moved in place in a runtime branch (was: moved whether or not the branch ran)
    out[0, 0:3] = _row(s)


def _in_loop(n, out):
    # rebinds both names in each iteration of a runtime loop; s0 read before it is rebound
    s = P.make_pipeline_state(P.PipelineUserType.Consumer, 3)
    s0 = s.clone()
    for i in range(n):
        out[i, 0:3] = _row(s0)
        out[i, 3:6] = _row(s)
        s0, s = _clone_and_advance(s)
        s.advance()
    out[n, 0:3] = _row(s0)
    out[n, 3:6] = _row(s)


def _in_while(n, out):
    # a runtime while loop that sets s0 before reading it (one iteration's own), moves it in a runtime branch
    # and in a runtime loop, and reads it after the loop (the last iteration's value)
    s = P.make_pipeline_state(P.PipelineUserType.Producer, 2)
    s0 = s.clone()
    i = 0
    while i < n:
        s.reset_count()
        s0, s = _clone_and_advance(s)
        if i % 2 == 1:
            s0.advance()
        for _ in range(i):
            s0.advance()
        out[i, 0:3] = _row(s0)
        s = s0.clone()
        i = i + 1
    out[n, 0:3] = _row(s0)
    out[n, 3:6] = _row(s)


# the same bodies as kernels (cutlass.range and Int32 values: runtime regions)
@cute.kernel
def _in_branch_k(out: cute.Tensor, n: Int32):
    s = P.make_pipeline_state(P.PipelineUserType.Producer, 3)
    if n > 2:
        s.advance()
    out[0, 0], out[0, 1], out[0, 2] = s.index, s.phase, s.count


@cute.kernel
def _in_loop_k(out: cute.Tensor, n: Int32):
    s = P.make_pipeline_state(P.PipelineUserType.Consumer, 3)
    s0 = s.clone()
    for i in cutlass.range(n, unroll=1):
        out[i, 0], out[i, 1], out[i, 2] = s0.index, s0.phase, s0.count
        out[i, 3], out[i, 4], out[i, 5] = s.index, s.phase, s.count
        s0, s = _clone_and_advance(s)
        s.advance()
    out[n, 0], out[n, 1], out[n, 2] = s0.index, s0.phase, s0.count
    out[n, 3], out[n, 4], out[n, 5] = s.index, s.phase, s.count


@cute.kernel
def _in_while_k(out: cute.Tensor, n: Int32):
    s = P.make_pipeline_state(P.PipelineUserType.Producer, 2)
    s0 = s.clone()
    i = Int32(0)
    while i < n:
        s.reset_count()
        s0, s = _clone_and_advance(s)
        if i % 2 == 1:
            s0.advance()
        for _ in cutlass.range(i, unroll=1):
            s0.advance()
        out[i, 0], out[i, 1], out[i, 2] = s0.index, s0.phase, s0.count
        s = s0.clone()
        i = i + 1
    out[n, 0], out[n, 1], out[n, 2] = s0.index, s0.phase, s0.count
    out[n, 3], out[n, 4], out[n, 5] = s.index, s.phase, s.count


_KERNELS = {"branch": (_in_branch, _in_branch_k), "loop": (_in_loop, _in_loop_k), "while": (_in_while, _in_while_k)}


@pytest.mark.parametrize("which", sorted(_KERNELS))
def test_a_state_rebound_or_moved_in_a_runtime_region_equals_the_python_run(which):
    model, k = _KERNELS[which]
    for n in (1, 4):
        out = np.full((n + 1, 6), -1, np.int32)
        k(from_dlpack(out), n).launch(grid=1, block=1)
        want = np.full((n + 1, 6), -1, np.int64)
        model(n, want)
        assert out.tolist() == want.tolist(), (which, n)


def test_rebinding_a_state_to_one_of_another_ring_names_both():
    @cute.kernel
    def k(out: cute.Tensor, n: Int32):
        s = P.make_pipeline_state(P.PipelineUserType.Producer, 3)
        for i in cutlass.range(n):
            out[i] = s.index  # read before it is rebound: carried from one iteration to the next
            s = P.make_pipeline_state(P.PipelineUserType.Producer, 4)

    with pytest.raises(TraceError, match=r"variable 's'.*a ring of 3 stages starting at phase 1.*"
                                         r"a ring of 4 stages starting at phase 1"):
        k(from_dlpack(np.zeros(2, np.int32)), 2).launch(grid=1, block=1)


def test_a_static_value_rebound_to_an_equal_looking_object_says_it_is_another_object():
    class Box:
        v = 7

        def __repr__(self):
            return "Box()"

    @cute.kernel
    def k(out: cute.Tensor, n: Int32):
        b = Box()
        for i in cutlass.range(n):
            out[i] = b.v  # read before it is rebound: the loop would carry it to the next iteration
            b = Box()

    with pytest.raises(TraceError, match=r"variable 'b' is Box\(\) before the loop at .* and another Box object "
                                         r"inside it \(printed alike, but not the same object\)"):
        k(from_dlpack(np.zeros(2, np.int32)), 2).launch(grid=1, block=1)
