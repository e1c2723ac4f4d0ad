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
    cutelab analyze --tv "(32,8):(1,64)" --layout "S<3,3,3> o 0 o (64,64):(64,1)" --dtype f16 --space shared
    cutelab analyze --layout "(64,64):(64,1)" --ldmatrix x4 -o banks.svg
    cutelab suggest-swizzle --layout "(64,64):(64,1)" --ldmatrix x4 -o before_after.svg  # -> S<3,3,3>
    cutelab suggest-swizzle --layout "(32,64):(64,1)" --for A --ldmatrix x4 --mma sm80_16x8x16 --atoms 2x2x1
    cutelab mma --op sm80_16x8x16 --ab f16 --acc f32 --atoms 2x2x1 -o mma.svg   # CuTe's print_latex(TiledMMA)
    cutelab mma --op sm90_64x64x16 --a-src smem -o wgmma.png
    cutelab mma --op universal --atoms 16x8x1                                 # MmaUniversalOp (SIMT FMA)
    cutelab copy --ldmatrix x4 --trans --for A --op sm80_16x8x16 -o ldsm.svg  # make_tiled_copy_A
    cutelab copy --bits 64 --thr "(4,8):(8,1)" --val "(1,4)"                 # universal copy, make_tiled_copy_tv
    cutelab swizzle "S<3,4,3> o 0 o (8,64):(64,1)" --elem-bits 16 -o banks.svg
    cutelab swizzle --atom K_SW128 --elem-bits 16                             # SM90 make_smem_layout_atom
    cutelab umma --shape 128x64 --a-src tmem -o umma.svg         # a tcgen05 UMMA: C's TMEM lanes/columns
    cutelab tmem --tile 128x128 --copy 16x256b --rep x2          # which warp a tcgen05.ld gives which TMEM cells
    cutelab tma --tensor "(256,128):(128,1)" --tile 64,64 --multicast 2 -o tma.svg   # a TMA box, its slices
    cutelab tile-path --shape 128x32 --k 32 -o path.svg          # gmem -> TMA -> smem -> UMMA -> TMEM -> registers
    cutelab serve [--port N] [--no-browser]                      # the web playground on 127.0.0.1
    cutelab site DIR [--pyodide FOLDER]                          # the playground as a static site (Pyodide)
    cutelab profile [--svg worst.svg] program.py [args...]       # memory accesses of its kernels, per line
    cutelab run program.py [args...]                             # a CuTe DSL program as written (import cutlass)
    cutelab run -m pytest tests/                                 # a module, e.g. a CuTe DSL library's tests

The output format follows the suffix of ``-o`` (.svg .png .txt .tex .html); without ``-o``
the picture is printed as text (coloured when stdout is a terminal, or with ``--color``).
A bad layout or argument prints one line ``cutelab: error: ...`` to stderr and exits with 2.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Sequence

from .commands import _analyze, _figure, _suggest, _UsageError, build_parser
from .errors import LayoutError

__all__ = ["main", "build_parser"]

def _first_line(e: BaseException) -> str:
    msg = str(e).strip()
    return msg.splitlines()[0] if msg else type(e).__name__


def _profile(args: argparse.Namespace) -> int:
    """cutelab profile: run the program as __main__ under a Profiler, then print the report."""
    import runpy
    import traceback

    from .kernel.cpu.profiler import DEFAULT_BLOCKS, Profiler

    path = args.program
    if args.all_blocks and args.blocks is not None:
        print("cutelab: error: profile: --blocks and --all-blocks exclude each other", file=sys.stderr)
        return 2
    if not os.path.isfile(path):
        print(f"cutelab: error: profile: no such program {path!r}", file=sys.stderr)
        return 2
    if not args.gpu:
        os.environ["CUDA_VISIBLE_DEVICES"] = ""  # torch.cuda.is_available() is False: the program uses the CPU
    blocks = None if args.all_blocks else (args.blocks or DEFAULT_BLOCKS)
    prof = Profiler(blocks=blocks, launches=args.launches)
    old_argv, old_path = sys.argv, list(sys.path)
    sys.argv = [path] + list(args.args)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    status = 0
    try:
        with prof:
            runpy.run_path(path, run_name="__main__")
    except SystemExit as e:
        status = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except Exception:  # the program failed: show its traceback, then what was recorded before
        traceback.print_exc()
        status = 1
    finally:
        sys.argv, sys.path[:] = old_argv, old_path
    sys.stdout.flush()
    result = prof.result
    print("\n" + "=" * 100)
    if status:
        print(f"cutelab profile: {path} exited with status {status}; the report covers the launches before that")
    print(result.report(top=args.top))
    try:
        if args.json:
            import json

            with open(args.json, "w", encoding="utf-8") as f:
                json.dump(result.to_dict(), f, indent=1)
        if args.svg:
            from . import render as R

            out = R.render(result.figure(top=args.top), R.format_for_path(args.svg))
            with open(args.svg, "wb" if isinstance(out, bytes) else "w") as f:
                f.write(out)
    except LayoutError as e:
        print(f"cutelab: error: profile: {_first_line(e)}", file=sys.stderr)
        return status or 2
    except OSError as e:
        print(f"cutelab: error: profile: cannot write: {e.strerror or e}", file=sys.stderr)
        return status or 1
    return status


