"""The attention forward of issue 21 on one GPU: cutelab's Hopper kernel (examples/attention/
sm90_fmha_fwd.py) against torch SDPA, in one process: each backend of ``--sdpa`` (``default``: the one
torch picks for the shape, what a user gets; ``flash``, ``cudnn``, ``efficient``: forced), each ratio
against the fastest of them in the same rounds.

Shapes: batch 4, heads 16, seqlen in ``--seqlens`` (1k, 4k, 8k, 16k), head dim in ``--dims`` (64,
128), causal and not, bf16 (``--dtype``). FLOPs = 4 b h s^2 d (the two GEMMs), halved for causal.

Programs: ``cutelab`` (one CTA per query block and head), with ``--persistent`` also
``cutelab-persistent`` (one CTA per SM walking the tiles; causal: the longest first), and SDPA.
``--variants`` adds the kernel built with other options (``VARIANTS``), each as ``cutelab-NAME`` (and
``cutelab-NAME-persistent`` with ``--persistent``), timed in the same rounds: ``wg3`` (three consumer
warpgroups, 192-row query blocks, no intra-warpgroup overlap; head dim 64 only, skipped for 128) and
``nooverlap`` (two warpgroups, no intra-warpgroup overlap of the softmax with P V) and ``keepwait``
(``keep_wait=True``: the overlap's wait for P V in both arms of a runtime branch, kept after the softmax;
not the default, see the example's docstring).
Per shape, every program first runs once and is checked: cutelab's O against SDPA's (max |diff| at
most ``TOL_O``) and its log-sum-exp against the one SDPA's flash kernel returns
(``aten._scaled_dot_product_flash_attention``, at most ``TOL_LSE``); a shape that fails is reported
and not timed. Then ``--rounds`` rounds, each starting with the next program in turn:

- back to back: CUDA events around ``--iters`` calls;
- single launch: synchronize, event, call, event, synchronize, ``--singles`` times; the median.

Each figure is the median over the rounds. Prints one JSON line per shape, then a markdown table
(device named) for benchmarks/RESULTS.md.

``--backward``: the backward instead (examples/attention/sm90_fmha_bwd.py: its three kernels, one
call), against SDPA's backward: per SDPA backend, the forward runs once under autograd and each timed
call is ``torch.autograd.grad(out, (q, k, v), dO, retain_graph=True)`` (the backend's backward
kernels, its own dO . O preprocessing included). cutelab's backward takes O and LSE from cutelab's
forward (run once, untimed). The check: dQ, dK, dV against the first SDPA backend's, max |diff| /
max |SDPA's| at most ``TOL_GRAD`` each. FLOPs = 10 b h s^2 d (the five GEMMs), halved for causal.

    python benchmarks/attention.py [--seqlens 1024,4096,8192,16384] [--dims 64,128] [--causal both]
                                   [--persistent] [--variants wg3,nooverlap] [--rounds 3] [--iters 20]
                                   [--singles 10] [--json out.json]
    python benchmarks/attention.py --backward [--seqlens ...] [--dims ...] [--causal both] [--rounds 3]
    python benchmarks/attention.py --dry-run [--backward] [--nvcc]  # no GPU: cutelab's kernel through the GPU launch
                                                       # path under cutelab.kernel.cuda.fakegpu (nothing runs)

Exit status: 0 every shape passed its check, 1 some failed, 2 nothing could be measured.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import sys
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
# benchmarks/ holds a copy.py: keep it from shadowing the standard library's copy module
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != HERE]
EXAMPLE = os.path.join(ROOT, "examples", "attention", "sm90_fmha_fwd.py")
EXAMPLE_BWD = os.path.join(ROOT, "examples", "attention", "sm90_fmha_bwd.py")
TOL_O = 2e-2  # both bf16 results of f32 softmaxes: a few bf16 ulps of |O| < 1
TOL_LSE = 1e-3  # f32 in both; exp2/log2 approximations
TOL_GRAD = 2e-2  # dQ, dK, dV: both bf16 from f32 accumulation (P, dS rounded to bf16), relative to the largest
# --variants: the forward's HopperAttentionForward options by name (the plain ``cutelab`` is the defaults)
VARIANTS = {"wg3": dict(consumer_wgs=3), "nooverlap": dict(overlap=False), "keepwait": dict(keep_wait=True)}


def flops(b: int, h: int, s: int, d: int, causal: bool, backward: bool = False) -> float:
    """4 b h s^2 d (the forward's two GEMMs; 10 b h s^2 d, five GEMMs, for the backward), halved for causal.

    >>> flops(4, 16, 1024, 128, False) / 1e9, flops(4, 16, 1024, 128, True) / 1e9
    (34.359738368, 17.179869184)
    >>> flops(4, 16, 1024, 128, False, backward=True) / 1e9
    85.89934592
    """
    f = (10.0 if backward else 4.0) * b * h * s * s * d
    return f / 2 if causal else f


def tflops(b: int, h: int, s: int, d: int, causal: bool, ms: float, backward: bool = False) -> float:
    """TFLOP/s of a call that took ms milliseconds.

    >>> round(tflops(4, 16, 1024, 128, False, 0.05), 1)
    687.2
    """
    return flops(b, h, s, d, causal, backward) / (ms * 1e-3) / 1e12


def _ints(text: str) -> List[int]:
    try:
        vals = [int(x) for x in text.split(",") if x]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: comma-separated integers")
    if not vals or any(v <= 0 for v in vals):
        raise argparse.ArgumentTypeError(f"{text!r}: positive integers")
    return vals


def _backends(text: str) -> List[str]:
    """The ``--sdpa`` list.

    >>> _backends("default,cudnn")
    ['default', 'cudnn']
    """
    names = [x.strip() for x in text.split(",") if x.strip()]
    bad = [x for x in names if x not in ("default", "flash", "cudnn", "efficient")]
    if bad or not names:
        raise argparse.ArgumentTypeError(f"--sdpa: {bad or text!r}: choose from default, flash, cudnn, efficient")
    return names


def _variant(text: str) -> Tuple[str, Dict[str, Any]]:
    """``--bwd-variant NAME=KEY:VALUE,...``: the name and the options (ints where they read as ints).

    >>> _variant("old=tile_m:64,order:dq_last,dq_writer:0")
    ('old', {'tile_m': 64, 'order': 'dq_last', 'dq_writer': 0})
    """
    name, _, rest = text.partition("=")
    if not name or not all(c.isalnum() or c in "_-" for c in name):
        raise argparse.ArgumentTypeError(f"--bwd-variant {text!r}: NAME=KEY:VALUE,... with a plain NAME")
    opts: Dict[str, Any] = {}
    for item in filter(None, rest.split(",")):
        key, sep, value = item.partition(":")
        if not sep or not key:
            raise argparse.ArgumentTypeError(f"--bwd-variant {text!r}: {item!r} is not KEY:VALUE")
        opts[key] = int(value) if value.lstrip("-").isdigit() else value
    return name, opts


def _variants(text: str) -> List[str]:
    """The ``--variants`` list.

    >>> _variants("wg3,nooverlap")
    ['wg3', 'nooverlap']
    """
    names = [x.strip() for x in text.split(",") if x.strip()]
    bad = [x for x in names if x not in VARIANTS]
    if bad or not names:
        raise argparse.ArgumentTypeError(f"--variants: {bad or text!r}: choose from {', '.join(VARIANTS)}")
    return names


def variant_applies(name: str, d: int) -> bool:
    """Whether variant name builds for head dim d (three consumer warpgroups: d 64 only).

    >>> variant_applies("wg3", 64), variant_applies("wg3", 128), variant_applies("nooverlap", 128)
    (True, False, True)
    """
    return VARIANTS[name].get("consumer_wgs", 2) == 2 or d == 64


def make_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--heads", type=int, default=16)
    ap.add_argument("--seqlens", type=_ints, default=[1024, 4096, 8192, 16384])
    ap.add_argument("--dims", type=_ints, default=[64, 128])
    ap.add_argument("--causal", choices=["both", "yes", "no"], default="both")
    ap.add_argument("--dtype", choices=["bf16", "f16"], default="bf16")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iters", type=int, default=20, help="calls per back-to-back measurement")
    ap.add_argument("--singles", type=int, default=10, help="single launches per round (their median)")
    ap.add_argument("--persistent", action="store_true",
                    help="also time the kernel on a persistent grid (one CTA per SM; causal: the longest tiles first)")
    ap.add_argument("--variants", type=_variants, default=[],
                    help=f"also time the forward built with these options ({', '.join(VARIANTS)}; see VARIANTS)")
    ap.add_argument("--sdpa", type=_backends, default=["default", "flash", "cudnn"],
                    help="SDPA backends to time (default = torch's own choice; flash, cudnn, efficient forced); "
                         "ratios are against the fastest")
    ap.add_argument("--backward", action="store_true",
                    help="time the backward (sm90_fmha_bwd.py) against SDPA's backward instead of the forward")
    ap.add_argument("--bwd-variant", action="append", default=[], type=_variant, metavar="NAME=KEY:VALUE,...",
                    help="with --backward: also time the backward with these HopperAttentionBackward options, as "
                         "program cutelab-NAME (e.g. old=tile_m:64,order:dq_last,dq_writer:0); repeatable")
    ap.add_argument("--json", default=None, help="also write the rows here")
    ap.add_argument("--dry-run", action="store_true", help="no GPU: trace, print and launch on a fake GPU")
    ap.add_argument("--nvcc", nargs="?", const="nvcc", default=None,
                    help="with --dry-run: also compile the generated kernel with nvcc")
    return ap


def shapes(o: argparse.Namespace) -> List[Dict[str, Any]]:
    """The (seqlen, head dim, causal) grid in run order.

    >>> o = make_parser().parse_args(["--seqlens", "1024", "--dims", "64,128", "--causal", "both"])
    >>> [(s["s"], s["d"], s["causal"]) for s in shapes(o)]
    [(1024, 64, False), (1024, 64, True), (1024, 128, False), (1024, 128, True)]
    """
    causal = {"both": [False, True], "yes": [True], "no": [False]}[o.causal]
    return [dict(b=o.batch, h=o.heads, s=s, d=d, causal=c) for s in o.seqlens for d in o.dims for c in causal]


def load_example(path: str = EXAMPLE) -> Any:
    sys.path.insert(0, os.path.join(ROOT, "src"))
    spec = importlib.util.spec_from_file_location("_bench_" + os.path.basename(path)[:-3], path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def build_cutelab(ex: Any, q: Any, k: Any, v: Any, causal: bool, dtype: str, wrap: Callable = lambda t: t,
                  ctas: Optional[int] = None, **options: Any):
    """cute.compile of the example's kernel (``ctas``: a persistent grid of that many CTAs; ``options``:
    more of HopperAttentionForward's, a VARIANTS entry); returns (call, o, lse, compile seconds)."""
    import torch

    import cutelab as cute

    b, h, s, d = q.shape
    o = torch.empty_like(q)
    lse = torch.empty(b, h, s, dtype=torch.float32, device=q.device)
    args = ex.views(q, k, v, o, lse, wrap=wrap)
    fwd = ex.HopperAttentionForward(ex._DTYPES[dtype], d, causal, num_ctas=ctas, **options)
    t0 = time.perf_counter()
    compiled = cute.compile(fwd, *args)
    return (lambda: compiled(*args)), o, lse, time.perf_counter() - t0


def time_call(call: Callable[[], Any], iters: int, singles: int) -> Dict[str, float]:
    """Back-to-back ms per call (events around iters calls) and the median single launch (ms)."""
    import torch

    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    for _ in range(iters):
        call()
    end.record()
    torch.cuda.synchronize()
    b2b = start.elapsed_time(end) / iters
    one = []
    for _ in range(singles):
        torch.cuda.synchronize()
        start.record()
        call()
        end.record()
        torch.cuda.synchronize()
        one.append(start.elapsed_time(end))
    return {"b2b_ms": b2b, "single_ms": statistics.median(one)}


def run_shape(ex: Any, shp: Dict[str, Any], o: argparse.Namespace) -> Dict[str, Any]:
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    b, h, s, d, causal = shp["b"], shp["h"], shp["s"], shp["d"], shp["causal"]
    row: Dict[str, Any] = dict(shp, dtype=o.dtype)
    tdt = {"bf16": torch.bfloat16, "f16": torch.float16}[o.dtype]
    torch.manual_seed(0)
    q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=tdt) for _ in range(3))
    ours = {"cutelab": build_cutelab(ex, q, k, v, causal, o.dtype)}
    sms = torch.cuda.get_device_properties(q.device).multi_processor_count
    if o.persistent:  # one CTA per SM walking the tiles
        ours["cutelab-persistent"] = build_cutelab(ex, q, k, v, causal, o.dtype, ctas=sms)
    for name in o.variants:
        if not variant_applies(name, d):
            continue
        ours[f"cutelab-{name}"] = build_cutelab(ex, q, k, v, causal, o.dtype, **VARIANTS[name])
        if o.persistent:
            ours[f"cutelab-{name}-persistent"] = build_cutelab(ex, q, k, v, causal, o.dtype, ctas=sms,
                                                               **VARIANTS[name])

    forced = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION,
              "efficient": SDPBackend.EFFICIENT_ATTENTION}
    sdpas: Dict[str, Callable] = {}
    for name in o.sdpa:
        if name == "default":
            sdpas["sdpa"] = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        else:
            def call(b: Any = forced[name]) -> Any:
                with sdpa_kernel(b):
                    return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
            try:
                call()
            except RuntimeError as e:  # that backend does not take the shape here: say so, time the others
                row[f"sdpa-{name}_skipped"] = str(e).splitlines()[0][:200]
                continue
            sdpas[f"sdpa-{name}"] = call
    return _check_and_time(row, ours, sdpas, q, k, v, shp, o)


