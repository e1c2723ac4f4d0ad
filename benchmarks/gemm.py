"""The GEMM table of issue 10: cuBLAS, CuTe DSL's GEMM examples and cutelab's GEMMs, on one GPU, in one run.

    C[m, n] = sum_k A[m, k] * B[n, k]      A: M x K, B: N x K (both K-major), f32 accumulation

Each program runs in its own process (one per size, input type and program), on the same random
data (normal, scaled by K**-0.25 so that C is about N(0, 1): nothing overflows f16), as
benchmarks/dsl_examples.py runs the Ampere examples, and is timed by that script's timer:

- back-to-back: ``iterations`` calls, one device-wide synchronize; wall-clock time per call;
- single launch: synchronize, call, synchronize, ``singles`` times; the median.

The programs (``--only`` names):

- ``torch``: ``torch.matmul(a, b.t(), out=c)`` in the input type (cuBLAS; reduced-precision
  reductions off, so that it accumulates in f32 as the others do);
- ``dsl-ampere``: CuTe DSL 4.8.1's own Ampere ``tensorop_gemm.py`` (the original file, from
  ``--dsl-orig DIR``), its ``compile_bmm`` with A and B K-major, C N-major, atoms 2x2x1;
- ``dsl-hopper``: CuTe DSL 4.8.1's own Hopper ``dense_gemm.py`` (from ``--dsl-orig DIR``),
  ``HopperWgmmaGemmKernel`` with 128x256 tiles (two MMA warpgroups), C in the input type, one row
  per cluster shape of ``--dsl-hopper-clusters`` (default 1x1, the example's documented command
  line, and 2x1, one of its documented cluster choices: B's tile multicast by TMA to the two CTAs
  of a cluster); where its ``is_valid_dtypes`` refuses bf16 (the version in CUTLASS's repository
  admits f16 only), bf16 is run through the class directly and the row says so;
- ``cutelab-ampere``: cutelab's copy of that ``tensorop_gemm.py`` (examples/dsl/), driven the same way;
- ``sm80``: examples/gemm/sm80_gemm.py (``Sm80Gemm`` through ``cute.compile``);
- ``sm90``: examples/gemm/sm90_gemm.py (``HopperGemm``; through ``cute.compile`` where that
  takes it, else one jit call per launch, and the row's config says which).

Every program's first result is compared with ``torch.matmul`` in f32 (TF32 off) of the same
inputs: max |C - ref| must be at most ``2 u |ref|_max + 2**-12 |ref|_max`` (u: the unit roundoff
of C's type; the second term covers f32 accumulation in another order). A program that fails it
is reported as failed and not timed.

``--dtypes e4m3``: fp8 A and B (normal values rounded to e4m3) with per-tensor scales K**-0.25 (1-element
f32 tensors on the device), C in ``--fp8-c-dtype`` (bf16). The programs: ``torch`` is
``torch._scaled_mm(a, b.t(), scale_a, scale_b, out_dtype, use_fast_accum=True)`` (``--scaled-mm-accum
precise``: False, cuBLAS promoting its sums to f32 now and then, slower); ``sm90`` takes the scales
in its epilogue, configured by ``--sm90-fp8-args`` (128x256x128 tiles: a stage holds as many bytes as
128x256x64 of a 16-bit type); ``dsl-hopper`` runs dense_gemm.py with e4m3 (no scales: its C is
scaled before the check). The others have no fp8 version and are listed as skipped. The check's
second term is 2**-5 |ref|_max (the tensor cores' fp8 accumulation keeps fewer bits than f32)::

    python benchmarks/gemm.py --dtypes e4m3 --sizes 8192,4096 --only torch,sm90,dsl-hopper --dsl-orig DIR --rounds 3

For a row as accurate as the default ``torch._scaled_mm`` (``--scaled-mm-accum precise``), sm90 adds its
wgmma accumulators into f32 registers every few k-tiles (``--promote``; twice the accumulator registers,
so 128x128 tiles on two consumer warpgroups)::

    python benchmarks/gemm.py --dtypes e4m3 --sizes 8192,4096 --only torch,sm90 --scaled-mm-accum precise \
        --sm90-fp8-args="--ws --mma-wgs 2 --ctas 0 --tile 128,128,128 --stages 5 --promote 4" --rounds 3

``--sm90-variant ARGS``, given several times, times each sm90 configuration in its own row, all against the
size's torch row (they replace ``--sm90-args``), e.g. the TMA epilogue (the default), its undeferred form and the
copy-out epilogue before it (``--cluster-m 2`` adds clusters of two along M with B multicast)::

    python benchmarks/gemm.py --only torch,sm90 --sizes 4096,8192 --dtypes bf16 --rounds 2 \
        --sm90-variant="--ws --mma-wgs 2 --ctas 0 --tile 128,256,64 --stages 3" \
        --sm90-variant="--ws --mma-wgs 2 --ctas 0 --tile 128,256,64 --stages 3 --no-defer" \
        --sm90-variant="--ws --mma-wgs 2 --ctas 0 --tile 128,256,64 --stages 3 --epilogue smem"

cuBLAS's own shapes at these sizes (256x128x64 tiles, 4 stages, clusters of two along N) need the C buffer of
fewer columns (``--epi-cols``) to fit 4 stages::

    python benchmarks/gemm.py --only torch,sm90 --sizes 4096,8192 --dtypes bf16 --rounds 2 \
        --sm90-variant="--ws --mma-wgs 2 --ctas 0 --tile 128,256,64 --stages 3 --cluster-m 2" \
        --sm90-variant="--ws --mma-wgs 2 --ctas 0 --tile 256,128,64 --stages 4 --epi-cols 64 --cluster-n 2"

``--stream-k`` in a variant cuts the last partial wave's tiles along K over all SMs (sm90_gemm.py; the benchmark
makes its workspace once, outside the timed calls)::

    python benchmarks/gemm.py --only torch,sm90 --sizes 4096,8192 --dtypes bf16 --rounds 3 \
        --sm90-variant="--ws --mma-wgs 2 --ctas 0 --tile 128,256,64 --stages 4 --epi-cols 128 --cluster-m 2 --k-unroll 4" \
        --sm90-variant="--ws --mma-wgs 2 --ctas 0 --tile 128,256,64 --stages 4 --epi-cols 128 --cluster-m 2 --k-unroll 4 --stream-k"

``--rounds N`` runs the whole plan N times in a row (every program right after its own torch row, in
each round) and adds a table of medians over the rounds, each % taken against the round's torch row.

    python benchmarks/gemm.py --dsl-orig DIR [--sizes 8192,4096] [--dtypes bf16,f16]
                              [--only torch,sm90] [--json out.json]
    python benchmarks/gemm.py --dry-run [--nvcc]   # no GPU: cutelab's programs through the GPU
                                             # launch path under cutelab.kernel.cuda.fakegpu (nothing
                                             # runs; --nvcc: nvcc compiles each generated kernel)

Prints one JSON line per run, then a markdown table for benchmarks/RESULTS.md. Exit status: 0 all
measured rows pass, 1 some row failed, 2 nothing could be measured (no GPU, no torch).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import importlib.util
import json
import os
import shlex
import subprocess
import sys
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
# benchmarks/ holds a copy.py: keep it from shadowing the standard library's copy module
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != HERE]

PROGRAMS = ["torch", "dsl-ampere", "dsl-hopper", "cutelab-ampere", "sm80", "sm90"]
DSL_PROGRAMS = ("dsl-ampere", "dsl-hopper")
CUTELAB_PROGRAMS = ("cutelab-ampere", "sm80", "sm90")
DTYPES = ("bf16", "f16", "e4m3")
FP8 = ("e4m3",)
# the programs with an fp8 (e4m3) version: torch._scaled_mm, sm90_gemm.py (per-tensor scales in its epilogue) and
# CuTe DSL's Hopper dense_gemm.py (no scales: its C is A B^T, scaled by the check before the comparison)
FP8_PROGRAMS = ("torch", "dsl-hopper", "sm90")
# unit roundoff of the output types
UNIT_ROUNDOFF = {"bf16": 2.0 ** -8, "f16": 2.0 ** -11, "f32": 2.0 ** -24}


def _load(path: str, name: str) -> Any:
    """The module in the file at path (imported under name)."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"gemm.py: cannot import {path}")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def _dsl_examples() -> Any:
    return _load(os.path.join(HERE, "dsl_examples.py"), "_bench_dsl_examples")