def _site(args: argparse.Namespace) -> int:
    from .web.site import SiteError, build

    try:
        info = build(args.dir, args.pyodide)
    except SiteError as e:
        print(f"cutelab: error: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"cutelab: error: site: cannot write {args.dir!r}: {e.strerror or e}", file=sys.stderr)
        return 1
    pkgs = ", ".join(f"{k} {v}" for k, v in info["packages"].items())
    print(f"cutelab site: wrote {info['files']} files ({info['bytes'] / 2**20:.1f} MiB) to {args.dir}: "
          f"Pyodide {info['pyodide']} (Python {info['python']}), {pkgs}, from {info['source']}")
    print(f"open {os.path.join(os.path.abspath(args.dir), 'index.html')} in a browser, or publish the folder")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok, 1 environment/IO problem, 2 bad input)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "run":  # everything after `run` belongs to the program (cutelab.compat.run)
        from .compat.run import main as run_main

        return run_main(argv[1:])
    args = build_parser().parse_args(argv)
    if args.cmd == "profile":
        return _profile(args)
    if args.cmd == "serve":
        from .web import serve

        try:
            serve(args.port, open_browser=not args.no_browser, verbose=args.verbose)
        except OSError as e:
            print(f"cutelab: error: cannot listen on 127.0.0.1:{args.port}: {e.strerror or e}", file=sys.stderr)
            return 1
        return 0
    if args.cmd == "site":
        return _site(args)
    from . import render as R

    try:
        fmt = R.format_for_path(args.output) if args.output else "text"
        if args.cmd in ("analyze", "suggest-swizzle"):  # the explanation as text; the picture only with -o
            text, fig = (_analyze if args.cmd == "analyze" else _suggest)(args)
            sys.stdout.write(text)
            if not args.output:
                return 0
        else:
            fig = _figure(args)
        if args.cells != "value":
            if fmt == "html":  # the page keeps the values for hovering and opens with the toggle set
                fig.meta["show"] = args.cells
            else:
                R.show_cells(fig, args.cells)
        if args.output:
            if fmt == "latex":
                from .render.latex import capacity_warning

                warn = capacity_warning(fig)
                if warn:  # before writing: say what will compile it
                    print(f"cutelab: warning: {warn.replace('FILE.tex', args.output)}", file=sys.stderr)
            out = R.render(fig, fmt)
            mode = "wb" if isinstance(out, bytes) else "w"
            with open(args.output, mode, **({} if mode == "wb" else {"encoding": "utf-8"})) as f:
                f.write(out)
        else:
            color = args.color if args.color is not None else sys.stdout.isatty()
            sys.stdout.write(R.render(fig, "text", color=color))
    except (LayoutError, _UsageError, ValueError, TypeError) as e:
        print(f"cutelab: error: {_first_line(e)}", file=sys.stderr)
        return 2
    except (RecursionError, MemoryError, OverflowError, IndexError, KeyError, ZeroDivisionError) as e:
        # a bug of ours that the input provoked: still one line and exit 2, never a traceback
        print(f"cutelab: error: this input is beyond what cutelab handles ({type(e).__name__}: {_first_line(e)}); "
              f"please report it", file=sys.stderr)
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