def _check_and_time(row: Dict[str, Any], ours: Dict[str, tuple], sdpas: Dict[str, Callable], q: Any, k: Any,
                    v: Any, shp: Dict[str, Any], o: argparse.Namespace) -> Dict[str, Any]:
    """Check each of cutelab's programs (O and LSE) against SDPA's; when all pass, the alternating
    timed rounds. The row's ``sdpa_*`` figures are those of the fastest SDPA backend (back to back),
    named in ``sdpa_best``."""
    import torch

    causal = shp["causal"]
    if not sdpas:
        row["ok"] = False
        return row
    ref = next(iter(sdpas.values()))()
    ref_lse = torch.ops.aten._scaled_dot_product_flash_attention(q, k, v, 0.0, causal)[1].float()
    row["ok"] = True
    for name, (call, out, lse, compile_s) in ours.items():
        out.zero_()
        call()
        torch.cuda.synchronize()
        row[f"{name}_compile_s"] = compile_s
        row[f"{name}_err_o"] = err_o = (out.float() - ref.float()).abs().max().item()
        row[f"{name}_err_lse"] = err_lse = (lse - ref_lse).abs().max().item()
        row["ok"] = row["ok"] and err_o <= TOL_O and err_lse <= TOL_LSE
    if not row["ok"]:
        return row
    return _time_rounds(row, {name: t[0] for name, t in ours.items()}, sdpas, shp, o)


