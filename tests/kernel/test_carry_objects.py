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


# --------------------------------------------------------------------------- value trees (structured extraction)

class Acc:
    """CUTLASS's 08_mlir_value_tree_debug tutorial's accumulator: its values as a dict tree, nested lists."""

    def __init__(self, total, count, hist):
        self.total, self.count, self.hist = total, count, hist

    def __extract_mlir_values__(self):
        return {"total": self.total, "stats": {"count": self.count, "hist": list(self.hist)}}

    def __new_from_mlir_values__(self, v):
        assert isinstance(v, dict) and isinstance(v["stats"]["hist"], list)  # the same tree comes back
        return Acc(v["total"], v["stats"]["count"], v["stats"]["hist"])


@cute.kernel
def accumulate(src: cute.Tensor, out: cute.Tensor, n: cute.Int32):
    tidx, _, _ = cute.arch.thread_idx()
    acc = Acc(cute.Float32(0.0), cute.Int32(0), [cute.Float32(0.0), cute.Float32(0.0)])
    for i in cute.range(n):
        x = src[i]
        acc = Acc(acc.total + x, acc.count + 1, [acc.hist[0] + x * x, acc.hist[1] - x])
    out[tidx * 4] = acc.total
    out[tidx * 4 + 1] = cute.Float32(acc.count)
    out[tidx * 4 + 2] = acc.hist[0]
    out[tidx * 4 + 3] = acc.hist[1]


def test_an_object_whose_values_are_a_tree_is_carried_by_its_leaves():
    from cutelab.kernel.frontend import carry_obj

    src = np.arange(1, 6, dtype=np.float32)
    out = np.zeros(8, np.float32)
    carry_obj.DEBUG["enabled"] = True
    try:
        import contextlib
        import io

        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            accumulate(from_dlpack(src), from_dlpack(out), 5).launch(grid=1, block=2)
    finally:
        carry_obj.DEBUG["enabled"] = False
    np.testing.assert_array_equal(out, [15, 5, 55, -15] * 2)
    text = buf.getvalue()
    assert "acc: type: Acc" in text and "=> flattened to 4 values" in text, text
    assert "count: Int32" in text and "hist:" in text and "[1]: Float32" in text, text


class Shifty(Acc):
    def __extract_mlir_values__(self):
        tree = {"total": self.total, "stats": {"count": self.count, "hist": list(self.hist)}}
        if len(self.hist) > 2:
            tree["extra"] = self.hist[2]
        return tree


@pytest.mark.parametrize("change,match", [
    ("key", r"'acc' is a Shifty carried by its 4 values through the .* at .*\(6 values\); a carried object must "
            r"keep its type and its number of values \(value: dict total,stats before, dict total,stats,extra at "
            r"the end"),
    ("kind", r"'acc' \(Shifty\) changes the structure .*stats\.count: integer before, float at the end"),
])
def test_a_value_tree_that_changes_in_a_loop_is_refused_by_path(change, match):
    @cute.kernel
    def k(src: cute.Tensor, out: cute.Tensor, n: cute.Int32):
        acc = Shifty(cute.Float32(0.0), cute.Int32(0), [cute.Float32(0.0), cute.Float32(0.0)])
        for i in cute.range(n):
            x = src[i]
            if cutlass_static(change == "key"):
                acc = Shifty(acc.total + x, acc.count, [x, x, x])
            else:
                acc = Shifty(acc.total + x, x, [x, x])
        out[0] = acc.total

    with pytest.raises(TraceError, match=match):
        k(from_dlpack(np.ones(4, np.float32)), from_dlpack(np.zeros(1, np.float32)), 3).launch(grid=1, block=1)


def cutlass_static(v):
    return v


def test_base_dsl_extracts_and_rebuilds_value_trees():
    from cutelab.compat.base_dsl import extract_mlir_values, new_from_mlir_values

    @dataclasses.dataclass
    class C:
        x: Any
        y: Any

    acc = Acc(1.5, 2, [C(3, 4), None])
    assert extract_mlir_values(C(1, 2), structured=True) == {"x": 1, "y": 2}
    assert extract_mlir_values(acc) == [1.5, 2, C(3, 4)]  # flat: the tree's leaves
    tree = extract_mlir_values([C(1, 2), (3, None)], structured=True)
    assert tree == [{"x": 1, "y": 2}, [3, None]]
    back = new_from_mlir_values([C(1, 2), (3, None)], [{"x": 10, "y": 20}, [30, None]], structured=True)
    assert back == [C(10, 20), (30, None)]
