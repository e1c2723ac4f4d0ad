"""A pytest plugin (``-p quack_select``) that selects quack's tests for the CPU interpreter, by their
parameters and without changing the test files (scripts/quack_tests.py and tests/compat/test_compat_quack.py
put this folder on PYTHONPATH).

- ``use_compile=True`` cases are dropped: they wrap the same kernels in ``torch.compile`` (Inductor's
  CPU compile of the surrounding torch code), which tests torch, not the kernels;
- for every size parameter (``M``, ``N``, ``k``, ``in_features``, ...) only the smallest value that a test
  function is parametrized with is kept ("the smallest sizes"); the other parameters (dtypes, flags,
  layouts) are all kept;
- a case whose size parameters multiply to more than ``QUACK_SELECT_MAX_SIZE`` (default 2**22) is dropped
  (a function parametrized with one large size only: cross-entropy's 4096 x 128256 partial LSE);
- the autotuning tests (``*_tuned_dispatch``) are dropped: they compile and benchmark every config of the
  search space, which on the interpreter takes longer than the rest together;
- ``QUACK_SELECT_PER_FUNCTION=K`` keeps at most the first K cases of each test function (the GEMM
  files parametrize thousands of flag combinations);
- ``QUACK_SELECT_IDS=FILE`` keeps only the test ids listed in FILE, one a line (the CI subset).
"""

from __future__ import annotations

import os

SIZES = {"M", "N", "K", "m", "n", "k", "B", "S", "H", "D", "L", "V", "d", "B_L", "in_features", "out_features",
         "hidden_features", "num_groups", "seqlen", "batch", "dim"}


def _size_items(item):
    cs = getattr(item, "callspec", None)
    if cs is None:
        return []
    return [(k, v) for k, v in cs.params.items()
            if k in SIZES and isinstance(v, (int, float)) and not isinstance(v, bool)]


def pytest_collection_modifyitems(config, items):
    smallest = {}
    for it in items:
        for k, v in _size_items(it):
            key = (it.nodeid.split("::")[0], it.originalname, k)
            smallest[key] = min(smallest.get(key, v), v)
    ids_file = os.environ.get("QUACK_SELECT_IDS")
    wanted = None
    if ids_file:
        with open(ids_file) as f:
            wanted = {line.strip() for line in f if line.strip()}
    cap = int(os.environ.get("QUACK_SELECT_PER_FUNCTION", "0") or 0)
    max_size = int(os.environ.get("QUACK_SELECT_MAX_SIZE", str(2 ** 22)))
    seen = {}
    keep, drop = [], []
    for it in items:
        cs = getattr(it, "callspec", None)
        ok = not (cs is not None and cs.params.get("use_compile") is True)
        ok = ok and all(v == smallest[(it.nodeid.split("::")[0], it.originalname, k)] for k, v in _size_items(it))
        ok = ok and not it.originalname.endswith("_tuned_dispatch")
        if ok:
            size = 1
            for _, v in _size_items(it):
                size *= v
            ok = size <= max_size
        if ok and wanted is not None:  # ids from quack's folder (tests/test_x.py::...), wherever pytest's rootdir is
            nid = it.nodeid
            ok = nid in wanted or ("tests/" in nid and nid[nid.index("tests/"):] in wanted)
        if ok and cap:
            fn = (it.nodeid.split("::")[0], it.originalname)
            seen[fn] = seen.get(fn, 0) + 1
            ok = seen[fn] <= cap
        (keep if ok else drop).append(it)
    items[:] = keep
    if drop:
        config.hook.pytest_deselected(items=drop)
