"""Sizes are checked before allocating (issue 23): each case ran numpy out of memory or asked it
for gigabytes. They run in a child process whose address space is capped at 2 GiB, so a
regression fails here instead of taking the machine's memory."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

import cutelab as cute
from cutelab.errors import LayoutError
from cutelab.limits import MAX_ELEMENTS, BudgetError, budget, charge

_CASES = textwrap.dedent(r'''
    import json, resource, sys
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
    import cutelab as cute
    from cutelab import Layout
    from cutelab.render import swizzle_figure, render
    from cutelab.web import compute
    warp = cute.nvgpu.warp
    cases = {
        "mma_huge_atoms": lambda: cute.make_tiled_mma(warp.MmaF16BF16Op(cute.Float16, cute.Float32, (16, 8, 16)),
                                                      (1000, 1000, 1000)),
        "fma_2_31": lambda: cute.make_tiled_mma(cute.nvgpu.MmaUniversalOp(cute.Float32), (2**31, 1, 1)),
        "perm_65536": lambda: compute("mma", {"perm": "65536x65536x16"}),
        "swizzle_png": lambda: render(swizzle_figure("(1048576):(1)"), "png"),
        "elem_bits": lambda: swizzle_figure("1000000000:1", elem_bits=-16),
        "hier_coord": lambda: Layout.parse("(1048576,1024):(1048576,-1)").get_hier_coord(-1),
        "offsets": lambda: Layout.parse("(65536,65536):(1,65536)").offsets(),
    }
    out = {}
    for k, f in cases.items():
        try:
            out[k] = ["ok", str(f())]
        except Exception as e:
            out[k] = [type(e).__name__, str(e)]
    print(json.dumps(out))
''')


@pytest.fixture(scope="module")
def outcomes():
    r = subprocess.run([sys.executable, "-c", _CASES], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("case,error,words", [
    ("mma_huge_atoms", "LayoutError", "threads is past the"),
    ("fma_2_31", "LayoutError", "2147483648 threads"),
    ("perm_65536", "LayoutError", "the limit is"),
    ("swizzle_png", "LayoutError", "pixels, past the limit"),
    ("elem_bits", "LayoutError", "elem_bits must be a power of two"),
    ("offsets", "BudgetError", "past the limit"),
])
def test_refused_before_allocating(outcomes, case, error, words):
    kind, msg = outcomes[case]
    assert kind == error and words in msg, (case, kind, msg)


def test_get_hier_coord_of_a_huge_layout_is_found_without_the_whole_domain(outcomes):
    assert outcomes["hier_coord"] == ["ok", "(0, 1)"]


def test_get_hier_coord_searches_non_compact_layouts_like_before():
    L = cute.make_layout((4, 3), stride=(3, -2))  # CuTe's formula does not invert it: a search
    offs = set(L.offsets().tolist())
    for idx in range(-5, 11):
        if idx in offs:
            assert L(L.get_hier_coord(idx)) == idx
        else:
            with pytest.raises(LayoutError, match="no coordinate"):
                L.get_hier_coord(idx)


def test_budget_counts_elements_and_time():
    assert issubclass(BudgetError, LayoutError)
    with pytest.raises(BudgetError, match="past the limit"):
        charge(MAX_ELEMENTS + 1, "one allocation")
    with budget(elements=100, what="the test"):
        charge(100, "a")
        with pytest.raises(BudgetError, match="the test past its budget of 100 elements"):
            charge(1, "b")
    with budget(seconds=0.0, what="the test"):
        with pytest.raises(BudgetError, match="time limit"):
            cute.make_layout((4, 4)).offsets()
    charge(10**6, "outside any budget")  # no budget: only the one-allocation limit
