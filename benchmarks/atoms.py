"""Time building, partitioning and drawing atoms in cutelab, tensor-layouts and CuTe DSL, side by side.

    python benchmarks/atoms.py [--reps 200] [--budget 4] [--tl-python PY] [--dsl-python PY] [--json OUT]

Issue 8's speed check: "building and partitioning a 2x2 SM80 TiledMMA, and drawing it to SVG,
each in well under 50 ms". One run times, on this machine:

- cutelab (this checkout's src/, run with the interpreter that runs this script);
- tensor-layouts (PyPI ``tensor-layouts``) with ``--tl-python``, an interpreter that has it (and
  matplotlib for its pictures); by default this interpreter, if it can import it;
- CuTe DSL with ``--dsl-python`` (default /work/dslenv/bin/python, CuTe DSL 4.8.1), with
  CUTE_DSL_ARCH=sm_90a.

Each library runs in its own subprocess: this same file with ``--part NAME``, which prints its
timings and its answers as JSON. Before the table, the answers are compared (the tiled TV layouts,
partitions, fragments and copy layouts as CuTe DSL prints them; the owner of every cell of
tensor-layouts' grids; the offsets of the swizzled shared-memory tile); a row whose answers
differ is marked in the table.

What a time includes. Every repetition starts from fresh objects, made outside the timed region
(a new TiledMMA for the tv_layout rows, whose cache of TV layouts is per object, so nothing
computed by an earlier repetition is reused). Module-level caches are not cleared: cutelab's
palette colours and PNG glyphs (``functools.lru_cache`` in render/palette.py, render/png.py) are
warm after the first picture; the "first" column is the first call in a fresh process (lazy
imports, cold caches) for cutelab and tensor-layouts. Reported: the median (and the minimum) over
the repetitions, ``--reps`` at most and fewer when a row's repetitions pass ``--budget`` seconds
(at least 5; tensor-layouts' matplotlib pictures, which take seconds to minutes each: 3 to 5 for
SM80, 1 to 5 for SM90; the JSON written by ``--json`` has each row's count, minimum and first call).
The machine is shared: compare the libraries within one run.

CuTe DSL is timed in two ways. "trace" is the same construction as cutelab's row, done inside one
``@cute.jit`` trace and timed with perf_counter around the Python calls only (what it measures
includes building the MLIR operations the calls emit, not compiling them). "jit call" is a whole
call of a fresh ``@cute.jit`` function that does the row's work and its set-up (the TiledMMA and
tensors it needs): tracing, MLIR generation and the DSL's compile pipeline of a kernel-less host
function; an empty ``@cute.jit`` function's call is reported as the fixed cost.
"""

from __future__ import annotations

import os
import sys

# benchmarks/copy.py would shadow the standard library's copy module (matplotlib imports it)
if sys.path and os.path.abspath(sys.path[0] or ".") == os.path.dirname(os.path.abspath(__file__)):
    del sys.path[0]

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from typing import Any, Callable  # noqa: E402

MARK = "@@ATOMS@@ "
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
DEFAULT_DSL = "/work/dslenv/bin/python"

#: (key, label) in table order
ROWS = [
    ("sm80.build", "SM80 16x8x16 f16/f32, atoms 2x2x1: make_mma_atom + make_tiled_mma"),
    ("sm80.tv", "SM80: tv_layout_A/B/C_tiled"),
    ("sm80.part", "SM80: get_slice + partition_A/B/C + make_fragment_A/B/C"),
    ("sm80.all", "SM80: the three rows above, from nothing"),
    ("sm80.svg", "SM80 TiledMMA picture -> SVG"),
    ("sm80.png", "SM80 TiledMMA picture -> PNG"),
    ("sm80.text", "SM80 TiledMMA picture -> text"),
    ("sm90.build", "SM90 64x128x16 f16/f32 SS: make_mma_atom + make_tiled_mma"),
    ("sm90.tv", "SM90: tv_layout_A/B/C_tiled"),
    ("sm90.part", "SM90: get_slice + partition_A/B/C + make_fragment_C"),
    ("sm90.svg", "SM90 TiledMMA picture -> SVG"),
    ("sm90.png", "SM90 TiledMMA picture -> PNG"),
    ("sm90.text", "SM90 TiledMMA picture -> text"),
    ("copy.univ.build", "universal 128-bit copy, (32,8):(8,1) x (1,8) f16: make_copy_atom + make_tiled_copy_tv"),
    ("copy.univ.part", "universal copy: get_slice + partition_S/D of (128,64) f16"),
    ("copy.ldsm.build", "ldmatrix x4: make_copy_atom + make_tiled_copy_A(SM80 TiledMMA)"),
    ("copy.ldsm.part", "ldmatrix x4 TiledCopy: get_slice + partition_S/D of (128,32) f16"),
    ("smem.tile", "make_smem_layout_atom(K_SW128, f16) + tile_to_shape (128,64)"),
    ("analysis.ldsm", "cutelab.analysis: ldmatrix x4 over the SW128 (128,64) tile (32 instructions)"),
    ("jit.empty", "an empty @cute.jit function (the DSL's fixed cost per call)"),
]

