"""How the suite is spread over CI's two xdist workers (tests/conftest.py; README's test command)."""

from __future__ import annotations

import glob
import importlib.util
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# tests/conftest.py, by its path: "conftest" in sys.modules is whichever conftest pytest imported last
_spec = importlib.util.spec_from_file_location("suite_conftest", os.path.join(ROOT, "tests", "conftest.py"))
suite_conftest = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(suite_conftest)


def test_every_slow_first_entry_names_test_files():
    for pat in suite_conftest.SLOW_FIRST:
        found = glob.glob(os.path.join(ROOT, pat))
        assert found and all(os.path.basename(f).startswith("test_") for f in found), pat
        assert all(suite_conftest.is_slow(os.path.relpath(f, ROOT).replace(os.sep, "/")) for f in found), pat
    assert not suite_conftest.is_slow("tests/test_layout.py")


def test_order_keeps_every_test_once_and_fronts_each_part_with_slow_ones():
    items = [f"t{i}" for i in range(101)]
    slow = [i % 7 == 3 for i in range(101)]  # 14 slow, spread through the collection
    for n in (1, 2, 3):
        out = suite_conftest.order_for_workers(items, slow, n)
        assert sorted(out) == sorted(items)
        if n == 1:
            assert out == items
            continue
        left, start = len(items), 0
        for i in range(n):  # worksteal's first parts: len(left) // (workers left)
            size = left // (n - i)
            part = out[start:start + size]
            k = len([s for s in slow if s][i::n])
            assert all(slow[items.index(t)] for t in part[:k]) and not any(slow[items.index(t)] for t in part[k:])
            rest = [t for t in part[k:]]
            assert rest == sorted(rest, key=items.index)  # the others keep their order
            left, start = left - size, start + size


def test_ci_runs_two_worksteal_workers():
    with open(os.path.join(ROOT, "README.md")) as f:
        text = f.read()
    cmd = re.search(r"<!-- test-command -->\n```bash\n(.*?)\n```", text, re.S).group(1)
    assert re.search(r"python3 -m pytest -q -n 2 --dist worksteal\b", cmd), cmd
