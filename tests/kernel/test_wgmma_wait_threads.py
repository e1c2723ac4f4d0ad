"""wgmma.wait_group on the CPU retires each thread's own committed groups (kernel/instr/wgmma.py
_wait_group): the blocks of one interpreter batch may run a K loop a different number of times
(a grouped GEMM's groups have different K), and a wait inside the loop, run by some blocks only, must
leave the groups of the others queued for them, not drop them."""

from __future__ import annotations

import numpy as np

from cutelab.kernel.instr.wgmma import _wait_group


class _Ctx:
    def __init__(self, n):
        self.n = n


class _Op:
    def __init__(self, name, log):
        self.name, self.log = name, log

    def execute(self, b, mask, bases):
        self.log.append((self.name, None if mask is None else np.nonzero(mask)[0].tolist()))


def test_a_wait_run_by_some_threads_keeps_the_others_groups_queued():
    log = []
    b = _Ctx(4)
    both = np.array([True, True, True, True])
    first = np.array([True, True, False, False])  # threads 0-1: the block whose loop runs once more
    st = {"pending": [], "groups": [[(_Op("g0", log), both.copy(), None)]]}  # prologue: everyone commits g0
    st["groups"].append([(_Op("g1", log), first.copy(), None)])  # loop body: only threads 0-1 commit g1
    _wait_group(b, st, first, 1)  # ... and wait for all but their newest group
    assert log == [("g0", [0, 1])]  # threads 2-3 did not wait: their part of g0 stays
    _wait_group(b, st, None, 0)  # after the loop: everyone waits for everything
    assert log == [("g0", [0, 1]), ("g0", [2, 3]), ("g1", [0, 1])]
    assert st["groups"] == []


def test_a_wait_of_every_thread_for_every_group_executes_them_in_order_once():
    log = []
    st = {"pending": [], "groups": [[(_Op("a", log), None, None)], [(_Op("b", log), None, None)]]}
    _wait_group(_Ctx(8), st, None, 1)
    assert log == [("a", None)] and len(st["groups"]) == 1
    _wait_group(_Ctx(8), st, None, 0)
    assert log == [("a", None), ("b", None)] and st["groups"] == []
