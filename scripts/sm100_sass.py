"""The CUDA cutelab prints for CUTLASS's Blackwell programs, compiled for sm_100a, and the SASS it
becomes: a check that runs on any machine with NVRTC (or nvcc), no Blackwell GPU needed.

    PYTHONPATH=$PWD/src python scripts/sm100_sass.py [--out DIR] [--nvcc] [--only TEXT]

Each program of tests/blackwell/programs (the FMHA forward in its CUTLASS folders there, beside the helpers/
package it imports) runs unchanged on the CPU interpreter
(``CUTE_DSL_ARCH=sm_100a``, ``CUTELAB_INTERPRET=1``) at a small size; the last kernel it launched
(or the one a case names) is printed as CUDA and compiled for sm_100a by NVRTC (``--nvcc``: by nvcc). Where ``cuobjdump``
is installed, its SASS is read and the instructions of each family counted: UMMA (UTC*MMA),
tensor-memory loads and stores (LDTM, STTM), their allocation (UTCATOMSWS and friends), TMA loads
and stores (UTMALDG, UTMASTG), wgmma (HGMMA: must be none), cp.async (LDGSTS), st.async (STAS). A program
whose CUDA does not compile, or whose SASS lacks the UMMA or the tensor-memory loads (a GEMM), the TMA
instructions (the TMA tutorials) or what REQUIRED names (rmsnorm: cp.async), is reported as FAILED (exit
status 1).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROGRAMS = ROOT / "tests" / "blackwell" / "programs"

CASES = [
    ("fp16_gemm_0.py", ["--mnk", "128,256,64"]),
    ("fp16_gemm_1.py", ["--mnk", "256,256,64"]),
    ("fp16_gemm_2.py", ["--mnk", "256,256,64"]),
    ("fp16_gemm_3.py", ["--mnk", "256,256,64"]),
    ("dense_gemm.py", ["--mnkl", "128,256,64,1", "--ab_dtype", "Float16", "--c_dtype", "Float16"]),
    ("dense_gemm.py", ["--mnkl", "256,128,64,1", "--ab_dtype", "Float16", "--c_dtype", "Float16",
                       "--use_2cta_instrs", "--mma_tiler_mn", "256,128", "--cluster_shape_mn", "2,1"]),
    ("fp16_gemm_3_1.py", ["--mnk", "512,256,64"]),  # the CLC dynamic persistent scheduler
    ("fp16_gemm_4.py", ["--mnk", "256,1024,64"]),  # preferred clusters (2x4)
    ("fp16_gemm_5.py", ["--mnk", "512,128,64"]),  # TMA prefetch, 2x2 clusters
    ("fp16_gemm_6.py", ["--mnk", "256,256,128"]),  # PDL: the GEMM (its last kernel)
    ("dense_gemm_persistent.py", ["--mnkl", "256,256,128,2", "--mma_tiler_mn", "256,128", "--cluster_shape_mn", "2,1",
                                  "--use_2cta_instrs", "--use_tma_store", "--ab_dtype", "Float16", "--c_dtype",
                                  "Float16"]),
    ("dense_gemm_persistent_dynamic.py", ["--mnkl", "512,256,128,1", "--mma_tiler_mn", "256,128", "--cluster_shape_mn",
                                          "2,1", "--use_2cta_instrs", "--use_tma_store", "--ab_dtype", "Float16",
                                          "--c_dtype", "Float16"]),
    ("tma_v1.py", ["--M", "256", "--N", "256", "--num_warmup", "1", "--num_iters", "1"]),
    ("tma_v2.py", ["--M", "256", "--N", "256", "--num_warmup", "1", "--num_iters", "1"]),
    # 8-bit operands: UMMA kind::f8f6f4 and kind::i8
    ("dense_gemm.py", ["--mnkl", "128,128,128,1", "--ab_dtype", "Float8E4M3FN", "--c_dtype", "Float16"]),
    ("dense_gemm.py", ["--mnkl", "128,128,128,1", "--ab_dtype", "Int8", "--acc_dtype", "Int32", "--c_dtype", "Int32"]),
    # cluster split-K: CTAs along the cluster's z reduce their accumulators through DSMEM
    ("dense_gemm_persistent_dynamic.py", ["--mnkl", "128,128,128,1", "--mma_tiler_mn", "128,128", "--cluster_shape_mn",
                                          "1,1", "--cluster_split_k", "2", "--ab_dtype", "Float16", "--c_dtype",
                                          "Float16"]),
    # rmsnorm (and the reduce.py it imports): cp.async, no UMMA; N = 32K gives 2-CTA clusters (mapa, st.async)
    ("cute/blackwell/kernel/rmsnorm/rmsnorm.py", ["--M", "4", "--N", "256"]),
    ("cute/blackwell/kernel/rmsnorm/rmsnorm.py", ["--M", "3", "--N", "32768"]),
    # NVFP4: TMA of packed e2m1 (16U4_ALIGN8B) and of the scale factors, tcgen05.cp, UMMA kind::mxf4nvf4
    ("cute/blackwell/tutorial/tutorial_gemm/nvfp4_gemm_0.py", ["--mnkl", "128,256,256,1"]),
    # 2-CTA block-scaled UMMA in a 2x1 cluster: tcgen05.cp and tcgen05.mma of cta_group::2, multicast scale factors
    ("cute/blackwell/tutorial/tutorial_gemm/nvfp4_gemm_1.py", ["--mnkl", "256,256,256,1"]),
    # CUTLASS's block-scaled persistent GEMM (nvfp4): cute.gemm with [A, SFA], [B, SFB]
    ("dense_blockscaled_gemm_persistent.py", ["--mnkl", "128,128,256,1", "--mma_tiler_mn", "128,128",
                                              "--cluster_shape_mn", "1,1"]),
    # mxf8 (e4m3 A and B) with Float8E8M0FNU scale factors per 32: UMMA kind::mxf8f6f4.block_scale
    ("dense_blockscaled_gemm_persistent.py", ["--mnkl", "128,128,256,1", "--a_dtype", "Float8E4M3FN", "--b_dtype",
                                              "Float8E4M3FN", "--sf_dtype", "Float8E8M0FNU", "--sf_vec_size", "32"]),
    # nvfp4 with Float8E8M0FNU scale factors, and the epilogue's amax of C
    ("dense_blockscaled_gemm_persistent_amax.py", ["--mnkl", "128,128,256,1"]),
    # L2 prefetches of A, B and their scale factors (a TmaRunsAtom's boxes) before and inside the main loop
    ("dense_blockscaled_gemm_persistent_prefetch.py", ["--mnkl", "128,128,768,1", "--mma_tiler_mn", "128,128",
                                                       "--cluster_shape_mn", "1,1", "--prefetch_dist", "1"]),
    # TMA prefetches; tf32 atoms over f32 tensors
    ("dense_gemm_persistent_prefetch.py", ["--mnkl", "256,256,128,1", "--mma_tiler_mn", "128,128",
                                           "--cluster_shape_mn", "1,1"]),
    # the mixed-input GEMM: Int4 A converted and scaled to bf16 by transform warps, into smem (M-major A) or tensor
    # memory (K-major A: tcgen05.st, then UMMA with A from TMEM), its helpers in cutlass.utils.mixed_input_helpers
    ("cute/blackwell/kernel/mixed_input_gemm/mixed_input_gemm.py", ["--mnkl", "128,128,128,1"]),
    ("cute/blackwell/kernel/mixed_input_gemm/mixed_input_gemm.py", ["--mnkl", "128,128,128,1", "--a_major", "k",
                                                                  "--use_tma_store"]),
    # the grouped mixed-input GEMM: a scheduler warp's while on a Boolean flag, B's tile moved along N from its TMA
    # tensor's iterator (coordinates), a predicated SIMT epilogue across group bounds
    ("cute/blackwell/kernel/mixed_input_gemm/grouped_mixed_input_gemm.py", ["--mnkl", "128,128,256,3"]),
    # the blockwise-scaled FP8 GEMM: the accumulator scaled per subtile into a register fragment at a runtime loop's
    # index (kernel/frontend/rmem_index.py: selects)
    ("cute/blackwell/kernel/blockwise_gemm/blockwise_gemm.py", ["--mnkl", "128,128,256,1"]),
    # the mixed-input FMHA decode (its decode kernel, launched before the reduction of its splits): ldmatrix
    # .m16n16.trans.b8 of V, tcgen05.st 16x256b of the converted K and V, UMMA with A from tensor memory
    ("cute/blackwell/kernel/attention/mixed_input_fmha/mixed_input_fmha_decode.py", ["--seqlen", "256", "--heads_q",
     "8", "--heads_k", "1", "--headdim", "128", "--block_scaledim", "128", "--kv_splits", "2"], "decode"),
    # the MoE grouped GEMM: its first kernel builds a TMA descriptor per expert (the template tensor map of the
    # argument, copied into the workspace, then tensormap.replace of address, extents and strides); the GEMM's TMA
    # copies go through them (the forward's C stores, the weight gradient's A and B loads)
    ("cute/blackwell/kernel/moe/torch_grouped_mm.py", ["--tokens", "15", "--top_k_select", "2", "--experts", "4",
     "--balance_route", "--hidden", "128", "--intermediate", "128"]),
    ("cute/blackwell/kernel/moe/torch_grouped_mm.py", ["--scenario", "2Dx2D", "--tokens", "8", "--top_k_select", "1",
     "--experts", "4", "--balance_route", "--hidden", "128", "--intermediate", "128"]),
    ("cute/blackwell/kernel/moe/torch_grouped_mm.py", ["--scenario", "2Dx2D", "--tokens", "8", "--top_k_select", "1",
     "--experts", "4", "--balance_route", "--hidden", "128", "--intermediate", "128"], "desc_init_kernel"),
    # the FMHA forward: UMMA with A (P) from tensor memory, tcgen05.ld/st of S, P and O, TMA loads and store
    ("cute/blackwell/kernel/attention/fmha/fmha.py", ["--q_shape", "1,128,1,32", "--k_shape", "1,256,1,32",
                                                     "--is_causal", "--bottom_right_align"]),
    # the mixed-input FMHA prefill (int8 K/V dequantised to bf16 by transform warps): 2-CTA UMMAs in a 2x1 cluster,
    # P*V with A (P) from each CTA's tensor memory (tcgen05.mma.cta_group::2 with a TMEM A operand)
    ("cute/blackwell/kernel/attention/mixed_input_fmha/mixed_input_fmha_prefill_d256.py",
     ["--q_shape", "1,1,128,256", "--k_shape", "1,1,384,256"]),
    # head dim 512: half of O swapped out of S's columns and back by tcgen05.ld/st, each thread its own lane
    ("cute/blackwell/kernel/attention/mixed_input_fmha/mixed_input_fmha_prefill_d512.py",
     ["--q_shape", "1,1,128,512", "--k_shape", "1,1,256,512"]),
    # Mamba2 SSD: tf32 UMMAs over f32 tensors, tcgen05.ld 16x256b of its accumulators, tcgen05.st 32x32b of f16 values
    ("cute/blackwell/kernel/attention/mamba2_ssd/mamba2_ssd.py", ["--gbehcdln", "1,2,1,2,2,64,128,128",
                                                                 "--no-print_rtol_stats"]),
    # MLA decode (its split-KV kernel, launched before the reduction): a tile scheduler over cute.arch.grid_dim()
    # (gridDim at run time), UMMA k-blocks at a runtime index inside the swizzle atom, fp16 and fp8 (e4m3) Q/K/V
    ("cute/blackwell/kernel/attention/mla/mla_decode_fp16.py", ["--batch_size", "1", "--seq_len_k", "128",
                                                              "--num_heads", "128"], "split_kv_kernel"),
    ("cute/blackwell/kernel/attention/mla/mla_decode_fp8.py", ["--batch_size", "1", "--seq_len_k", "128",
                                                             "--num_heads", "128"], "split_kv_kernel"),
]

# what a program's SASS must hold, where it is not a GEMM (UMMA, tensor-memory loads) or a TMA tutorial (TMA)
REQUIRED = {"rmsnorm.py": ("cp.async",),
            "desc_init_kernel": ()}  # (a kernel a case names) the MoE GEMM's descriptors: built, no TMA through them

# SASS opcode families (the opcode's first word, matched at its start)
FAMILIES = {
    "UMMA": r"UTC[A-Z]*MMA",
    "TMEM ld/st": r"(LDTM|STTM)",
    "TMEM alloc/commit": r"UTC(ATOMSWS|BAR|CCP|SHIFT)",
    "TMA": r"UTMA(LDG|STG|CCTL|PF)",
    "wgmma (none expected)": r"HGMMA",
    "cp.async": r"LDGSTS",
    "st.async": r"STAS",
}

_RENDER = """
import os, sys
import cutelab.kernel.launch.api as api
import cutelab.kernel.launch.plan as plan
from cutelab.compat.run import main
want = os.environ.get("SM100_SASS_KERNEL")  # a kernel launched before the last (the FMHA decode, then its reduction)
seen = {}
prepare = plan._prepare


