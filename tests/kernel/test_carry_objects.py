"""Runtime while loops that carry objects of CuTe DSL's value protocol (``__extract_mlir_values__`` /
``__new_from_mlir_values__``, kernel/frontend/carry_obj.py), as persistent tile schedulers do: the
object reassigned in the loop, the object whose method the loop calls (changed in place), a first test
that the block index's range decides; dataclasses of tensor values (a work tile) carried by their
leaves, a static leaf kept; and launch(min_blocks_per_mp=)."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest

import cutelab as cute
from cutelab.errors import LaunchError, TraceError
from cutelab.kernel.cuda import printer as cuda
from cutelab.kernel.launch.plan import last_launch
from cutelab.runtime import from_dlpack


class Work:
    """A work item: its tile index and whether it is one of the problem's."""

    def __init__(self, idx, valid):
        self.idx, self.valid = idx, valid

    def __extract_mlir_values__(self):
        return [self.idx, self.valid]

    def __new_from_mlir_values__(self, values):
        return Work(values[0], values[1])


class Walker:
    """Start at the block's index, step by the grid's size (a static persistent scheduler)."""

    def __init__(self, cur, step, total):
        self.cur, self.step, self.total = cur, step, total

    def work(self):
        return Work(self.cur, self.cur < self.total)

    def advance(self):
        self.cur = self.cur + self.step

    def __extract_mlir_values__(self):
        return [self.cur]

    def __new_from_mlir_values__(self, values):
        return Walker(values[0], self.step, self.total)


TOTAL = 10