THREAD = 3  # the thread whose slice is partitioned


# --------------------------------------------------------------------------- timing

def bench(work: Callable[[Any], Any], setup: Callable[[], Any] | None = None, reps: int = 200,
          budget: float = 4.0, min_reps: int = 5) -> dict:
    """Median / min / first time in ms of work(setup()) over fresh set-ups (set-up untimed).

    Repeats reps times, or fewer (min_reps at least) once budget seconds have passed.
    """
    times: list[float] = []
    start = time.perf_counter()
    result = None
    for i in range(reps):
        state = setup() if setup is not None else None
        t0 = time.perf_counter()
        result = work(state)
        times.append(time.perf_counter() - t0)
        if i + 1 >= min_reps and time.perf_counter() - start > budget:
            break
    ms = [t * 1e3 for t in times]
    return {"ms": statistics.median(ms), "min": min(ms), "first": ms[0], "n": len(ms), "_result": result}


def _strip(rows: dict) -> dict:
    return {k: {kk: vv for kk, vv in v.items() if not kk.startswith("_")} for k, v in rows.items()}


def emit(payload: dict) -> None:
    sys.stdout.write(MARK + json.dumps(payload) + "\n")
    sys.stdout.flush()


# --------------------------------------------------------------------------- cutelab

def part_cutelab(reps: int, budget: float) -> dict:
    import numpy as np

    import cutelab as cute
    from cutelab import analysis as A
    from cutelab import render as R
    from cutelab.nvgpu import CopyUniversalOp, OperandMajorMode as MM, warp, warpgroup

    def sm80():
        op = warp.MmaF16BF16Op(cute.Float16, cute.Float32, (16, 8, 16))
        return cute.make_tiled_mma(cute.make_mma_atom(op), cute.make_layout((2, 2, 1)))

    def sm90():
        op = warpgroup.MmaF16BF16Op(cute.Float16, cute.Float32, (64, 128, 16), warpgroup.OperandSource.SMEM,
                                    MM.K, MM.K)
        return cute.make_tiled_mma(cute.make_mma_atom(op), cute.make_layout((1, 1, 1)))

    def tensors():
        a = cute.make_tensor(np.zeros(128 * 32, np.float16), cute.make_layout((128, 32), stride=(32, 1)))
        b = cute.make_tensor(np.zeros(128 * 32, np.float16), cute.make_layout((128, 32), stride=(32, 1)))
        c = cute.make_tensor(np.zeros(128 * 128, np.float32), cute.make_layout((128, 128), stride=(128, 1)))
        return a, b, c

    def tvs(m):
        return str(m.tv_layout_A_tiled), str(m.tv_layout_B_tiled), str(m.tv_layout_C_tiled)

    def part(m, a, b, c, frags="ABC"):
        s = m.get_slice(THREAD)
        p = {"A": s.partition_A(a), "B": s.partition_B(b), "C": s.partition_C(c)}
        f = {w: getattr(s, "make_fragment_" + w)(p[w]) for w in frags}
        return p, f

    def part_strs(pf):
        p, f = pf
        return [str(p[w].layout) for w in "ABC"] + [str(f[w].layout) for w in sorted(f)]

    def setup_mma(make):
        return lambda: (make(),) + tensors()

    def picture(fmt):
        return lambda st: R.render(R.mma_figure(st[0]), fmt)

    rows, ans = {}, {}
    for name, make, frags in (("sm80", sm80, "ABC"), ("sm90", sm90, "C")):
        rows[name + ".build"] = bench(lambda _: make(), None, reps, budget)
        rows[name + ".tv"] = bench(lambda st: tvs(st[0]), setup_mma(make), reps, budget)
        rows[name + ".part"] = bench(lambda st: part(*st, frags=frags), setup_mma(make), reps, budget)
        ans[name + ".tv"] = list(rows[name + ".tv"]["_result"])
        ans[name + ".part"] = part_strs(rows[name + ".part"]["_result"])
        if name == "sm80":
            rows["sm80.all"] = bench(lambda st: part(_tv_touch(make()), *st), tensors, reps, budget)
        for fmt in ("svg", "png", "text"):
            rows[f"{name}.{fmt}"] = bench(picture(fmt), lambda: (make(),), reps, budget)
            out = rows[f"{name}.{fmt}"]["_result"]
            rows[f"{name}.{fmt}"]["bytes"] = len(out)
    # owners of every cell of the SM80 tiled A/B/C (for tensor-layouts' grids)
    m = sm80()
    own = {}
    for w, (i, j) in (("A", (0, 2)), ("B", (1, 2)), ("C", (0, 1))):
        tv = getattr(m, f"tv_layout_{w}_tiled")
        rows_n = int(m.get_tile_size(i))
        nt, nv = cute.size(tv, mode=[0]), cute.size(tv, mode=[1])
        offs = tv.offsets().reshape(nv, nt)  # index t + nt * v
        cells: dict = {}
        for v in range(nv):
            for t in range(nt):
                o = int(offs[v, t])
                cells.setdefault(f"{o % rows_n},{o // rows_n}", []).append([t, v])
        own[w] = cells
    ans["sm80.owners"] = own
    m9 = sm90()
    tv9 = m9.tv_layout_C_tiled
    offs9 = tv9.offsets().reshape(cute.size(tv9, mode=[1]), cute.size(tv9, mode=[0]))
    ans["sm90.ownersC"] = {f"{int(o) % 64},{int(o) // 64}": [t, v] for v, row in enumerate(offs9.tolist())
                           for t, o in enumerate(row)}

    # copies
    def univ():
        atom = cute.make_copy_atom(CopyUniversalOp(), cute.Float16, num_bits_per_copy=128)
        return cute.make_tiled_copy_tv(atom, cute.make_layout((32, 8), stride=(8, 1)), cute.make_layout((1, 8)))

    def ldsm(mma):
        return cute.make_tiled_copy_A(cute.make_copy_atom(warp.LdMatrix8x8x16bOp(False, 4), cute.Float16), mma)

    def f16(shape):
        n = shape[0] * shape[1]
        return cute.make_tensor(np.zeros(n, np.float16), cute.make_layout(shape, stride=(shape[1], 1)))

    def copy_part(tc, s, d):
        th = tc.get_slice(THREAD)
        return th.partition_S(s), th.partition_D(d)

    rows["copy.univ.build"] = bench(lambda _: univ(), None, reps, budget)
    rows["copy.univ.part"] = bench(lambda st: copy_part(*st), lambda: (univ(), f16((128, 64)), f16((128, 64))),
                                   reps, budget)
    rows["copy.ldsm.build"] = bench(ldsm, sm80, reps, budget)
    rows["copy.ldsm.part"] = bench(lambda st: copy_part(*st), lambda: (ldsm(sm80()), f16((128, 32)), f16((128, 32))),
                                   reps, budget)
    for k in ("copy.univ", "copy.ldsm"):
        tc = rows[k + ".build"]["_result"]
        ps, pd = rows[k + ".part"]["_result"]
        ans[k] = [_tiled_copy_text(str(tc)), str(ps.layout), str(pd.layout)]

    # shared-memory tile and its analysis
    def smem():
        atom = warpgroup.make_smem_layout_atom(warpgroup.SmemLayoutAtomKind.K_SW128, cute.Float16)
        return cute.tile_to_shape(atom, (128, 64), (0, 1))

    rows["smem.tile"] = bench(lambda _: smem(), None, reps, budget)
    tile = rows["smem.tile"]["_result"]
    ans["smem.tile"] = str(tile)
    ans["smem.offsets"] = [int(tile((i % 128, i // 128))) for i in range(128 * 64)]
    rows["analysis.ldsm"] = bench(lambda t: A.analyze(A.ldmatrix_trace(t)).summary(), smem, reps, budget)
    ans["analysis.ldsm"] = rows["analysis.ldsm"]["_result"]
    return {"lib": "cutelab", "version": getattr(cute, "__version__", "?"), "python": platform.python_version(),
            "rows": _strip(rows), "answers": ans}


def _tv_touch(m):
    """Ask a fresh TiledMMA for its three tiled TV layouts (as the sm80.tv row does) and return it."""
    m.tv_layout_A_tiled, m.tv_layout_B_tiled, m.tv_layout_C_tiled
    return m


def _tiled_copy_text(s: str) -> str:
    """The Tiler MN and TV Layout tiled lines of a TiledCopy's printed form."""
    keep = [ln.strip() for ln in s.splitlines() if ln.strip().startswith(("Tiler MN", "TV Layout tiled"))]
    return " | ".join(keep)


# --------------------------------------------------------------------------- tensor-layouts

def part_tl(reps: int, budget: float, pictures: bool = True) -> dict:
    import tensor_layouts as tl
    from tensor_layouts import ComposedLayout, Layout, Swizzle
    from tensor_layouts import atoms_nv as nv
    from tensor_layouts import layout_utils as lu

    rows, ans, notes = {}, {}, []
    a80, a90 = nv.SM80_16x8x16_F32F16F16F32_TN, nv.SM90_64x128x16_F32F16F16_SS
    al80, al90 = Layout((2, 2), (1, 2)), Layout(1, 0)

    def grids(atom, al):
        return tuple(lu.tile_mma_grid(atom, al, w)[0] for w in "ABC")

    rows["sm80.tv"] = bench(lambda _: grids(a80, al80), None, reps, budget)
    rows["sm90.tv"] = bench(lambda _: grids(a90, al90), None, reps, budget)
    ga, gb, gc = rows["sm80.tv"]["_result"]
    ans["sm80.grids"] = {w: {f"{r},{c}": [pt, v] for (r, c), (pt, v, lt) in g.items()}
                         for w, g in zip("ABC", (ga, gb, gc))}
    ans["sm90.gridC"] = {f"{r},{c}": [pt, v] for (r, c), (pt, v, lt) in rows["sm90.tv"]["_result"][2].items()}
    try:
        if not pictures:
            raise ImportError("--no-tl-pictures")
        from tensor_layouts import viz

        tmp = tempfile.mkdtemp(prefix="atoms_tl_")
        for name, atom, al, mnk in (("sm80", a80, al80, (32, 16, 16)), ("sm90", a90, al90, (64, 128, 16))):
            for fmt in ("svg", "png"):
                path = os.path.join(tmp, f"{name}.{fmt}")

                def draw(_, atom=atom, al=al, mnk=mnk, path=path):
                    viz.draw_combined_mma_grid(*grids(atom, al), *mnk, filename=path)
                    return os.path.getsize(path)

                # matplotlib pictures take seconds: a few repetitions only
                rows[f"{name}.{fmt}"] = bench(draw, None, min(reps, 5), budget, min_reps=3 if name == "sm80" else 1)
                rows[f"{name}.{fmt}"]["bytes"] = rows[f"{name}.{fmt}"]["_result"]
        for f in os.listdir(tmp):
            os.unlink(os.path.join(tmp, f))
        os.rmdir(tmp)
    except ImportError as e:
        notes.append(f"tensor-layouts pictures skipped: {e}")

    def smem():
        return lu.tile_to_shape(ComposedLayout(Swizzle(3, 4, 3), Layout((8, 64), (64, 1))), (128, 64))

    rows["smem.tile"] = bench(lambda _: smem(), None, reps, budget)
    tile = rows["smem.tile"]["_result"]
    ans["smem.tile"] = str(tile)
    ans["smem.offsets"] = [int(tile(i % 128, i // 128)) for i in range(128 * 64)]
    import matplotlib

    return {"lib": "tensor-layouts", "version": tl.__version__, "python": platform.python_version(),
            "matplotlib": matplotlib.__version__, "rows": _strip(rows), "answers": ans, "notes": notes}


# --------------------------------------------------------------------------- CuTe DSL

def part_dsl(reps: int, budget: float) -> dict:
    import warnings

    warnings.simplefilter("ignore")
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.nvgpu import CopyUniversalOp, OperandMajorMode as MM, warp, warpgroup

    def sm80():
        op = warp.MmaF16BF16Op(cutlass.Float16, cutlass.Float32, (16, 8, 16))
        return cute.make_tiled_mma(cute.make_mma_atom(op), cute.make_layout((2, 2, 1)))

    def sm90():
        op = warpgroup.MmaF16BF16Op(cutlass.Float16, cutlass.Float32, (64, 128, 16), warpgroup.OperandSource.SMEM,
                                    MM.K, MM.K)
        return cute.make_tiled_mma(cute.make_mma_atom(op), cute.make_layout((1, 1, 1)))

    def rmem(shape, dt):
        return cute.make_rmem_tensor(cute.make_layout(shape, stride=(shape[1], 1)), dt)

    def tensors():
        return rmem((128, 32), cutlass.Float16), rmem((128, 32), cutlass.Float16), rmem((128, 128), cutlass.Float32)

    def tvs(m):
        return str(m.tv_layout_A_tiled), str(m.tv_layout_B_tiled), str(m.tv_layout_C_tiled)

    def part(m, a, b, c, frags="ABC"):
        s = m.get_slice(THREAD)
        p = {"A": s.partition_A(a), "B": s.partition_B(b), "C": s.partition_C(c)}
        f = {w: getattr(s, "make_fragment_" + w)(p[w]) for w in frags}
        return p, f

    def univ():
        atom = cute.make_copy_atom(CopyUniversalOp(), cutlass.Float16, num_bits_per_copy=128)
        return cute.make_tiled_copy_tv(atom, cute.make_layout((32, 8), stride=(8, 1)), cute.make_layout((1, 8)))

    def ldsm(mma):
        return cute.make_tiled_copy_A(cute.make_copy_atom(warp.LdMatrix8x8x16bOp(False, 4), cutlass.Float16), mma)

    def copy_part(tc, s, d):
        th = tc.get_slice(THREAD)
        return th.partition_S(s), th.partition_D(d)

    def smem():
        atom = warpgroup.make_smem_layout_atom(warpgroup.SmemLayoutAtomKind.K_SW128, cutlass.Float16)
        return cute.tile_to_shape(atom, (128, 64), (0, 1))

    f16 = lambda shp: rmem(shp, cutlass.Float16)  # noqa: E731
    # (work, setup): setup runs untimed inside the trace; the jit-call row runs both
    work = {
        "sm80.build": (lambda _: sm80(), None),
        "sm80.tv": (lambda st: tvs(st), sm80),
        "sm80.part": (lambda st: part(*st), lambda: (sm80(),) + tensors()),
        "sm80.all": (lambda st: part(_tv_touch(sm80()), *st), tensors),
        "sm90.build": (lambda _: sm90(), None),
        "sm90.tv": (lambda st: tvs(st), sm90),
        "sm90.part": (lambda st: part(*st, frags="C"), lambda: (sm90(),) + tensors()),
        "copy.univ.build": (lambda _: univ(), None),
        "copy.univ.part": (lambda st: copy_part(*st), lambda: (univ(), f16((128, 64)), f16((128, 64)))),
        "copy.ldsm.build": (ldsm, sm80),
        "copy.ldsm.part": (lambda st: copy_part(*st), lambda: (ldsm(sm80()), f16((128, 32)), f16((128, 32)))),
        "smem.tile": (lambda _: smem(), None),
    }
    trace_rows, ans = {}, {}

    class _Stop(Exception):
        pass

    def in_trace():
        for k, (w, s) in work.items():
            trace_rows[k] = bench(w, s, reps, budget)
        for name in ("sm80", "sm90"):
            ans[name + ".tv"] = list(trace_rows[name + ".tv"]["_result"])
            p, f = trace_rows[name + ".part"]["_result"]
            ans[name + ".part"] = [str(p[w].layout) for w in "ABC"] + [str(f[w].layout) for w in sorted(f)]
        for k in ("copy.univ", "copy.ldsm"):
            ps, pd = trace_rows[k + ".part"]["_result"]
            ans[k] = [_tiled_copy_text(str(trace_rows[k + ".build"]["_result"])), str(ps.layout), str(pd.layout)]
        tile = trace_rows["smem.tile"]["_result"]
        ans["smem.tile"] = str(tile)
        raise _Stop()

    @cute.jit
    def driver():
        in_trace()

    try:
        driver()
    except _Stop:
        pass

    # whole jit calls: a fresh @cute.jit function per call
    def jit_of(w, s):
        def body():
            w(s() if s is not None else None)
        return cute.jit(body)

    call_rows = {}
    jit_reps = max(5, min(reps, 30))
    call_rows["jit.empty"] = bench(lambda _: cute.jit(lambda: None)(), None, jit_reps, budget)
    for k, (w, s) in work.items():
        call_rows[k] = bench(lambda _, w=w, s=s: jit_of(w, s)(), None, jit_reps, budget)
    return {"lib": "CuTe DSL", "version": _dsl_version(), "python": platform.python_version(),
            "rows": _strip(trace_rows), "call_rows": _strip(call_rows), "answers": ans}


def _dsl_version() -> str:
    try:
        from importlib.metadata import version

        return version("nvidia-cutlass-dsl")
    except Exception:  # noqa: BLE001 - a version string only
        return "?"


# --------------------------------------------------------------------------- driver

def run_part(name: str, python: str, args: argparse.Namespace, env: dict) -> tuple[dict | None, str]:
    cmd = [python, os.path.abspath(__file__), "--part", name, "--reps", str(args.reps), "--budget", str(args.budget)]
    if args.no_tl_pictures:
        cmd.append("--no-tl-pictures")
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=1800)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"{name}: {e}"
    for ln in p.stdout.decode("utf-8", "replace").splitlines():
        if ln.startswith(MARK):
            return json.loads(ln[len(MARK):]), ""
    tail = (p.stderr.decode("utf-8", "replace").strip().splitlines() or ["(no output)"])[-1]
    return None, f"{name} ({python}) failed with exit status {p.returncode}: {tail}"


def can_import(python: str, module: str) -> bool:
    try:
        return subprocess.run([python, "-c", f"import {module}"], capture_output=True, timeout=120).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def check(res: dict) -> dict:
    """Compare the answers; {row key: list of disagreements (empty = agree)} for the rows checked."""
    out: dict = {}
    cl = res.get("cutelab", {}).get("answers", {})
    dsl = res.get("dsl", {}).get("answers", {})
    tlr = res.get("tl", {}).get("answers", {})
    if dsl:
        for k, rows in (("sm80.tv", ["sm80.tv", "sm80.all"]), ("sm80.part", ["sm80.part", "sm80.all"]),
                        ("sm90.tv", ["sm90.tv"]), ("sm90.part", ["sm90.part"]),
                        ("copy.univ", ["copy.univ.build", "copy.univ.part"]),
                        ("copy.ldsm", ["copy.ldsm.build", "copy.ldsm.part"]), ("smem.tile", ["smem.tile"])):
            a, b = cl.get(k), dsl.get(k)
            diff = [] if a == b else [f"{k}: cutelab {a} vs CuTe DSL {b}"]
            for r in rows:
                out.setdefault(("dsl", r), []).extend(diff)
    if tlr:
        own, grids = cl["sm80.owners"], tlr["sm80.grids"]
        diff = []
        for w in "ABC":
            if set(grids[w]) != set(own[w]):
                diff.append(f"sm80 {w}: the cells differ")
                continue
            for cell, tv in grids[w].items():
                if (w == "C" and own[w][cell] != [tv]) or tv not in own[w][cell]:
                    diff.append(f"sm80 {w} cell {cell}: tensor-layouts {tv}, cutelab {own[w][cell]}")
                    break
        out[("tl", "sm80.tv")] = diff
        g9, o9 = tlr["sm90.gridC"], cl["sm90.ownersC"]
        out[("tl", "sm90.tv")] = [] if g9 == o9 else ["sm90 C: the owners differ"]
        out[("tl", "smem.tile")] = ([] if tlr["smem.offsets"] == cl["smem.offsets"]
                                    else ["smem tile: the offsets differ"])
    return out


#: what a library cannot do, per row
NA = {
    "tl": {"sm80.build": "n/a (a", "sm90.build": "n/a (a", "sm80.part": "n/a (b", "sm90.part": "n/a (b",
           "sm80.all": "n/a (b", "sm80.text": "n/a", "sm90.text": "n/a", "copy.univ.build": "n/a (c",
           "copy.univ.part": "n/a (c", "copy.ldsm.build": "n/a (c", "copy.ldsm.part": "n/a (c",
           "analysis.ldsm": "n/a (d", "jit.empty": ""},
    "dsl": {"sm80.svg": "n/a (e", "sm80.png": "n/a (e", "sm80.text": "n/a (e", "sm90.svg": "n/a (e",
            "sm90.png": "n/a (e", "sm90.text": "n/a (e", "analysis.ldsm": "n/a (e"},
}

FOOTNOTES = """\
(a) tensor-layouts' atoms are module constants (MMAAtom dataclasses) and it has no TiledMMA object.
(b) tensor-layouts has no get_slice / partition_A/B/C / make_fragment.
(c) tensor-layouts has copy atoms as constants, but no TiledCopy, make_tiled_copy_A or partition_S/D.
(d) tensor-layouts has bank_conflicts(thread->offset layout), but no model of ldmatrix's per-lane row addresses.
(e) CuTe DSL has no picture of a TiledMMA (cute.print_latex/print_latex_tv draw one layout as TikZ) and no
    access analysis.
(f) tensor-layouts' tile_mma_grid: a dict of every cell -> (thread, value) per operand, one owner per cell
    (cutelab and CuTe DSL return TV layouts); its pictures are drawn with matplotlib from those grids, and the
    time includes computing the grids and writing the file.
(g) tensor-layouts has no make_smem_layout_atom: the row builds ComposedLayout(Swizzle(3,4,3), (8,64):(64,1)) and
    tile_to_shape's it.
(h) the same calls as cutelab's row, timed inside one @cute.jit trace: Python plus the MLIR operations they emit.
(i) a whole call of a fresh @cute.jit function doing the row's work and its set-up (e.g. the TiledMMA that the
    tv_layout and partition rows start from): trace, MLIR and the DSL's compile pipeline; compare with its last row.
"""


def _num(v: float) -> str:
    return f"{v:.3f}" if v < 0.1 else f"{v:.2f}" if v < 10 else f"{v:.1f}" if v < 1000 else f"{v:.0f}"


def fmt_ms(r: dict | None) -> str:
    """'median / min ms', with the count of repetitions when it is small."""
    if r is None:
        return "-"
    out = f"{_num(r['ms'])} / {_num(r['min'])} ms" if r["n"] > 1 else f"{_num(r['ms'])} ms"
    return out + (f" (n={r['n']})" if r["n"] < 5 else "")


def table(res: dict, checks: dict) -> str:
    cl = res.get("cutelab", {}).get("rows", {})
    tlr = res.get("tl", {}).get("rows", {})
    dsl = res.get("dsl", {})
    trace, calls = dsl.get("rows", {}), dsl.get("call_rows", {})
    lines = ["| operation (median / min) | cutelab | tensor-layouts | CuTe DSL (in trace) (h) "
             "| CuTe DSL (jit call) (i) |",
             "|---|---|---|---|---|"]
    tl_mark = {"sm80.tv": " (f)", "sm90.tv": " (f)", "sm80.svg": " (f)", "sm80.png": " (f)", "sm90.svg": " (f)",
               "sm90.png": " (f)", "smem.tile": " (g)"}
    for key, label in ROWS:
        c = fmt_ms(cl.get(key)) if key in cl else ("" if key == "jit.empty" else "-")
        if key in cl and "bytes" in cl[key]:
            c += f", {cl[key]['bytes'] / 1024:.0f} KB"
        if "tl" not in res or (key.endswith((".svg", ".png")) and key not in tlr):
            t = "not run"
        elif key in tlr:
            t = fmt_ms(tlr[key]) + tl_mark.get(key, "")
            if "bytes" in tlr[key]:
                t += f", {tlr[key]['bytes'] / 1024:.0f} KB"
        else:
            na = NA["tl"].get(key, "-")
            t = na + (")" if na.endswith(("(a", "(b", "(c", "(d")) else "")
        if "dsl" not in res:
            d1 = d2 = "not run"
        else:
            na = NA["dsl"].get(key)
            d1 = fmt_ms(trace[key]) if key in trace else (na + ")" if na else "")
            d2 = fmt_ms(calls[key]) if key in calls else (na + ")" if na else "")
        for lib in ("tl", "dsl"):
            bad = checks.get((lib, key))
            if bad:
                mark = " DIFFERS"
                if lib == "tl":
                    t += mark
                else:
                    d1 += mark
        lines.append(f"| {label} | {c} | {t} | {d1} | {d2} |")
    return "\n".join(lines)


def machine() -> str:
    cpu = platform.processor() or "?"
    try:
        with open("/proc/cpuinfo") as f:
            for ln in f:
                if ln.startswith("model name"):
                    cpu = ln.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{os.cpu_count()} CPUs ({cpu}), {platform.system()} {platform.release()}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=200, help="repetitions per row, at most (default 200)")
    ap.add_argument("--budget", type=float, default=4.0, help="seconds per row after which repetitions stop")
    ap.add_argument("--tl-python", default=None, help="an interpreter with tensor-layouts (default: this one)")
    ap.add_argument("--dsl-python", default=DEFAULT_DSL, help=f"an interpreter with CuTe DSL (default {DEFAULT_DSL})")
    ap.add_argument("--no-tl-pictures", action="store_true",
                    help="skip tensor-layouts' matplotlib pictures (minutes on a busy machine)")
    ap.add_argument("--json", default=None, help="also write all results (and answers) to this JSON file")
    ap.add_argument("--from-json", default=None, help="print the report of a run saved with --json, run nothing")
    ap.add_argument("--part", choices=["cutelab", "tl", "dsl"], help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.reps < 1 or args.budget <= 0:
        ap.error(f"--reps must be >= 1 and --budget > 0, got {args.reps} and {args.budget}")
    if args.part:
        if args.part == "tl":
            emit(part_tl(args.reps, args.budget, not args.no_tl_pictures))
        else:
            emit({"cutelab": part_cutelab, "dsl": part_dsl}[args.part](args.reps, args.budget))
        return

    if args.from_json:
        with open(args.from_json) as f:
            saved = json.load(f)
        report(saved["results"], saved.get("notes", []), saved["args"], saved.get("when", "?"))
        return
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(REPO, "src") + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    res, notes = {}, []
    r, err = run_part("cutelab", sys.executable, args, env)
    if r is None:
        sys.exit(f"atoms.py: the cutelab part failed: {err}")
    res["cutelab"] = r
    tl_py = args.tl_python or sys.executable
    if can_import(tl_py, "tensor_layouts"):
        r, err = run_part("tl", tl_py, args, env)
        if r is not None:
            res["tl"] = r
            notes += r.get("notes", [])
        else:
            notes.append(err)
    else:
        notes.append(f"tensor-layouts is not importable by {tl_py}: skipped (pass --tl-python)")
    if os.path.exists(args.dsl_python):
        denv = dict(env, CUTE_DSL_ARCH="sm_90a")
        denv.pop("PYTHONPATH", None)
        r, err = run_part("dsl", args.dsl_python, args, denv)
        if r is not None:
            res["dsl"] = r
        else:
            notes.append(err)
    else:
        notes.append(f"CuTe DSL interpreter {args.dsl_python} not found: skipped")

    when = time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())
    settings = {"reps": args.reps, "budget": args.budget}
    report(res, notes, settings, when)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"results": res, "notes": notes, "args": settings, "when": when}, f)


def report(res: dict, notes: list, settings: dict, when: str) -> None:
    """Print the checks, the table and the notes of one run."""
    checks = check(res)
    print(f"# Atoms and their pictures (benchmarks/atoms.py), {when}")
    print(f"Machine: {machine()}.")
    vers = [f"cutelab {res['cutelab']['version']} (Python {res['cutelab']['python']})"]
    if "tl" in res:
        vers.append(f"tensor-layouts {res['tl']['version']} with matplotlib {res['tl'].get('matplotlib', '?')} "
                    f"(Python {res['tl']['python']})")
    if "dsl" in res:
        vers.append(f"CuTe DSL (nvidia-cutlass-dsl) {res['dsl']['version']} (Python {res['dsl']['python']}, "
                    f"CUTE_DSL_ARCH=sm_90a)")
    print("Versions: " + "; ".join(vers) + ".")
    print(f"Median and minimum over fresh objects per row (up to {settings['reps']} repetitions, "
          f"{settings['budget']:g} s per row).\n")
    bad = [m for v in checks.values() for m in v]
    n_checked = len([k for k in checks])
    if bad:
        print("ANSWERS DIFFER:")
        for m in bad:
            print("  " + m)
    else:
        print(f"Answers agree ({n_checked} row checks: the printed tiled TV layouts, partitions, fragments and "
              "TiledCopy layouts against CuTe DSL; tensor-layouts' grid owners and swizzled tile offsets).")
    print()
    print(table(res, checks))
    print()
    print(FOOTNOTES)
    cl = res["cutelab"]["answers"]
    print(f"cutelab.analysis, ldmatrix x4 over {cl['smem.tile']}: {cl['analysis.ldsm']}")
    for n in notes:
        print("note: " + n)
    first = res["cutelab"]["rows"]
    print("cutelab's first calls in a fresh process (lazy imports, cold palette and glyph caches): "
          + ", ".join(f"{k} {_num(first[k]['first'])} ms" for k in ("sm80.build", "sm80.all", "sm80.svg", "sm80.png",
                                                                    "sm80.text") if k in first))
    slow = [(k, v["ms"]) for k, v in first.items() if v["ms"] > 50]
    if slow:
        print("cutelab rows over 50 ms (median): " + ", ".join(f"{k} {ms:.0f} ms" for k, ms in slow))


if __name__ == "__main__":
    main()