def _record(*a, **k):
    got = prepare(*a, **k)
    seen.setdefault(got[0].ir.name, got[0].ir)
    return got


api._prepare = _record
out = sys.argv[-1]
try:
    main(sys.argv[1:-1])
except SystemExit as e:
    assert not e.code, e.code
from cutelab.kernel.launch.plan import last_launch
from cutelab.kernel.cuda import printer
ir = seen[want] if want else last_launch().ir
open(out, "w").write(printer.render(ir))
open(out + ".name", "w").write(ir.name)
"""


def render(prog: str, args: list, out: Path, kernel: str = "") -> str:
    env = dict(os.environ, CUTE_DSL_ARCH="sm_100a", CUTELAB_INTERPRET="1", SM100_SASS_KERNEL=kernel,
               PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-c", _RENDER, str(PROGRAMS / prog), *args, str(out)], capture_output=True,
                       text=True, env=env, timeout=600, cwd=str(PROGRAMS))
    if p.returncode != 0:
        raise RuntimeError(f"{prog} did not run on the CPU interpreter:\n{p.stderr[-3000:]}")
    return Path(str(out) + ".name").read_text()


def compile_sm100(src: Path, name: str, cubin: Path, nvcc: bool) -> str:
    if nvcc:
        c = subprocess.run(["nvcc", "-arch=sm_100a", "-cubin", "-o", str(cubin), str(src)], capture_output=True,
                           text=True)
        if c.returncode != 0:
            raise RuntimeError(c.stderr[-3000:])
        return "nvcc"
    from cutelab.kernel.cuda.nvrtc import compile_cuda

    res = compile_cuda(src.read_text(), name, "sm_100a", use_cache=False)
    cubin.write_bytes(res.cubin)
    return "NVRTC"


def sass_counts(cubin: Path) -> dict:
    tool = shutil.which("cuobjdump")
    if tool is None:
        return {}
    s = subprocess.run([tool, "-sass", str(cubin)], capture_output=True, text=True, check=True).stdout
    ops = re.findall(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)", s)
    out = {fam: sum(1 for o in ops if re.match(rx, o)) for fam, rx in FAMILIES.items()}
    out["all"] = len(ops)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", help="keep the .cu and .cubin files here")
    ap.add_argument("--nvcc", action="store_true", help="compile with nvcc instead of NVRTC")
    ap.add_argument("--only", help="only the cases whose program path contains this text (e.g. fmha)")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(args.out or tmp)
        d.mkdir(parents=True, exist_ok=True)
        print("| program | arguments | compiler | SASS instructions | " + " | ".join(FAMILIES) + " | result |")
        print("|---|---|---|---|" + "---|" * len(FAMILIES) + "---|")
        for i, (prog, pargs, *kernel) in enumerate(CASES):
            if args.only and args.only not in prog:
                continue
            stem = f"{i}_{Path(prog).stem}"
            try:
                name = render(prog, pargs, d / f"{stem}.cu", *kernel)
                how = compile_sm100(d / f"{stem}.cu", name, d / f"{stem}.cubin", args.nvcc)
                counts = sass_counts(d / f"{stem}.cubin")
            except (RuntimeError, subprocess.SubprocessError, OSError) as e:
                failed += 1
                print(f"| {prog} | {' '.join(pargs)} | - | - |" + " - |" * len(FAMILIES) + " FAILED |")
                print(str(e), file=sys.stderr)
                continue
            if kernel and kernel[0] in REQUIRED:
                want = all(counts.get(f, 0) > 0 for f in REQUIRED[kernel[0]])
            elif Path(prog).name in REQUIRED:
                want = all(counts.get(f, 0) > 0 for f in REQUIRED[Path(prog).name])
            elif "gemm" in prog or "fmha" in prog or "grouped_mm" in prog:  # GEMMs, attention: UMMA and tensor-memory loads; TMA tutorials: TMA
                want = counts.get("UMMA", 0) > 0 and counts.get("TMEM ld/st", 0) > 0
            else:
                want = counts.get("TMA", 0) > 0
            ok = not counts or (want and counts["wgmma (none expected)"] == 0)
            failed += not ok
            cells = [str(counts.get(f, "?")) for f in FAMILIES]
            print(f"| {prog} | {' '.join(pargs)} | {how} | {counts.get('all', 'no cuobjdump')} | " + " | ".join(cells)
                  + f" | {'compiled' if not counts else 'ok' if ok else 'FAILED'} |")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
