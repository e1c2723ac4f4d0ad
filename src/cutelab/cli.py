"""The ``cutelab`` command line: draw layouts, TV layouts, partitions and algebra steps.

    cutelab show "((2,2),(2,3)):((2,12),(1,4))" -o layout.svg
    cutelab show "(2,2,2):(2,1,4)" --coord
    cutelab coords "(2,2,2):(2,1,4)"
    cutelab tv "(32,8):(8,1)" "(4,8):(8,1)" -o copy_tv.png       # make_layout_tv(thr, val)
    cutelab tv "((2,2),(2,3)):((2,12),(1,4))" --tile 1,24        # a TV layout over a tile
    cutelab explain composition "(4,4):(4,1)" "(4,2,2):(2,1,8)"
    cutelab explain complement "(2,3):(2,4)" 24
    cutelab explain zipped_divide "(8,8)" "(2,4)"
    cutelab explain raked_product "(2,5):(5,1)" "(3,4)"
    cutelab partition tiled --tensor 16,64 --block 1,16 --threads 16
    cutelab partition outer --tensor 16,32 --block 8,16 --threads "(4,8):(8,1)"
    cutelab partition tv --tensor 16,16 --threads "(4,2):(2,1)" --values "(2,4):(4,1)"
    cutelab serve [--port N] [--no-browser]                      # the web playground on 127.0.0.1

The output format follows the suffix of ``-o`` (.svg .png .txt .tex .html); without ``-o``
the picture is printed as text (coloured when stdout is a terminal, or with ``--color``).
A bad layout or argument prints one line ``cutelab: error: ...`` to stderr and exits with 2.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Sequence

from .errors import LayoutError

__all__ = ["main", "build_parser"]

_EXPLAIN_OPS = ["composition", "complement", "logical_divide", "zipped_divide", "tiled_divide", "flat_divide",
                "logical_product", "zipped_product", "tiled_product", "blocked_product", "raked_product"]


class _UsageError(Exception):
    """A bad argument that argparse could not catch: reported as one line, exit code 2."""


def _shape(text: str, what: str) -> tuple:
    """'16,64' or '(16,64)' -> (16, 64)."""
    from .layout import parse_tuple

    t = text.strip()
    if not t.startswith("("):
        t = f"({t})"
    v = parse_tuple(t)
    if not isinstance(v, tuple) or not all(isinstance(x, int) for x in v):
        raise _UsageError(f"{what} must be flat integers like 16,64, got {text!r}")
    return v


def _port(text: str) -> int:
    """--port of serve: an int in [0, 65535] (argparse reports anything else as a usage error)."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, got {text!r}") from None
    if not 0 <= n <= 65535:
        raise argparse.ArgumentTypeError(f"must be in 0..65535, got {n}")
    return n


def _add_output(p: argparse.ArgumentParser) -> None:
    p.add_argument("-o", "--output", help="write the picture here; format from the suffix: .svg .png .txt .tex .html")
    c = p.add_mutually_exclusive_group()
    c.add_argument("--color", dest="color", action="store_true", default=None, help="colour terminal text (ANSI 256)")
    c.add_argument("--no-color", dest="color", action="store_false", help="plain terminal text")


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="cutelab", description="Draw CuTe layouts, TV layouts, partitions and algebra steps.")
    sub = ap.add_subparsers(dest="cmd", metavar="COMMAND")
    sub.required = True

    p = sub.add_parser("show", help="a layout as a grid of its offsets (CuTe's print_layout)")
    p.add_argument("layout", help='CuTe notation, e.g. "((2,2),(2,3)):((2,12),(1,4))"')
    p.add_argument("--coord", action="store_true", help="label cells by hierarchical coordinate instead of offset")
    _add_output(p)

    p = sub.add_parser("coords", help="the index -> hierarchical coordinate table (get_hier_coord)")
    p.add_argument("layout")
    _add_output(p)

    p = sub.add_parser("tv", help="a thread-value layout over its tile (CuTe's print_latex_tv)")
    p.add_argument("layouts", nargs="+", metavar="LAYOUT",
                   help="THR VAL (drawn as make_layout_tv(THR, VAL)) or one TV layout")
    p.add_argument("--tile", help="tile shape M,N for a single TV layout (default: one row of cosize elements)")
    _add_output(p)

    p = sub.add_parser("explain", help="one step of the algebra, drawn")
    p.add_argument("op", choices=_EXPLAIN_OPS)
    p.add_argument("args", nargs="+", metavar="ARG", help="the operands: layouts, a tiler, or the cotarget of complement")
    _add_output(p)

    p = sub.add_parser("partition", help="which block/thread owns each element of a tensor")
    p.add_argument("style", choices=["tiled", "outer", "tv"],
                   help="tiled: tiled_divide, one tile per thread; outer: zipped_divide + local_partition; "
                        "tv: make_layout_tv + composition")
    p.add_argument("--tensor", help="tensor shape M,N (default depends on the style)")
    p.add_argument("--block", help="block shape (tiled, outer)")
    p.add_argument("--threads", help="tiled: threads per block (int); outer, tv: thread layout")
    p.add_argument("--values", help="tv: value layout")
    _add_output(p)

    # serve: the web playground (cutelab.web), on 127.0.0.1 only
    p = sub.add_parser("serve", help="the web playground in the browser (local, 127.0.0.1 only)")
    p.add_argument("--port", type=_port, default=None,
                   help="port to listen on (default: 8765 if free, else any free port; 0: any free port)")
    p.add_argument("--no-browser", action="store_true", help="print the address but do not open a browser")
    p.add_argument("--verbose", action="store_true", help="log every request to stderr")
    return ap


