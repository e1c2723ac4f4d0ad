"""``cutelab run PROGRAM.py [ARGS...]`` and ``cutelab run -m MODULE [ARGS...]``: the program or
module runs as ``python`` would run it, with :func:`cutelab.compat.install` in effect first.

``cutelab run NOTEBOOK.ipynb`` runs a Jupyter notebook's code cells in order, in one namespace, as
"Run All" would: a cell whose last statement is an expression prints its value (as the notebook shows
it), tracebacks name the cell (``NOTEBOOK.ipynb[cell 3]``), and IPython's magic and shell lines
(``%...``, ``!...``), which only IPython runs, are skipped with a note on stderr."""

from __future__ import annotations

import os
import runpy
import sys
from typing import List, Sequence

USAGE = "usage: cutelab run PROGRAM.py [ARGS...]  |  cutelab run NOTEBOOK.ipynb  |  cutelab run -m MODULE [ARGS...]"


def main(argv: Sequence[str]) -> int:
    """Run what argv names; the exit status is the program's (SystemExit passes through)."""
    argv = list(argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, file=sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    from . import install

    if argv[0] == "-m":
        if len(argv) < 2:
            print("cutelab: error: run -m needs a module name\n" + USAGE, file=sys.stderr)
            return 2
        module, rest = argv[1], argv[2:]
        install()
        sys.argv = [module] + rest
        if "" not in sys.path and os.getcwd() not in sys.path:
            sys.path.insert(0, os.getcwd())  # as python -m does
        runpy.run_module(module, run_name="__main__", alter_sys=True)
        return 0
    path, rest = argv[0], argv[1:]
    if not os.path.exists(path):
        print(f"cutelab: error: run: no such program {path!r}", file=sys.stderr)
        return 2
    install()
    sys.argv = [path] + rest
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))  # as python PROGRAM.py does
    if path.endswith(".ipynb"):
        run_notebook(path)
        return 0
    runpy.run_path(path, run_name="__main__")
    return 0


def notebook_cells(path: str) -> List[str]:
    """The source of each code cell of a notebook, IPython's magic and shell lines replaced by blank
    lines (named on stderr)."""
    import json

    with open(path, encoding="utf-8") as f:
        nb = json.load(f)
    cells = []
    for c in nb.get("cells", []):
        if c.get("cell_type") != "code":
            continue
        src = c.get("source", "")
        lines = ("".join(src) if isinstance(src, list) else src).splitlines()
        for i, line in enumerate(lines):
            if line.lstrip().startswith(("%", "!")):
                print(f"cutelab run: {path}[cell {len(cells) + 1}] line {i + 1}: skipped IPython's {line.strip()!r}",
                      file=sys.stderr)
                lines[i] = ""
        cells.append("\n".join(lines) + "\n")
    return cells


def run_notebook(path: str) -> None:
    """Run a notebook's code cells in order in one __main__ namespace (see the module docstring)."""
    import ast
    import linecache
    import types

    main = types.ModuleType("__main__")
    main.__file__ = os.path.abspath(path)
    saved = sys.modules.get("__main__")
    sys.modules["__main__"] = main
    try:
        for n, src in enumerate(notebook_cells(path), 1):
            name = f"{path}[cell {n}]"
            linecache.cache[name] = (len(src), None, src.splitlines(True), name)  # inspect.getsource reads it
            tree = ast.parse(src, name)
            last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
            exec(compile(tree, name, "exec"), main.__dict__)
            if last is not None:
                value = eval(compile(ast.Expression(last.value), name, "eval"), main.__dict__)
                if value is not None:
                    print(repr(value))
    finally:
        if saved is not None:
            sys.modules["__main__"] = saved