def parse_list(text: str, allowed: Optional[Tuple[str, ...]] = None, what: str = "value") -> List[str]:
    """A comma-separated list; every item in allowed (when given).

    >>> parse_list("bf16, f16", DTYPES, "dtype")
    ['bf16', 'f16']
    """
    items = [x.strip() for x in text.split(",") if x.strip()]
    if not items:
        raise argparse.ArgumentTypeError(f"empty {what} list")
    if allowed is not None:
        bad = [x for x in items if x not in allowed]
        if bad:
            raise argparse.ArgumentTypeError(f"unknown {what} {', '.join(bad)} (choose from {', '.join(allowed)})")
    return items


def parse_sizes(text: str) -> List[Tuple[int, int, int]]:
    """``8192,4096`` (cubes) or ``8192x8192x4096`` items, comma-separated.

    >>> parse_sizes("8192,1024x2048x512")
    [(8192, 8192, 8192), (1024, 2048, 512)]
    """
    out = []
    for item in parse_list(text, what="size"):
        parts = item.lower().split("x")
        try:
            dims = [int(p) for p in parts]
        except ValueError:
            raise argparse.ArgumentTypeError(f"size {item!r}: expected N or MxNxK with integers") from None
        if len(dims) == 1:
            dims *= 3
        if len(dims) != 3 or min(dims) <= 0:
            raise argparse.ArgumentTypeError(f"size {item!r}: expected N or MxNxK with positive integers")
        out.append(tuple(dims))
    return out


def parse_clusters(text: str) -> List[Tuple[int, int]]:
    """``1x1,2x1``: CuTe DSL Hopper cluster shapes (M, N).

    >>> parse_clusters("1x1,2x1")
    [(1, 1), (2, 1)]
    """
    out = []
    for item in parse_list(text, what="cluster shape"):
        try:
            m, n = (int(p) for p in item.lower().split("x"))
        except ValueError:
            raise argparse.ArgumentTypeError(f"cluster shape {item!r}: expected MxN, e.g. 2x1") from None
        if (m, n) not in ((1, 1), (2, 1), (1, 2), (2, 2)):
            raise argparse.ArgumentTypeError(f"cluster shape {item!r}: dense_gemm.py takes 1x1, 2x1, 1x2 or 2x2")
        out.append((m, n))
    return out


def sm80_options(text: str) -> argparse.Namespace:
    """sm80_gemm.py's own flags for its configuration (``--bk``, ``--stages``)."""
    p = argparse.ArgumentParser(prog="--sm80-args", add_help=False)
    p.add_argument("--bk", type=int, default=64, choices=[32, 64])
    p.add_argument("--stages", type=int, default=3)
    return p.parse_args(shlex.split(text))


def sm90_options(text: str) -> argparse.Namespace:
    """sm90_gemm.py's own flags for its configuration (``--tile``, ``--stages``, ``--ctas``, ``--ws``,
    ``--mma-wgs``, ``--raster``, ``--epilogue``, ``--promote``, ``--pingpong``, ``--cluster-m``, ``--cluster-n``,
    ``--raster-m``, ``--epi-cols``, ``--k-unroll``, ``--stream-k``); ``--ctas 0`` means one CTA per SM."""
    p = argparse.ArgumentParser(prog="--sm90-args", add_help=False)
    p.add_argument("--tile", default="128,256,64", type=lambda s: tuple(int(x) for x in s.split(",")))
    p.add_argument("--stages", type=int, default=3)
    p.add_argument("--ctas", type=int, default=0)
    p.add_argument("--ws", action="store_true")
    p.add_argument("--mma-wgs", type=int, default=1)
    p.add_argument("--raster", type=int, default=4)
    p.add_argument("--epilogue", default="auto", choices=["auto", "regs", "smem", "tma"])
    p.add_argument("--no-defer", action="store_true")
    p.add_argument("--promote", type=int, default=0)
    p.add_argument("--pingpong", action="store_true")
    p.add_argument("--cluster-m", type=int, default=1, choices=[1, 2])
    p.add_argument("--cluster-n", type=int, default=1, choices=[1, 2])
    p.add_argument("--raster-m", action="store_true")
    p.add_argument("--epi-cols", type=int, default=0)
    p.add_argument("--k-unroll", type=int, default=0)
    p.add_argument("--stream-k", action="store_true")
    o = p.parse_args(shlex.split(text))
    if len(o.tile) != 3:
        p.error(f"--tile {o.tile}: expected bM,bN,bK")
    return o


