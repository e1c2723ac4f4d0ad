#!/usr/bin/env python3
"""Record what CuTe C++ ``print_latex`` writes for a few TiledMMAs and TiledCopys.

CuTe DSL has no picture of a TiledMMA or a TiledCopy (its ``print_latex`` draws layouts and
TV layouts only), so the reference for cutelab's MMA and copy pictures is CuTe C++:
``include/cute/util/print_latex.hpp``.  This script writes a small host-only C++ program,
compiles it with nvcc against the CUTLASS headers, runs it once per case, and stores

    tests/render/golden/cute_print_latex.json =
      {"cutlass_commit": ..., "cases": {NAME: {"kind": "mma", "tile": [M, N, K],
                                               "C": "<TV layout>", "A": ..., "B": ..., "latex": "<output>"}
                                             | {"kind": "copy", "tile": [M, N], "S": ..., "D": ..., "latex": ...}}}

The layouts are CuTe's ``get_layoutC_TV()`` etc. (``(thr,val) -> index`` into the column-major
tile); ``latex`` is the full ``print_latex`` document.  The tests feed the layouts to cutelab's
builders and compare the LaTeX line by line (fill colours aside).

How to run (needs nvcc and the CUTLASS mirror; no GPU):
    python3 scripts/make_cute_latex_golden.py [--cutlass /work/.mirror/NVIDIA+cutlass/repo]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "tests", "render", "golden", "cute_print_latex.json")

# name -> (kind, C++ expression of the TiledMMA / TiledCopy)
CASES = {
    "sm80_16x8x16_f32f16_atom": ("mma", "make_tiled_mma(SM80_16x8x16_F32F16F16F32_TN{})"),
    "sm80_16x8x16_f32f16_2x2x1": ("mma", "make_tiled_mma(SM80_16x8x16_F32F16F16F32_TN{}, Layout<Shape<_2,_2,_1>>{})"),
    "sm80_16x8x16_f32f16_2x2x1_perm_32x32x16": (
        "mma", "make_tiled_mma(SM80_16x8x16_F32F16F16F32_TN{}, Layout<Shape<_2,_2,_1>>{}, Tile<_32,_32,_16>{})"),
    "sm80_16x8x8_f16f16_1x2x1": ("mma", "make_tiled_mma(SM80_16x8x8_F16F16F16F16_TN{}, Layout<Shape<_1,_2,_1>>{})"),
    "sm90_64x8x16_f16_ss": ("mma", "make_tiled_mma(SM90_64x8x16_F16F16F16_SS<GMMA::Major::K,GMMA::Major::K>{})"),
    "sm90_64x8x16_f32f16_rs": ("mma", "make_tiled_mma(SM90_64x8x16_F32F16F16_RS<GMMA::Major::K,GMMA::Major::K>{})"),
    "ldsm_x4_32x1_1x8": ("copy", "make_tiled_copy(Copy_Atom<SM75_U32x4_LDSM_N, half_t>{}, "
                                 "Layout<Shape<_32,_1>>{}, Layout<Shape<_1,_8>>{})"),
    "ldsm_x4_trans_a": ("copy", "make_tiled_copy_A(Copy_Atom<SM75_U16x8_LDSM_T, half_t>{}, "
                                "make_tiled_mma(SM80_16x8x16_F32F16F16F32_TN{}))"),
    "universal_4x8_1x4": ("copy", "make_tiled_copy(Copy_Atom<UniversalCopy<uint64_t>, half_t>{}, "
                                  "Layout<Shape<_4,_8>,Stride<_8,_1>>{}, Layout<Shape<_1,_4>>{})"),
}

PROGRAM = r"""
#include <cute/tensor.hpp>
#include <cute/atom/mma_atom.hpp>
#include <cute/atom/copy_atom.hpp>
#include <cute/atom/mma_traits_sm80.hpp>
#include <cute/atom/mma_traits_sm90_gmma.hpp>
#include <cute/atom/copy_traits_sm75.hpp>
#include <cute/util/print_latex.hpp>
#include <string>
using namespace cute;

template <class M> void mma_case(M const& m, bool latex) {
  if (latex) { print_latex(m); return; }
  print(m.get_layoutC_TV()); printf("\n"); print(m.get_layoutA_TV()); printf("\n");
  print(m.get_layoutB_TV()); printf("\n"); print(tile_shape(m)); printf("\n");
}
template <class C> void copy_case(C const& c, bool latex) {
  if (latex) { print_latex(c); return; }
  using T = typename C::Tiler_MN;
  print(c.get_layoutS_TV()); printf("\n"); print(c.get_layoutD_TV()); printf("\n");
  print(product_each(shape(logical_divide(make_layout(Shape<_1,_1>{}), T{})))); printf("\n");
}
int main(int argc, char** argv) {
  std::string w = argv[1];
  bool latex = std::string(argv[2]) == "latex";
%CASES%
  return 1;
}
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cutlass", default="/work/.mirror/NVIDIA+cutlass/repo", help="CUTLASS git directory")
    ap.add_argument("--nvcc", default="nvcc")
    args = ap.parse_args()
    commit = subprocess.run(["git", "-C", args.cutlass, "rev-parse", "HEAD"], capture_output=True, text=True,
                            check=True).stdout.strip()
    with tempfile.TemporaryDirectory() as tmp:
        tar = subprocess.run(["git", "-C", args.cutlass, "archive", "HEAD", "include"], capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", tmp], input=tar.stdout, check=True)
        body = "\n".join(f'  if (w == "{name}") {{ {kind}_case({expr}, latex); return 0; }}'
                         for name, (kind, expr) in CASES.items())
        src = os.path.join(tmp, "ref.cu")
        with open(src, "w") as f:
            f.write(PROGRAM.replace("%CASES%", body))
        exe = os.path.join(tmp, "ref")
        subprocess.run([args.nvcc, "-std=c++17", "-w", "-I", os.path.join(tmp, "include"), "-o", exe, src], check=True)
        cases = {}
        for name, (kind, _) in CASES.items():
            lay = subprocess.run([exe, name, "layouts"], capture_output=True, text=True, check=True).stdout.split("\n")
            tex = subprocess.run([exe, name, "latex"], capture_output=True, text=True, check=True).stdout
            tile = [int(x) for x in lay[-2 if kind == "copy" else 3].strip("()").replace("_", "").split(",")]
            if kind == "mma":
                case = {"kind": kind, "tile": tile, "C": lay[0], "A": lay[1], "B": lay[2], "latex": tex}
            else:
                case = {"kind": kind, "tile": tile, "S": lay[0], "D": lay[1], "latex": tex}
            cases[name] = case
            print(f"{name}: tile {tile}, {len(tex)} bytes of LaTeX", file=sys.stderr)
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump({"cutlass_commit": commit, "source": "CuTe C++ include/cute/util/print_latex.hpp",
                   "cases": cases}, f, indent=1)
        f.write("\n")
    print(f"wrote {OUT}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
