"""Symbolic integers: simplification, ranges and divisibility are sound, and the seeds' offsets fold."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cutelab.errors import TraceError
from cutelab.kernel.ir.symbolic import Expr, Var, evaluate

T, B = 256, 16384


def test_seed_offsets_fold_to_linear_forms():
    t, b = Var("tid.x", T), Var("bid.x", B)
    x = (b * T + t) // 512
    y = (b * T + t) % 512
    assert x.expr_str() == "(bid.x // 2)"
    off = x * 8192 + y * 16
    assert off.expr_str() == "(4096 * bid.x + 16 * tid.x)"
    assert (off.lo, off.hi, off.div) == (0, 8192 * 8192 - 16, 16)


def test_tv_offset_divisibility_and_range():
    t = Var("tid.x", 4)
    e = (t % 2) * 2 + (t // 2) * 12
    assert (e.lo, e.hi, e.div) == (0, 14, 2)
    assert str(e) == "?{div=2}" and f"{e}" == "?{div=2}"  # as CuTe DSL prints a dynamic int of known divisor
    assert str(t) == "?" and f"{t + 1}" == "?"


def test_floor_div_and_mod_by_larger_constants_vanish():
    t = Var("tid.x", 32)
    assert t // 32 == 0 or isinstance(t // 32, int)
    assert (t // 32) == 0
    assert t % 32 is t
    assert (t % 8 + (t // 8) * 8) is t  # x % k + k * (x // k) == x


def test_bool_of_thread_dependent_condition_raises():
    t = Var("tid.x", 256)
    assert bool(t < 256)
    assert not bool(t >= 256)
    with pytest.raises(TraceError, match="depends on the thread"):
        bool(t < 128)
    with pytest.raises(TraceError, match="no Python int value"):
        range(t)


def test_extent_one_index_is_a_constant():
    y = Var("tid.y", 1)
    assert (y * 7 + 3) == 3 or (y * 7 + 3) is 3  # noqa: F632


_vars = [Var("tid.x", 96), Var("bid.x", 40)]
_tx, _bx = (a.ravel() for a in np.meshgrid(np.arange(96), np.arange(40), indexing="ij"))
_ENV = {"tid.x": _tx, "bid.x": _bx}


@st.composite
def exprs(draw, depth=3):
    """(symbolic expression, its values computed directly with numpy on every thread)."""
    if depth == 0 or draw(st.booleans()):
        i = draw(st.integers(0, 2))
        if i < 2:
            return _vars[i], _ENV[_vars[i].name]
        c = draw(st.integers(-5, 40))
        return c, np.full(_tx.shape, c)
    op = draw(st.sampled_from(["+", "-", "*", "//", "%"]))
    a, av = draw(exprs(depth=depth - 1))
    if op in ("//", "%"):
        c = draw(st.integers(1, 70))
        return (a // c, av // c) if op == "//" else (a % c, av % c)
    if op == "*":
        c = draw(st.integers(-9, 9))
        return a * c, av * c
    b, bv = draw(exprs(depth=depth - 1))
    return (a + b, av + bv) if op == "+" else (a - b, av - bv)


@settings(max_examples=400, deadline=None)
@given(exprs())
def test_simplified_expressions_are_exact_and_their_facts_sound(pair):
    e, ref = pair
    v = np.broadcast_to(np.asarray(evaluate(e, _ENV)), _tx.shape)
    assert np.array_equal(v, ref)
    if isinstance(e, Expr):
        assert e.lo <= v.min() and v.max() <= e.hi
        if e.div:
            assert np.all(v % e.div == 0)
