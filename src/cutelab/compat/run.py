"""``cutelab run PROGRAM.py [ARGS...]`` and ``cutelab run -m MODULE [ARGS...]``: the program or
module runs as ``python`` would run it, with :func:`cutelab.compat.install` in effect first."""

from __future__ import annotations

import os
import runpy
import sys
from typing import Sequence

USAGE = "usage: cutelab run PROGRAM.py [ARGS...]  |  cutelab run -m MODULE [ARGS...]"


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
    runpy.run_path(path, run_name="__main__")
    return 0