def tolerance(c_dtype: str, ref_max: float, ab_dtype: str = "bf16") -> float:
    """Largest max |C - ref| accepted: two roundings of C's type at the largest |ref|, and f32
    accumulation in another order (2**-12 of the largest |ref|; a missing k-tile or a wrong
    layout errs by O(1)). fp8 inputs (ab_dtype e4m3): 2**-5 of the largest |ref| instead of 2**-12, for
    the tensor cores' fp8 accumulation, which keeps fewer bits than f32 (about 14; torch._scaled_mm's
    use_fast_accum=True has it too); a 128-wide k-tile left out of K = 8192 errs by about 1/8 of it.

    >>> tolerance("f32", 4.0) == 4.0 * (2 * 2.0 ** -24 + 2.0 ** -12)
    True
    >>> tolerance("bf16", 4.0, "e4m3") == 4.0 * (2 * 2.0 ** -8 + 2.0 ** -5)
    True
    """
    return ref_max * (2 * UNIT_ROUNDOFF[c_dtype] + (2.0 ** -5 if ab_dtype in FP8 else 2.0 ** -12))


# --------------------------------------------------------------------------- the child: one program

def _torch_dtype(name: str) -> Any:
    import torch

    return {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32, "e4m3": torch.float8_e4m3fn}[name]


def make_data(M: int, N: int, K: int, dtype: str, device: str, seed: int = 0) -> Tuple[Any, Any]:
    """A (M x K) and B (N x K) in dtype: normal / K**0.25, from one generator seeded with seed; fp8:
    normal, rounded to e4m3 (the per-tensor scales of fp8_scales bring C to about N(0, 1))."""
    import torch

    g = torch.Generator(device=device)
    g.manual_seed(seed)
    scale = 1.0 if dtype in FP8 else K ** -0.25
    a = (torch.randn(M, K, generator=g, device=device) * scale).to(_torch_dtype(dtype))
    b = (torch.randn(N, K, generator=g, device=device) * scale).to(_torch_dtype(dtype))
    return a, b


def fp8_scales(K: int, device: Any) -> Tuple[Any, Any]:
    """scale_a and scale_b of an fp8 GEMM: 1-element f32 tensors of K**-0.25 each, as torch._scaled_mm takes
    per-tensor scales (and sm90_gemm.py's epilogue applies them)."""
    import torch

    return (torch.full((1,), K ** -0.25, dtype=torch.float32, device=device),
            torch.full((1,), K ** -0.25, dtype=torch.float32, device=device))


class Runner:
    """One program ready to run: ``call()`` computes C into ``c`` (a torch tensor, M x N)."""

    def __init__(self, call: Callable[[], Any], c: Any, c_dtype: str, config: str, compile_s: Optional[float],
                 post_scale: Any = None):
        self.call, self.c, self.c_dtype, self.config, self.compile_s = call, c, c_dtype, config, compile_s
        self.post_scale = post_scale  # what C is multiplied by before the check (a program without fp8 scales)


# --dry-run: tensors are CPU tensors dressed as CUDA ones (cutelab.kernel.cuda.fakegpu); nothing executes
_FAKE = False


def _dev(t: Any) -> Any:
    """t as handed to a library: itself, or under --dry-run dressed as a CUDA tensor (views of a
    dressed tensor are plain CPU tensors again, which would send the launch to the interpreter)."""
    if not _FAKE:
        return t
    from cutelab.kernel.cuda.fakegpu import fake_cuda_tensor

    return fake_cuda_tensor(t)


def _new(shape: Tuple[int, ...], dtype: Any, like: Any) -> Any:
    """A zero tensor on like's device (on the CPU under --dry-run)."""
    import torch

    return torch.zeros(*shape, dtype=dtype, device="cpu" if _FAKE else like.device)


def _sm_count(t: Any) -> int:
    import torch

    return 132 if _FAKE else torch.cuda.get_device_properties(t.device).multi_processor_count


def _stream(mod: Any) -> Any:
    """The current torch stream as the example's own ``cuda.CUstream`` (the default stream under
    --dry-run)."""
    if _FAKE:
        return mod.cuda.CUstream(0)
    import torch

    return mod.cuda.CUstream(torch.cuda.current_stream().cuda_stream)


def build_torch(a: Any, b: Any, dtype: str, opts: argparse.Namespace, scales: Any = None) -> Runner:
    import torch

    bt = b.t()
    if dtype in FP8:  # cuBLASLt's fp8 GEMM: e4m3 A (row-major) x e4m3 B^T (column-major), per-tensor scales
        c = _new((a.shape[0], b.shape[0]), _torch_dtype(opts.fp8_c_dtype), a)
        sa, sb = scales
        fast = opts.scaled_mm_accum == "fast"
        return Runner(lambda: torch._scaled_mm(a, bt, scale_a=sa, scale_b=sb, out_dtype=c.dtype, use_fast_accum=fast,
                                               out=c),
                      c, opts.fp8_c_dtype, f"torch._scaled_mm, use_fast_accum={fast}", None)
    c = _new((a.shape[0], b.shape[0]), a.dtype, a)
    return Runner(lambda: torch.matmul(a, bt, out=c), c, dtype, "torch.matmul (cuBLAS), f32 reductions", None)


def build_tensorop(path: str, a: Any, b: Any, dtype: str, opts: argparse.Namespace) -> Runner:
    """CuTe DSL's Ampere tensorop_gemm.py (or cutelab's copy): its compile_bmm over (1, M, K) A,
    (1, K, N) B with K-major strides, (1, M, N) C."""
    mod = _load(path, "_bench_tensorop")
    M, K = a.shape
    N = b.shape[0]
    ab = mod.cutlass.BFloat16 if dtype == "bf16" else mod.cutlass.Float16
    c = _new((M, N), a.dtype, a)
    a3 = _dev(a.unsqueeze(0))                      # (1, M, K), K contiguous
    b3 = _dev(b.unsqueeze(0).permute(0, 2, 1))     # (1, K, N), K contiguous: b_major "k"
    c3 = _dev(c.unsqueeze(0))                      # (1, M, N), N contiguous
    a_, b_, c_ = mod.mark_dynamic_layout(a3, b3, c3, 2, 1, 2, ab, ab)
    atoms = (2, 2, 1)
    t0 = time.perf_counter()
    compiled = mod.compile_bmm((M, N, K, 1), a_, b_, c_, ab, ab, mod.cutlass.Float32, atoms)
    compile_s = time.perf_counter() - t0
    stream = _stream(mod)
    tile = "x".join(str(x) for x in mod.TensorOpGemm._CTA_TILER_FP16_BF16)
    return Runner(lambda: compiled(a_, b_, c_, stream), c, dtype,
                  f"tile {tile}, atoms 2x2x1, A/B K-major", compile_s)