def _time_rounds(row: Dict[str, Any], ours: Dict[str, Callable], sdpas: Dict[str, Callable], shp: Dict[str, Any],
                 o: argparse.Namespace, backward: bool = False) -> Dict[str, Any]:
    """The alternating timed rounds of cutelab's programs and SDPA's backends: per program, the median
    over the rounds (back to back and single launch), the fastest SDPA backend (back to back) named
    in ``sdpa_best`` and its figures in ``sdpa_*``, and each program's ratios against it."""
    b, h, s, d, causal = shp["b"], shp["h"], shp["s"], shp["d"], shp["causal"]
    programs = list(ours.items()) + list(sdpas.items())
    for _, f in programs:  # warm up
        for _ in range(3):
            f()
    rounds: Dict[str, List[Dict[str, float]]] = {name: [] for name, _ in programs}
    for r in range(o.rounds):  # alternate the programs: each round starts with the next one
        for name, f in programs[r % len(programs):] + programs[:r % len(programs)]:
            rounds[name].append(time_call(f, o.iters, o.singles))
    for name, rs in rounds.items():
        for key in ("b2b_ms", "single_ms"):
            ms = statistics.median(x[key] for x in rs)
            row[f"{name}_{key}"] = ms
            row[f"{name}_{key[:-3]}_tflops"] = tflops(b, h, s, d, causal, ms, backward)
    best = min(sdpas, key=lambda n: row[f"{n}_b2b_ms"])
    row["sdpa_best"] = best
    for key in ("b2b_ms", "single_ms", "b2b_tflops", "single_tflops"):
        row[f"sdpa_{key}"] = row[f"{best}_{key}"]
    for name in ours:
        row[f"{name}_ratio_b2b"] = row["sdpa_b2b_ms"] / row[f"{name}_b2b_ms"]
        row[f"{name}_ratio_single"] = row["sdpa_single_ms"] / row[f"{name}_single_ms"]
    return row