def _figure(args: argparse.Namespace):
    from . import render as R

    if args.cmd == "show":
        return R.layout_figure(args.layout, label="coord" if args.coord else "offset")
    if args.cmd == "coords":
        return R.coords_figure(args.layout)
    if args.cmd == "tv":
        if len(args.layouts) == 2:
            if args.tile:
                raise _UsageError("--tile is for a single TV layout; make_layout_tv(THR, VAL) picks its own tile")
            return R.make_tv_figure(*args.layouts)
        if len(args.layouts) != 1:
            raise _UsageError(f"tv takes THR VAL or one TV layout, got {len(args.layouts)} layouts")
        tile = _shape(args.tile, "--tile") if args.tile else None
        if tile is not None and len(tile) != 2:
            raise _UsageError(f"--tile must be M,N, got {args.tile!r}")
        return R.tv_figure(args.layouts[0], tile)
    if args.cmd == "explain":
        want = 1 if args.op == "complement" else 2
        if not (len(args.args) == want or (args.op == "complement" and len(args.args) == 2)):
            raise _UsageError(f"explain {args.op} takes {'A [M]' if args.op == 'complement' else 'A B'}, "
                              f"got {len(args.args)} argument(s)")
        if args.op == "complement" and len(args.args) == 2:
            try:
                m = int(args.args[1])
            except ValueError:
                raise _UsageError(f"the cotarget of complement must be an int, got {args.args[1]!r}") from None
            return R.explain("complement", args.args[0], m)
        return R.explain(args.op, *args.args)
    if args.cmd == "partition":
        kw = {}
        if args.tensor:
            kw["tensor_shape"] = _shape(args.tensor, "--tensor")
        if args.block:
            if args.style == "tv":
                raise _UsageError("--block is not used by a tv partition: make_layout_tv picks the tile")
            kw["block_shape"] = _shape(args.block, "--block")
        if args.style == "tiled":
            if args.threads:
                try:
                    kw["num_threads"] = int(args.threads)
                except ValueError:
                    raise _UsageError(f"--threads of a tiled partition is a number, got {args.threads!r}") from None
            return R.tiled_partition_figure(**kw)
        if args.style == "outer":
            if args.threads:
                kw["thr_layout"] = args.threads
            return R.outer_partition_figure(**kw)
        if args.threads:
            kw["thr_layout"] = args.threads
        if args.values:
            kw["val_layout"] = args.values
        return R.tv_partition_figure(**kw)
    raise _UsageError(f"unknown command {args.cmd!r}")  # pragma: no cover - argparse checks


def _first_line(e: BaseException) -> str:
    msg = str(e).strip()
    return msg.splitlines()[0] if msg else type(e).__name__


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok, 1 environment/IO problem, 2 bad input)."""
    args = build_parser().parse_args(argv)
    if args.cmd == "serve":
        from .web import serve

        try:
            serve(args.port, open_browser=not args.no_browser, verbose=args.verbose)
        except OSError as e:
            print(f"cutelab: error: cannot listen on 127.0.0.1:{args.port}: {e.strerror or e}", file=sys.stderr)
            return 1
        return 0
    from . import render as R

    try:
        fmt = R.format_for_path(args.output) if args.output else "text"
        fig = _figure(args)
        if args.output:
            out = R.render(fig, fmt)
            mode = "wb" if isinstance(out, bytes) else "w"
            with open(args.output, mode, **({} if mode == "wb" else {"encoding": "utf-8"})) as f:
                f.write(out)
        else:
            color = args.color if args.color is not None else sys.stdout.isatty()
            sys.stdout.write(R.render(fig, "text", color=color))
    except (LayoutError, _UsageError, ValueError) as e:
        print(f"cutelab: error: {_first_line(e)}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # pragma: no cover - e.g. `cutelab show ... | head`
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return 0
    except ImportError as e:
        print(f"cutelab: error: {_first_line(e)}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"cutelab: error: cannot write {args.output!r}: {e.strerror or e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