def build_dsl_hopper(path: str, a: Any, b: Any, dtype: str, opts: argparse.Namespace,
                     cluster: Tuple[int, int], scales: Any = None) -> Runner:
    """CuTe DSL's Hopper dense_gemm.py: HopperWgmmaGemmKernel(f32, tile, cluster) over (M, K, 1),
    (N, K, 1), (M, N, 1) tensors with dynamic layouts, as the example's run() builds them."""
    import torch

    import cutlass.cute as dcute  # type: ignore
    from cutlass.cute.runtime import from_dlpack  # type: ignore

    mod = _load(path, "_bench_dense_gemm")
    M, K = a.shape
    N = b.shape[0]
    fp8 = dtype in FP8
    ab = {"bf16": mod.cutlass.BFloat16, "f16": mod.cutlass.Float16, "e4m3": mod.cutlass.Float8E4M3FN}[dtype]
    c_dtype = opts.fp8_c_dtype if fp8 else dtype
    cd = {"bf16": mod.cutlass.BFloat16, "f16": mod.cutlass.Float16, "f32": mod.cutlass.Float32}[c_dtype]
    c = torch.empty(M, N, dtype=_torch_dtype(c_dtype), device=a.device)

    def tensor(t: Any, dt: Any) -> Any:
        # (rows, cols, 1) with strides (cols, 1, rows * cols), as the example's run() permutes its
        # (l, rows, cols) tensors: the batch stride too is a multiple of 16 bytes, as TMA wants; fp8 as
        # the example passes it: the bytes (uint8), the element type set on the tensor
        x = from_dlpack((t.view(torch.uint8) if dt.width == 8 else t).unsqueeze(0).permute(1, 2, 0), assumed_align=16)
        if dt.width == 8:
            x.element_type = dt
        return x.mark_layout_dynamic(leading_dim=1)

    mA, mB, mC = tensor(a, ab), tensor(b, ab), tensor(c, cd)
    note = "; no scales (C = A B^T, scaled for the check)" if fp8 else ""
    check = getattr(mod.HopperWgmmaGemmKernel, "is_valid_dtypes", None)
    if check is not None and not check(ab, ab, mod.cutlass.Float32, cd, "k", "k"):
        note += f"; {dtype} -> {c_dtype} is outside the example's is_valid_dtypes (run through the class)"
    tile = tuple(opts.dsl_hopper_tile)
    gemm = mod.HopperWgmmaGemmKernel(mod.cutlass.Float32, tile, cluster)
    stream = _stream(mod)
    t0 = time.perf_counter()
    compiled = dcute.compile(gemm, mA, mB, mC, stream)
    compile_s = time.perf_counter() - t0
    return Runner(lambda: compiled(mA, mB, mC, stream), c, c_dtype,
                  f"tile {tile[0]}x{tile[1]}x{128 if fp8 else 64}, cluster {cluster[0]}x{cluster[1]}{note}", compile_s,
                  post_scale=scales[0] * scales[1] if fp8 else None)