def build_cutelab_bwd(fwd_ex: Any, bwd_ex: Any, q: Any, k: Any, v: Any, do: Any, causal: bool, dtype: str,
                      wrap: Callable = lambda t: t, options: Optional[Dict[str, Any]] = None,
                      fwd_out: Optional[Tuple[Any, Any]] = None):
    """O and LSE by cutelab's forward (compiled, run once; or ``fwd_out``, the (O, LSE) of an earlier
    call), then cute.compile of the backward (made with ``options``, HopperAttentionBackward's
    keywords); returns (call, (dq, dk, dv), compile seconds of the backward, (O, LSE))."""
    import torch

    import cutelab as cute

    b, h, s, d = q.shape
    if fwd_out is None:
        fwd_call, o, lse, _ = build_cutelab(fwd_ex, q, k, v, causal, dtype, wrap=wrap)
        fwd_call()
    else:
        o, lse = fwd_out
    dq, dk, dv = (torch.empty_like(q) for _ in range(3))
    f32 = lambda *shape: torch.empty(*shape, dtype=torch.float32, device=q.device)  # noqa: E731
    args = bwd_ex.views(q, k, v, o, do, lse, dq, dk, dv, f32(b, h, s, d), f32(b, h, s), f32(b, h, s), wrap=wrap)
    bwd = bwd_ex.HopperAttentionBackward(bwd_ex._DTYPES[dtype], d, causal, **(options or {}))
    t0 = time.perf_counter()
    compiled = cute.compile(bwd, *args)
    return (lambda: compiled(*args)), (dq, dk, dv), time.perf_counter() - t0, (o, lse)


