"""A pytest plugin (``-p flash_attn_select``) that generates only the parametrized cases named on the command line.

pytest, given ``FILE::FUNC[ID]``, still collects the whole module: every test function of FILE with the full
cartesian product of its ``@pytest.mark.parametrize`` lists, and only then keeps the items whose id matches.
flash_attn.cute's tests/cute/test_flash_attn.py parametrizes 415,818 cases, minutes of collection before the
first test runs. This plugin narrows the product while it is being built, without changing the test files:

- each ``Metafunc.parametrize`` call (one per parametrize mark, closest decorator first, which is the order of
  the parts of an id) runs as pytest's own, with the full value list, so every case's id, parameters and marks
  are pytest's; then it keeps only the cases whose id so far is a prefix (at a ``-`` boundary) of one of the
  ids named for that function, so the product stays as small as the selection;
- a test function of a named file that is not named itself keeps its first case only (pytest deselects it
  anyway: it matches no id on the command line);
- nothing is narrowed in a file named as a whole (``FILE``) or for a function named without an id
  (``FILE::FUNC``), nor in files not named.

The items pytest then selects are the ones the full collection selects, with the same ids and parameters
(tests/compat/test_compat_flash_attn.py checks the ids; scripts/flash_attn_tests.py loads the plugin).
"""

from __future__ import annotations

import os

import pytest


def _selection(config) -> tuple:
    """(files named whole, functions named whole, {(file, function): set of ids}) from the command line."""
    if hasattr(config, "_flash_attn_select"):
        return config._flash_attn_select
    base = str(config.invocation_params.dir)
    whole_files, whole_funcs, ids = set(), set(), {}
    for arg in config.args:
        path, sep, rest = arg.partition("::")
        path = os.path.realpath(os.path.join(base, path))
        if not sep:
            whole_files.add(path)
            continue
        name, bracket, case = rest.partition("[")
        if not bracket or not case.endswith("]"):
            whole_funcs.add((path, name))
        else:
            ids.setdefault((path, name), set()).add(case[:-1])
    config._flash_attn_select = (whole_files, whole_funcs, ids)
    return config._flash_attn_select


def _narrow(metafunc, wanted) -> None:
    calls = metafunc._calls
    if wanted is None:
        del calls[1:]
        return
    keep = [c for c in calls if any(w == c.id or w.startswith(c.id + "-") for w in wanted)]
    # an id that matches nothing keeps the first case, so that pytest reports the id as not found (an empty
    # list would make pytest's next parametrize call start the product over)
    metafunc._calls = keep or calls[:1]


@pytest.hookimpl(tryfirst=True)
def pytest_generate_tests(metafunc):
    whole_files, whole_funcs, ids = _selection(metafunc.config)
    path = os.path.realpath(metafunc.module.__file__)
    name = f"{metafunc.cls.__name__}::{metafunc.function.__name__}" if metafunc.cls else metafunc.function.__name__
    if path in whole_files or (path, name) in whole_funcs or not any(p == path for p, _ in ids):
        return
    wanted = ids.get((path, name))
    parametrize = metafunc.parametrize

    def narrowed(*args, **kwargs):
        parametrize(*args, **kwargs)
        _narrow(metafunc, wanted)

    metafunc.parametrize = narrowed