def build_sm80(a: Any, b: Any, dtype: str, opts: argparse.Namespace) -> Runner:
    """examples/gemm/sm80_gemm.py: Sm80Gemm as its run() configures it, through cute.compile."""
    import cutelab as cute
    from cutelab.runtime import from_dlpack

    mod = _load(os.path.join(ROOT, "examples", "gemm", "sm80_gemm.py"), "_bench_sm80_gemm")
    o = sm80_options(opts.sm80_args)
    M, K = a.shape
    N = b.shape[0]
    if M % 128 or N % 128 or K % o.bk or K // o.bk < o.stages - 1:  # as sm80_gemm.run checks
        raise ValueError(f"sm80_gemm: M={M}, N={N} must be multiples of 128 and K={K} a multiple of {o.bk} "
                         f"with at least {o.stages - 1} k-tiles")
    c = _new((M, N), a.dtype, a)
    raster = 8 if (M // 128) % 8 == 0 else 1  # as sm80_gemm.run chooses
    gemm = mod.Sm80Gemm(ab_dtype=cute.BFloat16 if dtype == "bf16" else cute.Float16, raster=raster,
                        cta_tiler=(128, 128, o.bk), num_stages=o.stages)
    tA, tB, tC = (from_dlpack(_dev(x), assumed_align=16) for x in (a, b, c))
    t0 = time.perf_counter()
    compiled = cute.compile(gemm, tA, tB, tC)
    compile_s = time.perf_counter() - t0
    return Runner(lambda: compiled(tA, tB, tC), c, dtype,
                  f"tile 128x128x{o.bk}, {o.stages} stages, raster {raster}", compile_s)


def build_sm90(a: Any, b: Any, dtype: str, opts: argparse.Namespace, scales: Any = None) -> Runner:
    """examples/gemm/sm90_gemm.py: HopperGemm (C in the inputs' type, as torch.matmul writes it; fp8: C of
    --fp8-c-dtype and the per-tensor scales, as torch._scaled_mm) through ``cute.compile(gemm, mA, mB, mC[, sa,
    sb])`` (its @cute.jit __call__)."""
    import cutelab as cute
    from cutelab.runtime import from_dlpack

    import torch

    mod = _load(os.path.join(ROOT, "examples", "gemm", "sm90_gemm.py"), "_bench_sm90_gemm")
    fp8 = dtype in FP8
    o = sm90_options(opts.sm90_fp8_args if fp8 else opts.sm90_args)
    M, K = a.shape
    N = b.shape[0]
    ctas = o.ctas or _sm_count(a)
    c_dtype = opts.fp8_c_dtype if fp8 else dtype
    c = _new((M, N), _torch_dtype(c_dtype), a)
    ab = {"bf16": cute.BFloat16, "f16": cute.Float16, "e4m3": cute.Float8E4M3FN}[dtype]
    gemm = mod.HopperGemm(ab_dtype=ab, tile_mnk=o.tile, stages=o.stages, num_ctas=ctas, dynamic=True,
                          warp_specialized=o.ws, mma_warpgroups=o.mma_wgs, raster=o.raster, epilogue=o.epilogue,
                          promote=o.promote, pingpong=o.pingpong, defer_epilogue=not o.no_defer,
                          cluster_m=o.cluster_m, cluster_n=o.cluster_n, raster_m=o.raster_m,
                          epi_cols=o.epi_cols or None, k_unroll=o.k_unroll, stream_k=o.stream_k)
    config = (f"tile {'x'.join(map(str, o.tile))}, {o.stages} stages, {ctas} CTAs"
              + (f", warp-specialised, {o.mma_wgs} MMA warpgroups" if o.ws else ", one warpgroup")
              + f", raster {o.raster}, {gemm.epilogue_kind(c_dtype)} epilogue"
              + (f", accumulators promoted every {o.promote} k-tiles" if o.promote else "")
              + (", ping-pong" if o.pingpong else "")
              + (f", clusters of {o.cluster_m} along M (B multicast)" if o.cluster_m > 1 else "")
              + (f", clusters of {o.cluster_n} along N (A multicast)" if o.cluster_n > 1 else "")
              + (f", raster {o.raster} along M" if o.raster_m else "")
              + (f", C buffer of {o.epi_cols} columns" if o.epi_cols else "")
              + (f", k-loop unrolled {o.k_unroll}x" if o.k_unroll else "")
              + (", stream-K tail" if o.stream_k else ""))
    a, b, c_arg = _dev(a), _dev(b), _dev(c)
    args = [from_dlpack(x, assumed_align=16) for x in (a, b, c_arg)]
    if fp8:
        config += ", per-tensor scales"
        args += [from_dlpack(_dev(s)) for s in scales]
    elif o.stream_k:
        args += [None, None]  # (no scales)
    keep: Tuple[Any, ...] = ()
    if o.stream_k:  # partial sums and flags (zeros; every call leaves them so)
        (slots, floats), flags = mod.workspace_shape(gemm, M, N)
        keep = (_new((slots, floats), torch.float32, a), _new((flags,), torch.int32, a))
        args += [from_dlpack(_dev(x), assumed_align=16) for x in keep]
    t0 = time.perf_counter()
    compiled = cute.compile(gemm, *args)
    compile_s = time.perf_counter() - t0

    def call() -> Any:
        keep  # noqa: B018  (the stream-K workspace lives as long as the call)
        return compiled(*args)

    config += "; cute.compile"
    return Runner(call, c, c_dtype, config, compile_s)


def build(program: str, a: Any, b: Any, dtype: str, opts: argparse.Namespace,
          cluster: Optional[Tuple[int, int]] = None, scales: Any = None) -> Runner:
    if dtype in FP8 and program not in FP8_PROGRAMS:
        raise SystemExit(f"gemm.py: {program} has no {dtype} version (fp8: {', '.join(FP8_PROGRAMS)})")
    if program == "torch":
        return build_torch(a, b, dtype, opts, scales)
    if program == "dsl-ampere":
        return build_tensorop(os.path.join(opts.dsl_orig, "tensorop_gemm.py"), a, b, dtype, opts)
    if program == "dsl-hopper":
        return build_dsl_hopper(os.path.join(opts.dsl_orig, "dense_gemm.py"), a, b, dtype, opts, cluster or (1, 1),
                                scales)
    if program == "cutelab-ampere":
        return build_tensorop(os.path.join(ROOT, "examples", "dsl", "tensorop_gemm.py"), a, b, dtype, opts)
    if program == "sm80":
        return build_sm80(a, b, dtype, opts)
    if program == "sm90":
        return build_sm90(a, b, dtype, opts, scales)
    raise SystemExit(f"gemm.py: unknown program {program!r} (choose from {', '.join(PROGRAMS)})")


def child(program: str, mnk: Tuple[int, int, int], dtype: str, opts: argparse.Namespace,
          cluster: Optional[Tuple[int, int]]) -> int:
    """Run one program: build it, check its first result against torch, time it; print GEMM and
    BENCH lines for the parent."""
    sys.path.insert(0, os.path.join(ROOT, "src"))
    import torch

    M, N, K = mnk
    info: Dict[str, Any] = {"device": torch.cuda.get_device_name(), "torch": torch.__version__}
    if program in DSL_PROGRAMS:
        with contextlib.suppress(Exception):
            from importlib.metadata import version

            info["cutlass_dsl"] = version("nvidia-cutlass-dsl")
    # the reference: f32 products and sums (no TF32); torch's program: cuBLAS with f32 accumulation
    # throughout (no reduced-precision split-K reductions), as every other program accumulates
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
    a, b = make_data(M, N, K, dtype, "cuda", opts.seed)
    ref = a.float() @ b.float().t()
    scales = None
    if dtype in FP8:
        scales = fp8_scales(K, "cuda")
        ref *= scales[0] * scales[1]
    ref_max = ref.abs().max().item()
    r = build(program, a, b, dtype, opts, cluster, scales)
    r.call()
    torch.cuda.synchronize()
    got = r.c.float() if r.post_scale is None else r.c.float() * r.post_scale
    err = (got - ref).abs().max().item()
    del got
    tol = tolerance(r.c_dtype, ref_max, dtype)
    ok = err <= tol  # NaN fails
    print("GEMM " + json.dumps(dict(info, config=r.config, c_dtype=r.c_dtype, compile_s=r.compile_s,
                                    max_err=err, tol=tol, ref_max=ref_max, passed=ok)), flush=True)
    del ref
    if not ok:
        print(f"gemm.py: {program} {M}x{N}x{K} {dtype}: max |C - torch| = {err:.3g} > {tol:.3g}", flush=True)
        return 1
    timed = _dsl_examples()._timer(opts.singles)
    timed(r.call, warmup_iterations=opts.warmup, iterations=opts.iterations)
    return 0


# --------------------------------------------------------------------------- the dry path (no GPU)

def dry_run(programs: List[str], sizes: List[Tuple[int, int, int]], dtypes: List[str],
            opts: argparse.Namespace) -> List[Dict[str, Any]]:
    """cutelab's programs through the GPU launch path under a fake GPU (argument checks, bounds
    proofs, CUDA printing, parameter buffers; tensor maps from the fake driver): nothing
    executes, no result is checked. CuTe DSL's and torch's programs need a GPU: listed as skipped."""
    global _FAKE
    sys.path.insert(0, os.path.join(ROOT, "src"))
    from cutelab.kernel.cuda.fakegpu import fake_gpu

    rows = []
    _FAKE = True
    try:
        for mnk in sizes:
            for dtype in dtypes:
                for program, variant in ((p, v) for p in programs
                                         for v in ((opts.sm90_variant or [None]) if p == "sm90" else [None])):
                    row: Dict[str, Any] = {"program": program, "mnk": list(mnk), "dtype": dtype, "dry": True}
                    vopts = argparse.Namespace(**vars(opts))
                    if variant is not None:
                        row["variant"] = vopts.sm90_args = vopts.sm90_fp8_args = variant
                    if program not in CUTELAB_PROGRAMS:
                        row.update(ok=False, skipped=True, why="needs a GPU (skipped in --dry-run)")
                    elif dtype in FP8 and program not in FP8_PROGRAMS:
                        row.update(ok=False, skipped=True, why=f"no {dtype} version")
                    else:
                        t0 = time.perf_counter()
                        try:
                            with fake_gpu(nvcc=opts.nvcc) as gpu:
                                a, b = make_data(*mnk, dtype=dtype, device="cpu", seed=opts.seed)
                                scales = fp8_scales(mnk[2], "cpu") if dtype in FP8 else None
                                r = build(program, a, b, dtype, vopts, scales=scales)
                                r.call()
                                launches = len(gpu.driver.launches)
                            row.update(ok=True, config=r.config, launches=launches)
                        except Exception as e:  # noqa: BLE001 - reported per row
                            row.update(ok=False, why=f"{type(e).__name__}: {e}"[:400])
                        row["seconds"] = time.perf_counter() - t0
                    rows.append(row)
                    print(json.dumps(row), flush=True)
    finally:
        _FAKE = False
    return rows


# --------------------------------------------------------------------------- the parent

def run_child(cmd: List[str], env: Dict[str, str], timeout: int) -> Dict[str, Any]:
    """Run one child; its GEMM and BENCH lines, or why it failed."""
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, errors="replace", timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"ok": False, "why": f"timed out after {timeout} s"}
    return parse_child_output(p.stdout + p.stderr, p.returncode, time.perf_counter() - t0)


