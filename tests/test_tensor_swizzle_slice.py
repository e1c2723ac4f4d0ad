"""Slices of host tensors over swizzled layouts hold the form CuTe DSL prints (the decayed layout, or
S o zy o sub at a moved pointer: tests/test_print_golden.py compares the text) and read the same
elements as the swizzled layout itself, for every slice case of tests/golden/swizzle_slice.json."""
import json
import os

import numpy as np
import pytest

import cutelab as cute
from cutelab import int_tuple as it
from cutelab.layout import parse_layout, parse_tuple
from cutelab.swizzle import ComposedLayout

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden", "swizzle_slice.json")


def _cases():
    with open(GOLDEN) as f:
        cases = json.load(f)["cases"]
    out = []
    for c in cases:
        (crd,), (comp,) = (a.values() for a in c["args"])
        inner, off, outer = comp
        if not isinstance(inner, list) or "crash" in c or "error" in c:
            continue
        out.append((parse_tuple(crd, allow_none=True), inner, off, outer))
    return out


CASES = _cases()


def test_there_are_cases():
    assert len(CASES) > 500


@pytest.mark.parametrize("chunk", range(4))
def test_slices_read_the_swizzled_elements(chunk):
    from cutelab.layout import slice_and_offset as outer_slice

    checked = decayed = 0
    for crd, inner, off, outer in CASES[chunk::4]:
        if not (isinstance(crd, tuple) and it.has_none(crd)) or all(c is None for c in it.flatten_to_tuple(crd)):
            continue  # slices that fix some modes and keep others
        C = cute.make_composed_layout(cute.make_swizzle(*inner), off, parse_layout(outer))
        data = np.arange(int(C.offsets().max()) + 1, dtype=np.int32)
        s = cute.make_tensor(data, C)[crd]
        # the elements: C at (the fixed part of crd, each coordinate of the rest) = S(off + fixed + sub(i))
        sub, fixed = outer_slice(crd, C.outer)
        want = data[ComposedLayout(C.inner, off + fixed, sub).offsets()]
        assert np.asarray(s.load().values).reshape(-1).tolist() == want.reshape(-1).tolist(), (crd, C, s)
        checked += 1
        decayed += not isinstance(s.layout, ComposedLayout)
    assert checked > 50 and decayed > 5, (checked, decayed)