def run_shape_bwd(exs: Any, shp: Dict[str, Any], o: argparse.Namespace) -> Dict[str, Any]:
    """One shape of ``--backward``: check cutelab's dQ, dK, dV against SDPA's, then the timed rounds."""
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    fwd_ex, bwd_ex = exs
    b, h, s, d, causal = shp["b"], shp["h"], shp["s"], shp["d"], shp["causal"]
    row: Dict[str, Any] = dict(shp, dtype=o.dtype, mode="backward")
    tdt = {"bf16": torch.bfloat16, "f16": torch.float16}[o.dtype]
    torch.manual_seed(0)
    q, k, v, do = (torch.randn(b, h, s, d, device="cuda", dtype=tdt) for _ in range(4))
    forced = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION,
              "efficient": SDPBackend.EFFICIENT_ATTENTION}
    sdpas: Dict[str, Callable] = {}
    grads: Dict[str, Any] = {}
    for name in o.sdpa:
        qg, kg, vg = (x.detach().clone().requires_grad_() for x in (q, k, v))
        try:
            if name == "default":
                out = F.scaled_dot_product_attention(qg, kg, vg, is_causal=causal)
            else:
                with sdpa_kernel(forced[name]):
                    out = F.scaled_dot_product_attention(qg, kg, vg, is_causal=causal)
            call = lambda out=out, qg=qg, kg=kg, vg=vg: torch.autograd.grad(out, (qg, kg, vg), do,  # noqa: E731
                                                                             retain_graph=True)
            grads.setdefault("ref", call())
        except RuntimeError as e:  # that backend does not take the shape here: say so, time the others
            row[f"sdpa-{name}_skipped"] = str(e).splitlines()[0][:200]
            continue
        sdpas["sdpa" if name == "default" else f"sdpa-{name}"] = call
    if not sdpas:
        row["ok"] = False
        return row
    ours: Dict[str, Callable] = {}
    row["ok"] = True
    fwd_out = None  # cutelab's O and LSE, made once
    for name, options in [("cutelab", {})] + [(f"cutelab-{n}", opts) for n, opts in o.bwd_variant]:
        call, (dq, dk, dv), compile_s, fwd_out = build_cutelab_bwd(fwd_ex, bwd_ex, q, k, v, do, causal, o.dtype,
                                                                   options=options, fwd_out=fwd_out)
        call()
        torch.cuda.synchronize()
        row[f"{name}_compile_s"] = compile_s
        errs = [((g.float() - r.float()).abs().max() / r.float().abs().max()).item()
                for g, r in zip((dq, dk, dv), grads["ref"])]
        row[f"{name}_err_dq"], row[f"{name}_err_dk"], row[f"{name}_err_dv"] = errs
        row["ok"] = row["ok"] and max(errs) <= TOL_GRAD
        ours[name] = call
    if not row["ok"]:
        return row
    return _time_rounds(row, ours, sdpas, shp, o, backward=True)