def parse_child_output(out: str, returncode: int, seconds: float = 0.0) -> Dict[str, Any]:
    """The child's GEMM and BENCH records; ok when it exited 0, passed its check and was timed.

    >>> r = parse_child_output('GEMM {"passed": true, "max_err": 0.01}\\nBENCH {"b2b_us": 100.0, '
    ...                        '"single_us": 120.0, "iterations": 10}\\n', 0)
    >>> r["ok"], r["b2b_us"]
    (True, 100.0)
    """
    res: Dict[str, Any] = {"seconds": seconds, "returncode": returncode}
    for line in out.splitlines():
        if line.startswith("GEMM "):
            res.update(json.loads(line[5:]))
        elif line.startswith("BENCH "):
            res.update(json.loads(line[6:]))
    res["ok"] = returncode == 0 and res.get("passed") is True and "b2b_us" in res
    if not res["ok"]:
        if res.get("passed") is False:
            res["why"] = f"max |C - torch| {res.get('max_err', float('nan')):.3g} > {res.get('tol', float('nan')):.3g}"
        else:
            lines = [x for x in out.strip().splitlines() if x.strip()]
            res["why"] = lines[-1][:300] if lines else f"exit {returncode}"
        res["tail"] = out[-3000:]
    return res


def tflops(mnk: List[int], us: Optional[float]) -> Optional[float]:
    """2 M N K / time, in TFLOP/s.

    >>> round(tflops([8192, 8192, 8192], 1375.0), 1)
    799.6
    """
    if not us or us <= 0:
        return None
    M, N, K = mnk
    return 2.0 * M * N * K / (us * 1e-6) / 1e12


def add_ratios(rows: List[Dict[str, Any]]) -> None:
    """Each row's TFLOP/s, and its share of its own torch row's: the torch row of the same size
    and input type run just before it (a size given twice is two pairs, each compared within)."""
    base: Dict[Tuple[Tuple[int, ...], str], Dict[str, Any]] = {}
    for r in rows:
        r["tflops_b2b"] = tflops(r["mnk"], r.get("b2b_us")) if r.get("ok") else None
        r["tflops_single"] = tflops(r["mnk"], r.get("single_us")) if r.get("ok") else None
    for r in rows:
        key = (tuple(r["mnk"]), r["dtype"])
        if r["program"] == "torch":
            base[key] = r if r.get("ok") else {}
        t = base.get(key)
        for k in ("b2b", "single"):
            mine, theirs = r.get(f"tflops_{k}"), t.get(f"tflops_{k}") if t else None
            r[f"pct_cublas_{k}"] = 100.0 * mine / theirs if mine and theirs else None


