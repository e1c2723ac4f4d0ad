"""CuTe DSL's ``PipelineState(stages, count, index, phase)``: a state held as its values, which a
library subclass moves itself (quack's PipelineStateWAdvance sets ``_count``/``_index``/``_phase``),
advanced in a runtime loop that carries it because the loop calls its methods."""

from __future__ import annotations

import numpy as np

import cutelab as cute
import cutelab as cutlass
from cutelab import Int32
from cutelab.runtime import from_dlpack

PipelineState = cutlass.pipeline.PipelineState


class _StateWithJump(PipelineState):
    """A library's subclass: jumps several stages at once, and rebuilds itself from its values."""

    def jump(self, n):
        self._count += Int32(n)
        at = self._index + Int32(n)
        self._phase ^= (at // self.stages) % 2
        self._index = at % self.stages

    def __new_from_mlir_values__(self, values):
        return _StateWithJump(self.stages, Int32(values[0]), Int32(values[1]), Int32(values[2]))


@cute.kernel
def _walk(out: cute.Tensor, n: Int32):
    s = _StateWithJump(3, Int32(0), Int32(0), Int32(1))  # a producer's start: index 0, phase 1
    for i in cutlass.range(n, unroll=1):
        out[i, 0] = s.index
        out[i, 1] = s.phase
        out[i, 2] = s.count
        s.advance()  # no assignment: the loop carries s since it calls its method
    s.jump(4)
    out[n, 0] = s.index
    out[n, 1] = s.phase
    out[n, 2] = s.count


def test_a_state_of_values_moves_in_a_runtime_loop():
    for n in (1, 5, 7):
        out = np.full((n + 1, 3), -1, np.int32)
        _walk(from_dlpack(out), n).launch(grid=1, block=1)
        want = [[i % 3, 1 ^ ((i // 3) % 2), i] for i in range(n)]
        want.append([(n + 4) % 3, 1 ^ (((n + 4) // 3) % 2), n + 4])
        assert out.tolist() == want, n


def test_the_four_positional_values_are_count_index_phase():
    s = PipelineState(4, 0, 2, 1)
    assert (s.stages, s.count, s.index, s.phase) == (4, 0, 2, 1)
    s.advance()
    assert (s.count, s.index, s.phase) == (1, 3, 1)
    s.advance()
    assert (s.count, s.index, s.phase) == (2, 0, 0)  # wrapped: the phase flips
    s.advance(6)
    assert (s.count, s.index, s.phase) == (8, 2, 1)
    c = s.clone()
    c.reset_count()
    assert (c.count, c.index, c.phase, s.count) == (0, 2, 1, 8)
    assert s.__extract_mlir_values__() == [8, 2, 1]
    m = cutlass.pipeline.make_pipeline_state(cutlass.pipeline.PipelineUserType.Producer, 3)
    assert (m.index, m.phase, m.count) == (0, 1, 0)  # cutelab's own trace-time count
