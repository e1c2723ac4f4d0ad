"""Dynamic layouts against CuTe DSL 4.8.1: tests/golden/dynamic.json (scripts/make_dynamic_golden.py)
holds what the DSL printed at trace time for tensors marked with mark_layout_dynamic /
mark_compact_shape_dynamic and for the algebra and arithmetic on them; cutelab must print the same,
and refuse the same marks (with its own messages)."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import cutelab as cute
from cutelab.errors import TensorError
from cutelab.runtime import from_dlpack

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "golden", "dynamic.json")) as f:
    GOLDEN = json.load(f)

_TILER = {1: (8,), 2: (4, 8), 3: (2, 3, 2)}
_COORD = {1: (None,), 2: (0, None), 3: (0, None, 1)}

# Where cutelab answers differently on purpose ((case, expression) -> why); each is checked below.
DEVIATIONS = {
    ("compact_3d_cm", "cute.local_tile(mA, T, C).layout"): (
        "the tile coordinate 1 of the last mode is out of range (extent 2, tile 2: one tile); CuTe DSL "
        "does not check it, cutelab refuses it"),
}


def _tensor(case):
    shape, dtype, perm, step = case["array"]
    a = np.zeros(tuple(shape), dtype)
    if perm is not None:
        a = a.transpose(perm)
    if step is not None:
        a = a[:, ::step]
    marks = case["marks"]
    align = next((m[1] for m in marks if m[0] == "align"), None)
    t = from_dlpack(a, assumed_align=align) if align else from_dlpack(a)
    for m in marks:
        if m[0] == "layout":
            t = t.mark_layout_dynamic(leading_dim=m[1]) if m[1] is not None else t.mark_layout_dynamic()
        elif m[0] == "compact":
            so = tuple(m[2]) if m[2] is not None else None
            t = t.mark_compact_shape_dynamic(mode=m[1], stride_order=so, divisibility=m[3])
    return t


@pytest.mark.parametrize("case", GOLDEN["cases"], ids=[c["name"] for c in GOLDEN["cases"]])
def test_marks_and_prints_as_cute_dsl(case):
    assert "crash" not in case
    if "error" in case:
        with pytest.raises(TensorError):
            _tensor(case)
        return
    mA = _tensor(case)
    r = len(mA.shape)
    env = {"mA": mA, "s": mA.shape[0], "T": _TILER[r], "C": _COORD[r]}
    got, want = {}, {}
    for e, dsl in case["prints"].items():
        if dsl.startswith("error:"):
            continue
        if (case["name"], e) in DEVIATIONS:
            with pytest.raises(ValueError, match="coordinate"):
                eval(e, {"cute": cute}, env)  # noqa: S307
            continue
        v = eval(e, {"cute": cute}, env)  # noqa: S307 - the golden file's own expressions
        got[e] = v if isinstance(v, str) else str(v)
        want[e] = dsl
    assert got == want


def test_golden_covers_the_marks():
    names = {c["name"] for c in GOLDEN["cases"]}
    assert len(names) >= 30
    assert sum("error" in c for c in GOLDEN["cases"]) >= 8  # refusals are checked too
    assert all(len(c.get("prints", GOLDEN["exprs"])) == len(GOLDEN["exprs"]) for c in GOLDEN["cases"])