def markdown(rows: List[Dict[str, Any]]) -> str:
    """The table for benchmarks/RESULTS.md.

    >>> print(markdown([{"program": "torch", "mnk": [8, 8, 8], "dtype": "f16", "ok": False, "why": "exit 1"}]))
    | M x N x K | in | out | program | configuration | TFLOP/s back-to-back | TFLOP/s single launch | % of cuBLAS (b2b / single) | max \\|C - torch\\| | check |
    |---|---|---|---|---|---|---|---|---|---|
    | 8x8x8 | f16 | - | torch |  | - | - | - | - | failed: exit 1 |
    """
    def num(v: Any, fmt: str) -> str:
        return format(v, fmt) if isinstance(v, (int, float)) and v == v else "-"

    out = ["| M x N x K | in | out | program | configuration | TFLOP/s back-to-back | TFLOP/s single launch "
           "| % of cuBLAS (b2b / single) | max \\|C - torch\\| | check |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        pct = "-"
        if r.get("pct_cublas_b2b") is not None:
            pct = f"{num(r['pct_cublas_b2b'], '.1f')} / {num(r.get('pct_cublas_single'), '.1f')}"
        if r.get("ok"):
            check = "pass"
        elif r.get("skipped"):
            check = "skipped: " + r.get("why", "")
        elif r.get("passed") is False:
            check = "FAIL: " + r.get("why", "")
        else:
            check = "failed: " + r.get("why", "")
        check = check.replace("|", "\\|")
        out.append(f"| {'x'.join(map(str, r['mnk']))} | {r['dtype']} | {r.get('c_dtype', '-')} | {r['program']} | "
                   f"{r.get('config', '').replace('|', '/')} | {num(r.get('tflops_b2b'), '.1f')} | "
                   f"{num(r.get('tflops_single'), '.1f')} | {pct} | {num(r.get('max_err'), '.3g')} | {check} |")
    return "\n".join(out)


def summary(rows: List[Dict[str, Any]]) -> str:
    """The rounds' medians per size, input type, program and cluster (after add_ratios): TFLOP/s and the
    % of the round's own torch row, back to back and single launch, with the range of the % over the rounds.

    >>> rows = [dict(program=p, mnk=[8, 8, 8], dtype="e4m3", ok=True, b2b_us=us, single_us=us, round=r)
    ...         for r, (p, us) in enumerate([("torch", 2.0), ("sm90", 1.0), ("torch", 1.0), ("sm90", 1.0)]) ]
    >>> rows = [rows[0], rows[1], dict(rows[2], round=1), dict(rows[3], round=1)]
    >>> add_ratios(rows)
    >>> print(summary(rows).splitlines()[-1])
    | 8x8x8 | e4m3 | sm90 |  | 2 | 0.0 | 0.0 | 150.0 (100.0-200.0) | 150.0 (100.0-200.0) |
    """
    import statistics

    def med(vals: List[float], rng: bool = False) -> str:
        if not vals:
            return "-"
        m = f"{statistics.median(vals):.1f}"
        return m + (f" ({min(vals):.1f}-{max(vals):.1f})" if rng and len(vals) > 1 else "")

    out = ["| M x N x K | in | program | cluster | rounds ok | TFLOP/s b2b | TFLOP/s single | % of torch b2b (range) "
           "| % of torch single (range) |", "|---|---|---|---|---|---|---|---|---|"]
    def key_of(r: Dict[str, Any]) -> Tuple[Any, ...]:
        return tuple(r["mnk"]), r["dtype"], r["program"], tuple(r.get("cluster") or ()), r.get("variant")

    keys = dict.fromkeys(key_of(r) for r in rows if not r.get("skipped"))
    for key in keys:
        g = [r for r in rows if key_of(r) == key and r.get("ok")]
        vals = {k: [r[k] for r in g if r.get(k) is not None]
                for k in ("tflops_b2b", "tflops_single", "pct_cublas_b2b", "pct_cublas_single")}
        prog = key[2] + (f" `{key[4]}`" if key[4] else "")
        out.append(f"| {'x'.join(map(str, key[0]))} | {key[1]} | {prog} | {'x'.join(map(str, key[3]))} | {len(g)} | "
                   f"{med(vals['tflops_b2b'])} | {med(vals['tflops_single'])} | {med(vals['pct_cublas_b2b'], True)} | "
                   f"{med(vals['pct_cublas_single'], True)} |")
    return "\n".join(out)


def exit_status(rows: List[Dict[str, Any]]) -> int:
    """0: every row measured and passed; 1: some row failed; 2: nothing was measured.

    >>> exit_status([{"ok": True}, {"ok": False, "skipped": True}]), exit_status([{"ok": False, "skipped": True}])
    (0, 2)
    """
    ran = [r for r in rows if not r.get("skipped")]
    if not any(r.get("ok") for r in ran):
        return 2 if all(r.get("skipped") for r in rows) or not ran else 1
    return 0 if all(r.get("ok") for r in ran) else 1


def make_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dsl-orig", help="folder with CuTe DSL's original tensorop_gemm.py and dense_gemm.py")
    ap.add_argument("--dsl-python", default=sys.executable,
                    help="the Python that runs CuTe DSL's programs (default: this one)")
    ap.add_argument("--only", default=",".join(PROGRAMS), type=lambda s: parse_list(s, tuple(PROGRAMS), "program"),
                    help="comma-separated programs: " + ", ".join(PROGRAMS))
    ap.add_argument("--sizes", default="8192,4096", type=parse_sizes, help="N (N^3) or MxNxK, comma-separated")
    ap.add_argument("--dtypes", default="bf16,f16", type=lambda s: parse_list(s, DTYPES, "dtype"))
    ap.add_argument("--dsl-hopper-clusters", default="1x1,2x1", type=parse_clusters,
                    help="cluster shapes for dense_gemm.py, one row each")
    ap.add_argument("--dsl-hopper-tile", default=(128, 256), type=lambda s: tuple(int(x) for x in s.split(",")),
                    help=argparse.SUPPRESS)
    ap.add_argument("--sm80-args", default="--bk 64 --stages 3",
                    help="sm80_gemm.py's flags (--bk, --stages); write --sm80-args='--bk 32'")
    # the defaults: the fastest configurations over three rounds on an H200 (RESULTS.md, 2026-11-28 15:17-15:27 UTC)
    ap.add_argument("--sm90-args", default="--ws --mma-wgs 2 --ctas 0 --tile 128,256,64 --stages 4 --epi-cols 128 "
                                           "--cluster-m 2 --k-unroll 4",
                    help="sm90_gemm.py's flags (--tile, --stages, --ctas [0: one per SM], --ws, --mma-wgs); "
                         "write --sm90-args='--ws --stages 4'")
    ap.add_argument("--sm90-variant", action="append", default=None, metavar="ARGS",
                    help="an sm90 configuration to time, as --sm90-args takes it (--sm90-fp8-args for e4m3 rows); "
                         "give it several times for one sm90 row each, right after the size's torch row (they "
                         "replace --sm90-args / --sm90-fp8-args)")
    ap.add_argument("--sm90-fp8-args", default="--ws --mma-wgs 2 --ctas 0 --tile 128,256,128 --stages 4 --epi-cols 128 "
                                               "--cluster-m 2 --k-unroll 4",
                    help="sm90_gemm.py's flags for e4m3 rows (bK 128: 128-byte k-tile rows, as bK 64 for 16-bit types; "
                         "the default's 128-column C buffer takes a 16-bit C: for --fp8-c-dtype f32 give one without "
                         "--epi-cols and with --stages 3)")
    ap.add_argument("--fp8-c-dtype", default="bf16", choices=["bf16", "f16", "f32"],
                    help="C's type in the e4m3 rows (torch._scaled_mm's out_dtype)")
    ap.add_argument("--scaled-mm-accum", default="fast", choices=["fast", "precise"],
                    help="the e4m3 torch row: torch._scaled_mm(use_fast_accum=True), the tensor cores' fp8 accumulation "
                         "as sm90_gemm.py has it (default), or False (cuBLAS promotes the sums to f32 now and then)")
    ap.add_argument("--rounds", type=int, default=1,
                    help="run the whole plan this many times, one round after another (each program alternating with "
                         "its torch row); a summary table gives each row's median over the rounds")
    ap.add_argument("--iterations", type=int, default=100, help="back-to-back calls")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--singles", type=int, default=20, help="single launches (median)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=int, default=300, help="seconds per program run")
    ap.add_argument("--json", help="write the rows here")
    ap.add_argument("--dry-run", action="store_true",
                    help="no GPU: cutelab's programs through the launch path under a fake GPU")
    ap.add_argument("--nvcc", nargs="?", const="nvcc", default=None, metavar="PATH",
                    help="with --dry-run: also compile each generated kernel with nvcc (checks the CUDA)")
    ap.add_argument("--child", nargs=4, metavar=("PROGRAM", "MNK", "DTYPE", "CLUSTER"), help=argparse.SUPPRESS)
    return ap


def plan(opts: argparse.Namespace) -> List[Dict[str, Any]]:
    """The runs, in order: per size and input type, torch first (the % column's base)."""
    runs = []
    for mnk in opts.sizes:
        for dtype in opts.dtypes:
            for program in PROGRAMS:
                if program not in opts.only:
                    continue
                clusters = opts.dsl_hopper_clusters if program == "dsl-hopper" else [None]
                variants = (opts.sm90_variant or [None]) if program == "sm90" else [None]
                for cl in clusters:
                    for v in variants:
                        run = {"program": program, "mnk": list(mnk), "dtype": dtype, "cluster": list(cl) if cl else None}
                        if v is not None:
                            run["variant"] = v
                        runs.append(run)
    return runs