def programs(row: Dict[str, Any]) -> List[str]:
    """cutelab's programs of a row, in the order they were built (``cutelab`` first).

    >>> programs(dict(cutelab_err_o=0, **{"cutelab-wg3_err_o": 0, "cutelab-wg3_b2b_ms": 1.0}))
    ['cutelab', 'cutelab-wg3']
    >>> programs({"mode": "backward", "cutelab_err_dq": 0, "cutelab_err_dk": 0, "cutelab-old_err_dq": 0})
    ['cutelab', 'cutelab-old']
    """
    names: List[str] = []
    for k in row:  # a forward program has its O's error, a backward one its dQ's
        if k.startswith("cutelab") and (k.endswith("_err_o") or k.endswith("_err_dq")):
            name = k.rsplit("_err_", 1)[0]
            if name not in names:
                names.append(name)
    if "cutelab" not in names and row.get("mode") == "backward":
        names.insert(0, "cutelab")
    return names


def table(rows: List[Dict[str, Any]], device: str) -> str:
    """A markdown table of the measured rows: one line per shape and cutelab program, each with
    the fastest SDPA backend's figures of the same rounds (ratio: SDPA's time / ours, above 1 when
    ours is faster).

    >>> print(table([dict(b=4, h=16, s=1024, d=64, causal=True, dtype="bf16", ok=False, cutelab_err_o=1.0,
    ...                   cutelab_err_lse=0.0)], "X"))
    | device | b h s d | causal | program | ours b2b | SDPA b2b | ratio | ours single | SDPA single | ratio | SDPA backend |
    |---|---|---|---|---|---|---|---|---|---|---|
    | X | 4 16 1024 64 bf16 | yes | cutelab | FAILED check (err O 1, LSE 0) | | | | | | |
    """
    out = ["| device | b h s d | causal | program | ours b2b | SDPA b2b | ratio | ours single | SDPA single | ratio | "
           "SDPA backend |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        shape = f"{r['b']} {r['h']} {r['s']} {r['d']} {r['dtype']}"
        c = "yes" if r["causal"] else "no"
        for p in programs(r):
            if r.get("mode") == "backward" and f"{p}_err_dq" in r and not r.get("ok"):
                out.append(f"| {device} | {shape} | {c} | {p} backward | FAILED check (rel err dQ {r[f'{p}_err_dq']:.3g}, "
                           f"dK {r[f'{p}_err_dk']:.3g}, dV {r[f'{p}_err_dv']:.3g}) | | | | | | |")
                continue
            if f"{p}_err_o" not in r and not (r.get("mode") == "backward" and f"{p}_b2b_ms" in r):
                continue
            if not r.get("ok"):
                out.append(f"| {device} | {shape} | {c} | {p} | FAILED check (err O {r[f'{p}_err_o']:.3g}, "
                           f"LSE {r[f'{p}_err_lse']:.3g}) | | | | | | |")
                continue
            cell = lambda q, k: f"{r[f'{q}_{k}_ms']:.3f} ms, {r[f'{q}_{k}_tflops']:.0f} TF/s"  # noqa: E731
            name = f"{p} backward" if r.get("mode") == "backward" else p
            out.append(f"| {device} | {shape} | {c} | {name} | {cell(p, 'b2b')} | {cell('sdpa', 'b2b')} | "
                       f"{r[f'{p}_ratio_b2b']:.2f}x | {cell(p, 'single')} | {cell('sdpa', 'single')} | "
                       f"{r[f'{p}_ratio_single']:.2f}x | {r['sdpa_best']} |")
    return "\n".join(out)


def dry_run(o: argparse.Namespace) -> int:
    """Each shape's kernel through cute.compile and one launch on the fake GPU: nothing executes."""
    import torch

    from cutelab.kernel.cuda.fakegpu import fake_cuda_tensor, fake_gpu

    ex = load_example()
    bwd_ex = load_example(EXAMPLE_BWD) if o.backward else None
    bad = 0
    for shp in shapes(o):
        row: Dict[str, Any] = dict(shp, dtype=o.dtype, dry=True, mode="backward" if o.backward else "forward")
        t0 = time.perf_counter()
        try:
            with fake_gpu(nvcc=o.nvcc) as gpu:
                tdt = {"bf16": torch.bfloat16, "f16": torch.float16}[o.dtype]
                q = torch.zeros(shp["b"], shp["h"], shp["s"], shp["d"], dtype=tdt)
                if o.backward:  # the forward (for O and LSE), then the backward's three kernels
                    call, _, row["compile_s"], fwd_out = build_cutelab_bwd(ex, bwd_ex, q, q, q, q, shp["causal"],
                                                                           o.dtype, wrap=fake_cuda_tensor)
                    for _, options in o.bwd_variant:  # each variant through the same launch path
                        build_cutelab_bwd(ex, bwd_ex, q, q, q, q, shp["causal"], o.dtype, wrap=fake_cuda_tensor,
                                          options=options, fwd_out=fwd_out)[0]()
                else:
                    call, _, _, row["compile_s"] = build_cutelab(ex, q, q, q, shp["causal"], o.dtype,
                                                                 wrap=fake_cuda_tensor)
                call()
                if o.persistent:
                    call, _, _, _ = build_cutelab(ex, q, q, q, shp["causal"], o.dtype, wrap=fake_cuda_tensor, ctas=132)
                    call()
                for name in o.variants:
                    if variant_applies(name, shp["d"]):
                        call, _, _, _ = build_cutelab(ex, q, q, q, shp["causal"], o.dtype, wrap=fake_cuda_tensor,
                                                      **VARIANTS[name])
                        call()
                        if o.persistent:
                            call, _, _, _ = build_cutelab(ex, q, q, q, shp["causal"], o.dtype,
                                                          wrap=fake_cuda_tensor, ctas=132, **VARIANTS[name])
                            call()
                launch = gpu.driver.launches[-1]
                row.update(ok=True, launches=len(gpu.driver.launches),
                           grid=list(launch["grid"]) if isinstance(launch, dict) and "grid" in launch else None)
        except Exception as e:  # noqa: BLE001 - reported per row
            row.update(ok=False, why=f"{type(e).__name__}: {e}"[:400])
            bad += 1
        row["seconds"] = time.perf_counter() - t0
        print(json.dumps(row), flush=True)
    return 1 if bad else 0


def main(argv: Any = None) -> int:
    o = make_parser().parse_args(argv)
    if o.dry_run:
        return dry_run(o)
    try:
        import torch
    except ImportError:
        print("benchmarks/attention.py: torch is not installed")
        return 2
    if not torch.cuda.is_available():
        print("benchmarks/attention.py: no GPU (use --dry-run to check the launch path)")
        return 2
    ex = load_example()
    exs = (ex, load_example(EXAMPLE_BWD)) if o.backward else None
    device = torch.cuda.get_device_name()
    rows = []
    for shp in shapes(o):
        row = run_shape_bwd(exs, shp, o) if o.backward else run_shape(ex, shp, o)
        row["device"] = device
        rows.append(row)
        print(json.dumps(row), flush=True)
        torch.cuda.empty_cache()
    if o.json:
        with open(o.json, "w") as f:
            json.dump(rows, f, indent=1)
    print(f"\n{time.strftime('%Y-%m-%d')}, {device}, median of {o.rounds} alternating rounds "
          f"({o.iters} calls back to back, median of {o.singles} single launches per round)\n")
    print(table(rows, device))
    return 0 if all(r.get("ok") for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