@cute.kernel
def walk(out: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    w = Walker(bidx, 4, TOTAL)
    item = w.work()
    while item.valid:  # every block starts on a tile (grid 4 <= 10 tiles): the first test is decided
        if tidx == 0:
            out[item.idx] = bidx + 1
        w.advance()  # changes w in place: the loop carries it (a method's object)
        item = w.work()


def test_a_persistent_walk_carries_the_scheduler_and_its_work_item():
    out = np.zeros(TOTAL, np.int32)
    walk(from_dlpack(out)).launch(grid=4, block=32)
    np.testing.assert_array_equal(out, np.arange(TOTAL) % 4 + 1)
    src = cuda.render(last_launch().ir)
    assert "while (true) {" in src


class Grows:
    def __init__(self, vals):
        self.vals = vals

    def __extract_mlir_values__(self):
        return list(self.vals)

    def __new_from_mlir_values__(self, values):
        return Grows(values)


@cute.kernel
def grows(out: cute.Tensor):
    bidx, _, _ = cute.arch.block_idx()
    g = Grows([bidx])
    i = bidx
    while i < 8:
        g = Grows([i, i])
        i = i + 1
    out[bidx] = i


def test_a_carried_object_that_changes_its_number_of_values_is_refused():
    with pytest.raises(TraceError, match=r"variable 'g' is a Grows carried by its 1 values through the while loop"):
        grows(from_dlpack(np.zeros(4, np.int32))).launch(grid=4, block=1)


@dataclasses.dataclass(frozen=True)
class Tile:
    """A work tile as CuTe DSL's WorkTileInfo is one: runtime values, and a static leaf."""

    idx: Any
    valid: Any
    kind: str


@cute.kernel
def walk_tiles(out: cute.Tensor, start: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    t = Tile(start[bidx], start[bidx] < TOTAL, "mn")
    while t.valid:
        if tidx == 0 and t.kind == "mn":
            out[t.idx] = bidx + 1
        t = Tile(t.idx + 4, t.idx + 4 < TOTAL, t.kind)


@cute.kernel
def walk_tiles_reshaped(out: cute.Tensor, start: cute.Tensor):
    bidx, _, _ = cute.arch.block_idx()
    t = Tile(start[bidx], start[bidx] < TOTAL, "mn")
    while t.valid:
        out[t.idx] = bidx + 1
        t = Tile(t.idx + 4, t.idx + 4 < TOTAL, "nm")


def test_a_loop_carries_a_dataclass_of_runtime_values_by_its_leaves():
    out, start = np.zeros(TOTAL, np.int32), np.arange(4, dtype=np.int32)
    walk_tiles(from_dlpack(out), from_dlpack(start)).launch(grid=4, block=32)
    np.testing.assert_array_equal(out, np.arange(TOTAL) % 4 + 1)
    with pytest.raises(TraceError, match=r"variable 't': leaf 2 of Tile is 'mn' before the while loop at .* and 'nm' inside "
                                         r"it; only its tensor values, numbers and indices can change"):
        walk_tiles_reshaped(from_dlpack(out), from_dlpack(start)).launch(grid=4, block=1)


@cute.kernel
def copy1(a: cute.Tensor, b: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    b[tidx] = a[tidx]


def test_min_blocks_per_mp_is_the_second_launch_bound():
    a, b = np.arange(32, dtype=np.float32), np.zeros(32, np.float32)
    copy1(from_dlpack(a), from_dlpack(b)).launch(grid=1, block=32, min_blocks_per_mp=2)
    np.testing.assert_array_equal(a, b)
    assert "__launch_bounds__(32, 2) " in cuda.render(last_launch().ir)
    copy1(from_dlpack(a), from_dlpack(b)).launch(grid=1, block=32)
    assert "__launch_bounds__(32) " in cuda.render(last_launch().ir)
    with pytest.raises(LaunchError, match="min_blocks_per_mp must be a non-negative int"):
        copy1(from_dlpack(a), from_dlpack(b)).launch(grid=1, block=32, min_blocks_per_mp=-1)


def _four_axis_work_tile():
    """flash_attn.cute 4.0.0b27's tile_scheduler.WorkTileInfo: a subclass of cutlass.utils.WorkTileInfo whose
    __new_from_mlir_values__ reads the base class's ``_tile_idx`` / ``_is_valid_tile``."""
    from cutelab.compat import base_dsl
    from cutelab.compat.dsl_utils import WorkTileInfo as Base

    class WorkTileInfo(Base):
        def __new_from_mlir_values__(self, values):
            assert len(values) == 5
            idx = base_dsl.new_from_mlir_values(self._tile_idx, values[:-1])
            valid = base_dsl.new_from_mlir_values(self._is_valid_tile, [values[-1]])
            return WorkTileInfo(idx, valid)

    return WorkTileInfo


def test_a_subclass_of_work_tile_info_rebuilds_itself_from_the_base_attributes():
    W = _four_axis_work_tile()

    @cute.kernel
    def k(out: cute.Tensor, start: cute.Tensor):
        bidx, _, _ = cute.arch.block_idx()
        w = W((start[bidx], 0, bidx, 0), start[bidx] < TOTAL)
        while w.is_valid_tile:
            out[w.tile_idx[0]] = w.tile_idx[2] + 1
            w = W((w.tile_idx[0] + 4, 0, w.tile_idx[2], 0), w.tile_idx[0] + 4 < TOTAL)

    out, start = np.zeros(TOTAL, np.int32), np.arange(4, dtype=np.int32)
    k(from_dlpack(out), from_dlpack(start)).launch(grid=4, block=1)
    np.testing.assert_array_equal(out, np.arange(TOTAL) % 4 + 1)


@dataclasses.dataclass(frozen=True)
class Stats:
    """flash_attn.cute's Softmax: tensor values and a field annotated Constexpr (its arch), which stays a
    compile-time value when a loop carries the object."""

    total: Any
    arch: cute.Constexpr[int] = 80


@cute.kernel
def count_with_stats(out: cute.Tensor, start: cute.Tensor):
    bidx, _, _ = cute.arch.block_idx()
    s = Stats(start[bidx], 90)
    i = start[bidx]
    while i < TOTAL:
        if cute.const_expr(s.arch >= 90):  # a static test: arch is not carried in a register
            s = Stats(s.total + 1, s.arch)
        i = i + 4
    out[bidx] = s.total


def test_a_constexpr_field_of_a_carried_dataclass_stays_static():
    out, start = np.zeros(4, np.int32), np.arange(4, dtype=np.int32)
    count_with_stats(from_dlpack(out), from_dlpack(start)).launch(grid=4, block=1)
    assert out.tolist() == [b + len(range(b, TOTAL, 4)) for b in range(4)]