def child_command(run: Dict[str, Any], opts: argparse.Namespace) -> List[str]:
    python = opts.dsl_python if run["program"] in DSL_PROGRAMS else sys.executable
    cl = "x".join(map(str, run["cluster"])) if run["cluster"] else "-"
    cmd = [python, os.path.abspath(__file__), "--child", run["program"], "x".join(map(str, run["mnk"])),
           run["dtype"], cl, "--iterations", str(opts.iterations), "--warmup", str(opts.warmup),
           "--singles", str(opts.singles), "--seed", str(opts.seed), "--sm80-args=" + opts.sm80_args,
           "--sm90-args=" + run.get("variant", opts.sm90_args),
           "--sm90-fp8-args=" + run.get("variant", opts.sm90_fp8_args), "--fp8-c-dtype",
           opts.fp8_c_dtype, "--scaled-mm-accum", opts.scaled_mm_accum,
           "--dsl-hopper-tile", ",".join(map(str, opts.dsl_hopper_tile))]
    if opts.dsl_orig:
        cmd += ["--dsl-orig", os.path.abspath(opts.dsl_orig)]
    return cmd


def skip_reason(program: str, opts: argparse.Namespace, have: Dict[str, Optional[str]],
                dtype: Optional[str] = None) -> Optional[str]:
    """Why a program cannot be measured here (None: it can)."""
    if dtype in FP8 and program not in FP8_PROGRAMS:
        return f"no {dtype} version"
    if have.get("gpu"):
        return have["gpu"]
    if program in DSL_PROGRAMS:
        if not opts.dsl_orig:
            return "no --dsl-orig folder"
        f = "tensorop_gemm.py" if program == "dsl-ampere" else "dense_gemm.py"
        if not os.path.exists(os.path.join(opts.dsl_orig, f)):
            return f"no {f} in {opts.dsl_orig}"
        if have.get("dsl"):
            return have["dsl"]
    return None


def probe(opts: argparse.Namespace) -> Dict[str, Optional[str]]:
    """What is missing: a CUDA GPU for torch (key gpu), CuTe DSL (key dsl); None where present."""
    have: Dict[str, Optional[str]] = {"gpu": None, "dsl": None}
    try:
        import torch

        if not torch.cuda.is_available():
            have["gpu"] = "no CUDA GPU (torch.cuda.is_available() is False)"
    except ImportError:
        have["gpu"] = "torch is not installed"
    if any(p in DSL_PROGRAMS for p in opts.only) and opts.dsl_orig:
        p = subprocess.run([opts.dsl_python, "-c", "import cutlass.cute"], capture_output=True, text=True)
        if p.returncode != 0:
            have["dsl"] = f"CuTe DSL is not importable by {opts.dsl_python}"
    return have


def main(argv: Optional[List[str]] = None) -> int:
    opts = make_parser().parse_args(argv)
    if opts.child:
        program, mnk, dtype, cl = opts.child
        cluster = tuple(int(x) for x in cl.split("x")) if cl != "-" else None
        return child(program, tuple(int(x) for x in mnk.split("x")), dtype, opts, cluster)
    if opts.dry_run:
        rows = dry_run(opts.only, opts.sizes, opts.dtypes, opts)
        print()
        print("| M x N x K | in | program | dry run (fake GPU: traced, printed, launched; nothing executed) |")
        print("|---|---|---|---|")
        for r in rows:
            what = f"ok: {r['config']} ({r['seconds']:.1f} s)" if r.get("ok") else r.get("why", "")
            print(f"| {'x'.join(map(str, r['mnk']))} | {r['dtype']} | {r['program']} | {what} |")
        tried = [r for r in rows if r["program"] in CUTELAB_PROGRAMS]
        return 0 if tried and all(r["ok"] for r in tried) else (2 if not tried else 1)

    have = probe(opts)
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    env["PYTHONPATH"] = os.path.join(ROOT, "src") + os.pathsep + env.get("PYTHONPATH", "")
    rows = []
    notes = []
    if opts.dsl_orig:
        ours = os.path.join(ROOT, "examples", "dsl", "tensorop_gemm.py")
        theirs = os.path.join(opts.dsl_orig, "tensorop_gemm.py")
        if os.path.exists(theirs):
            bad = _dsl_examples().import_only_diff(open(ours).read(), open(theirs).read())
            notes.append(f"examples/dsl/tensorop_gemm.py: lines differing from CuTe DSL's beyond imports: {len(bad)}")
            print(notes[-1] + "".join("\n    " + b for b in bad), flush=True)
    for rnd, run in ((rnd, run) for rnd in range(max(1, opts.rounds)) for run in plan(opts)):
        why = skip_reason(run["program"], opts, have, run["dtype"])
        if why and rnd:
            continue  # listed once, in the first round
        if why:
            r = dict(run, ok=False, skipped=True, why=why)
        else:
            r = dict(run, **run_child(child_command(run, opts), env, opts.timeout))
        if opts.rounds > 1:
            r["round"] = rnd
        rows.append(r)
        print(json.dumps({k: (round(v, 4) if isinstance(v, float) else v) for k, v in r.items() if k != "tail"}),
              flush=True)
        if not r.get("ok") and "tail" in r:
            print(r["tail"][-1500:], flush=True)
    add_ratios(rows)
    skipped = sorted({r["why"] for r in rows if r.get("skipped")})
    device = next((r["device"] for r in rows if r.get("device")), None)
    dsl = next((r["cutlass_dsl"] for r in rows if r.get("cutlass_dsl")), None)
    torch_v = next((r["torch"] for r in rows if r.get("torch")), None)
    print()
    print(f"GEMM, C = A B^T, A and B K-major, f32 accumulation; {device or 'no GPU'}; "
          f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d}; torch {torch_v or '-'}; "
          f"nvidia-cutlass-dsl {dsl or '-'}")
    print()
    print(markdown(rows))
    if opts.rounds > 1:
        print(f"\nMedians over {opts.rounds} rounds (each round's row against that round's torch row):\n")
        print(summary(rows))
    for why in skipped:
        print(f"\nskipped: {why}")
    for n in notes:
        print(f"\n{n}")
    if opts.json:
        with open(opts.json, "w") as fh:
            json.dump(rows, fh, indent=1)
    return exit_status(rows)


if __name__ == "__main__":
    sys.exit(main())
